/* TransposeBatchMatMul (docs/REPLAY-OPS.md §2.3): (B,M,K) . (B,K,N) with the
 * output permuted [1,0,2] to (M,B,N); written straight into place through
 * the GEMM's output leading dimension. */
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/ops/matmul_rule.h"
#include "replay/ops/ops.h"
#include "opdb/schema.h"

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    char fm[OPDB_MAX_TENSORS][128], dt[OPDB_MAX_TENSORS][128];
    size_t nf = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_FORMATS), false, fm, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_DTYPES), false, dt, OPDB_MAX_TENSORS);
    char sh[OPDB_MAX_TENSORS][128];
    size_t ns = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_SHAPES), false, sh, OPDB_MAX_TENSORS);
    if (ns != 2) return opdb_fail(err, OPDB_ERR_RUNTIME, "TransposeBatchMatMul expects exactly 2 inputs, got %zu", ns);
    if (nd != 2) return opdb_fail(err, OPDB_ERR_RUNTIME, "TransposeBatchMatMul expects exactly two input dtypes, got %zu", nd);
    if (nf != 2 || strcmp(fm[0], "ND") != 0 || strcmp(fm[1], "ND") != 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "TransposeBatchMatMul expects input formats ND;ND");
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 2, err)) return -1;
    const opdb_tensor *a = &p->in[0], *b = &p->in[1];
    if (a->ndim != 3 || b->ndim != 3 || a->dims[0] != b->dims[0] || a->dims[2] != b->dims[1])
        return opdb_fail(err, OPDB_ERR_RUNTIME, "TransposeBatchMatMul expects 3-D inputs (B,M,K) and (B,K,N)");
    const int64_t B = a->dims[0], M = a->dims[1], K = a->dims[2], N = b->dims[2];
    if (K % 128 || N % 128)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "TransposeBatchMatMul needs K and N divisible by 128, got K=%lld N=%lld",
                         (long long)K, (long long)N);
    const opdb_tensor *o = &p->out[0];
    if (p->nout != 1 || o->ndim != 3 || o->dims[0] != M || o->dims[1] != B || o->dims[2] != N)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "TransposeBatchMatMul expects exactly one output (M,B,N) = (%lld,%lld,%lld)",
                         (long long)M, (long long)B, (long long)N);
    if (opdb_gemm_check("TransposeBatchMatMul", a, b, err)) return -1;
    p->out[0].dtype = a->dtype;
    /* batch i writes rows m*(B*N) + i*N: leading dim B*N, batch stride N */
    opdb_gemm g = {B, M, N, K, false, B * N, N};
    opdb_gemm_account(p, &g);
    return 0;
}

const opdb_op_def opdb_op_TransposeBatchMatMul = {"TransposeBatchMatMul", NULL, plan, NULL, opdb_matmul_cpu, NULL};
