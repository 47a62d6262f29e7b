/* TensorMove (docs/REPLAY-OPS.md §2.1): copy src into a preallocated tensor of the
 * same shape and dtype (the clone is allocated at prepare, not timed). */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

/* Bytes per parallel copy block. */
#define MOVE_BLOCK ((size_t)1 << 16)

static int tensor_move_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 1, err)) return -1;
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(p->in[0].dtype, p->in[0].ndim, p->in[0].dims);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

static int tensor_move_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    size_t n = opdb_tensor_bytes(&p->in[0]);
    int64_t blocks = (int64_t)((n + MOVE_BLOCK - 1) / MOVE_BLOCK);
    OPDB_OMP_FOR((int64_t)n / 4)
    for (int64_t b = 0; b < blocks; b++) {
        OPDB_PIN();
        size_t off = (size_t)b * MOVE_BLOCK, m = n - off < MOVE_BLOCK ? n - off : MOVE_BLOCK;
        memcpy((char *)p->out[0].data + off, (const char *)p->in[0].data + off, m);
    }
    return 0;
}

const opdb_op_def opdb_op_TensorMove = {
    .name = "TensorMove",
    .plan = tensor_move_plan,
    .cpu_run = tensor_move_run,
};
