/* The attention kernel behind FusedInferAttentionScore on the CPU: per
 * (batch, kv head) gather K/V (paged or contiguous) to fp32, then per chunk of
 * query rows S = scale*Q.K^T (+ rope part), mask, softmax (+ lse), O = P.V. */
#ifndef OPDB_REPLAY_CPU_ATTENTION_H
#define OPDB_REPLAY_CPU_ATTENTION_H

#include "opdb/replay.h"

/* Where vector (b, h, i) of a tensor lives, in units of its last dim:
 * b*sb + h*sh + (i + start[b])*si, start = cumulative token starts when
 * `cum` (TND/NTD), else 0. Paged caches: block table entry blk, in-block
 * offset o: blk*sblk + o*so + h*sh. */
typedef struct opdb_att_view {
    int64_t sb, sh, si;
    bool cum, paged;
    int64_t sblk, so;
} opdb_att_view;

typedef struct opdb_attention {
    int64_t batch, heads, kv_heads, d, dr, dv;
    int64_t sparse_mode, block_size, table_w;
    float scale;
    opdb_att_view q, kv, out, lse;   /* value/key_rope use kv, query_rope uses q */
    const int64_t *q_len, *kv_len;   /* per-batch lengths */
} opdb_attention;

typedef struct opdb_att_tensors {
    const opdb_tensor *q, *k, *v, *qr, *kr, *mask, *table; /* qr/kr/mask/table may be absent (ndim 0) */
    opdb_tensor *out, *lse;                                /* lse may be absent */
} opdb_att_tensors;

/* Rows of Q processed at once (bounds the score buffer). */
#define OPDB_ATT_ROWS 256
/* Workspace for `copies` threads working on different (batch, kv head) groups. */
size_t opdb_attention_workspace(const opdb_attention *a, int copies);
void opdb_attention_run(const opdb_attention *a, const opdb_att_tensors *t, void *ws, int copies);

#endif
