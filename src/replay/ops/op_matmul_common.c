/* MatMulCommon: the MatMulV2 rule with at least two inputs; extras are built
 * but unused (docs/REPLAY-OPS.md §2.3). */
#include "replay/ops/matmul_rule.h"
#include "replay/ops/ops.h"

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    return opdb_matmul_plan(row, p, false, err);
}

const opdb_op_def opdb_op_MatMulCommon = {"MatMulCommon", NULL, plan, NULL, opdb_matmul_cpu, NULL};
