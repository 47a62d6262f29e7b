/* Sparse multi-head latent attention: like the dense one, but the attention
 * kernel is SparseFlashAttention, matched on the per-request query and KV
 * lengths, the paged cache's block size and the top-k selection; under
 * sequence parallelism a prefill sees rank zero's share of the tokens. */
#include <string.h>

#include "query/attn_runtime.h"
#include "query/decompose.h"

static q_shape shape3(q_ctx *c, int64_t a, int64_t b, int64_t d) {
    int64_t v[3] = {a, b, d};
    return q_spec_shape(c, 3, v);
}

static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 && (a < 0) == (b < 0)); }

q_spec *q_spec_add_sparse_attention(q_ctx *c, q_specs *out, const char *kernel, const char *dt, int64_t wt, int64_t wh,
                                     int64_t hd, const q_attn_rt *rt) {
    q_spec *s = q_spec_add(c, out, kernel, QSPEC_ATTENTION);
    s->dtype = dt;
    s->is_attention = true;
    s->att.q3[0] = wt, s->att.q3[1] = wh, s->att.q3[2] = hd;
    s->att.avg = rt->avg.v;
    s->att.has_sparse = true, s->att.sparse = 3;
    s->att.has_kv = true, s->att.kv = 1;
    s->att.layout = "TND";
    s->att.rt = rt;
    return s;
}

/* a tensor of at least min_rank dims: 1, -1 error set */
static int tensor_arg(q_ctx *c, const qv *v, const char *what, uint32_t min_rank) {
    if (v->kind != QV_TENSOR) {
        q_error(c, "bad_args", "%s is not a tensor", what);
        return -1;
    }
    if (v->shape.rank < min_rank) {
        q_error(c, "bad_args", "%s has fewer than %u dims", what, min_rank);
        return -1;
    }
    return 1;
}

