/* Prof side of `compare` (docs/ANALYSIS.md §2.5): per-type totals of a
 * forward-pass kernel CSV with hcom rows de-duplicated (each collective is
 * listed once per stream) and AicpuKernel control rows dropped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/compare.h"
#include "core/call.h"
#include "opdb/ingest.h"
#include "opdb/csv.h"
#include "opdb/pystr.h"

#define PROF_MAX_FIELDS 4096

/* One de-duplicated collective: (start key, type) -> max duration. */
typedef struct hcom_group {
    double start;      /* trunc(start) (reference) or the exact start */
    char *kt;
    size_t ktlen;
    double max;
} hcom_group;

typedef struct hcom_set {
    hcom_group *v;
    size_t n, cap;
    opdb_hindex ix;
} hcom_set;

static void hcom_put(hcom_set *s, double start, opdb_span kt, double dur) {
    if (start == 0.0) start = 0.0; /* -0.0 and 0.0 are one key */
    uint64_t h = opdb_hash_bytes(&start, sizeof start, opdb_hash_bytes(kt.p, kt.n, 3));
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&s->ix, h); opdb_hprobe_next(&p, &i);) {
        hcom_group *g = &s->v[i];
        if (g->start == start && g->ktlen == kt.n && memcmp(g->kt, kt.p, kt.n) == 0) {
            if (dur > g->max) g->max = dur; /* max(prev, dur) keeps prev unless dur is larger */
            return;
        }
    }
    OPDB_ALLOC_GROW(s->v, s->n + 1, s->cap);
    hcom_group *g = &s->v[s->n];
    g->start = start;
    g->kt = opdb_xmalloc(kt.n + 1);
    memcpy(g->kt, kt.p, kt.n);
    g->kt[kt.n] = '\0';
    g->ktlen = kt.n;
    g->max = dur > 0.0 ? dur : 0.0; /* max(0.0, dur) */
    opdb_hindex_add(&s->ix, h, (uint32_t)s->n);
    s->n++;
}

static void hcom_free(hcom_set *s) {
    for (size_t i = 0; i < s->n; i++) free(s->v[i].kt);
    free(s->v);
    opdb_hindex_free(&s->ix);
}

static bool ends_with(opdb_span s, const char *suffix) {
    size_t k = strlen(suffix);
    return s.n >= k && memcmp(s.p + s.n - k, suffix, k) == 0;
}

typedef struct prof_reader {
    const char *path;
    const opdb_cmp_opts *o;
    opdb_csv_file csv;
    int c_type, c_dur, c_start;
    unsigned long long skipped, first_skipped_line;
} prof_reader;

static int short_row(prof_reader *r, const char *col, opdb_err *err) {
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: line %llu: row has %d cells, too few for column %s", r->path,
                     (unsigned long long)r->csv.x.rec_line, r->csv.nf, col);
}

static void skip_row(prof_reader *r) {
    if (!r->skipped++) r->first_skipped_line = r->csv.x.rec_line;
}

/* One data row; returns 1 to use it, 0 to skip it, -1 on error. */
static int row_values(prof_reader *r, opdb_span *kt, double *dur, double *start, opdb_err *err) {
    const opdb_field *f = r->csv.f;
    int nf = r->csv.nf;
    if (r->o->quirks && r->c_type >= nf) return short_row(r, "Type", err);
    *kt = opdb_py_strip(opdb_csv_cell(f, nf, r->c_type));
    if (!kt->n) return 0;
    *dur = 0.0;
    if (r->c_dur >= 0) {
        if (r->o->quirks && r->c_dur >= nf) return short_row(r, "Duration(us)", err);
        opdb_span d = opdb_csv_cell(f, nf, r->c_dur);
        if (!opdb_py_float(d.p, d.n, dur)) {
            if (r->o->quirks)
                return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: line %llu: Duration(us) '%.*s' is not a number", r->path,
                                 (unsigned long long)r->csv.x.rec_line, (int)(d.n > 64 ? 64 : d.n), d.p);
            skip_row(r);
            return 0;
        }
    }
    *start = 0.0;
    if (kt->n >= 5 && memcmp(kt->p, "hcom_", 5) == 0 && r->c_start >= 0) {
        if (r->o->quirks && r->c_start >= nf) return short_row(r, "Start Time(us)", err);
        opdb_span s = opdb_py_strip(opdb_csv_cell(f, nf, r->c_start));
        bool ok = opdb_py_float(s.p, s.n, start);
        if (r->o->quirks) { /* int(float(s)), 0 on ValueError; int(inf) is an OverflowError */
            if (ok && isinf(*start))
                return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: line %llu: Start Time(us) '%.*s' cannot be an integer",
                                 r->path, (unsigned long long)r->csv.x.rec_line, (int)s.n, s.p);
            *start = ok && !isnan(*start) ? trunc(*start) : 0.0;
        } else if (!ok || isnan(*start)) {
            skip_row(r);
            return 0;
        }
    }
    return 1;
}

