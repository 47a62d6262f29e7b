/* Sort (docs/REPLAY-OPS.md §2.1): sort along the last dim, descending -> (values,
 * int64 indices); ties keep ascending index order (stable). Each row is
 * sorted as 64-bit keys (order-preserving float bits << 32 | index) by an
 * LSD radix sort over the 32 key bits (insertion sort up to 32 elements),
 * in a workspace of two key arrays. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int sort_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 1, err)) return -1;
    const opdb_tensor *x = &p->in[0];
    int64_t d = x->dims[x->ndim - 1];
    if (d > INT32_MAX) return opdb_fail(err, OPDB_ERR_RUNTIME, "Sort: last dim %lld too long", (long long)d);
    p->nout = 2;
    p->out[0] = opdb_plan_tensor(x->dtype, x->ndim, x->dims);
    p->out[1] = opdb_plan_tensor(OPDB_DT_I64, x->ndim, x->dims);
    p->workspace_bytes = 2 * (size_t)opdb_tensor_numel(x) * sizeof(uint64_t);
    p->flops = 4.0 * (double)opdb_tensor_numel(x); /* four radix passes */
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

/* Ascending key order == descending float order (NaN first, like torch). */
static inline uint32_t desc_key(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u); /* ascending-order bits */
    return ~u;
}

static void radix_sort(uint64_t *a, uint64_t *tmp, size_t n) {
    if (n <= 32) { /* short rows: insertion sort beats four counting passes */
        for (size_t i = 1; i < n; i++) {
            uint64_t v = a[i];
            size_t j = i;
            for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
            a[j] = v;
        }
        return;
    }
    for (int shift = 32; shift < 64; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[((a[i] >> shift) & 0xff) + 1]++;
        if (count[((a[0] >> shift) & 0xff) + 1] == n) continue; /* byte constant over the row */
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) tmp[count[(a[i] >> shift) & 0xff]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
}

static int sort_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)err;
    const opdb_tensor *x = &p->in[0], *v = &p->out[0];
    int64_t *idx = p->out[1].data;
    int64_t d = x->dims[x->ndim - 1], rows = d ? opdb_tensor_numel(x) / d : 0;
    size_t es = opdb_dtype_size(x->dtype);
    uint64_t *keys = ws, *tmp = keys + (size_t)(rows * d);
    OPDB_OMP_FOR(rows * d)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        uint64_t *k = keys + r * d, *t = tmp + r * d;
        float buf[OPDB_VEC_CHUNK];
        for (int64_t c = 0; c < d; c += OPDB_VEC_CHUNK) {
            size_t m = (size_t)(d - c < OPDB_VEC_CHUNK ? d - c : OPDB_VEC_CHUNK);
            opdb_vec_load(buf, x->data, x->dtype, (size_t)(r * d + c), m);
            for (size_t i = 0; i < m; i++) k[c + (int64_t)i] = (uint64_t)desc_key(buf[i]) << 32 | (uint64_t)(c + (int64_t)i);
        }
        radix_sort(k, t, (size_t)d);
        const char *src = (const char *)x->data + (size_t)(r * d) * es;
        char *dst = (char *)v->data + (size_t)(r * d) * es;
        for (int64_t i = 0; i < d; i++) {
            int64_t j = (int64_t)(k[i] & 0xffffffffu);
            idx[r * d + i] = j;
            memcpy(dst + (size_t)i * es, src + (size_t)j * es, es);
        }
    }
    return 0;
}

const opdb_op_def opdb_op_Sort = {
    .name = "Sort",
    .plan = sort_plan,
    .cpu_run = sort_run,
};
