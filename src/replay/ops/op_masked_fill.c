/* MaskedFill (docs/REPLAY-OPS.md §2.1): in place, in0[mask] = 0 with the bool mask
 * (input 1, dtype forced to bool) broadcast to in0. No separate output:
 * the operator writes its first input. Zero is all-zero bits in every
 * dtype, so the kernel only needs the element size. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

static int masked_fill_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, 2, err)) return -1;
    p->in[1].dtype = OPDB_DT_BOOL;
    opdb_bcast bc;
    if (opdb_bcast_init(&bc, &p->in[0], &p->in[1])) {
        char a[128], b[128];
        return opdb_fail(err, OPDB_ERR_RUNTIME, "MaskedFill: mask (%s) does not broadcast to input (%s)",
                         opdb_plan_shape_str(&p->in[1], a, sizeof a), opdb_plan_shape_str(&p->in[0], b, sizeof b));
    }
    p->nout = 0;
    p->flops = (double)opdb_tensor_numel(&p->in[0]);
    p->bytes = opdb_problem_io_bytes(p) + (double)opdb_tensor_bytes(&p->in[0]); /* read + write back */
    return 0;
}

#define FILL_ROW(T)                                                                                                   \
    do {                                                                                                              \
        T *x = (T *)p->in[0].data + r * d;                                                                            \
        for (int64_t i = 0; i < d; i++) x[i] = m[moff + i * ms] ? (T)0 : x[i];                                        \
    } while (0)

static int masked_fill_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    const opdb_tensor *x = &p->in[0];
    const uint8_t *m = p->in[1].data;
    opdb_bcast bc;
    if (opdb_bcast_init(&bc, x, &p->in[1])) return opdb_fail(err, OPDB_ERR_RUNTIME, "MaskedFill: bad broadcast");
    int64_t d = x->dims[x->ndim - 1], rows = d ? opdb_tensor_numel(x) / d : 0, ms = opdb_bcast_inner(&bc);
    size_t es = opdb_dtype_size(x->dtype);
    OPDB_OMP_FOR(rows * d)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        int64_t moff = opdb_bcast_row_offset(&bc, r);
        switch (es) {
        case 1: FILL_ROW(uint8_t); break;
        case 2: FILL_ROW(uint16_t); break;
        case 4: FILL_ROW(uint32_t); break;
        default: FILL_ROW(uint64_t); break;
        }
    }
    return 0;
}

const opdb_op_def opdb_op_MaskedFill = {
    .name = "MaskedFill",
    .plan = masked_fill_plan,
    .cpu_run = masked_fill_run,
};
