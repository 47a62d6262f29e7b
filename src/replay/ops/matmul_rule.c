/* The MatMulV2 rule (spec replay.md §2.3), shared by MatMulV2, MatMulV3,
 * MatMulCommon and the 2-D case of BatchMatMulV2. */
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/ops/matmul_rule.h"

int opdb_matmul_plan(const opdb_replay_row *row, opdb_op_problem *p, bool exact, opdb_err *err) {
    char sh[OPDB_MAX_TENSORS][128], fm[OPDB_MAX_TENSORS][128], dt[OPDB_MAX_TENSORS][128];
    size_t ns = opdb_replay_split(row->cell(row, "Input Shapes"), false, sh, OPDB_MAX_TENSORS);
    size_t nf = opdb_replay_split(row->cell(row, "Input Formats"), false, fm, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, "Input Data Types"), false, dt, OPDB_MAX_TENSORS);
    if (exact ? (ns != 2 || nf != 2 || nd != 2) : (ns < 2 || nf < 2 || nd < 2))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects %s two inputs", row->kernel_type,
                         exact ? "exactly" : "at least");
    memset(p, 0, sizeof *p);
    p->nin = (int)ns;
    for (size_t i = 0; i < ns; i++) /* extras (MatMulCommon) are built like the reference, then unused */
        if (opdb_replay_make(sh[i], i < nf ? fm[i] : "ND", i < nd ? dt[i] : "DT_FLOAT", i == 1, &p->in[i], err))
            return -1;
    /* make(in1, transpose=true) validated the (N, K) weight; keep its storage
     * (N, K) and let the GEMM read it transposed, as the device does. */
    opdb_tensor *a = &p->in[0], *b = &p->in[1];
    int64_t kdim = b->dims[0];
    b->dims[0] = b->dims[1];
    b->dims[1] = kdim;
    if (opdb_gemm_check(row->kernel_type, a, b, err)) return -1;
    if (a->ndim < 1 || a->dims[a->ndim - 1] != kdim)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: mat1 and mat2 shapes cannot be multiplied (%s and %s, K=%lld)",
                         row->kernel_type, sh[0], sh[1], (long long)kdim);
    opdb_gemm g = {1, 1, b->dims[0], kdim, true, 0, 0};
    opdb_tensor *c = &p->out[0];
    c->dtype = a->dtype;
    c->ndim = a->ndim;
    for (int i = 0; i + 1 < a->ndim; i++) g.m *= (c->dims[i] = a->dims[i]);
    c->dims[c->ndim - 1] = g.n;
    p->nout = 1;
    opdb_gemm_account(p, &g);
    return 0;
}

int opdb_matmul_cpu(const opdb_op_problem *p, void *ws, opdb_err *err) {
    opdb_gemm g = opdb_gemm_load(p);
    return opdb_gemm_run(&g, &p->in[0], &p->in[1], (opdb_tensor *)&p->out[0], ws, err);
}
