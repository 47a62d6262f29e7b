/* SwiGlu (docs/REPLAY-OPS.md §2.1): split the last dim into halves a, b and return
 * silu(a) * b = a / (1 + exp(-a)) * b (torch_npu.npu_swiglu, dim -1). */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int swiglu_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 1, err) || opdb_plan_need_float(row, &p->in[0], "input", err)) return -1;
    const opdb_tensor *x = &p->in[0];
    if (x->dims[x->ndim - 1] % 2)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "SwiGlu: last dim %lld is odd", (long long)x->dims[x->ndim - 1]);
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(x->dtype, x->ndim, x->dims);
    p->out[0].dims[x->ndim - 1] /= 2;
    p->flops = 4.0 * (double)opdb_tensor_numel(&p->out[0]);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

static int swiglu_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    const opdb_tensor *x = &p->in[0], *y = &p->out[0];
    int64_t h = y->dims[y->ndim - 1], rows = h ? opdb_tensor_numel(y) / h : 0;
    int64_t chunks = (h + OPDB_VEC_CHUNK - 1) / OPDB_VEC_CHUNK;
    OPDB_OMP_FOR(rows * h)
    for (int64_t u = 0; u < rows * chunks; u++) {
        OPDB_PIN();
        float a[OPDB_VEC_CHUNK], b[OPDB_VEC_CHUNK], e[OPDB_VEC_CHUNK];
        int64_t r = u / chunks, c = (u % chunks) * OPDB_VEC_CHUNK;
        size_t m = (size_t)(h - c < OPDB_VEC_CHUNK ? h - c : OPDB_VEC_CHUNK);
        opdb_vec_load(a, x->data, x->dtype, (size_t)(r * 2 * h + c), m);
        opdb_vec_load(b, x->data, x->dtype, (size_t)(r * 2 * h + h + c), m);
        for (size_t i = 0; i < m; i++) e[i] = -a[i];
        opdb_vec_exp(e, m);
        for (size_t i = 0; i < m; i++) a[i] = a[i] / (1.0f + e[i]) * b[i];
        opdb_vec_store(y->data, y->dtype, (size_t)(r * h + c), a, m);
    }
    return 0;
}

const opdb_op_def opdb_op_SwiGlu = {
    .name = "SwiGlu",
    .plan = swiglu_plan,
    .cpu_run = swiglu_run,
};
