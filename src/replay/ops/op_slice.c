/* Slice (docs/REPLAY-OPS.md §2.2): in0[0:s0, 0:s1, ...] with sizes = the recorded
 * output shape (offsets all 0), copied contiguous. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int slice_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, -1, err) || opdb_plan_min_inputs(row, p, 1, err)) return -1;
    p->nin = 1;
    const opdb_tensor *x = &p->in[0], *o = &p->out[0];
    bool fits = p->nout >= 1 && o->ndim == x->ndim;
    for (int i = 0; fits && i < x->ndim; i++) fits = o->dims[i] <= x->dims[i];
    if (!fits) {
        char a[128], b[128];
        return opdb_fail(err, OPDB_ERR_RUNTIME, "Slice: output shape (%s) is not a slice of input (%s)",
                         p->nout >= 1 ? opdb_plan_shape_str(o, a, sizeof a) : "", opdb_plan_shape_str(x, b, sizeof b));
    }
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(x->dtype, o->ndim, o->dims);
    p->bytes = 2.0 * (double)opdb_tensor_bytes(&p->out[0]);
    return 0;
}

const opdb_op_def opdb_op_Slice = {
    .name = "Slice",
    .plan = slice_plan,
    .cpu_run = opdb_vec_box_run,
};
