/* KvRmsNormRopeCache (docs/REPLAY-OPS.md §2.2, torch_npu.npu_kv_rmsnorm_rope_cache
 * in PA_BNSD mode, eps 1e-5, is_output_kv): kv (B, 1, S, Dv + Dk) is split;
 * c_kv = rmsnorm(kv[..., :Dv]) * gamma and k_rope = interleaved rotary of
 * kv[..., Dv:] with cos/sin; both are written to the paged caches
 * (blocks, block_size, 1, D) at slot index[t] and returned as outputs
 * (k_rope, c_kv). Row: exactly 12 slots per input list; slots 0-6 are kv,
 * gamma, cos, sin, index (T = slot4[0], int64 0..T-1), k_cache, ckv_cache. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

enum { KV, GAMMA, COS, SIN, INDEX, KCACHE, CKVCACHE, NIN };

static int64_t cache_slots(const opdb_tensor *c) { return c->dims[0] * c->dims[1]; }

static int krc_check_cache(const opdb_tensor *c, const char *name, int64_t t, int64_t row_len, opdb_err *err) {
    if (c->ndim != 4)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "KvRmsNormRopeCache: %s must be 4-D, got %d-D", name, c->ndim);
    if (t > cache_slots(c))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "KvRmsNormRopeCache: %lld tokens do not fit in %s (%lld slots)",
                         (long long)t, name, (long long)cache_slots(c));
    if (c->dims[2] * c->dims[3] != row_len)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "KvRmsNormRopeCache: %s rows hold %lld values, expected %lld", name,
                         (long long)(c->dims[2] * c->dims[3]), (long long)row_len);
    return 0;
}

static int krc_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    opdb_row_slots s;
    opdb_row_slots_read(row, false, &s);
    if (opdb_row_slots_expect(row, &s, 12, false, err)) return -1;
    for (int i = 0; i < NIN; i++)
        if (i != INDEX && opdb_row_slot_make(row, &s, (size_t)i, &p->in[i], err)) return -1;
    opdb_tensor ix;
    if (opdb_replay_shape(s.shape[INDEX], &ix, err)) return -1;
    if (ix.ndim == 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "KvRmsNormRopeCache: index slot 4 has no shape");
    int64_t t = ix.dims[0];
    const opdb_tensor *kv = &p->in[KV];
    if (kv->ndim != 4 || kv->dims[1] != 1)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "KvRmsNormRopeCache: kv must be (B, 1, S, D), got %d-D", kv->ndim);
    int64_t dv = opdb_tensor_numel(&p->in[GAMMA]), dk = p->in[COS].dims[p->in[COS].ndim - 1];
    if (dv + dk != kv->dims[3] || dv == 0 || dk % 2 || dk > OPDB_VEC_ROPE_MAX)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "KvRmsNormRopeCache: kv last dim %lld must be gamma %lld + an even rope dim, got %lld",
                         (long long)kv->dims[3], (long long)dv, (long long)dk);
    if (t != kv->dims[0] * kv->dims[2])
        return opdb_fail(err, OPDB_ERR_RUNTIME, "KvRmsNormRopeCache: index has %lld entries for %lld tokens",
                         (long long)t, (long long)(kv->dims[0] * kv->dims[2]));
    int64_t rope_dims[4] = {kv->dims[0], 1, kv->dims[2], dk}, ckv_dims[4] = {kv->dims[0], 1, kv->dims[2], dv};
    p->out[0] = opdb_plan_tensor(kv->dtype, 4, rope_dims);
    p->out[1] = opdb_plan_tensor(kv->dtype, 4, ckv_dims);
    for (int i = COS; i <= SIN; i++) {
        opdb_bcast bc;
        if (p->in[i].dims[p->in[i].ndim - 1] != dk || opdb_bcast_init(&bc, &p->out[0], &p->in[i]))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "KvRmsNormRopeCache: %s does not broadcast to (B, 1, S, %lld)",
                             i == COS ? "cos" : "sin", (long long)dk);
    }
    if (krc_check_cache(&p->in[KCACHE], "k_cache", t, dk, err) ||
        krc_check_cache(&p->in[CKVCACHE], "ckv_cache", t, dv, err))
        return -1;
    for (int i = KV; i <= SIN; i++)
        if (opdb_plan_need_float(row, &p->in[i], "kv/gamma/cos/sin", err)) return -1;
    p->in[INDEX] = opdb_plan_tensor(OPDB_DT_I64, 1, &t);
    p->nin = NIN;
    p->nout = 2;
    p->fparam[0] = 1e-5;
    p->flops = (double)t * (4.0 * (double)dv + 3.0 * (double)dk);
    /* kv, gamma, cos, sin, index read; outputs written twice (cache + return). */
    p->bytes = opdb_problem_io_bytes(p) - (double)opdb_tensor_bytes(&p->in[KCACHE]) -
               (double)opdb_tensor_bytes(&p->in[CKVCACHE]) + (double)opdb_tensor_bytes(&p->out[0]) +
               (double)opdb_tensor_bytes(&p->out[1]);
    return 0;
}

