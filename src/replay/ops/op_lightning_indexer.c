/* LightningIndexer (docs/REPLAY-OPS.md §2.5; DeepSeek-V3.2 sparse attention indexer):
 * for each query token, score every visible key position s of its batch,
 * score(s) = sum_g w[t,g] * ReLU(q[t,g] . k[s]), and return the positions of
 * the sparse_count best scores (descending; ties by lower position; -1 pads
 * when fewer are visible). Sparse mode 3 (right-down causal): query i of a
 * batch with q_len queries and kv_len keys sees positions < kv_len - q_len + i + 1.
 * Keys come from the paged indexer cache (blocks, block_size, 1, D) through
 * the block table. Plan (spec): exactly 6 inputs; batch = in3[0], W =
 * in5[-1]; q lengths = cumulative even split of T over batch; key lengths =
 * even split of blocks * block_size; block table 0..batch*W-1 mod blocks;
 * sparse count = out0[-1] (2048 without an output). */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/paged_kv.h"
#include "replay/ops/plan_util.h"

enum { Q, KEY, WEIGHTS, QLEN, KLEN, BTAB, NIN };
enum { P_BATCH, P_W, P_BS, P_SPARSE, P_HEADS, P_D, P_BLOCKS };
#define LI_MAX_SPARSE 8192
#define LI_MAX_QROW 16384 /* heads * head_dim of one token */
#define LI_MAX_HEADS 1024

static int li_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, NIN, err)) return -1;
    const opdb_tensor *q = &p->in[Q], *k = &p->in[KEY];
    if (q->ndim != 3 || k->ndim < 3)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "LightningIndexer: query must be (T, N, D) and the indexer cache (blocks, block_size, ..., D)");
    int64_t t = q->dims[0], n = q->dims[1], d = q->dims[2], blocks = k->dims[0], bs = k->dims[1];
    int64_t batch = p->in[QLEN].dims[0], w = p->in[BTAB].dims[p->in[BTAB].ndim - 1];
    int64_t sparse = p->nout >= 1 && p->out[0].ndim ? p->out[0].dims[p->out[0].ndim - 1] : 2048;
    if (k->dims[k->ndim - 1] != d || opdb_tensor_numel(k) != blocks * bs * d || opdb_tensor_numel(&p->in[WEIGHTS]) != t * n)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "LightningIndexer: cache must be (blocks, block_size, 1, %lld) and weights (T, N)", (long long)d);
    if (batch <= 0 || w <= 0 || sparse <= 0 || sparse > LI_MAX_SPARSE || n * d > LI_MAX_QROW || n > LI_MAX_HEADS)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "LightningIndexer: empty batch/block table, sparse count outside 1..%d or heads*dim above %d",
                         LI_MAX_SPARSE, LI_MAX_QROW);
    int64_t longest = (blocks * bs + batch - 1) / batch;
    if (longest > w * bs)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "LightningIndexer: key length %lld exceeds the block table (%lld x %lld)",
                         (long long)longest, (long long)w, (long long)bs);
    int64_t bt[2] = {batch, w}, od[3] = {t, 1, sparse};
    p->in[QLEN] = opdb_plan_tensor(OPDB_DT_I32, 1, &batch);
    p->in[KLEN] = opdb_plan_tensor(OPDB_DT_I32, 1, &batch);
    p->in[BTAB] = opdb_plan_tensor(OPDB_DT_I32, 2, bt);
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(OPDB_DT_I32, 3, od);
    int64_t ip[] = {batch, w, bs, sparse, n, d, blocks};
    memcpy(p->iparam, ip, sizeof ip);
    /* each token against (up to) its batch's keys */
    p->flops = 2.0 * (double)(t * n * d) * (double)longest;
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

static int li_fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)seed;
    (void)err;
    const int64_t *ip = p->iparam;
    opdb_paged_fill_table(p->in[BTAB].data, ip[P_BATCH] * ip[P_W], ip[P_BLOCKS]);
    opdb_paged_fill_split(p->in[QLEN].data, p->in[Q].dims[0], ip[P_BATCH], true);
    opdb_paged_fill_split(p->in[KLEN].data, ip[P_BLOCKS] * ip[P_BS], ip[P_BATCH], false);
    return 0;
}

/* Candidate order: higher score first, then lower position. */
static inline bool better(float sa, int32_t ia, float sb, int32_t ib) { return sa > sb || (sa == sb && ia < ib); }

