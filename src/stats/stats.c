/* Median by quickselect, std by the reference's one-pass formula. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include "opdb/stats.h"

static inline void swap(double *a, double *b) {
    double t = *a;
    *a = *b;
    *b = t;
}

/* Places the k-th smallest at v[k], smaller ones before it, larger after. */
static void select_kth(double *v, ptrdiff_t n, ptrdiff_t k) {
    ptrdiff_t lo = 0, hi = n - 1;
    while (hi > lo) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        /* median of three as pivot */
        if (v[mid] < v[lo]) swap(&v[mid], &v[lo]);
        if (v[hi] < v[lo]) swap(&v[hi], &v[lo]);
        if (v[mid] < v[hi]) swap(&v[mid], &v[hi]);
        double pivot = v[hi];
        /* three-way partition: [lo,lt) < pivot, [lt,gt] == pivot, (gt,hi] > pivot */
        ptrdiff_t lt = lo, i = lo, gt = hi;
        while (i <= gt) {
            if (v[i] < pivot)
                swap(&v[lt++], &v[i++]);
            else if (v[i] > pivot)
                swap(&v[i], &v[gt--]);
            else
                i++;
        }
        if (k < lt)
            hi = lt - 1;
        else if (k > gt)
            lo = gt + 1;
        else
            return;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double opdb_median(double *v, size_t n) {
    bool has_nan = false;
    for (size_t i = 0; i < n && !has_nan; i++) has_nan = isnan(v[i]);
    if (has_nan) {
        /* Comparisons with NaN are unordered; keep it simple and deterministic. */
        qsort(v, n, sizeof *v, cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    size_t k = n / 2;
    select_kth(v, (ptrdiff_t)n, (ptrdiff_t)k);
    if (n % 2) return v[k];
    double below = v[0];
    for (size_t i = 1; i < k; i++)
        if (v[i] > below) below = v[i];
    return (below + v[k]) / 2;
}

double opdb_pstd_naive(double sum, double sumsq, double n) {
    double mean = sum / n;
    double var = sumsq / n - mean * mean;
    return sqrt(var > 0.0 ? var : 0.0);
}
