/* AddRmsNormBias (docs/REPLAY-OPS.md §2.1): x = x1 + x2; y = rmsnorm(x) * gamma
 * (+ beta), eps 1e-6; outputs (y, rstd (T,1) fp32, x). Slot rows: exactly 4
 * slots per input list; beta is absent when its shape is blank, its dtype
 * DT_UNDEFINED or its format NULL. Recorded output shapes must match. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

/* Blank, UNDEFINED and DT_UNDEFINED all normalise to DT_UNDEFINED. */
static bool beta_absent(const opdb_row_slots *s) {
    return !opdb_row_slot_present(s, 3) || strcmp(s->fmt[3], "NULL") == 0 || !s->dt[3][0] ||
           strcmp(s->dt[3], "DT_UNDEFINED") == 0 || strcmp(s->dt[3], "UNDEFINED") == 0;
}

/* Every recorded output slot that has a shape must equal ours. */
static int check_outputs(const opdb_replay_row *row, const opdb_op_problem *p, opdb_err *err) {
    opdb_row_slots o;
    opdb_row_slots_read(row, true, &o);
    for (size_t i = 0; i < o.n_shape && i < (size_t)p->nout; i++) {
        if (!opdb_row_slot_present(&o, i)) continue;
        opdb_tensor want;
        if (opdb_replay_shape(o.shape[i], &want, err)) return -1;
        bool same = want.ndim == p->out[i].ndim;
        for (int k = 0; same && k < want.ndim; k++) same = want.dims[k] == p->out[i].dims[k];
        if (!same) {
            char a[128], b[128];
            return opdb_fail(err, OPDB_ERR_RUNTIME, "AddRmsNormBias: output %zu shape (%s) does not match recorded (%s)",
                             i, opdb_plan_shape_str(&p->out[i], a, sizeof a), opdb_plan_shape_str(&want, b, sizeof b));
        }
    }
    return 0;
}

static int arnb_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    opdb_row_slots s;
    opdb_row_slots_read(row, false, &s);
    if (opdb_row_slots_expect(row, &s, 4, false, err)) return -1;
    for (size_t i = 0; i < 3; i++)
        if (opdb_row_slot_make(row, &s, i, &p->in[i], err)) return -1;
    p->nin = 3;
    if (!beta_absent(&s)) {
        if (opdb_row_slot_make(row, &s, 3, &p->in[3], err)) return -1;
        p->nin = 4;
    }
    const opdb_tensor *x1 = &p->in[0], *x2 = &p->in[1];
    char a[128], b[128];
    if (x1->ndim != 2 || x2->ndim != 2 || x1->dims[0] != x2->dims[0] || x1->dims[1] != x2->dims[1])
        return opdb_fail(err, OPDB_ERR_RUNTIME, "AddRmsNormBias: x1 (%s) and x2 (%s) must be equal 2-D shapes",
                         opdb_plan_shape_str(x1, a, sizeof a), opdb_plan_shape_str(x2, b, sizeof b));
    for (int i = 2; i < p->nin; i++)
        if (p->in[i].ndim != 1 || p->in[i].dims[0] != x1->dims[1] || x1->dims[1] == 0)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "AddRmsNormBias: %s shape (%s) must be (%lld,)",
                             i == 2 ? "gamma" : "beta", opdb_plan_shape_str(&p->in[i], a, sizeof a),
                             (long long)x1->dims[1]);
    for (int i = 0; i < p->nin; i++)
        if (opdb_plan_need_float(row, &p->in[i], "input", err)) return -1;
    int64_t rstd_dims[2] = {x1->dims[0], 1};
    p->nout = 3;
    p->out[0] = opdb_plan_tensor(x1->dtype, 2, x1->dims);
    p->out[1] = opdb_plan_tensor(OPDB_DT_F32, 2, rstd_dims);
    p->out[2] = opdb_plan_tensor(x1->dtype, 2, x1->dims);
    if (check_outputs(row, p, err)) return -1;
    p->fparam[0] = 1e-6;
    p->flops = 6.0 * (double)opdb_tensor_numel(x1);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

static int arnb_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    const opdb_tensor *x1 = &p->in[0], *x2 = &p->in[1], *y = &p->out[0], *xs = &p->out[2];
    float *rstd = p->out[1].data;
    int64_t rows = x1->dims[0], d = x1->dims[1];
    opdb_vec_ref gr = {p->in[2].data, p->in[2].dtype};
    opdb_vec_ref br = {p->nin > 3 ? p->in[3].data : NULL, p->nin > 3 ? p->in[3].dtype : OPDB_DT_F32};
    opdb_vec_ref xr = {xs->data, xs->dtype};
    OPDB_OMP_FOR(rows * d)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        float a[OPDB_VEC_CHUNK], b[OPDB_VEC_CHUNK];
        for (int64_t c = 0; c < d; c += OPDB_VEC_CHUNK) {
            size_t m = (size_t)(d - c < OPDB_VEC_CHUNK ? d - c : OPDB_VEC_CHUNK), off = (size_t)(r * d + c);
            opdb_vec_load(a, x1->data, x1->dtype, off, m);
            opdb_vec_load(b, x2->data, x2->dtype, off, m);
            for (size_t i = 0; i < m; i++) a[i] += b[i];
            opdb_vec_store(xs->data, xs->dtype, off, a, m);
        }
        rstd[r] = opdb_vec_rmsnorm_row(y->data, y->dtype, (size_t)(r * d), xr, (size_t)(r * d), gr, br, (size_t)d,
                                       (float)p->fparam[0]);
    }
    return 0;
}

const opdb_op_def opdb_op_AddRmsNormBias = {
    .name = "AddRmsNormBias",
    .plan = arnb_plan,
    .cpu_run = arnb_run,
};
