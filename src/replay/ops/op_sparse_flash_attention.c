/* SparseFlashAttention (docs/REPLAY-OPS.md §2.5): each query token attends to the
 * topk cache positions its sparse indices name (DeepSeek-V3.2 style MLA):
 * s_j = scale * (q . k_j + q_pe . k_pe_j), softmax over the selected j,
 * out = sum_j p_j v_j, keys/values read from the paged caches through the
 * block table (PA_BSND: (blocks, block_size, kv_heads, dim)).
 * Plan (spec): exactly 9 inputs; query in0 (T, N, L), caches in1/in2, topk =
 * in3[-1], block table (in4[0] = batch, in4[1] = W) int32 = 0..batch*W-1 mod
 * blocks, q lengths = cumulative even split of T over batch (in5), kv
 * lengths W*block_size each (in6), q_pe in7, k_pe cache in8 (R = last dim);
 * sparse indices (T, 1, topk) int32 = 0..min(topk, max_seq)-1 padded with
 * the last; scale 1/sqrt(L + R). */
#include <math.h>
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/paged_kv.h"
#include "replay/ops/plan_util.h"

enum { Q, KEY, VALUE, SIDX, BTAB, QLEN, KVLEN, QPE, KPE, NIN };
enum { P_BATCH, P_W, P_BS, P_TOPK, P_KVH, P_L, P_R, P_LV, P_BLOCKS, P_HEADS };
#define SFA_MAX_TOPK 16384

/* Row count per (block, offset) of a paged cache of `dim` values, as kv heads. */
static int64_t cache_heads(const opdb_tensor *c, int64_t dim) {
    int64_t slots = c->ndim >= 2 ? c->dims[0] * c->dims[1] : 0;
    return slots && dim ? opdb_tensor_numel(c) / (slots * dim) : 0;
}

static int sfa_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, NIN, err)) return -1;
    const opdb_tensor *q = &p->in[Q], *k = &p->in[KEY], *v = &p->in[VALUE];
    if (q->ndim != 3 || k->ndim < 3 || v->ndim < 3 || p->in[BTAB].ndim != 2)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "SparseFlashAttention: query must be (T, N, D), caches (blocks, block_size, ..., L), block "
                         "table 2-D");
    int64_t t = q->dims[0], n = q->dims[1], l = k->dims[k->ndim - 1], lv = v->dims[v->ndim - 1];
    int64_t r = p->in[KPE].dims[p->in[KPE].ndim - 1], kvh = cache_heads(k, l);
    int64_t topk = p->in[SIDX].dims[p->in[SIDX].ndim - 1], batch = p->in[BTAB].dims[0], w = p->in[BTAB].dims[1];
    int64_t blocks = k->dims[0], bs = k->dims[1];
    if (q->dims[2] != l || kvh == 0 || n % kvh || cache_heads(v, lv) != kvh || cache_heads(&p->in[KPE], r) != kvh ||
        v->dims[0] != blocks || v->dims[1] != bs || opdb_tensor_numel(&p->in[QPE]) != t * n * r)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "SparseFlashAttention: query (T, N, %lld), q_pe (T, N, R) and the caches do not agree",
                         (long long)l);
    if (l > OPDB_VEC_ROPE_MAX || lv > OPDB_VEC_ROPE_MAX || r > OPDB_VEC_ROPE_MAX || topk > SFA_MAX_TOPK ||
        topk <= 0 || batch <= 0 || w <= 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "SparseFlashAttention: dims above %d, topk outside 1..%d or empty "
                         "block table", OPDB_VEC_ROPE_MAX, SFA_MAX_TOPK);
    int64_t sidx[3] = {t, 1, topk}, bt[2] = {batch, w}, od[3] = {t, n, lv};
    p->in[SIDX] = opdb_plan_tensor(OPDB_DT_I32, 3, sidx);
    p->in[BTAB] = opdb_plan_tensor(OPDB_DT_I32, 2, bt);
    p->in[QLEN] = opdb_plan_tensor(OPDB_DT_I32, 1, &batch);
    p->in[KVLEN] = opdb_plan_tensor(OPDB_DT_I32, 1, &batch);
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(q->dtype, 3, od);
    int64_t ip[] = {batch, w, bs, topk, kvh, l, r, lv, blocks, n};
    memcpy(p->iparam, ip, sizeof ip);
    p->fparam[0] = 1.0 / sqrt((double)(l + r));
    int64_t keys = topk < w * bs ? topk : w * bs;
    p->flops = 2.0 * (double)(t * n * keys) * (double)(l + r + lv);
    /* each token reads its selected key/value/k_pe rows once (shared by heads) */
    double row_bytes = (double)(l * (int64_t)opdb_dtype_size(k->dtype) + lv * (int64_t)opdb_dtype_size(v->dtype) +
                                r * (int64_t)opdb_dtype_size(p->in[KPE].dtype));
    p->bytes = (double)(opdb_tensor_bytes(q) + opdb_tensor_bytes(&p->in[QPE]) + opdb_tensor_bytes(&p->in[SIDX]) +
                        opdb_tensor_bytes(&p->out[0])) +
               (double)(t * keys * kvh) * row_bytes;
    return 0;
}

