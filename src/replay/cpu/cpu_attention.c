/* CPU attention (see attention.h): fp32 math through OpenBLAS, inputs of any
 * float dtype staged through fp32, masks per sparse mode. */
#include <math.h>
#include <omp.h>
#include <string.h>
#include "replay/cpu/attention.h"
#include "replay/cpu/kernels.h"
#include "replay/cpu/vec.h"

static int64_t max_of(const int64_t *v, int64_t n) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) m = v[i] > m ? v[i] : m;
    return m;
}

/* fp32 scratch of one thread: K, V, a chunk of Q, its scores and outputs. */
static size_t per_thread(const opdb_attention *a) {
    const int64_t mkv = max_of(a->kv_len, a->batch), dk = a->d + a->dr, rows = OPDB_ATT_ROWS;
    size_t floats = (size_t)(mkv * dk + mkv * a->dv + rows * dk + rows * (mkv ? mkv : 1) + rows * a->dv);
    return (floats * 4 + 63) & ~(size_t)63;
}

static size_t shared_bytes(const opdb_attention *a) { return ((size_t)(2 * (a->batch + 1)) * 8 + 63) & ~(size_t)63; }

size_t opdb_attention_workspace(const opdb_attention *a, int copies) {
    return shared_bytes(a) + per_thread(a) * (size_t)(copies > 0 ? copies : 1);
}

/* Element offset of vector (b, h, i) of a non-paged view. */
static int64_t vec_at(const opdb_att_view *v, const int64_t *start, int64_t b, int64_t h, int64_t i) {
    return b * v->sb + h * v->sh + (i + (v->cum ? start[b] : 0)) * v->si;
}

/* Vector of kv position j of batch b, head hk (paged through the block table). */
static int64_t kv_at(const opdb_attention *a, const opdb_tensor *table, const int64_t *start, int64_t b, int64_t hk,
                     int64_t j) {
    if (!a->kv.paged) return vec_at(&a->kv, start, b, hk, j);
    const int64_t blk = (int64_t)opdb_elem_get(table->data, table->dtype, (size_t)(b * a->table_w + j / a->block_size));
    return blk * a->kv.sblk + (j % a->block_size) * a->kv.so + hk * a->kv.sh;
}

/* Whether query row i of batch b may not see kv position j. */
static bool masked(const opdb_attention *a, const opdb_tensor *mask, int64_t b, int64_t i, int64_t j, int64_t ql,
                   int64_t kl) {
    switch (a->sparse_mode) {
    case 2: return j > i;
    case 3:
    case 4: return j > i + (kl - ql);
    default: {
        if (!mask || mask->ndim < 2) return false;
        const int64_t mq = mask->dims[mask->ndim - 2], mk = mask->dims[mask->ndim - 1];
        if (i >= mq || j >= mk) return false;
        const int64_t base = mask->ndim >= 3 && mask->dims[0] == a->batch ? b * (opdb_tensor_numel(mask) / a->batch) : 0;
        return opdb_elem_get(mask->data, mask->dtype, (size_t)(base + i * mk + j)) != 0.0;
    }
    }
}

