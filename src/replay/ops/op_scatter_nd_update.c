/* ScatterNdUpdate (docs/REPLAY-OPS.md §2.2): in place, data[indices[i]] = updates[i]
 * for N rows; indices (N, 1) int32 = the first N values of a random
 * permutation of data's rows (so N must fit). No separate output. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int snu_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 3, err)) return -1;
    const opdb_tensor *data = &p->in[0], *upd = &p->in[2];
    int64_t n = p->in[1].dims[0], rows = data->dims[0];
    if (n > rows || rows > INT32_MAX)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "ScatterNdUpdate: %lld indices do not fit in %lld rows", (long long)n,
                         (long long)rows);
    int64_t row_len = rows ? opdb_tensor_numel(data) / rows : 0;
    if (opdb_tensor_numel(upd) != n * row_len)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "ScatterNdUpdate: updates hold %lld values, expected %lld x %lld",
                         (long long)opdb_tensor_numel(upd), (long long)n, (long long)row_len);
    if (upd->dtype != data->dtype)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "ScatterNdUpdate: updates dtype %s differs from data dtype %s",
                         opdb_dtype_name(upd->dtype), opdb_dtype_name(data->dtype));
    int64_t idims[2] = {n, 1};
    p->in[1] = opdb_plan_tensor(OPDB_DT_I32, 2, idims);
    p->nout = 0;
    p->bytes = (double)opdb_tensor_bytes(&p->in[1]) + 2.0 * (double)opdb_tensor_bytes(upd);
    return 0;
}

static int snu_fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)err;
    uint64_t rng = seed;
    opdb_fill_perm_prefix(p->in[1].data, p->in[1].dims[0], p->in[0].dims[0], &rng);
    return 0;
}

static int snu_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    const opdb_tensor *data = &p->in[0];
    int64_t rows = data->dims[0];
    size_t row_bytes = rows ? opdb_tensor_bytes(data) / (size_t)rows : 0;
    return opdb_vec_scatter_rows(data->data, rows, p->in[2].data, row_bytes, p->in[1].data, OPDB_DT_I32,
                                 p->in[1].dims[0], "ScatterNdUpdate", err);
}

const opdb_op_def opdb_op_ScatterNdUpdate = {
    .name = "ScatterNdUpdate",
    .plan = snu_plan,
    .fill = snu_fill,
    .cpu_run = snu_run,
};
