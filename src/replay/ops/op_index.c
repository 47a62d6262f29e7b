/* Index (docs/REPLAY-OPS.md §2.2): rows 0..L-1 of the source gathered through an
 * index vector, L = first dim of the recorded output. The row holds the
 * source plus three metadata slots; only the last slot's dtype (the index
 * type, DT_INT32 or DT_INT64) is used. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"
#include "opdb/schema.h"

static int index_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    char sh[OPDB_MAX_TENSORS][128], dt[OPDB_MAX_TENSORS][128], fm[OPDB_MAX_TENSORS][128], out[OPDB_MAX_TENSORS][128];
    size_t ns = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_SHAPES), false, sh, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_DTYPES), false, dt, OPDB_MAX_TENSORS);
    size_t nf = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_FORMATS), false, fm, OPDB_MAX_TENSORS);
    size_t no = opdb_replay_split(row->cell(row, OPDB_COL_OUTPUT_SHAPES), false, out, OPDB_MAX_TENSORS);
    if (ns != 4) return opdb_fail(err, OPDB_ERR_RUNTIME, "Index expects exactly 4 input shapes, got %zu", ns);
    if (nd != 4) return opdb_fail(err, OPDB_ERR_RUNTIME, "Index expects exactly 4 input dtypes, got %zu", nd);
    if (no < 1) return opdb_fail(err, OPDB_ERR_RUNTIME, "Index expects at least 1 output shape, got 0");
    opdb_tensor *src = &p->in[0], rec;
    if (opdb_replay_make(sh[0], nf ? fm[0] : "ND", dt[0], false, src, err) || opdb_replay_shape(out[0], &rec, err))
        return -1;
    int64_t L = rec.ndim ? rec.dims[0] : 0;
    if (L <= 0 || L > src->dims[0])
        return opdb_fail(err, OPDB_ERR_RUNTIME, "Index: L=%lld out of range (source has %lld rows)", (long long)L,
                         (long long)src->dims[0]);
    opdb_dtype idt;
    if (opdb_dtype_parse(dt[3], strlen(dt[3]), &idt, err)) return -1;
    if (idt != OPDB_DT_I32 && idt != OPDB_DT_I64)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "Index: index dtype must be DT_INT32 or DT_INT64, got %s",
                         opdb_dtype_name(idt));
    p->nin = 2;
    p->in[1] = opdb_plan_tensor(idt, 1, &L);
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(src->dtype, src->ndim, src->dims);
    p->out[0].dims[0] = L;
    p->bytes = (double)opdb_tensor_bytes(&p->in[1]) + 2.0 * (double)opdb_tensor_bytes(&p->out[0]);
    return 0;
}

static int index_fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)err;
    (void)seed;
    for (int64_t i = 0; i < p->in[1].dims[0]; i++) opdb_elem_set(p->in[1].data, p->in[1].dtype, (size_t)i, (double)i);
    return 0;
}

static int index_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    const opdb_tensor *src = &p->in[0], *ix = &p->in[1];
    size_t row_bytes = opdb_tensor_bytes(src) / (size_t)src->dims[0];
    return opdb_vec_gather_rows(p->out[0].data, src->data, row_bytes, src->dims[0], ix->data, ix->dtype,
                                ix->dims[0], "Index", err);
}

const opdb_op_def opdb_op_Index = {
    .name = "Index",
    .plan = index_plan,
    .fill = index_fill,
    .cpu_run = index_run,
};
