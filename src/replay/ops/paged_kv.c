/* Paged KV-cache addressing (see paged_kv.h). */
#include "replay/ops/paged_kv.h"

#include <stdlib.h>

#include "replay/ops/even_split.h"

void opdb_paged_fill_table(int32_t *bt, int64_t n, int64_t blocks) {
    for (int64_t i = 0; i < n; i++) bt[i] = (int32_t)(i % blocks);
}

void opdb_paged_fill_split(int32_t *out, int64_t total, int64_t batch, bool cumulative) {
    int64_t *parts = opdb_xmalloc((size_t)(batch > 0 ? batch : 1) * sizeof *parts);
    opdb_even_split(total, batch, cumulative, false, parts);
    for (int64_t b = 0; b < batch; b++) out[b] = (int32_t)parts[b];
    free(parts);
}

int opdb_paged_check_table(const int32_t *bt, int64_t n, int64_t blocks, const char *op, opdb_err *err) {
    for (int64_t i = 0; i < n; i++)
        if (bt[i] < 0 || bt[i] >= blocks)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: block table entry %d outside [0, %lld)", op, bt[i],
                             (long long)blocks);
    return 0;
}

int64_t opdb_paged_batch_of(const int32_t *cum, int64_t batch, int64_t t) {
    int64_t b = 0;
    while (b < batch - 1 && t >= cum[b]) b++;
    return b;
}
