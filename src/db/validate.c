/* See validate.h. Errors: unreadable or LFS-pointer files, missing
 * identity/duration columns, non-numeric or negative durations, rows the
 * consumer cannot tell apart (one row identity, docs/ROW-IDENTITY.md).
 * Warnings: rows without any valid duration (invisible to the consumer),
 * measurements that never met the stop rule. Communication tables have
 * their own checks (check_comm). */
#include "opdb/validate.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/call.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/json_writer.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/signature.h"
#include "db/sig_cells.h"
#include "db/text_table.h"


typedef struct vctx {
    bool json;
    FILE *out;
    opdb_strbuf js;
    size_t problems, warnings;
} vctx;

/* Length of the valid UTF-8 character at p, or 0 with *sub the length of
 * its longest valid start (Unicode's maximal subpart: one U+FFFD each, as
 * Python's errors="replace" decodes). */
static size_t utf8_char(const unsigned char *p, size_t *sub) {
    unsigned c = p[0], need, lo = 0x80, hi = 0xbf;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) need = 2;
    else if (c >= 0xe0 && c <= 0xef) need = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4) need = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else need = 0;
    size_t i = 1;
    for (; i < need; i++, lo = 0x80, hi = 0xbf)
        if (p[i] < lo || p[i] > hi) break; /* also stops at the terminating NUL */
    if (need && i == need) return need;
    *sub = i;
    return 0;
}

/* A JSON string as Python's json.dumps(ensure_ascii=False) writes it; bytes
 * that are not UTF-8 (a table's cell echoed in a message) become U+FFFD,
 * so the document stays JSON that strict parsers accept. */
static void json_esc(opdb_strbuf *o, const char *s) {
    opdb_strbuf t;
    opdb_sb_init(&t);
    opdb_sb_adds(&t, "");
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t sub = 1, k = utf8_char(p, &sub);
        if (k) opdb_sb_add(&t, (const char *)p, k);
        else opdb_sb_adds(&t, "\xef\xbf\xbd");
        p += k ? k : sub;
    }
    opdb_json_quote_utf8(o, t.p);
    opdb_sb_free(&t);
}

/* The bytes of s[0..n) that hold its first max characters (docs/FORMAT.md's
 * value[:40] counts characters, not bytes). */
static int cut_chars(const char *s, size_t n, size_t max) {
    size_t i = 0, chars = 0;
    for (; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80 && chars++ == max) break;
    return (int)i;
}

/* No single kernel runs for 11 days: a larger duration is an overflowed or corrupt time. */
#define OPDB_ABSURD_DURATION_US 1e12

static void problem(vctx *v, bool warning, const char *file, unsigned long long line, const char *kind,
                    const char *fmt, ...) OPDB_PRINTF(6, 7);
static void problem(vctx *v, bool warning, const char *file, unsigned long long line, const char *kind,
                    const char *fmt, ...) {
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (v->json) {
        opdb_sb_adds(&v->js, v->problems + v->warnings ? ",\n    {\"file\": " : "\n    {\"file\": ");
        json_esc(&v->js, file);
        opdb_sb_addf(&v->js, ", \"line\": %llu, \"kind\": ", line);
        json_esc(&v->js, kind);
        opdb_sb_adds(&v->js, ", \"severity\": ");
        json_esc(&v->js, warning ? "warning" : "error");
        opdb_sb_adds(&v->js, ", \"message\": ");
        json_esc(&v->js, msg);
        opdb_sb_adds(&v->js, "}");
    } else if (!v->out) {
    } else if (line) {
        fprintf(v->out, "%s:%llu: %s%s: %s\n", file, line, warning ? "warning: " : "", kind, msg);
    } else {
        fprintf(v->out, "%s: %s%s: %s\n", file, warning ? "warning: " : "", kind, msg);
    }
    if (warning) v->warnings++;
    else v->problems++;
}

typedef struct seen {
    char *sig;
    uint64_t hash;
    unsigned long long line, count;
    unsigned long long *more; /* the lines of the 2nd, 3rd... rows (count - 1 of them) */
    char *display;            /* the display form, kept from the 2nd row on */
} seen;

