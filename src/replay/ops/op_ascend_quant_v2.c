/* AscendQuantV2 (docs/REPLAY-OPS.md §2.1): y = round_half_even(x * scale + offset)
 * per channel of the last axis (multiply mode; scale/offset hold 1 or D
 * values), saturated to the output dtype (int8, uint8 or int32). */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"
#include "opdb/schema.h"

static int aq_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    char items[OPDB_MAX_TENSORS][128];
    size_t ns = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_SHAPES), false, items, OPDB_MAX_TENSORS);
    size_t nf = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_FORMATS), false, items, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_DTYPES), false, items, OPDB_MAX_TENSORS);
    if (ns != nf || ns != nd)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "AscendQuantV2 expects equal shape/format/dtype counts, got %zu/%zu/%zu", ns, nf, nd);
    size_t no = opdb_replay_split(row->cell(row, OPDB_COL_OUTPUT_DTYPES), false, items, OPDB_MAX_TENSORS);
    if (no != 1) return opdb_fail(err, OPDB_ERR_RUNTIME, "AscendQuantV2 expects exactly 1 output dtype, got %zu", no);
    opdb_dtype odt;
    if (opdb_dtype_parse(items[0], strlen(items[0]), &odt, err)) return -1;
    if (odt != OPDB_DT_I8 && odt != OPDB_DT_U8 && odt != OPDB_DT_I32)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "AscendQuantV2: unsupported output dtype %s", opdb_dtype_name(odt));
    if (opdb_replay_default_io(row, p, -1, err) || opdb_plan_min_inputs(row, p, 2, err)) return -1;
    p->nin = p->nin > 3 ? 3 : p->nin;
    const opdb_tensor *x = &p->in[0];
    int64_t d = x->dims[x->ndim - 1];
    for (int i = 0; i < p->nin; i++)
        if (opdb_plan_need_float(row, &p->in[i], i == 0 ? "x" : i == 1 ? "scale" : "offset", err)) return -1;
    for (int i = 1; i < p->nin; i++) {
        int64_t n = opdb_tensor_numel(&p->in[i]);
        if (n != 1 && n != d)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "AscendQuantV2: %s has %lld values, expected 1 or %lld",
                             i == 1 ? "scale" : "offset", (long long)n, (long long)d);
    }
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(odt, x->ndim, x->dims);
    p->flops = 2.0 * (double)opdb_tensor_numel(x);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

/* m per-channel values starting at channel c (a single value broadcasts). */
static void load_channel(float *dst, const opdb_tensor *t, int64_t c, size_t m) {
    if (opdb_tensor_numel(t) != 1) {
        opdb_vec_load(dst, t->data, t->dtype, (size_t)c, m);
        return;
    }
    float v;
    opdb_vec_load(&v, t->data, t->dtype, 0, 1);
    for (size_t i = 0; i < m; i++) dst[i] = v;
}

static int aq_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    const opdb_tensor *x = &p->in[0], *y = &p->out[0];
    int64_t d = x->dims[x->ndim - 1], rows = d ? opdb_tensor_numel(x) / d : 0;
    OPDB_OMP_FOR(rows * d)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        float a[OPDB_VEC_CHUNK], s[OPDB_VEC_CHUNK], o[OPDB_VEC_CHUNK];
        for (int64_t c = 0; c < d; c += OPDB_VEC_CHUNK) {
            size_t m = (size_t)(d - c < OPDB_VEC_CHUNK ? d - c : OPDB_VEC_CHUNK);
            opdb_vec_load(a, x->data, x->dtype, (size_t)(r * d + c), m);
            load_channel(s, &p->in[1], c, m);
            if (p->nin > 2) {
                load_channel(o, &p->in[2], c, m);
                for (size_t i = 0; i < m; i++) a[i] = a[i] * s[i] + o[i];
            } else {
                for (size_t i = 0; i < m; i++) a[i] *= s[i];
            }
            opdb_vec_store(y->data, y->dtype, (size_t)(r * d + c), a, m);
        }
    }
    return 0;
}

const opdb_op_def opdb_op_AscendQuantV2 = {
    .name = "AscendQuantV2",
    .plan = aq_plan,
    .cpu_run = aq_run,
};
