/* Row rules shared by the matmul family (docs/REPLAY-OPS.md §2.3). */
#ifndef OPDB_REPLAY_MATMUL_RULE_H
#define OPDB_REPLAY_MATMUL_RULE_H

#include "opdb/replay.h"

/* MatMulV2/V3 (exact) and MatMulCommon (at least two; extras built, unused):
 * A = make(in0), B = make(in1, transpose) with the weight stored (N, K). */
int opdb_matmul_plan(const opdb_replay_row *row, opdb_op_problem *p, bool exact, opdb_err *err);
/* cpu_run of every op planned by opdb_matmul_plan / the batched rules. */
int opdb_matmul_cpu(const opdb_op_problem *p, void *ws, opdb_err *err);

#endif
