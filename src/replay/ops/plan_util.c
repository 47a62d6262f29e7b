/* Plan-side helpers of the operator files (see plan_util.h). */
#include "replay/ops/plan_util.h"
#include "opdb/schema.h"

#include <stdio.h>
#include <string.h>

void opdb_row_slots_read(const opdb_replay_row *row, bool output, opdb_row_slots *s) {
    const char *sh = output ? OPDB_COL_OUTPUT_SHAPES : OPDB_COL_INPUT_SHAPES;
    const char *fm = output ? OPDB_COL_OUTPUT_FORMATS : OPDB_COL_INPUT_FORMATS;
    const char *dt = output ? OPDB_COL_OUTPUT_DTYPES : OPDB_COL_INPUT_DTYPES;
    s->n_shape = opdb_replay_split(row->cell(row, sh), true, s->shape, OPDB_MAX_TENSORS);
    s->n_fmt = opdb_replay_split(row->cell(row, fm), true, s->fmt, OPDB_MAX_TENSORS);
    s->n_dt = opdb_replay_split(row->cell(row, dt), true, s->dt, OPDB_MAX_TENSORS);
    for (size_t i = 0; i < s->n_fmt; i++)
        if (!s->fmt[i][0]) strcpy(s->fmt[i], "NULL");
}

int opdb_row_slots_expect(const opdb_replay_row *row, const opdb_row_slots *s, size_t n, bool output,
                          opdb_err *err) {
    const char *kind = output ? "output" : "input";
    const char *cols[3] = {output ? OPDB_COL_OUTPUT_SHAPES : OPDB_COL_INPUT_SHAPES, output ? OPDB_COL_OUTPUT_FORMATS : OPDB_COL_INPUT_FORMATS,
                           output ? OPDB_COL_OUTPUT_DTYPES : OPDB_COL_INPUT_DTYPES};
    size_t got[3] = {s->n_shape, s->n_fmt, s->n_dt};
    for (int i = 0; i < 3; i++)
        if (got[i] != n)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects exactly %zu %s slots in %s, got %zu", row->kernel_type,
                             n, kind, cols[i], got[i]);
    return 0;
}

bool opdb_row_slot_present(const opdb_row_slots *s, size_t i) {
    if (i >= s->n_shape) return false;
    for (const char *c = s->shape[i]; *c; c++)
        if (*c != ',' && *c != ' ') return true;
    return false;
}

int opdb_row_slot_make(const opdb_replay_row *row, const opdb_row_slots *s, size_t i, opdb_tensor *t,
                       opdb_err *err) {
    opdb_err local = {0, ""};
    if (opdb_replay_make(i < s->n_shape ? s->shape[i] : "", i < s->n_fmt ? s->fmt[i] : "ND",
                         i < s->n_dt ? s->dt[i] : "", false, t, &local))
        return opdb_fail(err, local.code, "%s slot %zu: %s", row->kernel_type, i, local.msg);
    return 0;
}

int opdb_plan_min_inputs(const opdb_replay_row *row, const opdb_op_problem *p, int n, opdb_err *err) {
    if (p->nin < n)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects at least %d input%s, got %d", row->kernel_type, n,
                         n == 1 ? "" : "s", p->nin);
    return 0;
}

const char *opdb_plan_shape_str(const opdb_tensor *t, char *buf, size_t size) {
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < t->ndim && n + 1 < size; i++) {
        int w = snprintf(buf + n, size - n, i ? ",%lld" : "%lld", (long long)t->dims[i]);
        if (w < 0 || (size_t)w >= size - n) break;
        n += (size_t)w;
    }
    return buf;
}

opdb_tensor opdb_plan_tensor(opdb_dtype dt, int ndim, const int64_t *dims) {
    opdb_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.ndim = ndim;
    for (int i = 0; i < ndim; i++) t.dims[i] = dims[i];
    return t;
}

int opdb_plan_need_float(const opdb_replay_row *row, const opdb_tensor *t, const char *what, opdb_err *err) {
    if (opdb_dtype_is_float(t->dtype)) return 0;
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s needs a floating-point %s, got %s", row->kernel_type, what,
                     opdb_dtype_name(t->dtype));
}

opdb_tensor opdb_plan_rows_of(const opdb_tensor *x, opdb_dtype dt) {
    static const int64_t one = 1;
    return x->ndim > 1 ? opdb_plan_tensor(dt, x->ndim - 1, x->dims) : opdb_plan_tensor(dt, 1, &one);
}
