/* opdb check's figures: percentiles, a cell's statistics, the worst answers
 * (used by the run, the reports and the calibration; calls none of them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check_internal.h"

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double ck_percentile(const double *x, size_t n, double q) {
    if (!n) return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    if (i + 1 >= n) return x[n - 1];
    double f = pos - (double)i;
    return x[i] + (x[i + 1] - x[i]) * f;
}

ck_stats ck_stats_of(double *err, size_t n, size_t rows) {
    ck_stats s = {rows, n, NAN, NAN, NAN, NAN, NAN};
    if (!n) return s;
    qsort(err, n, sizeof *err, cmp_d);
    s.bias = ck_percentile(err, n, 0.5);
    double *a = malloc(n * sizeof *a);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = fabs(err[i]);
        w += a[i] <= 0.10;
    }
    qsort(a, n, sizeof *a, cmp_d);
    s.median = ck_percentile(a, n, 0.5);
    s.p90 = ck_percentile(a, n, 0.9);
    s.p99 = ck_percentile(a, n, 0.99);
    s.within10 = (double)w / (double)n;
    free(a);
    return s;
}


ck_stats ck_cell_stats(const ck_cell *c) {
    double *tmp = malloc((c->n ? c->n : 1) * sizeof *tmp);
    if (c->n) memcpy(tmp, c->err, c->n * sizeof *tmp);
    ck_stats st = ck_stats_of(tmp, c->n, c->rows);
    free(tmp);
    return st;
}

static int cmp_worst_ctx(const ck_run *R, uint32_t x, uint32_t y) {
    const ck_answer *a = &R->ans[x], *b = &R->ans[y];
    double ea = fabs(a->predicted - a->actual) / a->actual, eb = fabs(b->predicted - b->actual) / b->actual;
    if (ea != eb) return ea > eb ? -1 : 1;
    int c = strcmp(R->tabs[a->table].file, R->tabs[b->table].file);
    if (c) return c;
    return a->line < b->line ? -1 : a->line > b->line;
}

size_t ck_worst(const ck_run *r, uint32_t *idx, size_t max) {
    /* a bounded insertion list: max is small */
    size_t n = 0;
    for (size_t i = 0; i < r->nans; i++) {
        if (isnan(r->ans[i].predicted)) continue;
        uint32_t x = (uint32_t)i;
        if (n == max && (max == 0 || cmp_worst_ctx(r, x, idx[n - 1]) >= 0)) continue;
        size_t j = n < max ? n++ : n - 1;
        while (j > 0 && cmp_worst_ctx(r, x, idx[j - 1]) < 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = x;
    }
    return n;
}

