/* Plan/fill pieces shared by GroupedMatmul and GroupedMatmulSwigluQuant
 * (docs/REPLAY-OPS.md §2.3). */
#ifndef OPDB_REPLAY_GROUPED_RULE_H
#define OPDB_REPLAY_GROUPED_RULE_H

#include "opdb/replay.h"
#include "replay/cpu/kernels.h"
#include "replay/ops/plan_util.h"

/* Slot i as a tensor when present (make with dtype default dflt_dt), else absent. */
int opdb_grouped_slot(const opdb_replay_row *row, const opdb_row_slots *s, size_t i, const char *dflt_dt,
                      opdb_tensor *t, opdb_err *err);
/* group_list (g,) of dtype dt from slot i (g = slot shape[0]); missing -> error. */
int opdb_grouped_list(const opdb_replay_row *row, const opdb_row_slots *s, size_t i, opdb_tensor *t, opdb_err *err);
/* Check x (.., k) against weight (G, k, n) or (k, n); sets m, n, k, groups. */
int opdb_grouped_shapes(const opdb_replay_row *row, const opdb_tensor *x, const opdb_tensor *w,
                        const opdb_tensor *group_list, int64_t *m, int64_t *n, int64_t *k, opdb_err *err);
/* Input positions both operators use. */
enum { OPDB_GR_X, OPDB_GR_W, OPDB_GR_WSCALE, OPDB_GR_XSCALE, OPDB_GR_LIST, OPDB_GR_COUNT };
/* Record g in iparam[0..3] and fill flops (2mnk + extra), bytes and workspace. */
void opdb_grouped_account(opdb_op_problem *p, const opdb_grouped *g, double extra_flops);
/* op fill(): group_list = cumulative even split of the m rows; both scales = 1. */
int opdb_grouped_fill_op(opdb_op_problem *p, uint64_t seed, opdb_err *err);
/* The grouped GEMM of p into the workspace; returns y (m, n) fp32 (its start). */
float *opdb_grouped_compute(const opdb_op_problem *p, void *ws, opdb_grouped *g);

#endif
