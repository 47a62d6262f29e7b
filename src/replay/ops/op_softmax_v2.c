/* SoftmaxV2 (docs/REPLAY-OPS.md §2.1): softmax along the last dim, max-subtracted,
 * accumulated in fp32. Rows up to one chunk are staged once; longer rows
 * take three streaming passes (max, sum of exp, normalise). */
#include <math.h>
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int softmax_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 1, err) || opdb_plan_need_float(row, &p->in[0], "input", err)) return -1;
    const opdb_tensor *x = &p->in[0];
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(x->dtype, x->ndim, x->dims);
    p->flops = 5.0 * (double)opdb_tensor_numel(x);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

/* buf[0..m) = exp(buf - mx). */
static void shifted_exp(float *buf, size_t m, float mx) {
    for (size_t i = 0; i < m; i++) buf[i] -= mx;
    opdb_vec_exp(buf, m);
}

static void softmax_row(const opdb_tensor *x, const opdb_tensor *y, size_t off, size_t n) {
    float buf[OPDB_VEC_CHUNK];
    float mx = -INFINITY, sum = 0.0f;
    if (n <= OPDB_VEC_CHUNK) {
        opdb_vec_load(buf, x->data, x->dtype, off, n);
        shifted_exp(buf, n, opdb_vec_max(buf, n, -INFINITY));
        float inv = 1.0f / opdb_vec_sum(buf, n);
        for (size_t i = 0; i < n; i++) buf[i] *= inv;
        opdb_vec_store(y->data, y->dtype, off, buf, n);
        return;
    }
    for (size_t c = 0; c < n; c += OPDB_VEC_CHUNK) {
        size_t m = n - c < OPDB_VEC_CHUNK ? n - c : OPDB_VEC_CHUNK;
        opdb_vec_load(buf, x->data, x->dtype, off + c, m);
        mx = opdb_vec_max(buf, m, mx);
    }
    for (size_t c = 0; c < n; c += OPDB_VEC_CHUNK) {
        size_t m = n - c < OPDB_VEC_CHUNK ? n - c : OPDB_VEC_CHUNK;
        opdb_vec_load(buf, x->data, x->dtype, off + c, m);
        shifted_exp(buf, m, mx);
        sum += opdb_vec_sum(buf, m);
    }
    float inv = 1.0f / sum;
    for (size_t c = 0; c < n; c += OPDB_VEC_CHUNK) {
        size_t m = n - c < OPDB_VEC_CHUNK ? n - c : OPDB_VEC_CHUNK;
        opdb_vec_load(buf, x->data, x->dtype, off + c, m);
        shifted_exp(buf, m, mx);
        for (size_t i = 0; i < m; i++) buf[i] *= inv;
        opdb_vec_store(y->data, y->dtype, off + c, buf, m);
    }
}

static int softmax_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    const opdb_tensor *x = &p->in[0];
    int64_t d = x->dims[x->ndim - 1], rows = d ? opdb_tensor_numel(x) / d : 0;
    OPDB_OMP_FOR(rows * d)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        softmax_row(x, &p->out[0], (size_t)(r * d), (size_t)d);
    }
    return 0;
}

const opdb_op_def opdb_op_SoftmaxV2 = {
    .name = "SoftmaxV2",
    .plan = softmax_plan,
    .cpu_run = softmax_run,
};
