/* `compare --shapes`: the per-shape CSV that `opdb shape-compare` writes
 * (docs/ANALYSIS.md §3.4), read for the HTML report's drill-down. Cells are
 * kept as written so that the page shows the file's own numbers. */
#include <stdlib.h>
#include <string.h>

#include "opdb/compare.h"
#include "opdb/csv.h"
#include "opdb/pystr.h"

enum { C_KT, C_SHAPE, C_TC, C_PROF, C_DELTA, C_TCN, C_PROFN, C_SOURCE, NCOLS };
static const char *const k_cols[NCOLS] = {"kernel_type", "shape_key", "tc_dur_us", "prof_dur_us",
                                          "delta_pct",   "tc_count",  "prof_count", "source"};

static char *cell_dup(const opdb_csv_file *c, int col) {
    opdb_span s = opdb_csv_cell(c->f, c->nf, col);
    char *p = opdb_xmalloc(s.n + 1);
    memcpy(p, s.p, s.n);
    p[s.n] = '\0';
    return p;
}

static bool is_count(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

/* Checks the numeric cells of row r (read from line `line`). */
static int check_row(const char *path, unsigned long long line, opdb_cmp_shape_row *r, opdb_err *err) {
    const char *what = NULL, *cell = NULL, *kind = "a number";
    if (!opdb_py_float(r->tc_dur, strlen(r->tc_dur), &r->tc)) what = k_cols[C_TC], cell = r->tc_dur;
    else if (!opdb_py_float(r->prof_dur, strlen(r->prof_dur), &r->prof)) what = k_cols[C_PROF], cell = r->prof_dur;
    else if (!is_count(r->tc_count)) what = k_cols[C_TCN], cell = r->tc_count, kind = "a whole number";
    else if (!is_count(r->prof_count)) what = k_cols[C_PROFN], cell = r->prof_count, kind = "a whole number";
    else if (*r->delta && !opdb_py_float(r->delta, strlen(r->delta), &(double){0}))
        what = k_cols[C_DELTA], cell = r->delta;
    if (!what) return 0;
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: %s '%s' is not %s", path, line, what, cell, kind);
}

static void row_free(opdb_cmp_shape_row *r) {
    char *cells[] = {r->kt, r->shape, r->tc_dur, r->prof_dur, r->delta, r->tc_count, r->prof_count, r->source};
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) free(cells[i]);
}

int opdb_cmp_read_shapes(const char *path, opdb_cmp_shapes *out, opdb_err *err) {
    opdb_csv_file c;
    if (opdb_csv_file_open(&c, path, 64, err)) return -1;
    int col[NCOLS];
    int rc = opdb_csv_file_next(&c, false);
    if (rc == 0) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: empty file: expected the CSV of opdb shape-compare", path);
    for (int k = 0; rc == 1 && k < NCOLS; k++)
        if ((col[k] = opdb_csv_col(c.f, c.nf, k_cols[k])) < 0)
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: no '%s' column: expected the CSV of opdb shape-compare", path,
                           k_cols[k]);
    while (rc == 1 && (rc = opdb_csv_file_next(&c, false)) == 1) {
        unsigned long long line = (unsigned long long)c.x.rec_line;
        opdb_cmp_shape_row r;
        char **dst[NCOLS] = {&r.kt, &r.shape, &r.tc_dur, &r.prof_dur, &r.delta, &r.tc_count, &r.prof_count, &r.source};
        for (int k = 0; k < NCOLS; k++) *dst[k] = cell_dup(&c, col[k]);
        if (check_row(path, line, &r, err)) {
            row_free(&r);
            rc = -1;
            break;
        }
        OPDB_ALLOC_GROW(out->v, out->n + 1, out->cap);
        out->v[out->n++] = r;
    }
    if (rc < 0 && !err->code) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    opdb_csv_file_close(&c);
    if (rc < 0) {
        opdb_cmp_shapes_free(out);
        return -1;
    }
    if (!out->n) opdb_warn("%s: no per-shape rows: the HTML report has no drill-down", path);
    return 0;
}

void opdb_cmp_shapes_free(opdb_cmp_shapes *s) {
    for (size_t i = 0; i < s->n; i++) row_free(&s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}
