/* See shape_compare.h: one table keyed by (kernel type, shape key) filled
 * from the TC trace (§3.2) and the forward-pass CSV (§3.3), then sorted and
 * written (§3.4). */
#include "opdb/shape_compare.h"
#include "core/call.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/m6_input.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/pyround.h"
#include "opdb/pystr.h"

typedef struct entry {
    size_t kt_len;           /* the key is kernel type, NUL, shape key */
    bool has_tc, has_prof;
    m6_num tc;               /* stays a Python int while only ints are added */
    long long tc_count, prof_count;
    char *source;            /* of the last TC event that touched the key */
    double prof;
} entry;

typedef struct table {
    m6_keys keys;
    entry *e;
    size_t cap;
    opdb_strbuf kbuf, shape;
    /* raw simulation_shapes text -> its key: shapes repeat in every layer */
    m6_keys shape_raw;
    char **shape_key;
    size_t shape_cap;
} table;

static entry *get_entry(table *t, opdb_span kt, opdb_span shape) {
    opdb_sb_clear(&t->kbuf);
    opdb_sb_add(&t->kbuf, kt.p, kt.n);
    opdb_sb_addc(&t->kbuf, '\0');
    opdb_sb_add(&t->kbuf, shape.p, shape.n);
    bool created;
    size_t i = m6_keys_get(&t->keys, t->kbuf.p, t->kbuf.n, &created);
    if (created) {
        OPDB_ALLOC_GROW(t->e, i + 1, t->cap);
        memset(&t->e[i], 0, sizeof t->e[i]);
        t->e[i].kt_len = kt.n;
        t->e[i].tc.is_int = true;
    }
    return &t->e[i];
}

static void tc_add(table *t, opdb_span kt, opdb_span shape, m6_num d, const char *source) {
    entry *e = get_entry(t, kt, shape);
    e->has_tc = true;
    m6_num_add(&e->tc, d);
    e->tc_count++;
    if (!e->source || strcmp(e->source, source) != 0) {
        free(e->source);
        e->source = opdb_xstrdup(source);
    }
}

/* ---------------------------------------------------------------- TC side */
typedef struct tc_ctx {
    table *t;
    const opdb_shapecmp_opts *o;
    opdb_err *err;
    opdb_skd skd;
} tc_ctx;

static int event_fail(tc_ctx *c, const opdb_trace_event *ev, const char *what) {
    opdb_fail(c->err, OPDB_ERR_RUNTIME, "%s: event %llu (ending at byte %llu): %s", c->o->tc_trace, ev->index, ev->offset,
              what);
    return 1;
}

/* The shape key of an event, cached by raw text; NULL after an error. */
static const char *event_shape(tc_ctx *c, const opdb_trace_event *ev) {
    const opdb_trace_field *f = opdb_trace_arg(ev, "simulation_shapes");
    const char *raw = f ? f->text : "";
    if (f && f->kind != OPDB_J_STRING && c->o->quirks) {
        event_fail(c, ev, "args.simulation_shapes is not a string (the reference crashes here)");
        return NULL;
    }
    table *t = c->t;
    bool created;
    size_t i = m6_keys_get(&t->shape_raw, raw, strlen(raw), &created);
    if (created) {
        OPDB_ALLOC_GROW(t->shape_key, i + 1, t->shape_cap);
        t->shape_key[i] = NULL;
        if (opdb_shape_key(raw, strlen(raw), c->o->quirks, &t->shape) == 0) {
            t->shape_key[i] = opdb_xmalloc(t->shape.n + 1);
            if (t->shape.n) memcpy(t->shape_key[i], t->shape.p, t->shape.n);
            t->shape_key[i][t->shape.n] = '\0';
        }
    }
    if (!t->shape_key[i]) {
        event_fail(c, ev, "args.simulation_shapes is a flat list, not a list of shapes (the reference crashes here)");
        return NULL;
    }
    return t->shape_key[i];
}

static int add_skd(tc_ctx *c, const opdb_trace_event *ev, opdb_span shape, const char *source) {
    for (size_t i = 0; i < c->skd.n; i++) {
        const opdb_skd_pair *p = &c->skd.p[i];
        if (!p->num) return event_fail(c, ev, "a duration in args.sub_kernel_durations is not a number");
        m6_num v = p->num == 1 ? (m6_num){true, p->i, p->f} : m6_num_float(p->f);
        tc_add(c->t, opdb_span_make(opdb_skd_name(&c->skd, i), p->name_len), shape, v, source);
    }
    return 0;
}

