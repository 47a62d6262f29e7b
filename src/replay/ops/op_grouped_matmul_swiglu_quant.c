/* GroupedMatmulSwigluQuant (docs/REPLAY-OPS.md §2.3, slots): grouped GEMM of x
 * (slot0) with weight (slot1), dequantised by weight_scale = ones(slot2) and
 * x_scale = ones(slot3), group_list from slot4[0] groups; then SwiGLU over the
 * two halves of N and per-token symmetric int8 quantisation -> (y, scale). */
#include <math.h>
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/ops/grouped_rule.h"
#include "replay/ops/ops.h"

enum { IN_X = OPDB_GR_X, IN_W = OPDB_GR_W, IN_WSCALE = OPDB_GR_WSCALE, IN_XSCALE = OPDB_GR_XSCALE, IN_GL = OPDB_GR_LIST };

/* NZ 5-D (..., h, w, bh, bw) -> logical (..., w*bh, h*bw); otherwise make(). */
static int make_weight(const opdb_replay_row *row, const opdb_row_slots *s, opdb_tensor *w, opdb_err *err) {
    if (s->n_fmt > 1 && strcmp(s->fmt[1], "FRACTAL_NZ") == 0) {
        opdb_tensor raw;
        if (opdb_replay_shape(s->shape[1], &raw, err)) return -1;
        if (raw.ndim == 5) {
            memset(w, 0, sizeof *w);
            if (opdb_dtype_parse(s->dt[1], strlen(s->dt[1]), &w->dtype, err)) return -1;
            w->ndim = 3;
            w->dims[0] = raw.dims[0];
            w->dims[1] = raw.dims[2] * raw.dims[3];
            w->dims[2] = raw.dims[1] * raw.dims[4];
            w->nz = true;
            return 0;
        }
    }
    return opdb_grouped_slot(row, s, 1, "DT_INT8", w, err);
}

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    opdb_row_slots s;
    opdb_row_slots_read(row, false, &s);
    memset(p, 0, sizeof *p);
    p->nin = OPDB_GR_COUNT;
    if (!opdb_row_slot_present(&s, 0) || !opdb_row_slot_present(&s, 1))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "GroupedMatmulSwigluQuant needs x (slot 0) and weight (slot 1)");
    if (opdb_grouped_slot(row, &s, 0, "DT_INT8", &p->in[IN_X], err) || make_weight(row, &s, &p->in[IN_W], err) ||
        opdb_grouped_slot(row, &s, 2, "DT_FLOAT", &p->in[IN_WSCALE], err) ||
        opdb_grouped_slot(row, &s, 3, "DT_FLOAT", &p->in[IN_XSCALE], err) ||
        opdb_grouped_list(row, &s, 4, &p->in[IN_GL], err))
        return -1;
    opdb_grouped g = {0, 0, 0, p->in[IN_GL].dims[0]};
    if (opdb_grouped_shapes(row, &p->in[IN_X], &p->in[IN_W], &p->in[IN_GL], &g.m, &g.n, &g.k, err)) return -1;
    if (g.n % 2)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "GroupedMatmulSwigluQuant: N=%lld is odd, SwiGLU needs two halves",
                         (long long)g.n);
    int64_t yd[2] = {g.m, g.n / 2};
    p->out[0] = opdb_plan_tensor(OPDB_DT_I8, 2, yd);
    p->out[1] = opdb_plan_tensor(OPDB_DT_F32, 1, yd);
    p->nout = 2;
    /* + SwiGLU (sigmoid, two products) and the quantisation per output element */
    opdb_grouped_account(p, &g, 6.0 * (double)g.m * (double)g.n);
    return 0;
}

static int cpu_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)err;
    opdb_grouped g;
    float *y = opdb_grouped_compute(p, ws, &g);
    const int64_t h = g.n / 2;
    int8_t *q = p->out[0].data;
    float *scale = p->out[1].data;
#pragma omp parallel for num_threads(opdb_cpu_threads()) schedule(static)
    for (int64_t i = 0; i < g.m; i++) {
        opdb_cpu_pin_worker();
        float *r = y + i * g.n, amax = 0.0f;
        for (int64_t j = 0; j < h; j++) { /* silu(first half) * second half, in place */
            float a = r[j], v = a / (1.0f + expf(-a)) * r[j + h];
            r[j] = v;
            amax = fmaxf(amax, fabsf(v));
        }
        float s = amax / 127.0f, inv = s > 0 ? 1.0f / s : 0.0f;
        scale[i] = s;
        for (int64_t j = 0; j < h; j++) q[i * h + j] = (int8_t)fmaxf(-127.0f, fminf(127.0f, nearbyintf(r[j] * inv)));
    }
    return 0;
}

const opdb_op_def opdb_op_GroupedMatmulSwigluQuant = {"GroupedMatmulSwigluQuant", NULL, plan, opdb_grouped_fill_op, cpu_run, NULL};
