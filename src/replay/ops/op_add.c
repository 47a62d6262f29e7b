/* Add (docs/REPLAY-OPS.md §2.1): in0 + in1 with numpy broadcasting when the row has
 * at least two inputs (extras ignored), else in0 + 1.0. Result dtype follows
 * torch promotion; computed in fp32 (integers exact below 2^24). */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

/* torch.result_type for two dimensioned tensors. */
static opdb_dtype promote(opdb_dtype a, opdb_dtype b) {
    if (a == b) return a;
    bool fa = opdb_dtype_is_float(a), fb = opdb_dtype_is_float(b);
    if (fa != fb) return fa ? a : b;
    if (fa) {
        if (a == OPDB_DT_F64 || b == OPDB_DT_F64) return OPDB_DT_F64;
        return OPDB_DT_F32; /* f32 with a half type, or f16 with bf16 */
    }
    if (a == OPDB_DT_BOOL) return b;
    if (b == OPDB_DT_BOOL) return a;
    if ((a == OPDB_DT_I8 && b == OPDB_DT_U8) || (a == OPDB_DT_U8 && b == OPDB_DT_I8)) return OPDB_DT_I16;
    return opdb_dtype_size(a) >= opdb_dtype_size(b) ? a : b;
}

static int add_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, -1, err) || opdb_plan_min_inputs(row, p, 1, err)) return -1;
    opdb_tensor out;
    memset(&out, 0, sizeof out);
    if (p->nin >= 2) {
        if (opdb_bcast_shape(&p->in[0], &p->in[1], &out)) {
            char a[128], b[128];
            return opdb_fail(err, OPDB_ERR_RUNTIME, "Add: shapes (%s) and (%s) are not broadcastable",
                             opdb_plan_shape_str(&p->in[0], a, sizeof a), opdb_plan_shape_str(&p->in[1], b, sizeof b));
        }
        out.dtype = promote(p->in[0].dtype, p->in[1].dtype);
        p->nin = 2;
    } else {
        out = opdb_plan_tensor(p->in[0].dtype, p->in[0].ndim, p->in[0].dims);
        if (!opdb_dtype_is_float(out.dtype)) out.dtype = OPDB_DT_F32; /* int tensor + 1.0 */
    }
    p->nout = 1;
    p->out[0] = out;
    p->flops = (double)opdb_tensor_numel(&out);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

/* m values of operand t starting at element off with step 0 (broadcast) or 1. */
static void load_operand(float *dst, const opdb_tensor *t, int64_t off, int64_t step, size_t m) {
    if (step) {
        opdb_vec_load(dst, t->data, t->dtype, (size_t)off, m);
        return;
    }
    float v;
    opdb_vec_load(&v, t->data, t->dtype, (size_t)off, 1);
    for (size_t i = 0; i < m; i++) dst[i] = v;
}

static int add_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    const opdb_tensor *o = &p->out[0];
    int64_t numel = opdb_tensor_numel(o);
    /* Same-shape operands are one flat row, so even one row parallelises. */
    opdb_tensor flat = opdb_plan_tensor(o->dtype, 1, &numel);
    bool same = true;
    for (int k = 0; k < p->nin; k++) same = same && opdb_tensor_numel(&p->in[k]) == numel;
    const opdb_tensor *shape = same ? &flat : o;
    opdb_bcast bc[2];
    for (int k = 0; k < p->nin; k++) {
        opdb_tensor view = same ? flat : p->in[k];
        if (opdb_bcast_init(&bc[k], shape, &view)) return opdb_fail(err, OPDB_ERR_RUNTIME, "Add: bad broadcast");
    }
    int64_t last = shape->dims[shape->ndim - 1];
    int64_t rows = last ? numel / last : 0;
    int64_t chunks = (last + OPDB_VEC_CHUNK - 1) / OPDB_VEC_CHUNK;
    OPDB_OMP_FOR(numel)
    for (int64_t u = 0; u < rows * chunks; u++) {
        OPDB_PIN();
        float a[OPDB_VEC_CHUNK], b[OPDB_VEC_CHUNK];
        int64_t r = u / chunks, c = (u % chunks) * OPDB_VEC_CHUNK;
        size_t m = (size_t)(last - c < OPDB_VEC_CHUNK ? last - c : OPDB_VEC_CHUNK);
        int64_t sa = opdb_bcast_inner(&bc[0]);
        load_operand(a, &p->in[0], opdb_bcast_row_offset(&bc[0], r) + c * sa, sa, m);
        if (p->nin >= 2) {
            int64_t sb = opdb_bcast_inner(&bc[1]);
            load_operand(b, &p->in[1], opdb_bcast_row_offset(&bc[1], r) + c * sb, sb, m);
            for (size_t i = 0; i < m; i++) a[i] += b[i];
        } else {
            for (size_t i = 0; i < m; i++) a[i] += 1.0f;
        }
        opdb_vec_store(o->data, o->dtype, (size_t)(r * last + c), a, m);
    }
    return 0;
}

const opdb_op_def opdb_op_Add = {
    .name = "Add",
    .plan = add_plan,
    .cpu_run = add_run,
};