static int sfa_fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)seed;
    (void)err;
    const int64_t *ip = p->iparam;
    int64_t t = p->in[Q].dims[0], max_seq = ip[P_W] * ip[P_BS], used = ip[P_TOPK] < max_seq ? ip[P_TOPK] : max_seq;
    int32_t *sidx = p->in[SIDX].data, *kl = p->in[KVLEN].data;
    opdb_paged_fill_table(p->in[BTAB].data, ip[P_BATCH] * ip[P_W], ip[P_BLOCKS]);
    opdb_paged_fill_split(p->in[QLEN].data, t, ip[P_BATCH], true);
    for (int64_t i = 0; i < t; i++)
        for (int64_t j = 0; j < ip[P_TOPK]; j++) sidx[i * ip[P_TOPK] + j] = (int32_t)(j < used ? j : used - 1);
    for (int64_t b = 0; b < ip[P_BATCH]; b++) kl[b] = (int32_t)max_seq;
    return 0;
}

/* Cache row (block*bs + offset) of position pos of batch b, or -1 when the
 * position is outside the batch's kv length. */
static int64_t cache_row(const opdb_op_problem *p, int64_t b, int64_t pos) {
    const int64_t *ip = p->iparam;
    if (pos < 0 || pos >= ((const int32_t *)p->in[KVLEN].data)[b]) return -1;
    return opdb_paged_slot(p->in[BTAB].data, ip[P_W], ip[P_BS], b, pos);
}

/* Block table, lengths and indices must address the caches. */
static int sfa_check(const opdb_op_problem *p, opdb_err *err) {
    const int64_t *ip = p->iparam;
    const int32_t *ql = p->in[QLEN].data, *kl = p->in[KVLEN].data;
    if (opdb_paged_check_table(p->in[BTAB].data, ip[P_BATCH] * ip[P_W], ip[P_BLOCKS], "SparseFlashAttention", err))
        return -1;
    for (int64_t b = 0; b < ip[P_BATCH]; b++)
        if (kl[b] < 0 || kl[b] > ip[P_W] * ip[P_BS] || ql[b] < (b ? ql[b - 1] : 0) || ql[b] > p->in[Q].dims[0])
            return opdb_fail(err, OPDB_ERR_RUNTIME, "SparseFlashAttention: bad sequence lengths for batch %lld",
                             (long long)b);
    return 0;
}

static void sfa_token_head(const opdb_op_problem *p, int64_t t, int64_t b, int64_t h) {
    const int64_t *ip = p->iparam;
    int64_t l = ip[P_L], r = ip[P_R], lv = ip[P_LV], topk = ip[P_TOPK], kvh = ip[P_KVH];
    int64_t kh = h / (ip[P_HEADS] / kvh), qrow = t * ip[P_HEADS] + h;
    const int32_t *sidx = (const int32_t *)p->in[SIDX].data + t * topk;
    const opdb_tensor *key = &p->in[KEY], *val = &p->in[VALUE], *kpe = &p->in[KPE];
    float qv[OPDB_VEC_ROPE_MAX], qp[OPDB_VEC_ROPE_MAX], buf[OPDB_VEC_ROPE_MAX], acc[OPDB_VEC_ROPE_MAX];
    float score[SFA_MAX_TOPK];
    opdb_vec_load(qv, p->in[Q].data, p->in[Q].dtype, (size_t)(qrow * l), (size_t)l);
    opdb_vec_load(qp, p->in[QPE].data, p->in[QPE].dtype, (size_t)(qrow * r), (size_t)r);
    float mx = -INFINITY, scale = (float)p->fparam[0];
    for (int64_t j = 0; j < topk; j++) {
        int64_t cr = cache_row(p, b, sidx[j]);
        score[j] = -INFINITY;
        if (cr < 0) continue;
        int64_t kr = cr * kvh + kh;
        opdb_vec_load(buf, key->data, key->dtype, (size_t)(kr * l), (size_t)l);
        float s = opdb_vec_dot(qv, buf, (size_t)l);
        opdb_vec_load(buf, kpe->data, kpe->dtype, (size_t)(kr * r), (size_t)r);
        score[j] = (s + opdb_vec_dot(qp, buf, (size_t)r)) * scale;
        mx = score[j] > mx ? score[j] : mx;
    }
    for (int64_t i = 0; i < lv; i++) acc[i] = 0.0f;
    if (mx > -INFINITY) {
        for (int64_t j = 0; j < topk; j++) score[j] -= mx;
        opdb_vec_exp(score, (size_t)topk);
        float inv = 1.0f / opdb_vec_sum(score, (size_t)topk);
        for (int64_t j = 0; j < topk; j++) {
            if (score[j] == 0.0f) continue;
            int64_t vr = cache_row(p, b, sidx[j]) * kvh + kh;
            opdb_vec_load(buf, val->data, val->dtype, (size_t)(vr * lv), (size_t)lv);
            float pj = score[j] * inv;
            for (int64_t i = 0; i < lv; i++) acc[i] += pj * buf[i];
        }
    }
    opdb_vec_store(p->out[0].data, p->out[0].dtype, (size_t)(qrow * lv), acc, (size_t)lv);
}

static int sfa_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    if (sfa_check(p, err)) return -1;
    const int64_t *ip = p->iparam;
    const int32_t *ql = p->in[QLEN].data;
    int64_t t = p->in[Q].dims[0], n = ip[P_HEADS];
    OPDB_OMP_FOR(t * n * ip[P_TOPK] * ip[P_L])
    for (int64_t u = 0; u < t * n; u++) {
        OPDB_PIN();
        int64_t tok = u / n;
        sfa_token_head(p, tok, opdb_paged_batch_of(ql, ip[P_BATCH], tok), u % n);
    }
    return 0;
}

const opdb_op_def opdb_op_SparseFlashAttention = {
    .name = "SparseFlashAttention",
    .plan = sfa_plan,
    .fill = sfa_fill,
    .cpu_run = sfa_run,
};
