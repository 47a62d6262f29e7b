/* DynamicQuant (docs/REPLAY-OPS.md §2.1): per-token symmetric int8 quantisation:
 * scale = max|x| / 127 over the last dim, y = round_half_even(x / scale)
 * saturated to int8; outputs (y int8, scale fp32 per token). */
#include <math.h>
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int dq_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 1, err) || opdb_plan_need_float(row, &p->in[0], "input", err)) return -1;
    const opdb_tensor *x = &p->in[0];
    p->nout = 2;
    p->out[0] = opdb_plan_tensor(OPDB_DT_I8, x->ndim, x->dims);
    p->out[1] = opdb_plan_rows_of(x, OPDB_DT_F32);
    p->flops = 3.0 * (double)opdb_tensor_numel(x);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

static int dq_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    const opdb_tensor *x = &p->in[0], *y = &p->out[0];
    float *scale = p->out[1].data;
    int64_t d = x->dims[x->ndim - 1], rows = d ? opdb_tensor_numel(x) / d : 0;
    OPDB_OMP_FOR(rows * d)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        float buf[OPDB_VEC_CHUNK];
        float amax = 0.0f;
        for (int64_t c = 0; c < d; c += OPDB_VEC_CHUNK) {
            size_t m = (size_t)(d - c < OPDB_VEC_CHUNK ? d - c : OPDB_VEC_CHUNK);
            opdb_vec_load(buf, x->data, x->dtype, (size_t)(r * d + c), m);
            for (size_t i = 0; i < m; i++) {
                float a = fabsf(buf[i]);
                amax = a > amax ? a : amax;
            }
        }
        float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
        scale[r] = amax / 127.0f;
        for (int64_t c = 0; c < d; c += OPDB_VEC_CHUNK) {
            size_t m = (size_t)(d - c < OPDB_VEC_CHUNK ? d - c : OPDB_VEC_CHUNK);
            opdb_vec_load(buf, x->data, x->dtype, (size_t)(r * d + c), m);
            for (size_t i = 0; i < m; i++) buf[i] *= inv;
            opdb_vec_store(y->data, OPDB_DT_I8, (size_t)(r * d + c), buf, m);
        }
    }
    return 0;
}

const opdb_op_def opdb_op_DynamicQuant = {
    .name = "DynamicQuant",
    .plan = dq_plan,
    .cpu_run = dq_run,
};
