/* GatherV2 (docs/REPLAY-OPS.md §2.2): embedding lookup, out[i] = weight[indices[i]]
 * (rows of weight; extra inputs ignored). Indices are int32/int64 in
 * [0, min(8, rows)) like the reference's small random integers. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int gather_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, -1, err) || opdb_plan_min_inputs(row, p, 2, err)) return -1;
    p->nin = 2;
    const opdb_tensor *w = &p->in[0], *ix = &p->in[1];
    if (ix->dtype != OPDB_DT_I32 && ix->dtype != OPDB_DT_I64)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "GatherV2: indices must be DT_INT32 or DT_INT64, got %s",
                         opdb_dtype_name(ix->dtype));
    if (w->dims[0] == 0 && opdb_tensor_numel(ix) > 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "GatherV2: weight has no rows to gather");
    if (ix->ndim + w->ndim - 1 > OPDB_MAX_DIMS)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "GatherV2: output rank above %d", OPDB_MAX_DIMS);
    opdb_tensor out = opdb_plan_tensor(w->dtype, ix->ndim, ix->dims);
    for (int i = 1; i < w->ndim; i++) out.dims[out.ndim++] = w->dims[i];
    p->nout = 1;
    p->out[0] = out;
    p->bytes = opdb_problem_io_bytes(p) - (double)opdb_tensor_bytes(w) + (double)opdb_tensor_bytes(&out);
    return 0;
}

static int gather_fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)err;
    uint64_t rng = seed;
    int64_t rows = p->in[0].dims[0] < 8 ? p->in[0].dims[0] : 8, n = opdb_tensor_numel(&p->in[1]);
    for (int64_t i = 0; i < n; i++)
        opdb_elem_set(p->in[1].data, p->in[1].dtype, (size_t)i, (double)(opdb_rng_next(&rng) % (uint64_t)rows));
    return 0;
}

static int gather_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    const opdb_tensor *w = &p->in[0], *ix = &p->in[1];
    size_t row_bytes = w->dims[0] ? opdb_tensor_bytes(w) / (size_t)w->dims[0] : 0;
    return opdb_vec_gather_rows(p->out[0].data, w->data, row_bytes, w->dims[0], ix->data, ix->dtype,
                                opdb_tensor_numel(ix), "GatherV2", err);
}

const opdb_op_def opdb_op_GatherV2 = {
    .name = "GatherV2",
    .plan = gather_plan,
    .fill = gather_fill,
    .cpu_run = gather_run,
};
