/* InterleaveRope (docs/REPLAY-OPS.md §2.1): rotary embedding of x with interleaved
 * pairs: q = x de-interleaved (evens then odds), y = q*cos + rotate_half(q)*sin
 * (torch_npu.npu_interleave_rope); cos/sin broadcast to x (e.g. (B,1,S,D)). */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int rope_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 3, err)) return -1;
    const opdb_tensor *x = &p->in[0];
    int64_t d = x->dims[x->ndim - 1];
    for (int i = 0; i < 3; i++)
        if (opdb_plan_need_float(row, &p->in[i], i == 0 ? "x" : i == 1 ? "cos" : "sin", err)) return -1;
    if (d % 2 || d > OPDB_VEC_ROPE_MAX)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "InterleaveRope: head dim %lld must be even and at most %d",
                         (long long)d, OPDB_VEC_ROPE_MAX);
    for (int i = 1; i < 3; i++) {
        opdb_bcast bc;
        if (p->in[i].dims[p->in[i].ndim - 1] != d || opdb_bcast_init(&bc, x, &p->in[i])) {
            char a[128], b[128];
            return opdb_fail(err, OPDB_ERR_RUNTIME, "InterleaveRope: %s (%s) does not broadcast to x (%s)",
                             i == 1 ? "cos" : "sin", opdb_plan_shape_str(&p->in[i], a, sizeof a),
                             opdb_plan_shape_str(x, b, sizeof b));
        }
    }
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(x->dtype, x->ndim, x->dims);
    p->flops = 3.0 * (double)opdb_tensor_numel(x);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

static int rope_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    const opdb_tensor *x = &p->in[0], *y = &p->out[0];
    opdb_bcast bc, bs;
    if (opdb_bcast_init(&bc, x, &p->in[1]) || opdb_bcast_init(&bs, x, &p->in[2]))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "InterleaveRope: bad broadcast");
    int64_t d = x->dims[x->ndim - 1], rows = d ? opdb_tensor_numel(x) / d : 0;
    opdb_vec_ref xr = {x->data, x->dtype}, cr = {p->in[1].data, p->in[1].dtype}, sr = {p->in[2].data, p->in[2].dtype};
    OPDB_OMP_FOR(rows * d)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        opdb_vec_rope_interleave_row(y->data, y->dtype, (size_t)(r * d), xr, (size_t)(r * d), cr,
                                     (size_t)opdb_bcast_row_offset(&bc, r), sr, (size_t)opdb_bcast_row_offset(&bs, r),
                                     (size_t)d);
    }
    return 0;
}

const opdb_op_def opdb_op_InterleaveRope = {
    .name = "InterleaveRope",
    .plan = rope_plan,
    .cpu_run = rope_run,
};
