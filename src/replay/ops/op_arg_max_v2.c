/* ArgMaxV2 (docs/REPLAY-OPS.md §2.1): int64 index of the first maximum along the
 * last dim. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int argmax_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 1, err)) return -1;
    const opdb_tensor *x = &p->in[0];
    if (x->dims[x->ndim - 1] == 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "ArgMaxV2: empty last dim");
    p->nout = 1;
    p->out[0] = opdb_plan_rows_of(x, OPDB_DT_I64);
    p->flops = (double)opdb_tensor_numel(x);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

static int argmax_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    const opdb_tensor *x = &p->in[0];
    int64_t *out = p->out[0].data;
    int64_t d = x->dims[x->ndim - 1], rows = opdb_tensor_numel(x) / d;
    OPDB_OMP_FOR(rows * d)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        float buf[OPDB_VEC_CHUNK];
        float best = 0.0f;
        int64_t bi = 0;
        for (int64_t c = 0; c < d; c += OPDB_VEC_CHUNK) {
            size_t m = (size_t)(d - c < OPDB_VEC_CHUNK ? d - c : OPDB_VEC_CHUNK);
            opdb_vec_load(buf, x->data, x->dtype, (size_t)(r * d + c), m);
            if (c == 0) best = buf[0];
            for (size_t i = 0; i < m; i++)
                if (buf[i] > best) best = buf[i], bi = c + (int64_t)i;
        }
        out[r] = bi;
    }
    return 0;
}

const opdb_op_def opdb_op_ArgMaxV2 = {
    .name = "ArgMaxV2",
    .plan = argmax_plan,
    .cpu_run = argmax_run,
};
