/* Per-size statistics and nccl-tests' table format (src/common.cu of
 * nccl-tests: "%12li  %12li  %8s  %6s  %6i" then, per out-of-place/in-place,
 * "  %7s  %6.2f  %6.2f  %5s" with the time's decimals shrinking as it grows). */
#include <math.h>
#include <stdlib.h>

#include "opdb/comm.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void opdb_comm_stats_of(double *v, size_t n, opdb_comm_stats *s) {
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += v[i];
    s->min = v[0];
    s->max = v[n - 1];
    s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    /* p90: linear interpolation between closest ranks (numpy's default) */
    double pos = 0.9 * (double)(n - 1);
    size_t lo = (size_t)pos;
    s->p90 = lo + 1 < n ? v[lo] + (v[lo + 1] - v[lo]) * (pos - (double)lo) : v[lo];
    s->mean = sum / (double)n;
}

long long opdb_comm_count(opdb_comm_op op, long long bytes, const opdb_comm_dtype *dt, long long nd) {
    long long el = bytes / dt->size;
    if (op == OPDB_COMM_ALL_TO_ALL) return el / nd > 1 ? el / nd : 1;
    return el;
}

void opdb_comm_nccl_header(opdb_strbuf *sb) {
    opdb_sb_adds(sb, "#                                                              out-of-place                       "
                     "in-place          \n"
                     "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                     "algbw   busbw #wrong\n"
                     "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
                     "(GB/s)  (GB/s)       \n");
}

static void half(opdb_strbuf *sb, double us, long long total, double factor, long long wrong) {
    char t[32], w[32];
    if (us >= 10000.0) snprintf(t, sizeof t, "%7.0f", us);
    else if (us >= 100.0) snprintf(t, sizeof t, "%7.1f", us);
    else snprintf(t, sizeof t, "%7.2f", us);
    double algbw = us > 0 ? (double)total / 1.0e9 / (us / 1.0e6) : 0.0;
    if (wrong < 0) snprintf(w, sizeof w, "%5s", "N/A");
    else snprintf(w, sizeof w, "%5lld", wrong);
    opdb_sb_addf(sb, "  %7s  %6.2f  %6.2f  %5s", t, algbw, algbw * factor, w);
}

void opdb_comm_nccl_line(opdb_strbuf *sb, opdb_comm_op op, const opdb_comm_dtype *dt, long long bytes, int nranks,
                         double oop_us, long long oop_wrong, double ip_us, long long ip_wrong) {
    long long count = opdb_comm_count(op, bytes, dt, nranks);
    long long total = count * dt->size;
    if (op == OPDB_COMM_ALL_GATHER || op == OPDB_COMM_REDUCE_SCATTER || op == OPDB_COMM_ALL_TO_ALL)
        total *= nranks;
    int root = op == OPDB_COMM_BROADCAST ? 0 : -1;
    opdb_sb_addf(sb, "%12lld  %12lld  %8s  %6s  %6i", total, count, dt->nccl_name, opdb_comm_op_redop(op), root);
    double f = opdb_comm_busbw_factor(op, nranks);
    half(sb, oop_us, total, f, oop_wrong);
    half(sb, ip_us, total, f, ip_wrong);
    opdb_sb_addc(sb, '\n');
}

long opdb_comm_budget_iters(double budget_s, double iter_us) {
    if (!(iter_us > 0)) return OPDB_COMM_BUDGET_MAX_ITERS;
    double n = budget_s * 1e6 / iter_us;
    return n < 1 ? 1 : n > OPDB_COMM_BUDGET_MAX_ITERS ? OPDB_COMM_BUDGET_MAX_ITERS : (long)n;
}