/* One (batch, kv head): its keys/values once, then every query row of its heads. */
static void head_group(const opdb_attention *a, const opdb_att_tensors *t, const int64_t *qs, const int64_t *ks,
                       int64_t b, int64_t hk, float *K) {
    const int64_t dk = a->d + a->dr, mkv = max_of(a->kv_len, a->batch), g = a->heads / a->kv_heads;
    float *V = K + mkv * dk, *Q = V + mkv * a->dv, *S = Q + OPDB_ATT_ROWS * dk, *O = S + OPDB_ATT_ROWS * (mkv ? mkv : 1);
    const bool rope = a->dr > 0 && t->qr && t->qr->ndim && t->kr && t->kr->ndim;
    const int64_t ql = a->q_len[b], kl = a->kv_len[b];
    for (int64_t j = 0; j < kl; j++) { /* gather this head's keys (+ rope) and values */
        const int64_t v = kv_at(a, t->table, ks, b, hk, j);
        opdb_vec_load(K + j * dk, t->k->data, t->k->dtype, (size_t)(v * a->d), (size_t)a->d);
        if (rope) opdb_vec_load(K + j * dk + a->d, t->kr->data, t->kr->dtype, (size_t)(v * a->dr), (size_t)a->dr);
        opdb_vec_load(V + j * a->dv, t->v->data, t->v->dtype, (size_t)(v * a->dv), (size_t)a->dv);
    }
    const int64_t rows = g * ql; /* row r = head (hk*g + r/ql), query position r%ql */
    for (int64_t r0 = 0; r0 < rows; r0 += OPDB_ATT_ROWS) {
        const int64_t nr = rows - r0 < OPDB_ATT_ROWS ? rows - r0 : OPDB_ATT_ROWS;
        for (int64_t r = 0; r < nr; r++) {
            const int64_t h = hk * g + (r0 + r) / ql, i = (r0 + r) % ql, q = vec_at(&a->q, qs, b, h, i);
            opdb_vec_load(Q + r * dk, t->q->data, t->q->dtype, (size_t)(q * a->d), (size_t)a->d);
            if (rope) opdb_vec_load(Q + r * dk + a->d, t->qr->data, t->qr->dtype, (size_t)(q * a->dr), (size_t)a->dr);
        }
        opdb_sgemm(nr, kl, dk, Q, dk, K, dk, true, S, kl);
        for (int64_t r = 0; r < nr; r++) { /* scale, mask, softmax in place */
            const int64_t h = hk * g + (r0 + r) / ql, i = (r0 + r) % ql;
            float *s = S + r * kl, mx = -INFINITY;
            for (int64_t j = 0; j < kl; j++) {
                s[j] = masked(a, t->mask, b, i, j, ql, kl) ? -INFINITY : s[j] * a->scale;
                mx = fmaxf(mx, s[j]);
            }
            float sum = 0.0f;
            for (int64_t j = 0; j < kl; j++) sum += (s[j] = mx == -INFINITY ? 0.0f : expf(s[j] - mx));
            const float inv = sum > 0 ? 1.0f / sum : 0.0f;
            for (int64_t j = 0; j < kl; j++) s[j] *= inv;
            if (t->lse && t->lse->ndim) {
                float l = sum > 0 ? mx + logf(sum) : INFINITY;
                opdb_vec_store(t->lse->data, t->lse->dtype, (size_t)vec_at(&a->lse, qs, b, h, i), &l, 1);
            }
        }
        if (kl)
            opdb_sgemm(nr, a->dv, kl, S, kl, V, a->dv, false, O, a->dv);
        else /* nothing to attend to: zeros, like the device */
            memset(O, 0, (size_t)(nr * a->dv) * sizeof *O);
        for (int64_t r = 0; r < nr; r++) {
            const int64_t h = hk * g + (r0 + r) / ql, i = (r0 + r) % ql;
            opdb_vec_store(t->out->data, t->out->dtype, (size_t)(vec_at(&a->out, qs, b, h, i) * a->dv), O + r * a->dv,
                           (size_t)a->dv);
        }
    }
}

void opdb_attention_run(const opdb_attention *a, const opdb_att_tensors *t, void *ws, int copies) {
    int64_t *qs = ws, *ks = qs + a->batch + 1;
    char *priv = (char *)ws + shared_bytes(a);
    qs[0] = ks[0] = 0;
    for (int64_t b = 0; b < a->batch; b++) qs[b + 1] = qs[b] + a->q_len[b], ks[b + 1] = ks[b] + a->kv_len[b];
    const int64_t pairs = a->batch * a->kv_heads;
    int threads = opdb_cpu_threads() < copies ? opdb_cpu_threads() : copies;
    if (threads > pairs) threads = (int)pairs;
    if (threads <= 1) { /* one group at a time, each GEMM split over the threads */
        for (int64_t pi = 0; pi < pairs; pi++) head_group(a, t, qs, ks, pi / a->kv_heads, pi % a->kv_heads, (float *)priv);
        return;
    }
    /* (batch, kv head) groups over the threads, each GEMM on its own thread */
#pragma omp parallel num_threads(threads)
    {
        opdb_cpu_pin_worker();
        float *mine = (float *)(priv + per_thread(a) * (size_t)omp_get_thread_num());
#pragma omp for schedule(dynamic, 1)
        for (int64_t pi = 0; pi < pairs; pi++) head_group(a, t, qs, ks, pi / a->kv_heads, pi % a->kv_heads, mine);
    }
}