/* Signature -> first line and count, hashed (files have up to millions of rows). */
typedef struct seen_set {
    seen *v;
    size_t n, cap;
    opdb_hindex ix;
} seen_set;

static seen *seen_add(seen_set *s, const char *sig, unsigned long long line) {
    uint64_t h = opdb_hash_bytes(sig, strlen(sig), 11);
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&s->ix, h); opdb_hprobe_next(&p, &i);)
        if (strcmp(s->v[i].sig, sig) == 0) return &s->v[i];
    OPDB_ALLOC_GROW(s->v, s->n + 1, s->cap);
    seen *e = &s->v[s->n];
    e->sig = opdb_xstrdup(sig);
    e->hash = h;
    e->line = line;
    e->count = 0;
    e->more = NULL;
    e->display = NULL;
    opdb_hindex_add(&s->ix, h, (uint32_t)s->n++);
    return e;
}

/* A runtime cell as the consumer reads it: blank and NA tokens are missing,
 * numbers compare as numbers ("4096" equals "4096.0"). */
static opdb_span runtime_cell(opdb_span c, char *buf, size_t cap) {
    c = opdb_py_strip(c);
    static const char *const na[] = {"N/A", "NA", "NULL", "nan", "NaN", "None", "null", "n/a"};
    for (size_t i = 0; i < sizeof na / sizeof na[0]; i++)
        if (opdb_span_eq_cstr(c, na[i])) return opdb_span_make("", 0);
    double x;
    if (c.n && opdb_py_float(c.p, c.n, &x) && isfinite(x)) {
        int n = snprintf(buf, cap, "%.17g", x);
        return opdb_span_make(buf, (size_t)n);
    }
    return c;
}

/* The duration cells of one row (cols[k] < 0: the table has no names[k]): an
 * error for each that is not a number, negative or absurd. True when a column
 * that counts[k] marks holds a number > 0 (the row is visible to the consumer). */
static bool check_durations(vctx *v, const char *path, unsigned long long line, const opdb_field *f, int nf,
                            const int *cols, const char *const *names, const bool *counts, size_t n) {
    bool valid = false;
    for (size_t d = 0; d < n; d++) {
        if (cols[d] < 0 || cols[d] >= nf) continue;
        opdb_span c = opdb_py_strip(opdb_span_make(f[cols[d]].p, f[cols[d]].n));
        if (!c.n) continue;
        double val;
        if (!opdb_py_float(c.p, c.n, &val) || isnan(val) || isinf(val)) {
            problem(v, false, path, line, "non-numeric duration", "%s = '%.*s'", names[d], cut_chars(c.p, c.n, 40), c.p);
        } else if (val < 0) {
            problem(v, false, path, line, "negative duration", "%s = %.*s", names[d], (int)c.n, c.p);
        } else if (val > OPDB_ABSURD_DURATION_US) {
            problem(v, false, path, line, "absurd duration", "%s = %.*s (more than %.0e us, about 11 days, for one "
                    "kernel: an overflowed or corrupt time)", names[d], (int)c.n, c.p, OPDB_ABSURD_DURATION_US);
        } else if (val > 0 && counts[d]) {
            valid = true;
        }
    }
    return valid;
}

/* Counts a row of s's key at line; true from its second row on (the caller then gives s its display). */
static bool seen_again(seen *s, unsigned long long line) {
    if (s->count++ < 1) return false;
    s->more = opdb_xrealloc(s->more, (size_t)s->count * sizeof *s->more);
    s->more[s->count - 1] = line;
    return true;
}

