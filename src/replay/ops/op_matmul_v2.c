/* MatMulV2: C(M,N) = A(M,K) . B(N,K)^T, exactly two inputs (docs/REPLAY-OPS.md §2.3). */
#include "replay/ops/matmul_rule.h"
#include "replay/ops/ops.h"

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    return opdb_matmul_plan(row, p, true, err);
}

const opdb_op_def opdb_op_MatMulV2 = {"MatMulV2", NULL, plan, NULL, opdb_matmul_cpu, NULL};
