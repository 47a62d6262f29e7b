/* What the communication, composite, decomposer and moe_fused paths share:
 * the topology tier of a rank group, the communication CSV query (exact
 * row, bracket, alpha-beta fit) and its explain text. */
#ifndef OPDB_QUERY_COMM_H
#define OPDB_QUERY_COMM_H

#include "query/query_internal.h"

/* One communication CSV answer. */
typedef struct q_comm_res {
    bool found, interp;
    bool failed;                 /* an error result was set (bad_csv, bad_cell) */
    double lat;
    const char *reason;          /* on a miss: csv_not_found, csv_format_raw, shape_mismatch */
    /* explain */
    const q_ktable *tab;
    int64_t B, n;
    int tier;                    /* -1 = no tier filter */
    bool alpha_beta, exact, clamped, fitted;
    double lo, hi, alpha, beta;
    uint32_t row_lo, row_hi;     /* rows used (row_hi = row_lo for an exact or lo = hi answer) */
} q_comm_res;

/* The topology tier of rank group g under the run's grid: 0 with *tier set
 * (-1 = no grid, no filter), or -1 with an error result set. */
int q_comm_tier(q_ctx *c, const qv *g, int *tier);
/* The tier of ranks r[0..n) under grid dims d[0..m); -1 when m is 0. */
int q_comm_tier_of(const int64_t *r, size_t n, const int *d, size_t m);

/* The query of kernel kt's CSV for B bytes on n devices (tier -1: any). */
void q_comm_csv(q_ctx *c, const char *kt, int64_t B, int64_t n, int tier, bool alpha_beta, q_comm_res *o);
/* The explain object of one answer (`{"message_bytes": ...}`). */
void q_comm_explain(const q_comm_res *o, opdb_strbuf *sb);

/* Least squares y = alpha + beta x over n points, centred form; false when
 * the x values do not spread. */
bool q_comm_fit(const double *x, const double *y, size_t n, double *alpha, double *beta);

/* a row's latency in the exact path's column order without the core
 * envelope (communication and the opaque MLAPO kernel); false: none */
bool q_plain_row_latency(const q_ktable *t, size_t r, double *lat);

/* frees the per-table communication index (slot 1 of q_ktable.ext) */
void q_comm_index_free(void *p);

/* moe_fused (moe.c): the 7 physical inputs of the fused kernel from the
 * op's arguments (false when they cannot be built), and the part after the
 * kernel's own row: embedded compute and communication on top of latency
 * dfc. interp_conf > 0: dfc was interpolated, the answer keeps that
 * confidence unless it becomes PARTIAL. */
bool q_moe_project(q_ctx *c, q_tins *X);
void q_moe_embedded(q_ctx *c, const q_entry *e, const char *dfc_kernel, double dfc, const char *rule,
                    double interp_conf);

/* One communication row held out (leave-one-out): what a query of its own
 * bytes, devices and tier gives from the other rows of its group. */
typedef struct q_comm_loo_case {
    uint32_t row;
    double mb, nd, actual;
    bool found;                  /* an answer came back */
    double lat;
    double lo, hi;               /* the bracket's bytes (equal: a repeat of the row's bytes) */
    bool interior;               /* two other rows of the group or more, one at or below its bytes, one at or above */
} q_comm_loo_case;
/* Every row of kt's table with numeric bytes and a latency, held out in
 * turn, answered as q_comm_csv would (alpha_beta: the fit over the other
 * rows, clamped to the bracket); false when the table is raw. */
bool q_comm_loo(q_ktable *t, bool alpha_beta, void (*fn)(void *ctx, const q_comm_loo_case *k), void *ctx);

/* Python round(x, 2), as the sub-kernel durations are reported */
double q_round2(double x);

#endif
