/* The dense decomposers: multi-head latent attention (decode: absorbed
 * weights around a latent-space FIA; prefill: the kv_b projection and a
 * full-head FIA) and MLAPO (the visible regime: quantize, fused q_a/kv_a
 * matmul, norm, q_b matmul, then the KV cache write, queried either as a
 * plain compute kernel or independent of the cache pool's size). */
#include <string.h>

#include "query/decompose.h"

/* a tensor argument the decomposer needs: 1 tensor, 0 null (nothing), -1 error set */
static int need_tensor(q_ctx *c, const qv *v, const char *what, uint32_t min_rank) {
    if (!v || v->kind == QV_NULL) return 0;
    if (v->kind != QV_TENSOR || v->shape.rank < min_rank) {
        q_error(c, "bad_args", "%s is not a tensor of rank %u or more", what, min_rank);
        return -1;
    }
    return 1;
}

q_phase q_batch_phase(const qv *kwargs, int64_t expected) {
    const qv *p = qv_get(kwargs, "phase");
    if (qv_is_str(p, "prefill")) return PH_PREFILL;
    if (qv_is_str(p, "decode")) return PH_DECODE;
    const qv *v = qv_get(kwargs, "is_decode_values");
    if (!v || v->kind == QV_NULL) return PH_NONE;
    if (v->kind != QV_LIST || v->n == 0 || (int64_t)v->n != expected) return PH_INVALID;
    size_t t = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i]->kind != QV_BOOL) return PH_INVALID;
        t += v->items[i]->b;
    }
    return t == v->n ? PH_DECODE : t == 0 ? PH_PREFILL : PH_MIXED;
}

static void set_shapes(q_ctx *c, q_spec *s, size_t n, int64_t (*d)[4], const uint32_t *rank) {
    s->nshapes = n;
    for (size_t i = 0; i < n; i++) s->shapes[i] = q_spec_shape(c, rank[i], d[i]);
}