/* Min-heap (worst candidate at the root) of at most k entries. */
static void heap_sift(float *s, int32_t *ix, int64_t n, int64_t i) {
    for (;;) {
        int64_t c = 2 * i + 1, w = i;
        if (c < n && better(s[w], ix[w], s[c], ix[c])) w = c;
        if (c + 1 < n && better(s[w], ix[w], s[c + 1], ix[c + 1])) w = c + 1;
        if (w == i) return;
        float ts = s[i];
        int32_t ti = ix[i];
        s[i] = s[w], ix[i] = ix[w], s[w] = ts, ix[w] = ti;
        i = w;
    }
}

static void li_token(const opdb_op_problem *p, int64_t t) {
    const int64_t *ip = p->iparam;
    const int32_t *cum = p->in[QLEN].data, *klen = p->in[KLEN].data, *bt = p->in[BTAB].data;
    int64_t n = ip[P_HEADS], d = ip[P_D], k = ip[P_SPARSE];
    int64_t b = opdb_paged_batch_of(cum, ip[P_BATCH], t), start = b ? cum[b - 1] : 0;
    int64_t visible = klen[b] - (cum[b] - start) + (t - start) + 1;
    visible = visible < 0 ? 0 : visible > klen[b] ? klen[b] : visible;
    float q[LI_MAX_QROW], wt[LI_MAX_HEADS], key[OPDB_VEC_CHUNK * 4], hs[LI_MAX_SPARSE];
    int32_t hi[LI_MAX_SPARSE];
    opdb_vec_load(q, p->in[Q].data, p->in[Q].dtype, (size_t)(t * n * d), (size_t)(n * d));
    opdb_vec_load(wt, p->in[WEIGHTS].data, p->in[WEIGHTS].dtype, (size_t)(t * n), (size_t)n);
    int64_t used = 0;
    for (int64_t s = 0; s < visible; s++) {
        int64_t slot = opdb_paged_slot(bt, ip[P_W], ip[P_BS], b, s);
        float score = 0.0f;
        for (int64_t c = 0; c < d; c += OPDB_VEC_CHUNK * 4) { /* d <= LI_MAX_QROW: chunked key row */
            int64_t m = d - c < OPDB_VEC_CHUNK * 4 ? d - c : OPDB_VEC_CHUNK * 4;
            opdb_vec_load(key, p->in[KEY].data, p->in[KEY].dtype, (size_t)(slot * d + c), (size_t)m);
            for (int64_t g = 0; g < n; g++) {
                float dot = opdb_vec_dot(q + g * d + c, key, (size_t)m);
                score += wt[g] * (dot > 0.0f ? dot : 0.0f);
            }
        }
        if (used < k) {
            hs[used] = score, hi[used] = (int32_t)s;
            for (int64_t i = used++; i > 0 && better(hs[(i - 1) / 2], hi[(i - 1) / 2], hs[i], hi[i]); i = (i - 1) / 2) {
                float ts = hs[i];
                int32_t ti = hi[i];
                hs[i] = hs[(i - 1) / 2], hi[i] = hi[(i - 1) / 2], hs[(i - 1) / 2] = ts, hi[(i - 1) / 2] = ti;
            }
        } else if (better(score, (int32_t)s, hs[0], hi[0])) {
            hs[0] = score, hi[0] = (int32_t)s;
            heap_sift(hs, hi, used, 0);
        }
    }
    int32_t *out = (int32_t *)p->out[0].data + t * k;
    for (int64_t i = used; i < k; i++) out[i] = -1;
    for (int64_t i = used - 1; i >= 0; i--) { /* pop the worst into the last free place */
        out[i] = hi[0];
        hs[0] = hs[i], hi[0] = hi[i];
        heap_sift(hs, hi, i, 0);
    }
}

static int li_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    const int64_t *ip = p->iparam;
    if (opdb_paged_check_table(p->in[BTAB].data, ip[P_BATCH] * ip[P_W], ip[P_BLOCKS], "LightningIndexer", err))
        return -1;
    const int32_t *klen = p->in[KLEN].data;
    for (int64_t b = 0; b < ip[P_BATCH]; b++)
        if (klen[b] < 0 || klen[b] > ip[P_W] * ip[P_BS])
            return opdb_fail(err, OPDB_ERR_RUNTIME, "LightningIndexer: key length %d of batch %lld exceeds the table",
                             klen[b], (long long)b);
    int64_t t = p->in[Q].dims[0];
    OPDB_OMP_FOR(t * ip[P_HEADS] * ip[P_D] * 64)
    for (int64_t i = 0; i < t; i++) {
        OPDB_PIN();
        li_token(p, i);
    }
    return 0;
}

const opdb_op_def opdb_op_LightningIndexer = {
    .name = "LightningIndexer",
    .plan = li_plan,
    .fill = li_fill,
    .cpu_run = li_run,
};
