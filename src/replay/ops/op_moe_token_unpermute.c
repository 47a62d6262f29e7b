/* MoeTokenUnpermute (docs/REPLAY-OPS.md §2.2): permuted tokens (N, H), the
 * sorted slot indices (N,) and optional probs (T, topk) -> out (T, H) with
 * out[t] = sum_k probs[t][k] * permuted[inverse(t*topk + k)]. */
#include <stdlib.h>
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"
#include "opdb/schema.h"

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    char sh[OPDB_MAX_TENSORS][128], fm[OPDB_MAX_TENSORS][128], dt[OPDB_MAX_TENSORS][128];
    size_t ns = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_SHAPES), false, sh, OPDB_MAX_TENSORS);
    size_t nf = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_FORMATS), false, fm, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_DTYPES), false, dt, OPDB_MAX_TENSORS);
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < ns; i++) { /* dtype default DT_BF16; UNDEFINED slots are skipped */
        const char *d = i < nd ? dt[i] : "DT_BF16";
        if (strcmp(d, "DT_UNDEFINED") == 0 || strcmp(d, "UNDEFINED") == 0) continue;
        if (opdb_replay_make(sh[i], i < nf ? fm[i] : "ND", d, false, &p->in[p->nin++], err)) return -1;
    }
    if (p->nin < 2)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "MoeTokenUnpermute expects at least two tensors, got %d", p->nin);
    const opdb_tensor *perm = &p->in[0], *sorted = &p->in[1], *probs = p->nin >= 3 ? &p->in[2] : NULL;
    const int64_t n = perm->ndim == 2 ? perm->dims[0] : -1, h = perm->ndim == 2 ? perm->dims[1] : 0;
    if (n < 1 || opdb_tensor_numel(sorted) != n)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "MoeTokenUnpermute expects permuted tokens (N,H) and sorted indices (N,)");
    if (opdb_dtype_is_float(sorted->dtype) || sorted->dtype == OPDB_DT_BOOL)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "MoeTokenUnpermute needs integer sorted indices, got %s",
                         opdb_dtype_name(sorted->dtype));
    int64_t t = n, topk = 1;
    if (probs) {
        if (probs->ndim != 2 || opdb_tensor_numel(probs) != n)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "MoeTokenUnpermute expects probs (T,topk) with T*topk = N = %lld",
                             (long long)n);
        t = probs->dims[0], topk = probs->dims[1];
    }
    int64_t od[2] = {t, h};
    p->out[0] = opdb_plan_tensor(perm->dtype, 2, od);
    p->nout = 1;
    p->iparam[0] = n, p->iparam[1] = h, p->iparam[2] = t, p->iparam[3] = topk;
    p->flops = 2.0 * (double)n * (double)h;
    for (int i = 0; i < p->nin; i++) p->bytes += (double)opdb_tensor_bytes(&p->in[i]);
    p->bytes += (double)opdb_tensor_bytes(&p->out[0]);
    /* inverse permutation + fp32 accumulators (one row per output token) */
    p->workspace_bytes = (size_t)n * 8 + (size_t)(t * h) * 4 + 64;
    return 0;
}

/* sorted_indices: a random permutation of 0..N-1 (Fisher-Yates, seeded). */
static int fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    const int64_t n = p->iparam[0];
    int64_t *perm = malloc((size_t)n * sizeof *perm);
    if (!perm) return opdb_fail(err, OPDB_ERR_RUNTIME, "out of memory");
    uint64_t rng = seed ^ 0x5eedu;
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(opdb_rng_next(&rng) % (uint64_t)(i + 1)), v = perm[i];
        perm[i] = perm[j], perm[j] = v;
    }
    for (int64_t i = 0; i < n; i++) opdb_elem_set(p->in[1].data, p->in[1].dtype, (size_t)i, (double)perm[i]);
    free(perm);
    return 0;
}

static int cpu_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)err;
    const int64_t n = p->iparam[0], h = p->iparam[1], t = p->iparam[2], topk = p->iparam[3];
    int64_t *inv = ws;
    float *acc = (float *)(inv + n);
    for (int64_t i = 0; i < n; i++) inv[i] = -1;
    for (int64_t i = 0; i < n; i++) {
        double s = opdb_elem_get(p->in[1].data, p->in[1].dtype, (size_t)i);
        if (s >= 0 && s < (double)n) inv[(int64_t)s] = i;
    }
    const opdb_tensor *perm = &p->in[0], *probs = p->nin >= 3 ? &p->in[2] : NULL;
#pragma omp parallel for num_threads(opdb_cpu_threads()) schedule(static)
    for (int64_t r = 0; r < t; r++) {
        opdb_cpu_pin_worker();
        float *o = acc + r * h;
        memset(o, 0, (size_t)h * sizeof *o);
        for (int64_t k = 0; k < topk; k++) {
            const int64_t s = r * topk + k, src = inv[s];
            if (src < 0) continue;
            const float w = probs ? (float)opdb_elem_get(probs->data, probs->dtype, (size_t)s) : 1.0f;
            float buf[OPDB_VEC_CHUNK];
            for (int64_t j0 = 0; j0 < h; j0 += OPDB_VEC_CHUNK) {
                const int64_t len = h - j0 < OPDB_VEC_CHUNK ? h - j0 : OPDB_VEC_CHUNK;
                opdb_vec_load(buf, perm->data, perm->dtype, (size_t)(src * h + j0), (size_t)len);
                for (int64_t j = 0; j < len; j++) o[j0 + j] += w * buf[j];
            }
        }
    }
    opdb_from_f32(acc, (opdb_tensor *)&p->out[0], (size_t)(t * h));
    return 0;
}

const opdb_op_def opdb_op_MoeTokenUnpermute = {"MoeTokenUnpermute", NULL, plan, fill, cpu_run, NULL};