/* kernel_type split on ",", stripped, empties dropped: more than one sub
 * kernel shares dur evenly; otherwise the full string is the key. */
static int add_split(tc_ctx *c, const opdb_trace_event *ev, const char *kt, opdb_span shape, const char *source) {
    m6_num dur;
    if (m6_event_dur(ev, c->o->tc_trace, &dur, c->err)) return 1;
    opdb_span subs[64];
    size_t n = 0, total = 0;
    for (const char *p = kt;;) {
        const char *e = strchr(p, ',');
        opdb_span s = opdb_py_strip(opdb_span_make(p, e ? (size_t)(e - p) : strlen(p)));
        if (s.n) {
            if (n < sizeof subs / sizeof subs[0]) subs[n++] = s;
            total++;
        }
        if (!e) break;
        p = e + 1;
    }
    if (total != n) return event_fail(c, ev, "args.kernel_type has more than 64 sub kernels");
    if (n <= 1) {
        tc_add(c->t, opdb_span_cstr(kt), shape, dur, source);
        return 0;
    }
    m6_num per = m6_num_float(dur.f / (double)n);
    for (size_t i = 0; i < n; i++) tc_add(c->t, subs[i], shape, per, source);
    return 0;
}

static int on_event(const opdb_trace_event *ev, void *vctx) {
    tc_ctx *c = vctx;
    if (!m6_is_complete(ev)) return 0;
    const opdb_trace_field *kt = opdb_trace_arg(ev, "kernel_type");
    if (!m6_truthy(kt)) return 0;
    const opdb_trace_field *src = opdb_trace_arg(ev, "source");
    const char *source = src ? src->text : "";
    const char *shape_key = event_shape(c, ev);
    if (!shape_key) return 1;
    opdb_span shape = opdb_span_cstr(shape_key);
    if (opdb_skd_read(opdb_trace_arg(ev, "sub_kernel_durations"), &c->skd)) return add_skd(c, ev, shape, source);
    if (kt->kind != OPDB_J_STRING && c->o->quirks) /* kernel_type.split(",") */
        return event_fail(c, ev, "args.kernel_type is not a string (the reference crashes here)");
    return add_split(c, ev, kt->text, shape, source);
}

/* ---------------------------------------------------------------- prof side */
static int prof_side(table *t, const opdb_shapecmp_opts *o, opdb_err *err) {
    m6_csv f;
    if (m6_csv_open(&f, o->prof_trace, o->quirks, M6_BAD_FATAL, err)) return -1;
    if (m6_csv_require(&f, true, err)) {
        m6_csv_close(&f);
        return -1;
    }
    m6_keys hkeys; /* start key, type, NUL, shape -> max duration */
    m6_keys_init(&hkeys);
    double *hmax = NULL;
    size_t hcap = 0;
    opdb_strbuf k;
    opdb_sb_init(&k);
    m6_row row;
    int rc;
    while ((rc = m6_csv_next(&f, &row, err)) > 0) {
        opdb_span cell = opdb_py_strip_chars(opdb_py_strip(row.shapes), "\"");
        if (opdb_shape_key(cell.p, cell.n, o->quirks, &t->shape)) {
            rc = opdb_fail(err, OPDB_ERR_RUNTIME,
                           "%s: line %llu: Input Shapes is a flat list, not a list of shapes (the reference crashes here)",
                           o->prof_trace, row.line);
            break;
        }
        opdb_span shape = opdb_span_make(t->shape.n ? t->shape.p : "", t->shape.n);
        if (!(row.type.n >= 5 && memcmp(row.type.p, "hcom_", 5) == 0)) {
            entry *e = get_entry(t, row.type, shape);
            e->has_prof = true;
            e->prof += row.dur;
            e->prof_count++;
            continue;
        }
        double start;
        if ((rc = m6_hcom_start(&f, &row, &start, err))) break;
        opdb_sb_clear(&k);
        opdb_sb_add(&k, (const char *)&start, sizeof start);
        opdb_sb_add(&k, row.type.p, row.type.n);
        opdb_sb_addc(&k, '\0');
        opdb_sb_add(&k, shape.p, shape.n);
        bool created;
        size_t i = m6_keys_get(&hkeys, k.p, k.n, &created);
        OPDB_ALLOC_GROW(hmax, i + 1, hcap);
        if (created) hmax[i] = 0.0;
        if (row.dur > hmax[i]) hmax[i] = row.dur; /* max(prev or 0.0, dur) */
    }
    if (rc == 0)
        for (size_t i = 0; i < hkeys.n; i++) { /* in first-seen order, as the dict iterates */
            opdb_span hk = hkeys.key[i];
            const char *type = hk.p + sizeof(double);
            size_t tn = strlen(type);
            entry *e = get_entry(t, opdb_span_make(type, tn), opdb_span_make(type + tn + 1, hk.n - sizeof(double) - tn - 1));
            e->has_prof = true;
            e->prof += hmax[i];
            e->prof_count++;
        }
    opdb_sb_free(&k);
    free(hmax);
    m6_keys_free(&hkeys);
    m6_csv_close(&f);
    return rc < 0 ? -1 : 0;
}

