/* See m6_input.h. */
#include "analysis/m6_input.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/fs.h"
#include "opdb/pystr.h"

#define MAX_COLS 4096

int m6_check_inputs(const char *tc_trace, const char *prof_trace, opdb_err *err) {
    if (!opdb_path_exists(tc_trace)) return opdb_fail(err, OPDB_ERR_RUNTIME, "TC trace not found: %s", tc_trace);
    if (!opdb_path_exists(prof_trace)) return opdb_fail(err, OPDB_ERR_RUNTIME, "Prof trace not found: %s", prof_trace);
    return 0;
}

int m6_csv_open(m6_csv *f, const char *path, bool quirks, m6_bad_policy bad, opdb_err *err) {
    memset(f, 0, sizeof *f);
    f->path = path;
    f->quirks = quirks;
    f->bad = bad;
    f->col_type = f->col_start = f->col_dur = f->col_shapes = -1;
    char why[160];
    if (!quirks && opdb_csv_sniff(path, why, sizeof why)) /* random bytes, UTF-16, gzip */
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: %s", path, why);
    if (opdb_csv_file_open(&f->c, path, MAX_COLS, err)) return -1;
    int rc = opdb_csv_file_next(&f->c, false);
    if (rc < 0) {
        opdb_csv_file_close(&f->c);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", path, strerror(f->c.br.err));
    }
    if (rc > 0) { /* no header at all: no rows either */
        f->col_type = opdb_csv_col(f->c.f, f->c.nf, "Type");
        f->col_start = opdb_csv_col(f->c.f, f->c.nf, "Start Time(us)");
        f->col_dur = opdb_csv_col(f->c.f, f->c.nf, "Duration(us)");
        f->col_shapes = opdb_csv_col(f->c.f, f->c.nf, "Input Shapes");
    }
    return 0;
}

int m6_csv_require(const m6_csv *f, bool shapes, opdb_err *err) {
    if (f->quirks) return 0;
    const struct {
        int col;
        const char *name;
    } need[] = {{f->col_type, "Type"}, {f->col_start, "Start Time(us)"}, {f->col_dur, "Duration(us)"},
                {shapes ? f->col_shapes : 0, "Input Shapes"}};
    opdb_strbuf miss;
    opdb_sb_init(&miss);
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (need[i].col < 0) opdb_sb_addf(&miss, "%s%s", miss.n ? ", " : "", need[i].name);
    int rc = 0;
    if (miss.n) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: missing needed column(s): %s", f->path, miss.p);
    opdb_sb_free(&miss);
    return rc;
}

static bool ends_with(opdb_span s, const char *suffix) {
    size_t k = strlen(suffix);
    return s.n >= k && memcmp(s.p + s.n - k, suffix, k) == 0;
}

typedef enum { NUM_OK, NUM_EMPTY, NUM_BAD } num_status;

static num_status parse_cell(opdb_span cell, double *v) {
    opdb_span s = opdb_py_strip(cell);
    if (s.n == 0) {
        *v = 0.0; /* the reference's `or "0"` */
        return NUM_EMPTY;
    }
    return opdb_py_float(s.p, s.n, v) ? NUM_OK : NUM_BAD;
}

/* 1: use the row; 0: skip it; -1: fatal. */
static int check_number(m6_csv *f, const char *col, opdb_span cell, num_status st, double v, unsigned long long line,
                        opdb_err *err) {
    if (f->quirks) {
        if (st != NUM_BAD) return 1;
        if (f->bad == M6_BAD_SKIP) return 0;
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: line %llu: %s is not a number: '%.*s'", f->path, line, col,
                         (int)cell.n, cell.p);
    }
    if (st == NUM_OK && isfinite(v)) return 1;
    if (!f->skipped++) f->first_skipped_line = line;
    return 0;
}

