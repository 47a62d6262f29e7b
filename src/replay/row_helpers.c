/* Row metadata helpers shared by every replayed operator (docs/REPLAY-OPS.md
 * §1.3-§1.5): slot splitting, shapes, make(), default input building,
 * tensor sizes and the deterministic default fill. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "opdb/pystr.h"
#include "opdb/replay.h"
#include "opdb/schema.h"

size_t opdb_replay_split(const char *cell, bool keep_empty, char items[][128], size_t max_items) {
    opdb_span s = opdb_span_cstr(cell ? cell : "");
    for (size_t prev = (size_t)-1; prev != s.n;) { /* strip whitespace and '"' in any order */
        prev = s.n;
        s = opdb_py_strip_chars(opdb_py_strip(s), "\"");
    }
    size_t n = 0;
    if (s.n == 0 && !keep_empty) return 0;
    const char *p = s.p, *end = s.p + s.n;
    while (n < max_items) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *stop = semi ? semi : end;
        opdb_span it = opdb_py_strip(opdb_span_make(p, (size_t)(stop - p)));
        if (it.n || keep_empty) {
            size_t m = it.n < 127 ? it.n : 127;
            memcpy(items[n], it.p, m);
            items[n][m] = '\0';
            n++;
        }
        if (!semi) break;
        p = semi + 1;
    }
    return n;
}

int opdb_replay_shape(const char *text, opdb_tensor *t, opdb_err *err) {
    memset(t->dims, 0, sizeof t->dims);
    t->ndim = 0;
    const char *p = text ? text : "";
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        opdb_span part = opdb_py_strip(opdb_span_make(p, n));
        if (part.n) { /* empty parts are ignored, like the reference */
            long long v;
            if (!opdb_py_int(part.p, part.n, &v))
                return opdb_fail(err, OPDB_ERR_RUNTIME, "invalid literal for int() with base 10: '%.*s'",
                                 (int)part.n, part.p);
            if (v < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "negative dimension %lld in shape '%s'", v, text);
            if (t->ndim == OPDB_MAX_DIMS)
                return opdb_fail(err, OPDB_ERR_RUNTIME, "shape '%s' has more than %d dimensions", text, OPDB_MAX_DIMS);
            t->dims[t->ndim++] = v;
        }
        if (!comma) break;
        p = comma + 1;
    }
    if (opdb_shape_too_big(t->dims, t->ndim)) /* whole shape: a 0 anywhere makes it empty */
        return opdb_fail(err, OPDB_ERR_RUNTIME, "shape '%s' has more than 2^%d elements: no machine can replay it",
                         text, OPDB_REPLAY_MAX_NUMEL_LOG2);
    return 0;
}

int opdb_replay_make(const char *shape, const char *format, const char *dtype, bool transpose,
                     opdb_tensor *t, opdb_err *err) {
    memset(t, 0, sizeof *t);
    opdb_tensor s;
    if (opdb_replay_shape(shape, &s, err)) return -1;
    if (s.ndim == 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "missing shape (empty slot) for a required tensor");
    if (opdb_dtype_parse(dtype ? dtype : "", dtype ? strlen(dtype) : 0, &t->dtype, err)) return -1;
    opdb_span fmt = opdb_py_strip(opdb_span_cstr(format ? format : ""));
    if (opdb_span_eq_cstr(fmt, "FRACTAL_NZ")) {
        if (s.ndim != 4) return opdb_fail(err, OPDB_ERR_RUNTIME, "Unsupported FRACTAL_NZ shape: %s", shape);
        t->ndim = 2;   /* (a, b, c, d) -> logical (b*c, a*d); no overflow: the four fit under the element limit */
        t->dims[0] = s.dims[1] * s.dims[2];
        t->dims[1] = s.dims[0] * s.dims[3];
        t->nz = true;
    } else {
        t->ndim = s.ndim;
        memcpy(t->dims, s.dims, sizeof t->dims);
    }
    if (transpose) {
        if (t->ndim != 2)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "cannot transpose a %d-D tensor (shape %s)", t->ndim, shape);
        int64_t d = t->dims[0];
        t->dims[0] = t->dims[1];
        t->dims[1] = d;
    }
    return 0;
}

bool opdb_replay_cell_int(const opdb_replay_row *row, const char *column, int64_t *v) {
    const char *c = row->cell(row, column);
    opdb_span s = opdb_py_strip_chars(opdb_py_strip(opdb_span_cstr(c ? c : "")), "\"");
    long long x;
    if (!s.n || !opdb_py_int(s.p, s.n, &x)) return false;
    *v = x;
    return true;
}

/* Build `count` tensors from one Shapes/Formats/Data Types column triple.
 * Outputs are informational (the reference never builds them), so a slot
 * that does not parse is left absent (ndim 0) instead of failing the row. */