static int krc_fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)err;
    (void)seed;
    int64_t *ix = p->in[INDEX].data;
    for (int64_t i = 0; i < p->in[INDEX].dims[0]; i++) ix[i] = i;
    return 0;
}

static int krc_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    const opdb_tensor *kv = &p->in[KV], *kc = &p->in[KCACHE], *cc = &p->in[CKVCACHE];
    const opdb_tensor *kr = &p->out[0], *ckv = &p->out[1];
    const int64_t *ix = p->in[INDEX].data;
    int64_t t = p->in[INDEX].dims[0], dk = kr->dims[3], dv = ckv->dims[3], d = dk + dv;
    int64_t slots = cache_slots(kc) < cache_slots(cc) ? cache_slots(kc) : cache_slots(cc);
    for (int64_t i = 0; i < t; i++)
        if (ix[i] < 0 || ix[i] >= slots)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "KvRmsNormRopeCache: index %lld outside [0, %lld)",
                             (long long)ix[i], (long long)slots);
    opdb_bcast bc, bs;
    opdb_bcast_init(&bc, kr, &p->in[COS]);
    opdb_bcast_init(&bs, kr, &p->in[SIN]);
    opdb_vec_ref kvr = {kv->data, kv->dtype}, gr = {p->in[GAMMA].data, p->in[GAMMA].dtype},
                 cr = {p->in[COS].data, p->in[COS].dtype}, sr = {p->in[SIN].data, p->in[SIN].dtype},
                 none = {NULL, OPDB_DT_F32};
    OPDB_OMP_FOR(t * d)
    for (int64_t r = 0; r < t; r++) {
        OPDB_PIN();
        size_t dst = (size_t)ix[r];
        opdb_vec_rmsnorm_row(ckv->data, ckv->dtype, (size_t)(r * dv), kvr, (size_t)(r * d), gr, none, (size_t)dv,
                             (float)p->fparam[0]);
        opdb_vec_rope_interleave_row(kr->data, kr->dtype, (size_t)(r * dk), kvr, (size_t)(r * d + dv), cr,
                                     (size_t)opdb_bcast_row_offset(&bc, r), sr, (size_t)opdb_bcast_row_offset(&bs, r),
                                     (size_t)dk);
        opdb_vec_convert(cc->data, cc->dtype, dst * (size_t)dv, ckv->data, ckv->dtype, (size_t)(r * dv), (size_t)dv);
        opdb_vec_convert(kc->data, kc->dtype, dst * (size_t)dk, kr->data, kr->dtype, (size_t)(r * dk), (size_t)dk);
    }
    return 0;
}

const opdb_op_def opdb_op_KvRmsNormRopeCache = {
    .name = "KvRmsNormRopeCache",
    .plan = krc_plan,
    .fill = krc_fill,
    .cpu_run = krc_run,
};