/* One problem per key met on more than one row: "<n> rows <what> (lines ...): <display>". */
static void report_repeats(vctx *v, const char *path, const seen_set *sg, bool warning, const char *kind,
                           const char *what) {
    for (size_t k = 0; k < sg->n; k++) {
        const seen *d = &sg->v[k];
        if (d->count < 2) continue;
        opdb_strbuf lines;
        opdb_sb_init(&lines);
        opdb_sb_addf(&lines, "%llu", d->line);
        for (unsigned long long j = 1; j < d->count; j++) opdb_sb_addf(&lines, ", %llu", d->more[j]);
        problem(v, warning, path, d->line, kind, "%llu rows %s (lines %s): %s", d->count, what, lines.p,
                d->display ? d->display : "");
        opdb_sb_free(&lines);
    }
}

/* Cell i of a record of nf fields; empty when the record is short or the column absent (i < 0). */
static opdb_span field_at(const opdb_field *f, int nf, int i) {
    return i >= 0 && i < nf ? opdb_span_make(f[i].p, f[i].n) : opdb_span_make("", 0);
}

/* A stripped cell the consumer can compare as a number (§8.3 of query: NA and text never equal), into *x. */
static bool comm_number(opdb_span c, double *x) { return c.n && opdb_py_float(c.p, c.n, x) && isfinite(*x); }

/* A communication table (an hcom_*.csv with message_bytes and num_devices, as
 * `comm import` writes it), checked as `query`'s communication lookup reads
 * it: both key columns and a duration column must exist (else every lookup
 * misses); a key cell that is not a number is an error (the reference
 * consumer fails the lookup that meets it; opdb skips the row); rows without
 * a duration > 0 are invisible (warning); rows repeating one message size,
 * group size and tier are answered by the first in file order and each
 * counts in the alpha-beta fit (warning). */
static void check_comm(vctx *v, const char *path, opdb_csv_file *c, seen_set *sg, size_t *rows) {
    static const char *const lat_names[3] = {OPDB_COL_MB_DUR, OPDB_COL_PROF_AVG_DUR, OPDB_COL_COMM_DUR};
    static const bool lat_counts[3] = {true, true, true};
    const opdb_field *f = c->f;
    int cb = opdb_csv_col(f, c->nf, OPDB_COL_COMM_BYTES), cd = opdb_csv_col(f, c->nf, OPDB_COL_COMM_DEVICES);
    int ct = opdb_csv_col(f, c->nf, OPDB_COL_COMM_TIER), lat[3];
    bool any_lat = false;
    for (int k = 0; k < 3; k++) any_lat |= (lat[k] = opdb_csv_col(f, c->nf, lat_names[k])) >= 0;
    if (cb < 0 || cd < 0 || !any_lat) {
        problem(v, false, path, 1, "missing columns", "communication table without %s: every lookup of it misses",
                cb < 0 ? OPDB_COL_COMM_BYTES : cd < 0 ? OPDB_COL_COMM_DEVICES
                                                      : "a duration column (" OPDB_COL_COMM_DUR ", " OPDB_COL_MB_DUR
                                                        " or " OPDB_COL_PROF_AVG_DUR ")");
        return;
    }
    unsigned long long invalid = 0, first_invalid = 0, open_quote = 0;
    int r;
    while ((r = opdb_csv_file_next(c, false)) > 0) {
        unsigned long long line = c->x.rec_line;
        if (c->x.unterminated) {
            open_quote = line;
            continue;
        }
        (*rows)++;
        if (!check_durations(v, path, line, f, c->nf, lat, lat_names, lat_counts, 3) && invalid++ == 0)
            first_invalid = line;
        double x[2];
        const int key[2] = {cb, cd};
        bool ok = true;
        for (int k = 0; k < 2; k++) {
            opdb_span cell = opdb_py_strip(field_at(f, c->nf, key[k]));
            if (comm_number(cell, &x[k])) continue;
            ok = false;
            problem(v, false, path, line, "invalid value", "%s = '%.*s' is not a number (opdb skips the row; the "
                    "reference consumer fails the lookup that meets it)", k ? OPDB_COL_COMM_DEVICES : OPDB_COL_COMM_BYTES,
                    cut_chars(cell.p, cell.n, 40), cell.p);
        }
        if (!ok) continue;
        char tb[40], keyt[128];
        opdb_span tier = runtime_cell(field_at(f, c->nf, ct), tb, sizeof tb);
        snprintf(keyt, sizeof keyt, "message_bytes %.17g, num_devices %.17g, topology_tier '%.*s'", x[0], x[1],
                 cut_chars(tier.p, tier.n, 40), tier.p);
        seen *s = seen_add(sg, keyt, line);
        if (seen_again(s, line) && !s->display) {
            opdb_strbuf d;
            opdb_sb_init(&d);
            opdb_sb_addf(&d, "%s (exact lookups take the first; each counts in the fit)", keyt);
            s->display = d.p;
        }
    }
    if (r < 0) problem(v, false, path, 0, "unreadable", "read failed");
    if (open_quote) problem(v, false, path, open_quote, "unreadable", "unterminated quoted field (the file ends inside a quote)");
    report_repeats(v, path, sg, true, "duplicate measurement", "for one message size, group size and tier");
    if (invalid)
        problem(v, true, path, first_invalid, "no valid duration",
                "%llu row(s) have no duration > 0: invisible to the consumer (first here)", invalid);
}

