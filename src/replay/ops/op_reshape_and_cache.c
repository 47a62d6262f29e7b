/* ReshapeAndCacheNdKernel (docs/REPLAY-OPS.md §2.2): scatter each token's key and
 * value row into the paged caches (blocks, block_size, ...) at its slot;
 * slot_mapping (T,) int32 = the first T values of a random permutation of
 * the key cache's blocks * block_size slots. The caches are written in
 * place (no separate outputs). */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static const char *const kv_names[2] = {"key", "value"};

static int64_t cache_slots(const opdb_tensor *c) { return c->ndim >= 2 ? c->dims[0] * c->dims[1] : 0; }

static int rac_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 5, err)) return -1;
    int64_t t = p->in[4].dims[0], slots = cache_slots(&p->in[2]);
    if (p->in[2].ndim < 2 || p->in[3].ndim < 2)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "ReshapeAndCacheNdKernel: caches must be (blocks, block_size, ...)");
    if (t > slots || slots == 0 || slots > INT32_MAX)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "ReshapeAndCacheNdKernel: %lld tokens do not fit in %lld cache slots",
                         (long long)t, (long long)slots);
    if (cache_slots(&p->in[3]) < slots)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "ReshapeAndCacheNdKernel: value_cache has fewer slots than key_cache");
    for (int k = 0; k < 2; k++) {
        const opdb_tensor *x = &p->in[k], *c = &p->in[2 + k];
        int64_t row_len = cache_slots(c) ? opdb_tensor_numel(c) / cache_slots(c) : 0;
        if (x->dims[0] != t || opdb_tensor_numel(x) != t * row_len)
            return opdb_fail(err, OPDB_ERR_RUNTIME,
                             "ReshapeAndCacheNdKernel: %s must hold %lld tokens of %lld values", kv_names[k],
                             (long long)t, (long long)row_len);
        if (x->dtype != c->dtype)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "ReshapeAndCacheNdKernel: %s dtype %s differs from its cache's %s",
                             kv_names[k], opdb_dtype_name(x->dtype), opdb_dtype_name(c->dtype));
    }
    p->in[4] = opdb_plan_tensor(OPDB_DT_I32, 1, &t);
    p->nout = 0;
    p->bytes = (double)opdb_tensor_bytes(&p->in[4]) +
               2.0 * (double)(opdb_tensor_bytes(&p->in[0]) + opdb_tensor_bytes(&p->in[1]));
    return 0;
}

static int rac_fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)err;
    uint64_t rng = seed;
    opdb_fill_perm_prefix(p->in[4].data, p->in[4].dims[0], cache_slots(&p->in[2]), &rng);
    return 0;
}

static int rac_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    for (int k = 0; k < 2; k++) {
        const opdb_tensor *x = &p->in[k], *c = &p->in[2 + k];
        int64_t slots = cache_slots(c);
        if (opdb_vec_scatter_rows(c->data, slots, x->data, opdb_tensor_bytes(c) / (size_t)slots, p->in[4].data,
                                  OPDB_DT_I32, p->in[4].dims[0], "ReshapeAndCacheNdKernel", err))
            return -1;
    }
    return 0;
}

const opdb_op_def opdb_op_ReshapeAndCacheNdKernel = {
    .name = "ReshapeAndCacheNdKernel",
    .plan = rac_plan,
    .fill = rac_fill,
    .cpu_run = rac_run,
};
