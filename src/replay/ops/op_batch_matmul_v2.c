/* BatchMatMulV2 (docs/REPLAY-OPS.md §2.3): a 2-D first input follows the
 * MatMulV2 rule; otherwise out0 (b,m,n) = in0 (b,m,k) . in1, with in1 given
 * as (b,k,n) or as (b,n,k) read transposed. */
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/ops/matmul_rule.h"
#include "replay/ops/ops.h"
#include "opdb/schema.h"

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    char sh[OPDB_MAX_TENSORS][128];
    opdb_tensor first;
    size_t ns = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_SHAPES), false, sh, OPDB_MAX_TENSORS);
    if (ns >= 1 && opdb_replay_shape(sh[0], &first, err) == 0 && first.ndim == 2)
        return opdb_matmul_plan(row, p, true, err);
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, -1, err)) return -1;
    if (p->nin < 2) return opdb_fail(err, OPDB_ERR_RUNTIME, "BatchMatMulV2 expects at least two inputs, got %d", p->nin);
    const opdb_tensor *a = &p->in[0], *b = &p->in[1];
    opdb_tensor *c = &p->out[0];
    if (p->nout < 1 || c->ndim != 3 || a->ndim != 3 || b->ndim != 3 || a->dims[0] != c->dims[0] ||
        a->dims[1] != c->dims[1] || b->dims[0] != c->dims[0])
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "BatchMatMulV2 expects in0 (b,m,k), in1 (b,k,n) or (b,n,k) and out0 (b,m,n)");
    opdb_gemm g = {c->dims[0], c->dims[1], c->dims[2], a->dims[2], false, 0, 0};
    if (b->dims[1] == g.k && b->dims[2] == g.n)
        g.trans_b = false;
    else if (b->dims[1] == g.n && b->dims[2] == g.k)
        g.trans_b = true;
    else
        return opdb_fail(err, OPDB_ERR_RUNTIME, "BatchMatMulV2: in1 (%lld,%lld,%lld) matches neither (b,k,n) nor (b,n,k)",
                         (long long)b->dims[0], (long long)b->dims[1], (long long)b->dims[2]);
    if (opdb_gemm_check("BatchMatMulV2", a, b, err)) return -1;
    c->dtype = a->dtype;
    c->nz = false;
    p->nout = 1;
    opdb_gemm_account(p, &g);
    return 0;
}

const opdb_op_def opdb_op_BatchMatMulV2 = {"BatchMatMulV2", NULL, plan, NULL, opdb_matmul_cpu, NULL};