static void check_file(vctx *v, const char *path, size_t *rows) {
    opdb_err e;
    opdb_err_clear(&e);
    opdb_csv_file c;
    /* random bytes, UTF-16, gzip: one line, not one per garbage row */
    static const db_open_opts oo = {.sniff = true, .need_header = true, .lfs = true};
    db_open_problem op;
    if (db_csv_open(&c, path, &oo, &op, &e)) {
        problem(v, false, path, op.line, "unreadable", "%s", op.kind == DB_OPEN_CANNOT_OPEN ? e.msg : op.why);
        return;
    }
    const opdb_field *f = c.f;
    int r;
    int base[OPDB_NBASE_COLS], dur[OPDB_NDUR_COLS], conv = -1;
    int rt[64];
    size_t nrt = 0;
    char stem[256];
    const char *name = opdb_path_basename(path);
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(name) - 4), name);
    seen_set sg = {0};
    opdb_span *cells = opdb_xmalloc((size_t)c.maxf * sizeof *cells);
    for (int i = 0; i < c.nf; i++) cells[i] = opdb_span_make(f[i].p, f[i].n);
    db_sig_cols sigc;
    db_sig_cols_from_header(&sigc, cells, (size_t)c.nf, DB_NAME_LAST);
    for (int i = 0; i < OPDB_NBASE_COLS; i++) base[i] = -1;
    for (size_t i = 0; i < OPDB_NDUR_COLS; i++) dur[i] = -1;
    for (int i = 0; i < c.nf; i++) {
        opdb_span h = cells[i];
        for (int b = 0; b < OPDB_NBASE_COLS; b++)
            if (opdb_span_eq_cstr(h, opdb_base_cols[b])) base[b] = i;
        for (size_t d = 0; d < OPDB_NDUR_COLS; d++)
            if (opdb_span_eq_cstr(h, opdb_dur_cols[d])) dur[d] = i;
        if (opdb_span_eq_cstr(h, OPDB_MB_CONVERGED_COLUMN)) conv = i;
        if (opdb_is_runtime_column(h) && nrt < sizeof rt / sizeof rt[0]) rt[nrt++] = i;
    }
    bool any = dur[0] >= 0 || dur[1] >= 0 || dur[4] >= 0;
    for (int b = 0; b < OPDB_NBASE_COLS; b++) any |= base[b] >= 0;
    if (!any && (opdb_csv_col(f, c.nf, OPDB_COL_COMM_BYTES) >= 0 || opdb_csv_col(f, c.nf, OPDB_COL_COMM_DEVICES) >= 0)) {
        check_comm(v, path, &c, &sg, rows);
        goto done;
    }
    if (!any) { /* another CSV (or text): its rows mean nothing here */
        problem(v, false, path, 1, "not a database table",
                "the header has none of the columns %s ... %s, Average Duration(us)", opdb_base_cols[0],
                opdb_base_cols[OPDB_NBASE_COLS - 1]);
        goto done;
    }
    {
        opdb_strbuf miss;
        opdb_sb_init(&miss);
        for (int b = 0; b < OPDB_NBASE_COLS; b++)
            if (base[b] < 0) opdb_sb_addf(&miss, "%s%s", miss.n ? ", " : "", opdb_base_cols[b]);
        if (miss.n) problem(v, false, path, 1, "missing columns", "%s", miss.p);
        /* opdb_dur_cols: [0] MicroBench, [1] profiled average, [4] legacy MicroBench */
        if (dur[0] < 0 && dur[1] < 0 && dur[4] < 0)
            problem(v, false, path, 1, "missing columns", "no duration column (Average Duration(us) or Profiling Average Duration(us))");
        opdb_sb_free(&miss);
    }
    opdb_strbuf sig;
    opdb_sb_init(&sig);
    opdb_strbuf unconv; /* lines of the rows whose measurement never met the stop rule */
    opdb_sb_init(&unconv);
    unsigned long long invalid = 0, first_invalid = 0, nunconv = 0;
    opdb_span rtv[64];
    char rtbuf[64][40];
    unsigned long long open_quote = 0; /* the line of a record that ended inside a quote */
    while ((r = opdb_csv_file_next(&c, false)) > 0) {
        unsigned long long line = c.x.rec_line;
        /* read here (the next call, at the end of the file, clears it); the cut
         * record is not what was written: not checked as a row */
        if (c.x.unterminated) {
            open_quote = line;
            continue;
        }
        (*rows)++;
        /* opdb_dur_cols: [0] MicroBench, [1] profiled average, [4] legacy MicroBench make a row visible */
        static const bool counts[OPDB_NDUR_COLS] = {true, true, false, false, true};
        if (!check_durations(v, path, line, f, c.nf, dur, opdb_dur_cols, counts, OPDB_NDUR_COLS) && invalid++ == 0)
            first_invalid = line;
#define CELL(i) field_at(f, c.nf, (i))
        for (int i = 0; i < c.nf; i++) cells[i] = opdb_span_make(f[i].p, f[i].n);
        opdb_sig_cells sc = db_sig_cells_from_row(&sigc, cells, (size_t)c.nf);
        for (size_t k = 0; k < nrt; k++) rtv[k] = runtime_cell(CELL(rt[k]), rtbuf[k], sizeof rtbuf[k]);
        if (conv >= 0 && opdb_span_eq_cstr(opdb_py_strip(CELL(conv)), "no")) {
            if (nunconv++ < 20) opdb_sb_addf(&unconv, "%s%llu", unconv.n ? ", " : "", line);
        }
#undef CELL
        opdb_row_identity(&sc, stem, rtv, nrt, &sig);
        seen *s = seen_add(&sg, sig.p, line);
        if (seen_again(s, line)) {
            if (!s->display) {
                opdb_strbuf d;
                opdb_sb_init(&d);
                opdb_signature_display(&sc, &d);
                s->display = opdb_xstrdup(d.p ? d.p : "");
                opdb_sb_free(&d);
            }
        }
    }
    if (r < 0) problem(v, false, path, 0, "unreadable", "read failed");
    if (open_quote) problem(v, false, path, open_quote, "unreadable", "unterminated quoted field (the file ends inside a quote)");
    report_repeats(v, path, &sg, false, "duplicate signature", "the consumer cannot tell apart");
    if (invalid)
        problem(v, true, path, first_invalid, "no valid duration",
                "%llu row(s) have neither Average nor Profiling Average Duration(us) > 0 (first here)", invalid);
    if (nunconv)
        problem(v, true, path, 0, "unconverged measurement",
                "%llu row(s) measured by opdb bench never met the stop rule (" OPDB_MB_CONVERGED_COLUMN " = no; lines %s%s)",
                nunconv, unconv.p, nunconv > 20 ? ", ..." : "");
    opdb_sb_free(&unconv);
    opdb_sb_free(&sig);
