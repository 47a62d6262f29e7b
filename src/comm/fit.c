/* alpha-beta prediction per tier (docs/COMM.md §5) and the least-squares fit
 * t = alpha + beta*m reported beside the reference verdict. */
#include <math.h>
#include <stdlib.h>

#include "opdb/comm.h"

static const double k_bw[3] = {196e9, 196e9, 224e9}, k_lat[3] = {5.5e-6, 0.5e-6, 0.2e-6};

double opdb_comm_predict_us(opdb_comm_op op, long long bytes, long long n, int tier) {
    if (n <= 1) return 0.0;
    double bw = k_bw[tier] * 0.7, lat = k_lat[tier], m = (double)bytes, nn = (double)n, l2 = log2(nn), a, b;
    switch (op) {
    case OPDB_COMM_ALL_REDUCE:
        a = 2 * (nn - 1) * lat + 2 * (nn - 1) * m / nn / bw;
        b = 2 * l2 * lat + 2 * m / bw;
        break;
    case OPDB_COMM_ALL_GATHER:
        a = (nn - 1) * lat + (nn - 1) * m / bw;
        b = l2 * lat + (nn - 1) * m / bw;
        break;
    case OPDB_COMM_REDUCE_SCATTER:
        a = (nn - 1) * lat + (nn - 1) * m / nn / bw;
        b = l2 * lat + (nn - 1) * m / nn / bw;
        break;
    default:
        a = (nn - 1) * lat + m / bw;
        b = l2 * lat + m / bw;
    }
    return (a < b ? a : b) * 1e6;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

void opdb_comm_fit_points(const double *m, const double *t, size_t n, opdb_comm_fit *f) {
    double sm = 0, st = 0;
    for (size_t i = 0; i < n; i++) sm += m[i], st += t[i];
    double mm = sm / (double)n, mt = st / (double)n, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) sxx += (m[i] - mm) * (m[i] - mm), sxy += (m[i] - mm) * (t[i] - mt);
    f->n = n;
    f->beta_us_per_byte = sxx > 0 ? sxy / sxx : 0.0;
    f->alpha_us = mt - f->beta_us_per_byte * mm;
    double ssr = 0, sst = 0, *rel = opdb_xmalloc((n ? n : 1) * sizeof *rel);
    for (size_t i = 0; i < n; i++) {
        double r = t[i] - (f->alpha_us + f->beta_us_per_byte * m[i]);
        ssr += r * r;
        sst += (t[i] - mt) * (t[i] - mt);
        rel[i] = fabs(r) / t[i];
    }
    f->r2 = sst > 0 ? 1.0 - ssr / sst : (ssr == 0 ? 1.0 : 0.0);
    qsort(rel, n, sizeof *rel, cmp_double);
    f->med_rel_res = n % 2 ? rel[n / 2] : (rel[n / 2 - 1] + rel[n / 2]) / 2;
    f->max_rel_res = rel[n - 1];
    free(rel);
}