int q_decompose_mla(q_ctx *c, const q_entry *e, const char *first, q_specs *out) {
    (void)e;
    const qv *A = c->q->args;
    if (!A || A->n < 10) return 0;
    const qv *q = A->items[0], *kvc = A->items[1], *seq = A->items[4], *ql = A->items[5], *wuk = A->items[6],
             *wuv = A->items[7], *kvb = A->items[8];
    if (q->kind != QV_TENSOR) {
        q_error(c, "bad_args", "the query of a latent attention is not a tensor");
        return 1;
    }
    const char *dt = q_dtype_prof(q->dtype);
    if (!dt) return 0;
    if (seq->kind != QV_TENSOR) return 0;
    if (seq->shape.rank < 1 || q->shape.rank < 2) {
        q_error(c, "bad_args", "seq_lens and the query of a latent attention need a dimension");
        return 1;
    }
    if (need_tensor(c, kvc, "the kv cache", 1) <= 0) {
        if (c->r->src != QS_ERROR) q_error(c, "bad_args", "the kv cache is not a tensor");
        return 1;
    }
    bool quant = strcmp(first, "QuantBatchMatmulV3") == 0;
    int64_t Bsz = seq->shape.d[0], N = q->shape.d[1], hd = kvc->shape.d[kvc->shape.rank - 1], T = q->shape.d[0];
    int64_t avg = 0;
    if (!q_avgseq(seq, &avg)) avg = 0;
    q_phase ph = q_batch_phase(c->q->kwargs, Bsz);
    if (ph == PH_MIXED || ph == PH_INVALID) return 0;
    bool decode = true;
    if (ql->kind == QV_TENSOR && ql->values && ql->nvalues) {
        double mx = ql->values[0];
        for (size_t i = 1; i < ql->nvalues; i++)
            if (ql->values[i] > mx) mx = ql->values[i];
        decode = mx <= 1;
    }
    if (decode) {
        int a = need_tensor(c, wuk, "W_UK_T", 3), b = a < 0 ? -1 : need_tensor(c, wuv, "W_UV", 3);
        if (a < 0 || b < 0) return 1;
        if (!a || !b) return 0;
        int64_t nope = wuk->shape.d[1], L = wuk->shape.d[2], v = wuv->shape.d[2];
        q_spec *s = q_spec_add(c, out, first, QSPEC_COMPUTE);
        if (!quant) s->alt[s->nalt++] = "BatchMatMulNd";
        int64_t d1[2][4] = {{N, T, nope}, {N, nope, L}};
        uint32_t r3[2] = {3, 3};
        set_shapes(c, s, 2, d1, r3);
        s->dtype = dt;
        if (quant) s->tc = 2, s->has_tc = true;
        s = q_spec_add(c, out, "FusedInferAttentionScore", QSPEC_ATTENTION);
        s->dtype = dt;
        s->is_attention = true;
        s->att.q3[0] = Bsz, s->att.q3[1] = N, s->att.q3[2] = L;
        s->att.avg = avg;
        s->att.has_sparse = true, s->att.sparse = 0;
        s->att.has_kv = true, s->att.kv = 1;
        s = q_spec_add(c, out, "TransposeBatchMatMul", QSPEC_COMPUTE);
        int64_t d3[2][4] = {{N, T, L}, {N, L, v}};
        set_shapes(c, s, 2, d3, r3);
        s->dtype = dt;
        return 0;
    }
    int k = need_tensor(c, kvb, "kv_b_proj", 1);
    if (k < 0) return 1;
    if (!k) return 0;
    if (q->shape.rank < 3) {
        q_error(c, "bad_args", "the query of a latent attention prefill needs three dimensions");
        return 1;
    }
    int64_t L = kvb->shape.d[0], rope = hd - L, nope = q->shape.d[2] - rope;
    q_spec *s = q_spec_add(c, out, "MatMulV2", QSPEC_COMPUTE);
    s->nshapes = 2;
    int64_t d0[2] = {T, L};
    s->shapes[0] = q_spec_shape(c, 2, d0);
    s->shapes[1] = kvb->shape;
    s->dtype = dt;
    s->tc = 2, s->has_tc = true;
    s = q_spec_add(c, out, "FusedInferAttentionScore", QSPEC_ATTENTION);
    s->dtype = dt;
    s->is_attention = true;
    s->att.q3[0] = T, s->att.q3[1] = N, s->att.q3[2] = nope;
    s->att.avg = avg;
    s->att.has_sparse = true, s->att.sparse = 3;
    s->att.has_kv = true, s->att.kv = N;
    return 0;
}

