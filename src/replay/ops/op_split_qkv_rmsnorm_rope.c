/* split_qkv_rmsnorm_rope_kernel (docs/REPLAY-OPS.md §2.5; vllm-ascend's fused Triton
 * kernel): a fused qkv projection (T, >= q_hidden + 2*kv_hidden) is split
 * into q, k, v; every head_dim slice of q and k is RMS-normalised (eps 1e-6)
 * with its norm weight (rounded to the output dtype, like the kernel's bf16
 * intermediate), then its first rope_dim values get the rotate-half rotary
 * embedding with cos/sin from row positions[t] of the cache, whose row holds
 * rope_dim/2 cos values then rope_dim/2 sin values; v is copied.
 * Plan (spec): 2-3 inputs with equal-length lists, 2-3 outputs; q_hidden =
 * out0[-1], kv_hidden = out1[-1], T = in0[0]; two inputs: rope_dim = in1[-1],
 * cache (max(T, 2048), rope_dim), positions (T,); three: cache = in1,
 * positions shape = in2. head_dim = rope_dim when it divides both hiddens,
 * else the smallest common divisor >= rope_dim. Norm weights (head_dim,) of
 * dt0 taken by its raw name: DT_FLOAT, DT_FLOAT16 or DT_BF16 only. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"
#include "opdb/schema.h"

enum { QKV, CACHE, POS, QW, KW, NIN };

static int sqr_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    char items[OPDB_MAX_TENSORS][128], dt0[128];
    size_t nf = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_FORMATS), false, items, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_DTYPES), false, items, OPDB_MAX_TENSORS);
    memcpy(dt0, nd ? items[0] : "", nd ? sizeof dt0 : 1);
    if (opdb_replay_default_io(row, p, -1, err)) return -1;
    if (p->nin < 2 || p->nin > 3 || p->nout < 2 || p->nout > 3)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "split_qkv_rmsnorm_rope_kernel expects 2-3 inputs and 2-3 outputs, got %d/%d",
                         p->nin, p->nout);
    if (nf != (size_t)p->nin || nd != (size_t)p->nin)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "split_qkv_rmsnorm_rope_kernel expects equal shape/format/dtype counts, got %d/%zu/%zu", p->nin,
                         nf, nd);
    if (strcmp(dt0, "DT_FLOAT") && strcmp(dt0, "DT_FLOAT16") && strcmp(dt0, "DT_BF16"))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "split_qkv_rmsnorm_rope_kernel: unsupported weight dtype %s", dt0);
    if (p->out[0].ndim == 0 || p->out[1].ndim == 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "split_qkv_rmsnorm_rope_kernel: missing q/kv output shapes");
    const opdb_tensor *x = &p->in[QKV];
    int64_t qh = p->out[0].dims[p->out[0].ndim - 1], kvh = p->out[1].dims[p->out[1].ndim - 1];
    int64_t t = x->dims[0], rope = p->in[1].dims[p->in[1].ndim - 1], width = x->dims[x->ndim - 1];
    if (x->ndim != 2 || width < qh + 2 * kvh)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "split_qkv_rmsnorm_rope_kernel: input must be (T, >= %lld)",
                         (long long)(qh + 2 * kvh));
    if (rope <= 0 || rope % 2 || rope > OPDB_VEC_ROPE_MAX)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "split_qkv_rmsnorm_rope_kernel: rope dim %lld must be even, 2..%d",
                         (long long)rope, OPDB_VEC_ROPE_MAX);
    int64_t head = qh % rope == 0 && kvh % rope == 0 ? rope : 0;
    for (int64_t h = rope; !head && h <= qh && h <= kvh; h++)
        if (qh % h == 0 && kvh % h == 0) head = h;
    if (!head)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "split_qkv_rmsnorm_rope_kernel: no head dim >= %lld divides %lld and %lld", (long long)rope,
                         (long long)qh, (long long)kvh);
    opdb_dtype wdt;
    if (opdb_dtype_parse(dt0, strlen(dt0), &wdt, err) || opdb_plan_need_float(row, x, "input", err)) return -1;
    if (p->nin == 2) {
        int64_t cd[2] = {t > 2048 ? t : 2048, rope};
        p->in[CACHE] = opdb_plan_tensor(x->dtype, 2, cd);
        p->in[POS] = opdb_plan_tensor(OPDB_DT_I64, 1, &t);
    } else {
        p->in[POS].dtype = OPDB_DT_I64;
    }
    if (p->in[CACHE].ndim != 2 || p->in[CACHE].dims[0] == 0 || opdb_tensor_numel(&p->in[POS]) != t ||
        opdb_plan_need_float(row, &p->in[CACHE], "cos/sin cache", err))
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "split_qkv_rmsnorm_rope_kernel: cache must be (rows, %lld) and positions hold %lld values",
                         (long long)rope, (long long)t);
    p->in[QW] = opdb_plan_tensor(wdt, 1, &head);
    p->in[KW] = opdb_plan_tensor(wdt, 1, &head);
    p->nin = NIN;
    int64_t qd[2] = {t, qh}, kd[2] = {t, kvh};
    p->nout = 3;
    p->out[0] = opdb_plan_tensor(x->dtype, 2, qd);
    p->out[1] = opdb_plan_tensor(x->dtype, 2, kd);
    p->out[2] = opdb_plan_tensor(x->dtype, 2, kd);
    p->iparam[0] = qh, p->iparam[1] = kvh, p->iparam[2] = head, p->iparam[3] = rope;
    p->fparam[0] = 1e-6;
    p->flops = (double)t * (4.0 * (double)(qh + kvh) + 3.0 * (double)(qh + kvh) / (double)head * (double)rope);
    /* the cache is read one row per token */
    p->bytes = opdb_problem_io_bytes(p) - (double)opdb_tensor_bytes(&p->in[CACHE]) +
               (double)(t * rope) * (double)opdb_dtype_size(p->in[CACHE].dtype);
    return 0;
}