static int cmp_read_prof(const char *path, const opdb_cmp_opts *o, opdb_cmp_stats *out, opdb_err *err) {
    prof_reader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.o = o;
    if (opdb_csv_file_open(&r.csv, path, PROF_MAX_FIELDS, err)) return -1;
    if (o->quirks) { /* this reference tool keeps a BOM as part of the first header name */
        opdb_byte_reader_free(&r.csv.br);
        opdb_byte_reader_init(&r.csv.br, r.csv.fd, 0, 1 << 18);
    }
    hcom_set hs;
    memset(&hs, 0, sizeof hs);
    int rc = opdb_csv_file_next(&r.csv, false);
    if (rc == 1) {
        r.c_type = opdb_csv_col(r.csv.f, r.csv.nf, "Type");
        r.c_dur = opdb_csv_col(r.csv.f, r.csv.nf, "Duration(us)");
        r.c_start = opdb_csv_col(r.csv.f, r.csv.nf, "Start Time(us)");
        if (!o->quirks && (r.c_type < 0 || r.c_dur < 0)) { /* the reference reads such a file as no kernels */
            opdb_input_kind kind = OPDB_INPUT_CSV;
            opdb_err e;
            opdb_err_clear(&e);
            bool json = opdb_input_detect(path, &kind, &e) == 0 && kind == OPDB_INPUT_JSON;
            opdb_csv_file_close(&r.csv);
            return opdb_fail(err, OPDB_ERR_RUNTIME,
                             "%s: %s, not the profiler's kernel_details CSV a --prof-trace must be (its header has "
                             "no %s column)",
                             path, json ? "a JSON document (a trace?)" : "a CSV of another kind",
                             r.c_type < 0 ? "Type" : "Duration(us)");
        }
        while ((rc = opdb_csv_file_next(&r.csv, false)) == 1) {
            opdb_span kt;
            double dur, start;
            int use = r.c_type < 0 ? 0 : row_values(&r, &kt, &dur, &start, err);
            if (use < 0) {
                rc = -1;
                break;
            }
            if (!use) continue;
            if (kt.n >= 5 && memcmp(kt.p, "hcom_", 5) == 0) {
                hcom_put(&hs, start, kt, dur);
            } else if (!ends_with(kt, "AicpuKernel")) {
                opdb_cmp_stat *st = opdb_cmp_stats_get(out, kt.p, kt.n);
                st->total += dur;
                st->count++;
            }
        }
    }
    if (rc < 0 && !err->code) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    if (rc >= 0) {
        for (size_t i = 0; i < hs.n; i++) {
            opdb_cmp_stat *st = opdb_cmp_stats_get(out, hs.v[i].kt, hs.v[i].ktlen);
            st->total += hs.v[i].max;
            st->count++;
        }
        if (r.skipped)
            opdb_warn("%s: skipped %llu row(s) with an empty or non-numeric Duration(us) or hcom Start Time(us) "
                      "(first at line %llu)",
                      path, r.skipped, r.first_skipped_line);
    }
    hcom_free(&hs);
    opdb_csv_file_close(&r.csv);
    return rc < 0 ? -1 : 0;
}

int opdb_cmp_read_prof(const char *path, const opdb_cmp_opts *o, opdb_cmp_stats *out, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_cmp_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = cmp_read_prof(path, o, out, err);
    opdb_call_leave(&saved);
    return rc;
}