int q_decompose_mlapo(q_ctx *c, const q_entry *e, bool quant, q_specs *out) {
    const qv *A = c->q->args;
    if (!A || A->n < (quant ? 20u : 14u)) return 0;
    const qv *h = A->items[0], *qa = A->items[3], *qan = A->items[4], *qb = A->items[5], *kva = A->items[6],
             *kvan = A->items[7];
    const qv *need[4] = {h, qa, qb, kva};
    for (int i = 0; i < 4; i++)
        if (need[i]->kind == QV_NULL) return 0;
    static const char *const names[4] = {"the hidden states", "q_a_proj", "q_b_proj", "kv_a_proj"};
    static const uint32_t ranks[4] = {2, 1, 0, 1};
    for (int i = 0; i < 4; i++)
        if (need_tensor(c, need[i], names[i], ranks[i]) < 0) return 1;
    const char *dt = q_dtype_prof(h->dtype);
    if (!dt) return 0;
    int64_t T = h->shape.d[0], H = h->shape.d[1], qr = qa->shape.d[0], kvp = kva->shape.d[0], fused = qr + kvp;
    const qv *O = qv_get(e->v, "decomposer_options");
    int tp = c->cfg->tp;
    if (qv_truthy(qv_get(qv_get(O, "visible_kernel_regime"), "requires_sequence_parallel")) && !c->cfg->sp) {
        /* the opaque regime: one mla_preprocess kernel (Tier 2) */
        return quant ? q_spec_mlapo_preprocess(c, O, out) : 0;
    }
    int64_t P = T;
    if (c->cfg->sp && qv_is_str(qv_get(O, "projection_token_partition"), "tp")) {
        if (tp <= 1 || T % tp != 0) return 0;
        P = T / tp;
    }
    const char *md = quant ? "INT8" : dt, *mm = quant ? "QuantBatchMatmulV3" : "MatMulV2";
    q_shape qbs = qb->shape;
    int64_t heads, qk;
    if (quant && qv_as_int(A->items[8], &heads) && qv_as_int(A->items[9], &qk)) {
        if (c->cfg->sp && qv_truthy(qv_get(O, "reconstruct_q_heads_by_tp"))) {
            if (tp <= 1) return 0;
            heads *= tp;
        }
        int64_t d[2] = {heads * qk, qr};
        qbs = q_spec_shape(c, 2, d);
    }
    if (qan->kind != QV_TENSOR || kvan->kind != QV_TENSOR) return 0;
    q_spec *s;
    int64_t dPH[2] = {P, H}, dH[1] = {H}, dF[2] = {fused, H}, dPq[2] = {P, qr}, dq[1] = {qr};
    if (quant) {
        s = q_spec_add(c, out, "AscendQuantV2", QSPEC_COMPUTE);
        s->alt[s->nalt++] = "AscendQuantV2Aicore";
        s->nshapes = 3;
        s->shapes[0] = q_spec_shape(c, 2, dPH);
        s->shapes[1] = s->shapes[2] = q_spec_shape(c, 1, dH);
        s->dtype = dt, s->tc = 3, s->has_tc = true;
    }
    s = q_spec_add(c, out, mm, QSPEC_COMPUTE);
    s->nshapes = 2;
    s->shapes[0] = q_spec_shape(c, 2, dPH);
    s->shapes[1] = q_spec_shape(c, 2, dF);
    s->dtype = dt, s->dtypes[0] = s->dtypes[1] = md, s->ndtypes = 2, s->tc = 2, s->has_tc = true;
    s = q_spec_add(c, out, "RmsNorm", QSPEC_COMPUTE);
    s->nshapes = 2;
    s->shapes[0] = q_spec_shape(c, 2, dPq);
    s->shapes[1] = qan->shape;
    s->dtype = dt, s->tc = 2, s->has_tc = true;
    if (quant) {
        s = q_spec_add(c, out, "AscendQuantV2", QSPEC_COMPUTE);
        s->alt[s->nalt++] = "AscendQuantV2Aicore";
        s->nshapes = 3;
        s->shapes[0] = q_spec_shape(c, 2, dPq);
        s->shapes[1] = s->shapes[2] = q_spec_shape(c, 1, dq);
        s->dtype = dt, s->tc = 3, s->has_tc = true;
    }
    s = q_spec_add(c, out, mm, QSPEC_COMPUTE);
    s->nshapes = 2;
    s->shapes[0] = q_spec_shape(c, 2, dPq);
    s->shapes[1] = qbs;
    s->dtype = dt, s->dtypes[0] = s->dtypes[1] = md, s->ndtypes = 2, s->tc = 2, s->has_tc = true;
    const qv *kq = qv_get(O, "kv_cache_query"), *mode = qv_get(kq, "mode");
    if (!mode || mode->kind == QV_NULL) {
        s = q_spec_add(c, out, "KvRmsNormRopeCache", QSPEC_COMPUTE);
        int64_t d[4] = {P, 1, 1, kvp};
        s->nshapes = 1;
        s->shapes[0] = q_spec_shape(c, 4, d);
        s->dtype = dt;
        return 0;
    }
    int64_t bs;
    if (!qv_is_str(mode, "pool_dim0_agnostic") || kvan->shape.rank < 1 ||
        !qv_as_int(qv_get(kq, "block_size"), &bs) || bs <= 0 || kvp - kvan->shape.d[0] <= 0) {
        out->n = 0; /* nothing */
        return 0;
    }
    int64_t L = kvan->shape.d[0];
    s = q_spec_add(c, out, "KvRmsNormRopeCache", QSPEC_CACHE_POSTPROCESS);
    s->dtype = dt;
    int64_t v[5] = {P, kvp, L, kvp - L, bs};
    for (int i = 0; i < 5; i++) s->cache[i] = v[i], s->cache_set[i] = true;
    return 0;
}