/* ---------------------------------------------------------------- rows */
typedef struct row_out {
    const entry *e;
    opdb_span kt, shape;
    double tc_r, prof_r, sort_key; /* rounded values; max(tc_r, prof_r) */
} row_out;

static int cmp_rows(const void *pa, const void *pb) {
    const row_out *a = pa, *b = pb;
    double x = isnan(a->sort_key) ? -INFINITY : a->sort_key, y = isnan(b->sort_key) ? -INFINITY : b->sort_key;
    if (x != y) return x > y ? -1 : 1; /* descending */
    size_t n = a->kt.n < b->kt.n ? a->kt.n : b->kt.n;
    int c = memcmp(a->kt.p, b->kt.p, n);
    if (c || a->kt.n != b->kt.n) return c ? c : (a->kt.n < b->kt.n ? -1 : 1);
    n = a->shape.n < b->shape.n ? a->shape.n : b->shape.n;
    c = memcmp(a->shape.p, b->shape.p, n);
    if (c || a->shape.n != b->shape.n) return c ? c : (a->shape.n < b->shape.n ? -1 : 1);
    return 0;
}

static void fmt_float(char *buf, size_t cap, double v) { opdb_py_fmt_repr(buf, cap, v); }

static void write_row(opdb_strbuf *out, const row_out *r, bool quirks) {
    const entry *e = r->e;
    char tc[64], prof[64], delta[64], tcc[32], pc[32];
    if (e->tc.is_int) snprintf(tc, sizeof tc, "%lld", e->tc.i); /* round(int, 2) stays an int */
    else fmt_float(tc, sizeof tc, r->tc_r);
    if (e->has_prof) fmt_float(prof, sizeof prof, r->prof_r);
    else snprintf(prof, sizeof prof, "0");
    double p = e->has_prof ? e->prof : 0.0, t = e->tc.f;
    if (p > 0) {
        double d = opdb_py_roundn((t - p) / p * 100, 1);
        if (isinf(d) && !quirks) delta[0] = '\0';
        else fmt_float(delta, sizeof delta, d);
    } else if (e->tc.is_int ? e->tc.i > 0 : t > 0) {
        snprintf(delta, sizeof delta, "%s", quirks ? "inf" : ""); /* an infinite ratio: empty cell by default */
    } else {
        snprintf(delta, sizeof delta, "0");
    }
    snprintf(tcc, sizeof tcc, "%lld", e->tc_count);
    snprintf(pc, sizeof pc, "%lld", e->prof_count);
    opdb_span cells[8] = {r->kt, r->shape, opdb_span_cstr(tc), opdb_span_cstr(prof), opdb_span_cstr(delta),
                          opdb_span_cstr(tcc), opdb_span_cstr(pc), opdb_span_cstr(e->source ? e->source : "")};
    opdb_csv_write_record(out, cells, 8);
}