static int build_list(const opdb_replay_row *row, const char *shapes_col, const char *fmt_col,
                      const char *dt_col, opdb_tensor *dst, int *count, int expect, bool strict, opdb_err *err) {
    char sh[OPDB_MAX_TENSORS][128], fm[OPDB_MAX_TENSORS][128], dt[OPDB_MAX_TENSORS][128];
    size_t ns = opdb_replay_split(row->cell(row, shapes_col), false, sh, OPDB_MAX_TENSORS);
    size_t nf = opdb_replay_split(row->cell(row, fmt_col), false, fm, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, dt_col), false, dt, OPDB_MAX_TENSORS);
    if (expect >= 0 && (int)ns != expect)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects exactly %d inputs, got %zu", row->kernel_type, expect, ns);
    for (size_t i = 0; i < ns; i++) {
        opdb_err local = {0, ""};
        if (opdb_replay_make(sh[i], i < nf ? fm[i] : "ND", i < nd ? dt[i] : "DT_FLOAT", false, &dst[i], &local)) {
            if (strict) return opdb_fail(err, local.code, "%s", local.msg);
            memset(&dst[i], 0, sizeof dst[i]);
        }
    }
    *count = (int)ns;
    return 0;
}

int opdb_replay_default_io(const opdb_replay_row *row, opdb_op_problem *p, int expect_in, opdb_err *err) {
    if (build_list(row, OPDB_COL_INPUT_SHAPES, OPDB_COL_INPUT_FORMATS, OPDB_COL_INPUT_DTYPES, p->in, &p->nin, expect_in, true, err))
        return -1;
    return build_list(row, OPDB_COL_OUTPUT_SHAPES, OPDB_COL_OUTPUT_FORMATS, OPDB_COL_OUTPUT_DTYPES, p->out, &p->nout, -1, false, err);
}

bool opdb_shape_too_big(const int64_t *dims, int ndim) {
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 0) return true;
        if (dims[i] == 0) return false; /* an empty tensor, whatever the other dimensions */
    }
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(n, (uint64_t)dims[i], &n) || n > ((uint64_t)1 << OPDB_REPLAY_MAX_NUMEL_LOG2))
            return true;
    return false;
}

/* Saturating: a count that does not fit reads as INT64_MAX, never wraps to a small one. */
int64_t opdb_tensor_numel(const opdb_tensor *t) {
    if (!t || t->ndim <= 0) return 0;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        if (t->dims[i] == 0) return 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->dims[i] < 0 || __builtin_mul_overflow(n, t->dims[i], &n)) return INT64_MAX;
    return n;
}

/* Saturating like opdb_tensor_numel: SIZE_MAX when the size does not fit. */
size_t opdb_tensor_bytes(const opdb_tensor *t) {
    int64_t n = opdb_tensor_numel(t);
    size_t b;
    if (n == INT64_MAX || __builtin_mul_overflow((size_t)n, opdb_dtype_size(t ? t->dtype : OPDB_DT_UNDEFINED), &b))
        return SIZE_MAX;
    return b;
}

uint64_t opdb_rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) from the top 24 bits (exact in every float type). */
static float rand_unit(uint64_t *rng) { return (float)(opdb_rng_next(rng) >> 40) * 0x1p-23f - 1.0f; }

void opdb_replay_fill_default(opdb_tensor *t, uint64_t *rng) {
    size_t n = (size_t)opdb_tensor_numel(t);
    if (!t->data) return;
    switch (t->dtype) {
    case OPDB_DT_F32:
        for (size_t i = 0; i < n; i++) ((float *)t->data)[i] = rand_unit(rng);
        break;
    case OPDB_DT_BF16:
        for (size_t i = 0; i < n; i++) ((uint16_t *)t->data)[i] = opdb_f32_to_bf16(rand_unit(rng));
        break;
    case OPDB_DT_F16:
        for (size_t i = 0; i < n; i++) ((uint16_t *)t->data)[i] = opdb_f32_to_f16(rand_unit(rng));
        break;
    case OPDB_DT_F64:
        for (size_t i = 0; i < n; i++) ((double *)t->data)[i] = rand_unit(rng);
        break;
    case OPDB_DT_BOOL:
        for (size_t i = 0; i < n; i++) ((uint8_t *)t->data)[i] = (uint8_t)(opdb_rng_next(rng) >> 63);
        break;
    default: /* integers: uniform in [0, 8) */
        for (size_t i = 0; i < n; i++) opdb_elem_set(t->data, t->dtype, i, (double)(opdb_rng_next(rng) >> 61));
        break;
    }
}

size_t opdb_problem_buffer_bytes(const opdb_op_problem *p) {
    size_t total = p->workspace_bytes;
    const opdb_tensor *lists[2] = {p->in, p->out};
    const int counts[2] = {p->nin, p->nout};
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < counts[l] && i < OPDB_MAX_TENSORS; i++) {
            size_t b = opdb_tensor_bytes(&lists[l][i]);
            if (b == SIZE_MAX || __builtin_add_overflow(total, b, &total)) return SIZE_MAX;
        }
    return total;
}
