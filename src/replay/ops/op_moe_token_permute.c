/* MoeTokenPermute (docs/REPLAY-OPS.md §2.2): tokens (T, H) and expert indices
 * (T, topk) -> rows of tokens ordered by expert (stable), and the sorted
 * flat slot indices (int32). */
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, -1, err) || opdb_plan_min_inputs(row, p, 2, err)) return -1;
    const opdb_tensor *tok = &p->in[0], *idx = &p->in[1];
    if (opdb_dtype_is_float(idx->dtype) || idx->dtype == OPDB_DT_BOOL)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "MoeTokenPermute needs integer indices, got %s", opdb_dtype_name(idx->dtype));
    const int64_t t = tok->ndim >= 2 ? tok->dims[0] : 1, h = tok->ndim ? tok->dims[tok->ndim - 1] : 0;
    const int64_t n = opdb_tensor_numel(idx);
    if (tok->ndim != 2 || t == 0 || n % t != 0 || (idx->ndim >= 1 && idx->dims[0] != t))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "MoeTokenPermute expects tokens (T,H) and indices (T,topk)");
    int64_t od[2] = {n, h};
    p->out[0] = opdb_plan_tensor(tok->dtype, 2, od);
    p->out[1] = opdb_plan_tensor(OPDB_DT_I32, 1, od);
    p->nout = 2;
    p->iparam[0] = t, p->iparam[1] = h, p->iparam[2] = n / t;
    p->bytes = (double)(opdb_tensor_bytes(idx) + opdb_tensor_bytes(&p->out[0]) + opdb_tensor_bytes(&p->out[1])) +
               (double)opdb_tensor_bytes(tok) * (double)(n / t);
    /* radix sort: keys and slots, twice (ping-pong), plus 2^16 counters */
    p->workspace_bytes = (size_t)n * 16 + (65536 + 1) * sizeof(int64_t);
    return 0;
}

/* Stable LSD radix sort of slots by 32-bit key, two 16-bit passes. */
static void radix_sort(uint32_t *key, uint32_t *slot, uint32_t *key2, uint32_t *slot2, int64_t n, int64_t *cnt) {
    for (int pass = 0; pass < 2; pass++) {
        const int sh = 16 * pass;
        memset(cnt, 0, (65536 + 1) * sizeof *cnt);
        for (int64_t i = 0; i < n; i++) cnt[((key[i] >> sh) & 0xffffu) + 1]++;
        for (int b = 0; b < 65536; b++) cnt[b + 1] += cnt[b];
        for (int64_t i = 0; i < n; i++) {
            int64_t d = cnt[(key[i] >> sh) & 0xffffu]++;
            key2[d] = key[i];
            slot2[d] = slot[i];
        }
        uint32_t *tk = key, *ts = slot;
        key = key2, slot = slot2, key2 = tk, slot2 = ts;
    }
}

static int cpu_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)err;
    const int64_t h = p->iparam[1], topk = p->iparam[2], n = opdb_tensor_numel(&p->in[1]);
    uint32_t *key = ws, *slot = key + n, *key2 = slot + n, *slot2 = key2 + n;
    int64_t *cnt = (int64_t *)(slot2 + n);
    const opdb_tensor *idx = &p->in[1];
    for (int64_t i = 0; i < n; i++) {
        double e = opdb_elem_get(idx->data, idx->dtype, (size_t)i);
        key[i] = e <= 0 ? 0u : e >= 4294967295.0 ? 0xffffffffu : (uint32_t)e;
        slot[i] = (uint32_t)i;
    }
    radix_sort(key, slot, key2, slot2, n, cnt); /* two passes: result back in key/slot */
    const size_t row = (size_t)h * opdb_dtype_size(p->in[0].dtype);
    const char *src = p->in[0].data;
    char *dst = p->out[0].data;
    int32_t *sorted = p->out[1].data;
#pragma omp parallel for num_threads(opdb_cpu_threads()) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        opdb_cpu_pin_worker();
        sorted[i] = (int32_t)slot[i];
        memcpy(dst + (size_t)i * row, src + (size_t)(slot[i] / (uint64_t)topk) * row, row);
    }
    return 0;
}

const opdb_op_def opdb_op_MoeTokenPermute = {"MoeTokenPermute", NULL, plan, NULL, cpu_run, NULL};