static row_out *make_rows(const table *t) {
    row_out *rows = opdb_xcalloc(t->keys.n + 1, sizeof *rows);
    for (size_t i = 0; i < t->keys.n; i++) {
        row_out *r = &rows[i];
        const entry *e = &t->e[i];
        opdb_span k = t->keys.key[i];
        r->e = e;
        r->kt = opdb_span_make(k.p, e->kt_len);
        r->shape = opdb_span_make(k.p + e->kt_len + 1, k.n - e->kt_len - 1);
        r->tc_r = e->tc.is_int ? e->tc.f : opdb_py_roundn(e->tc.f, 2);
        r->prof_r = e->has_prof ? opdb_py_roundn(e->prof, 2) : 0.0;
        r->sort_key = r->prof_r > r->tc_r ? r->prof_r : r->tc_r; /* Python max(a, b) */
    }
    qsort(rows, t->keys.n, sizeof *rows, cmp_rows);
    return rows;
}

static void render_csv(const table *t, bool quirks, opdb_strbuf *out) {
    static const char *const cols[8] = {"kernel_type", "shape_key", "tc_dur_us", "prof_dur_us",
                                        "delta_pct",   "tc_count",  "prof_count", "source"};
    opdb_span hdr[8];
    for (size_t i = 0; i < 8; i++) hdr[i] = opdb_span_cstr(cols[i]);
    opdb_csv_write_record(out, hdr, 8);
    row_out *rows = make_rows(t);
    for (size_t i = 0; i < t->keys.n; i++) write_row(out, &rows[i], quirks);
    free(rows);
}

static int write_output(const opdb_shapecmp_opts *o, const opdb_strbuf *csv, opdb_err *err) {
    if (!o->quirks) { /* the reference needs the folder to exist */
        char *parent = opdb_path_parent(o->output);
        int rc = opdb_mkdirs(parent, err);
        free(parent);
        if (rc) return rc;
    }
    return opdb_atomic_write(o->output, csv->p, csv->n, err);
}

static void table_free(table *t) {
    for (size_t i = 0; i < t->keys.n; i++) free(t->e[i].source);
    free(t->e);
    m6_keys_free(&t->keys);
    for (size_t i = 0; i < t->shape_raw.n; i++) free(t->shape_key[i]);
    free(t->shape_key);
    m6_keys_free(&t->shape_raw);
    opdb_sb_free(&t->kbuf);
    opdb_sb_free(&t->shape);
}

static int shapecmp_run(const opdb_shapecmp_opts *o, FILE *out, size_t *rows, opdb_err *err) {
    *rows = 0;
    if (m6_check_inputs(o->tc_trace, o->prof_trace, err)) return -1;
    table t;
    memset(&t, 0, sizeof t);
    m6_keys_init(&t.keys);
    m6_keys_init(&t.shape_raw);
    opdb_sb_init(&t.kbuf);
    opdb_sb_init(&t.shape);
    tc_ctx c = {&t, o, err, {0}};
    opdb_skd_init(&c.skd);
    static const char *const fields[] = {"ph", "dur", NULL},
                             *const args[] = {"kernel_type", "source", "simulation_shapes", "sub_kernel_durations", NULL};
    int rc = opdb_trace_read_some(o->tc_trace, fields, args, on_event, &c, err);
    opdb_skd_free(&c.skd);
    if (rc == 0 && err->code) rc = -1; /* stopped by the callback */
    if (rc == 0) rc = prof_side(&t, o, err);
    if (rc == 0) {
        opdb_strbuf csv;
        opdb_sb_init(&csv);
        render_csv(&t, o->quirks, &csv);
        *rows = t.keys.n;
        size_t both = 0;
        for (size_t i = 0; i < t.keys.n; i++) both += t.e[i].has_tc && t.e[i].has_prof;
        if (!o->quirks && !*rows) opdb_warn_nothing("no (kernel type, shape) rows in either trace");
        else if (!o->quirks && !both)
            opdb_warn_nothing("no (kernel type, shape) is in both traces: %zu row(s), none compared", *rows);
        if (o->output && *o->output) {
            rc = write_output(o, &csv, err);
            if (rc == 0) fprintf(out, "Generated %zu per-shape comparison rows \xe2\x86\x92 %s\n", *rows, o->output);
        } else {
            fwrite(csv.p, 1, csv.n, out);
        }
        opdb_sb_free(&csv);
    }
    table_free(&t);
    return rc;
}

static void shapecmp_defaults(opdb_shapecmp_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_shapecmp_opts, shapecmp_defaults)

int opdb_shapecmp_run(const opdb_shapecmp_opts *o, FILE *out, size_t *rows, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_shapecmp_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = shapecmp_run(o, out, rows, err);
    opdb_call_leave(&saved);
    return rc;
}