done:
    free(cells);
    for (size_t k = 0; k < sg.n; k++) {
        free(sg.v[k].sig);
        free(sg.v[k].more);
        free(sg.v[k].display);
    }
    free(sg.v);
    opdb_hindex_free(&sg.ix);
    opdb_csv_file_close(&c);
}

static bool is_csv(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".csv") == 0 && name[0] != '.';
}

/* A journal left by a killed run (in the folder or its own report folder)
 * is an error: until a writer acts on it the tables are a mix of two runs,
 * or it is not opdb's and no writer will touch the folder. */
static void check_journals(vctx *v, const char *dir) {
    static const char *const kinds[] = {"", "unfinished run", "unfinished run", "unfinished run", "invalid journal"};
    char *sub = opdb_path_join(dir, OPDB_REPORTS_DIR);
    const char *where[2] = {dir, sub};
    for (int i = 0; i < 2; i++) {
        char msg[2048];
        int st = opdb_txn_journal_status(where[i], msg, sizeof msg);
        if (st == OPDB_JOURNAL_NONE) continue;
        char *j = opdb_path_join(where[i], OPDB_JOURNAL_NAME);
        /* the message starts with the journal's path: not repeated */
        size_t jl = strlen(j);
        const char *m = strncmp(msg, j, jl) == 0 && msg[jl] == ':' ? msg + jl + 2 : msg;
        if (st == OPDB_JOURNAL_INVALID && strncmp(m, "invalid journal: ", 17) == 0) m += 17;
        problem(v, false, j, 0, kinds[st], "%s", m);
        free(j);
    }
    free(sub);
}

