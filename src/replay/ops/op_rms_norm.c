/* RmsNorm (docs/REPLAY-OPS.md §2.1): y = x / sqrt(mean(x^2) + eps) * gamma over the
 * trailing gamma dims of x (eps 1e-6, torch_npu.npu_rms_norm's default),
 * plus rstd (x's leading dims, trailing dims 1, fp32). */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int rms_norm_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 2, err)) return -1;
    const opdb_tensor *x = &p->in[0], *g = &p->in[1];
    if (opdb_plan_need_float(row, x, "x", err) || opdb_plan_need_float(row, g, "gamma", err)) return -1;
    bool fits = g->ndim <= x->ndim;
    for (int i = 0; fits && i < g->ndim; i++) fits = g->dims[i] == x->dims[x->ndim - g->ndim + i];
    if (!fits || opdb_tensor_numel(g) == 0) {
        char a[128], b[128];
        return opdb_fail(err, OPDB_ERR_RUNTIME, "RmsNorm: gamma shape (%s) does not match the trailing dims of x (%s)",
                         opdb_plan_shape_str(g, a, sizeof a), opdb_plan_shape_str(x, b, sizeof b));
    }
    p->nout = 2;
    p->out[0] = opdb_plan_tensor(x->dtype, x->ndim, x->dims);
    p->out[1] = opdb_plan_tensor(OPDB_DT_F32, x->ndim, x->dims);
    for (int i = x->ndim - g->ndim; i < x->ndim; i++) p->out[1].dims[i] = 1;
    p->iparam[0] = opdb_tensor_numel(g);
    p->fparam[0] = 1e-6;
    p->flops = 4.0 * (double)opdb_tensor_numel(x);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

static int rms_norm_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    const opdb_tensor *x = &p->in[0], *g = &p->in[1], *y = &p->out[0];
    float *rstd = p->out[1].data;
    int64_t d = p->iparam[0], rows = opdb_tensor_numel(x) / d;
    opdb_vec_ref xr = {x->data, x->dtype}, gr = {g->data, g->dtype}, none = {NULL, OPDB_DT_F32};
    OPDB_OMP_FOR(rows * d)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        rstd[r] = opdb_vec_rmsnorm_row(y->data, y->dtype, (size_t)(r * d), xr, (size_t)(r * d), gr, none, (size_t)d,
                                       (float)p->fparam[0]);
    }
    return 0;
}

const opdb_op_def opdb_op_RmsNorm = {
    .name = "RmsNorm",
    .plan = rms_norm_plan,
    .cpu_run = rms_norm_run,
};