int m6_csv_next(m6_csv *f, m6_row *row, opdb_err *err) {
    for (;;) {
        int rc = opdb_csv_file_next(&f->c, false);
        if (rc == 0) return 0;
        if (rc < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", f->path, strerror(f->c.br.err));
        const opdb_field *c = f->c.f;
        int nf = f->c.nf;
        unsigned long long line = f->c.x.rec_line;
        /* a truncated file: its last row is not what the profiler wrote (parse's rule) */
        if (f->c.x.unterminated && !f->quirks)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: unterminated quoted field", f->path, line);
        opdb_span type = opdb_py_strip(opdb_csv_cell(c, nf, f->col_type));
        if (type.n == 0 || ends_with(type, "AicpuKernel")) continue;
        opdb_span dcell = opdb_csv_cell(c, nf, f->col_dur), scell = opdb_csv_cell(c, nf, f->col_start);
        double dur, start;
        num_status ds = parse_cell(dcell, &dur), ss = parse_cell(scell, &start);
        int ok = check_number(f, "Duration(us)", dcell, ds, dur, line, err);
        if (ok == 1) ok = check_number(f, "Start Time(us)", scell, ss, start, line, err);
        if (ok < 0) return -1;
        if (ok == 0) continue;
        row->type = type;
        row->shapes = opdb_csv_cell(c, nf, f->col_shapes);
        row->start = start;
        row->dur = dur;
        row->line = line;
        return 1;
    }
}

void m6_csv_close(m6_csv *f) {
    if (f->skipped)
        opdb_warn("%s: %llu row(s) skipped: empty or non-numeric Start Time(us)/Duration(us) (first at line %llu)",
                  f->path, f->skipped, f->first_skipped_line);
    opdb_csv_file_close(&f->c);
}

int m6_hcom_start(const m6_csv *f, const m6_row *row, double *key, opdb_err *err) {
    if (!f->quirks) {
        *key = row->start + 0.0; /* -0.0 and 0.0 are one key */
        return 0;
    }
    if (!isfinite(row->start))
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s: line %llu: hcom start time %g cannot be truncated to an integer (the reference crashes here)",
                         f->path, row->line, row->start);
    *key = trunc(row->start) + 0.0; /* int(start): equal ints <=> equal truncated doubles */
    return 0;
}

/* ---------------------------------------------------------------- TC events */
bool m6_is_complete(const opdb_trace_event *ev) {
    const opdb_trace_field *ph = opdb_trace_get(ev, "ph");
    return ph && ph->kind == OPDB_J_STRING && strcmp(ph->text, "X") == 0;
}

bool m6_truthy(const opdb_trace_field *f) {
    if (!f) return false;
    switch (f->kind) {
    case OPDB_J_NULL: return false;
    case OPDB_J_BOOL: return strcmp(f->text, "True") == 0;
    case OPDB_J_INT: return strcmp(f->text, "0") != 0;
    case OPDB_J_FLOAT: return strtod(f->text, NULL) != 0.0;
    case OPDB_J_STRING: return f->text[0] != '\0';
    case OPDB_J_LIST: return strcmp(f->text, "[]") != 0;
    case OPDB_J_DICT: return strcmp(f->text, "{}") != 0;
    }
    return false;
}

int m6_event_dur(const opdb_trace_event *ev, const char *path, m6_num *out, opdb_err *err) {
    const opdb_trace_field *d = opdb_trace_get(ev, "dur");
    out->is_int = true;
    out->i = 0;
    out->f = 0.0;
    if (!d) return 0;
    switch (d->kind) {
    case OPDB_J_BOOL:
        out->i = strcmp(d->text, "True") == 0;
        out->f = (double)out->i;
        return 0;
    case OPDB_J_INT:
        if (opdb_py_int(d->text, strlen(d->text), &out->i)) {
            out->f = (double)out->i;
            return 0;
        }
        /* beyond int64: carried on as a float */
        out->is_int = false;
        out->f = strtod(d->text, NULL);
        return 0;
    case OPDB_J_FLOAT:
        out->is_int = false;
        out->f = strtod(d->text, NULL);
        return 0;
    default:
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: event %llu (ending at byte %llu): \"dur\" is not a number: %s%s%s",
                         path, ev->index, ev->offset, d->kind == OPDB_J_STRING ? "\"" : "",
                         d->kind == OPDB_J_NULL ? "null" : d->text, d->kind == OPDB_J_STRING ? "\"" : "");
    }
}

void m6_num_add(m6_num *a, m6_num b) {
    if (a->is_int && b.is_int) {
        long long s;
        if (!__builtin_add_overflow(a->i, b.i, &s)) {
            a->i = s;
            a->f = (double)s;
            return;
        }
    }
    a->is_int = false;
    a->f = a->f + b.f;
}

/* ---------------------------------------------------------------- keys */
void m6_keys_init(m6_keys *k) {
    memset(k, 0, sizeof *k);
    opdb_arena_init(&k->arena, 1 << 16);
}

void m6_keys_free(m6_keys *k) {
    opdb_hindex_free(&k->ix);
    opdb_arena_free(&k->arena);
    free(k->key);
    memset(k, 0, sizeof *k);
}

size_t m6_keys_get(m6_keys *k, const void *p, size_t n, bool *created) {
    if (!n) p = ""; /* an empty strbuf may have no storage yet */
    uint64_t h = opdb_hash_bytes(p, n, 0);
    uint32_t i;
    for (opdb_hprobe pr = opdb_hindex_probe(&k->ix, h); opdb_hprobe_next(&pr, &i);)
        if (k->key[i].n == n && memcmp(k->key[i].p, p, n) == 0) {
            *created = false;
            return i;
        }
    OPDB_ALLOC_GROW(k->key, k->n + 1, k->cap);
    k->key[k->n] = opdb_span_make(opdb_arena_strndup(&k->arena, p, n), n);
    opdb_hindex_add(&k->ix, h, (uint32_t)k->n);
    *created = true;
    return k->n++;
}