static void validate_defaults(opdb_validate_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_validate_opts, validate_defaults)

static int validate_run(const char *db_dir, bool json, FILE *out, opdb_validate_result *res, opdb_err *err) {
    if (!opdb_is_dir(db_dir)) return opdb_fail(err, OPDB_ERR_RUNTIME, "database folder not found: %s", db_dir);
    char *dir = opdb_path_normalize(db_dir);
    DIR *d = opendir(dir);
    if (!d) {
        free(dir);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot read folder", db_dir);
    }
    char **files = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_csv(e->d_name, NULL)) continue;
        char *p = opdb_path_join(dir, e->d_name);
        if (opdb_is_file(p)) {
            files = opdb_xrealloc(files, (n + 1) * sizeof *files);
            files[n++] = p;
        } else {
            free(p);
        }
    }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && opdb_path_cmp(files[j - 1], files[j]) > 0; j--) {
            char *t = files[j];
            files[j] = files[j - 1];
            files[j - 1] = t;
        }
    vctx v = {json, out, {0}, 0, 0};
    opdb_sb_init(&v.js);
    check_journals(&v, dir);
    for (size_t i = 0; i < n; i++) check_file(&v, files[i], &res->rows);
    res->files = n;
    res->problems = v.problems;
    res->warnings = v.warnings;
    if (!out) {
    } else if (json) {
        fprintf(out, "{\n  \"database\": ");
        opdb_strbuf t;
        opdb_sb_init(&t);
        json_esc(&t, dir);
        fprintf(out, "%s,\n  \"files\": %zu,\n  \"rows\": %zu,\n  \"errors\": %zu,\n  \"warnings\": %zu,\n  \"problems\": [%s%s]\n}\n",
                t.p, n, res->rows, v.problems, v.warnings, v.js.p ? v.js.p : "", v.problems + v.warnings ? "\n  " : "");
        opdb_sb_free(&t);
    } else {
        fprintf(out, "%s: %zu file(s), %zu row(s), %zu error(s), %zu warning(s)\n", dir, n, res->rows, v.problems,
                v.warnings);
    }
    opdb_sb_free(&v.js);
    opdb_free_paths(files, n);
    free(dir);
    return 0;
}

int opdb_validate_run(const char *db_dir, const opdb_validate_opts *o, opdb_validate_result *res, opdb_err *err) {
    memset(res, 0, sizeof *res);
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_validate_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = validate_run(db_dir, o->json, o->out, res, err);
    opdb_call_leave(&saved);
    return rc;
}
