/* PadV3 (docs/REPLAY-OPS.md §2.2): right-pad the trailing dims of in0 (aligned with
 * the recorded output's last dims) by out - in with constant 0; a negative
 * amount crops, as torch.nn.functional.pad does. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int pad_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, -1, err) || opdb_plan_min_inputs(row, p, 1, err)) return -1;
    if (p->nout < 1 || p->out[0].ndim == 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "PadV3 needs a recorded output shape");
    p->nin = 1;
    const opdb_tensor *x = &p->in[0], *rec = &p->out[0];
    opdb_tensor out = opdb_plan_tensor(x->dtype, x->ndim, x->dims);
    int k = x->ndim < rec->ndim ? x->ndim : rec->ndim;
    for (int i = 1; i <= k; i++) out.dims[x->ndim - i] = rec->dims[rec->ndim - i];
    p->nout = 1;
    p->out[0] = out;
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

const opdb_op_def opdb_op_PadV3 = {
    .name = "PadV3",
    .plan = pad_plan,
    .cpu_run = opdb_vec_box_run,
};