static int sqr_fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)err;
    uint64_t rng = seed ^ 0x5157u;
    int64_t *pos = p->in[POS].data, rows = p->in[CACHE].dims[0];
    for (int64_t i = 0; i < p->in[POS].dims[0]; i++) pos[i] = (int64_t)(opdb_rng_next(&rng) % (uint64_t)rows);
    return 0;
}

/* Normalise and rotate the `hidden / head` heads of one token. */
static void norm_rope_heads(const opdb_op_problem *p, const opdb_tensor *y, int64_t t, int64_t src_off, int64_t hidden,
                            const opdb_tensor *w, const float *cs, const float *sn) {
    int64_t head = p->iparam[2], rope = p->iparam[3];
    opdb_vec_ref xr = {p->in[QKV].data, p->in[QKV].dtype}, wr = {w->data, w->dtype}, none = {NULL, OPDB_DT_F32};
    for (int64_t h = 0; h < hidden / head; h++) {
        size_t yoff = (size_t)(t * hidden + h * head);
        opdb_vec_rmsnorm_row(y->data, y->dtype, yoff, xr, (size_t)(src_off + h * head), wr, none, (size_t)head,
                             (float)p->fparam[0]);
        opdb_vec_rope_neox_inplace(y->data, y->dtype, yoff, cs, sn, (size_t)rope);
    }
}

static int sqr_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    const opdb_tensor *x = &p->in[QKV], *cache = &p->in[CACHE];
    const int64_t *pos = p->in[POS].data;
    int64_t t = x->dims[0], width = x->dims[1], qh = p->iparam[0], kvh = p->iparam[1], half = p->iparam[3] / 2;
    for (int64_t i = 0; i < t; i++)
        if (pos[i] < 0 || pos[i] >= cache->dims[0])
            return opdb_fail(err, OPDB_ERR_RUNTIME, "split_qkv_rmsnorm_rope_kernel: position %lld outside [0, %lld)",
                             (long long)pos[i], (long long)cache->dims[0]);
    OPDB_OMP_FOR(t * width)
    for (int64_t r = 0; r < t; r++) {
        OPDB_PIN();
        float cs[OPDB_VEC_ROPE_MAX / 2], sn[OPDB_VEC_ROPE_MAX / 2];
        opdb_vec_load(cs, cache->data, cache->dtype, (size_t)(pos[r] * 2 * half), (size_t)half);
        opdb_vec_load(sn, cache->data, cache->dtype, (size_t)(pos[r] * 2 * half + half), (size_t)half);
        norm_rope_heads(p, &p->out[0], r, r * width, qh, &p->in[QW], cs, sn);
        norm_rope_heads(p, &p->out[1], r, r * width + qh, kvh, &p->in[KW], cs, sn);
        opdb_vec_convert(p->out[2].data, p->out[2].dtype, (size_t)(r * kvh), x->data, x->dtype,
                         (size_t)(r * width + qh + kvh), (size_t)kvh);
    }
    return 0;
}

const opdb_op_def opdb_op_split_qkv_rmsnorm_rope_kernel = {
    .name = "split_qkv_rmsnorm_rope_kernel",
    .plan = sqr_plan,
    .fill = sqr_fill,
    .cpu_run = sqr_run,
};