int q_decompose_sparse_mla(q_ctx *c, const q_entry *e, const char *first, q_specs *out) {
    const qv *A = c->q->args;
    if (!A || A->n < 10) return 0;
    const qv *q = A->items[0], *kvc = A->items[1], *seq = A->items[4], *ql = A->items[5];
    if (tensor_arg(c, q, "q", 0) < 0) return 1;
    const char *dt = q_dtype_prof(q->dtype);
    if (!dt || seq->kind != QV_TENSOR) return 0;
    if (seq->shape.rank < 1) {
        q_error(c, "bad_args", "seq_lens is a 0-d tensor");
        return 1;
    }
    if (tensor_arg(c, q, "q", 3) < 0 || tensor_arg(c, kvc, "kv cache", 0) < 0) return 1;
    int64_t Bsz = seq->shape.d[0], N = q->shape.d[1], T = q->shape.d[0];
    int64_t avg = 0;
    if (!q_avgseq(seq, &avg)) avg = 0;
    q_phase ph = q_batch_phase(c->q->kwargs, Bsz);
    if (ph == PH_MIXED || ph == PH_INVALID) return 0;
    if (ph == PH_NONE) ph = avg != 0 && T >= avg ? PH_PREFILL : PH_DECODE;
    const qv *O = qv_get(e->v, "decomposer_options");
    if (O && O->kind != QV_DICT) O = NULL;
    const qv *cp = qv_get(O, "dsa_cp_layout");
    if (cp && cp->kind != QV_DICT) cp = NULL;
    bool G = qv_truthy(qv_get(cp, "attention_heads_already_global"));
    bool absorb = A->n > 7 && A->items[6]->kind == QV_TENSOR && A->items[7]->kind == QV_TENSOR;
    bool dec = true;
    if (ql->kind == QV_TENSOR && ql->values && ql->nvalues) {
        double mx = ql->values[0];
        for (size_t i = 1; i < ql->nvalues; i++)
            if (ql->values[i] > mx) mx = ql->values[i];
        dec = mx <= 1;
    }
    if (ph == PH_PREFILL && dec) return 0;
    q_oint topk = {0, false};
    if (A->n > 10 && A->items[10]->kind == QV_INT) topk.v = A->items[10]->i, topk.set = true;
    else if (A->n > 11 && A->items[11]->kind == QV_TENSOR && A->items[11]->shape.rank >= 1)
        topk.v = A->items[11]->shape.d[A->items[11]->shape.rank - 1], topk.set = true;
    if (kvc->shape.rank < 2) {
        q_error(c, "bad_args", "kv cache has fewer than 2 dims");
        return 1;
    }
    q_oint bs = {kvc->shape.d[kvc->shape.rank - 2], true};
    q_oint oavg = {avg, true};
    int tp = c->cfg->tp;
    bool sp = c->cfg->sp, quant = strcmp(first, "QuantBatchMatmulV3") == 0;
    const qv *qlt = ql->kind == QV_TENSOR ? ql : NULL;
    if (dec || absorb) {
        const qv *wuk = A->items[6], *wuv = A->items[7];
        if (wuk->kind == QV_NULL || wuv->kind == QV_NULL) return 0;
        if (tensor_arg(c, wuk, "W_UK_T", 3) < 0 || tensor_arg(c, wuv, "W_UV", 3) < 0) return 1;
        int64_t nope = wuk->shape.d[1], L = wuk->shape.d[2], v = wuv->shape.d[2];
        int64_t wt = T, wh = N;
        q_ivec cum = {0}, kvl = {0};
        if (ph == PH_PREFILL && sp && tp > 1) {
            wt = ceil_div(T, tp);
            wh = G ? N : N * tp;
            q_rt_rankzero(c->a, seq, T, wt, qlt, false, &cum, &kvl);
        }
        q_spec *s = q_spec_add(c, out, first, QSPEC_COMPUTE);
        if (!quant) s->alt[s->nalt++] = "BatchMatMulNd";
        s->nshapes = 2;
        s->shapes[0] = shape3(c, wh, wt, nope);
        s->shapes[1] = shape3(c, wh, nope, L);
        s->dtype = dt;
        if (quant) s->tc = 2, s->has_tc = true;
        q_spec_add_sparse_attention(c, out, "SparseFlashAttention", dt, wt, wh, L, q_rt_sparse_params(c, wt, wh, seq, oavg, topk, bs, true, &cum, &kvl));
        s = q_spec_add(c, out, "TransposeBatchMatMul", QSPEC_COMPUTE);
        s->nshapes = 2;
        s->shapes[0] = shape3(c, wh, wt, L);
        s->shapes[1] = shape3(c, wh, L, v);
        s->dtype = dt;
        const qv *tail = qv_get(O, "prefill_tail_transpose");
        bool tail_dict = tail && tail->kind == QV_DICT;
        if (ph == PH_PREFILL && qv_truthy(tail) &&
            (!(tail_dict && qv_truthy(qv_get(tail, "requires_sequence_parallel"))) || sp)) {
            const qv *tk = tail_dict ? qv_get(tail, "kernel_type") : NULL;
            if (!(tp > 1 && tk && tk->kind == QV_STR)) {
                out->n = 0;
                return 0;
            }
            int64_t w = N * v;
            if (G && qv_is_str(qv_get(cp, "tail_width_partition"), "tp")) {
                if (w % tp) {
                    out->n = 0;
                    return 0;
                }
                w /= tp;
            }
            s = q_spec_add(c, out, tk->s, QSPEC_COMPUTE);
            s->nshapes = 2;
            int64_t d0[3] = {wt, tp, w}, d1[1] = {3};
            s->shapes[0] = q_spec_shape(c, 3, d0);
            s->shapes[1] = q_spec_shape(c, 1, d1);
            s->dtype = dt;
            s->dtypes[0] = dt, s->dtypes[1] = "INT64", s->ndtypes = 2;
            s->tc = 2, s->has_tc = true;
        }
        return 0;
    }
    const qv *kvb = A->items[8];
    if (kvb->kind == QV_NULL) return 0;
    if (tensor_arg(c, kvb, "kv_b_proj", 1) < 0) return 1;
    int64_t L = kvb->shape.d[0], st = T, sh = N;
    q_ivec cum = {0}, kvl = {0};
    if (sp && tp > 1) {
        st = ceil_div(T, tp);
        sh = G ? N : N * tp;
        q_rt_rankzero(c->a, seq, T, st, qlt, false, &cum, &kvl);
    }
    q_spec *s = q_spec_add(c, out, "MatMulV2", QSPEC_COMPUTE);
    s->nshapes = 2;
    int64_t d0[2] = {T, L};
    s->shapes[0] = q_spec_shape(c, 2, d0);
    s->shapes[1] = kvb->shape;
    s->dtype = dt;
    s->tc = 2, s->has_tc = true;
    q_spec_add_sparse_attention(c, out, "SparseFlashAttention", dt, st, sh, L, q_rt_sparse_params(c, st, sh, seq, oavg, topk, bs, true, &cum, &kvl));
    return 0;
}
