/* Paged KV-cache addressing shared by the sparse attention operators
 * (SparseFlashAttention, LightningIndexer; docs/REPLAY-OPS.md §2.5): the
 * synthetic block table, token -> batch lookup and position -> cache row. */
#ifndef OPDB_REPLAY_PAGED_KV_H
#define OPDB_REPLAY_PAGED_KV_H

#include <stdbool.h>
#include <stdint.h>
#include "opdb/replay.h"

/* bt[i] = i mod blocks for i < n (the reference's table over batch * W). */
void opdb_paged_fill_table(int32_t *bt, int64_t n, int64_t blocks);
/* out[b] = part b (or, cumulative, the running end) of an even split of
 * `total` tokens over `batch` (opdb_even_split) as int32. */
void opdb_paged_fill_split(int32_t *out, int64_t total, int64_t batch, bool cumulative);
/* -1 with an error unless every table entry is a block in [0, blocks). */
int opdb_paged_check_table(const int32_t *bt, int64_t n, int64_t blocks, const char *op, opdb_err *err);
/* Batch whose cumulative token range holds token t. */
int64_t opdb_paged_batch_of(const int32_t *cum, int64_t batch, int64_t t);
/* Cache slot (block * bs + offset) of position pos of batch b (w table columns). */
static inline int64_t opdb_paged_slot(const int32_t *bt, int64_t w, int64_t bs, int64_t b, int64_t pos) {
    return (int64_t)bt[b * w + pos / bs] * bs + pos % bs;
}

#endif
