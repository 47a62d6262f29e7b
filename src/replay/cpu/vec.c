/* fp32 staging, row-wise norm/rotary helpers, broadcasting and row
 * gather/scatter for the plain-C CPU kernels (see vec.h). */
#include "replay/cpu/vec.h"
#include "replay/half.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* c ? a : b with masks: the float work feeding a and b stays unconditional,
 * so GCC keeps these loops branch-free (it will not if-convert a select
 * whose arm holds a float operation under -ftrapping-math). */
static inline uint32_t pick(bool c, uint32_t a, uint32_t b) {
    uint32_t m = 0u - (uint32_t)c;
    return (a & m) | (b & ~m);
}

/* fp16 <-> f32 without branches (half.h's versions branch, which keeps GCC
 * from vectorising the conversion loops); bit-identical results, unit-tested
 * against opdb_f16_to_f32 / opdb_f32_to_f16.
 * fp16 -> f32: the 15 low bits shifted into a float and scaled by 2^112 give
 * normals and subnormals exactly; Inf/NaN keep their payload. */
static inline float f16_in(uint16_t h) {
    uint32_t em = (uint32_t)(h & 0x7fffu) << 13;
    float v = opdb_h_float(em) * 0x1p112f;
    uint32_t u = pick(em >= (0x7c00u << 13), em | 0x7f800000u, opdb_h_bits(v));
    return opdb_h_float(u | (uint32_t)(h & 0x8000u) << 16);
}

/* f32 -> fp16, round to nearest even (F. Giesen's branch-free scheme): all three candidates are computed, integer selects
 * pick one, so the loop vectorises. */
static inline uint16_t f16_out(float f) {
    uint32_t x = opdb_h_bits(f), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    /* subnormal results: adding 0.5 makes the FPU round the mantissa */
    uint32_t sub = opdb_h_bits(opdb_h_float(a) + 0.5f) - 0x3f000000u;
    /* normal results: rebias the exponent, round to nearest even */
    uint32_t norm = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
    uint32_t big = pick(a > 0x7f800000u, 0x7e00u | ((a >> 13) & 0x3ffu), 0x7c00u);
    uint32_t o = pick(a < 0x38800000u, sub, norm);
    o = pick(a >= 0x47800000u, big, o);
    return (uint16_t)(o | sign);
}

/* Integer stores go through sub-chunks with one select per loop: GCC
 * vectorises a loop with one float compare-and-select but not a chain
 * (-ftrapping-math), so clamping and rounding are separate passes. */
#define INT_SUB 256

/* t = round_half_even(clamp(s, lo, hi)); NaN -> lo. lo/hi are floats
 * inside the target range, so the later integer conversion is defined. */
static void clamp_round(float *restrict t, const float *restrict s, size_t m, float lo, float hi) {
    float r[INT_SUB];
    for (size_t i = 0; i < m; i++) t[i] = s[i] >= lo ? s[i] : lo;
    for (size_t i = 0; i < m; i++) t[i] = t[i] <= hi ? t[i] : hi;
    /* Round half to even by the 1.5 * 2^23 trick, exact for |t| <= 2^22;
     * larger floats are integers already and stay as they are. */
    for (size_t i = 0; i < m; i++) r[i] = (t[i] + 12582912.0f) - 12582912.0f;
    for (size_t i = 0; i < m; i++) t[i] = fabsf(t[i]) < 0x1p22f ? r[i] : t[i];
}

/* Integer element types that fit int32: narrowed after an int32 conversion. */
#define STORE_INT(T, lo, hi)                                                                                          \
    do {                                                                                                              \
        T *d = (T *)dst + off;                                                                                        \
        for (size_t c = 0; c < n; c += INT_SUB) {                                                                     \
            size_t m = n - c < INT_SUB ? n - c : INT_SUB;                                                             \
            float t[INT_SUB];                                                                                         \
            int32_t q[INT_SUB];                                                                                       \
            clamp_round(t, src + c, m, lo, hi);                                                                       \
            for (size_t i = 0; i < m; i++) q[i] = (int32_t)t[i];                                                      \
            for (size_t i = 0; i < m; i++) d[c + i] = (T)q[i];                                                        \
        }                                                                                                             \
    } while (0)

void opdb_vec_load(float *restrict dst, const void *src, opdb_dtype dt, size_t off, size_t n) {
    switch (dt) {
    case OPDB_DT_F32: memcpy(dst, (const float *)src + off, n * sizeof(float)); break;
    case OPDB_DT_BF16: {
        const uint16_t *s = (const uint16_t *)src + off;
        for (size_t i = 0; i < n; i++) dst[i] = opdb_h_bf16_to_f32(s[i]);
        break;
    }
    case OPDB_DT_F16: {
        const uint16_t *s = (const uint16_t *)src + off;
        for (size_t i = 0; i < n; i++) dst[i] = f16_in(s[i]);
        break;
    }
    case OPDB_DT_F64: {
        const double *s = (const double *)src + off;
        for (size_t i = 0; i < n; i++) dst[i] = (float)s[i];
        break;
    }
    case OPDB_DT_I8: {
        const int8_t *s = (const int8_t *)src + off;
        for (size_t i = 0; i < n; i++) dst[i] = (float)s[i];
        break;
    }
    case OPDB_DT_U8:
    case OPDB_DT_BOOL: {
        const uint8_t *s = (const uint8_t *)src + off;
        for (size_t i = 0; i < n; i++) dst[i] = (float)s[i];
        break;
    }
    case OPDB_DT_I16: {
        const int16_t *s = (const int16_t *)src + off;
        for (size_t i = 0; i < n; i++) dst[i] = (float)s[i];
        break;
    }
    case OPDB_DT_I32: {
        const int32_t *s = (const int32_t *)src + off;
        for (size_t i = 0; i < n; i++) dst[i] = (float)s[i];
        break;
    }
    case OPDB_DT_I64: {
        const int64_t *s = (const int64_t *)src + off;
        for (size_t i = 0; i < n; i++) dst[i] = (float)s[i];
        break;
    }
    default: memset(dst, 0, n * sizeof(float)); break;
    }
}

void opdb_vec_store(void *dst, opdb_dtype dt, size_t off, const float *restrict src, size_t n) {
    switch (dt) {
    case OPDB_DT_F32: memcpy((float *)dst + off, src, n * sizeof(float)); break;
    case OPDB_DT_BF16: {
        uint16_t *d = (uint16_t *)dst + off;
        for (size_t i = 0; i < n; i++) d[i] = opdb_h_f32_to_bf16(src[i]);
        break;
    }
    case OPDB_DT_F16: {
        uint16_t *d = (uint16_t *)dst + off;
        for (size_t i = 0; i < n; i++) d[i] = f16_out(src[i]);
        break;
    }
    case OPDB_DT_F64: {
        double *d = (double *)dst + off;
        for (size_t i = 0; i < n; i++) d[i] = (double)src[i];
        break;
    }
    case OPDB_DT_I8: STORE_INT(int8_t, -128.0f, 127.0f); break;
    case OPDB_DT_U8: STORE_INT(uint8_t, 0.0f, 255.0f); break;
    case OPDB_DT_I16: STORE_INT(int16_t, -32768.0f, 32767.0f); break;
    case OPDB_DT_I32: STORE_INT(int32_t, -0x1p31f, 0x1.fffffep30f); break; /* largest float below 2^31 */
    case OPDB_DT_I64: {
        int64_t *d = (int64_t *)dst + off;
        for (size_t c = 0; c < n; c += INT_SUB) {
            size_t m = n - c < INT_SUB ? n - c : INT_SUB;
            float t[INT_SUB];
            clamp_round(t, src + c, m, -0x1p63f, 0x1.fffffep62f);
            for (size_t i = 0; i < m; i++) d[c + i] = (int64_t)t[i];
        }
        break;
    }
    case OPDB_DT_BOOL: {
        uint8_t *d = (uint8_t *)dst + off;
        for (size_t i = 0; i < n; i++) d[i] = src[i] != 0.0f;
        break;
    }
    default: break;
    }
}

void opdb_vec_convert(void *dst, opdb_dtype ddt, size_t doff, const void *src, opdb_dtype sdt, size_t soff,
                      size_t n) {
    if (ddt == sdt) {
        size_t es = opdb_dtype_size(ddt);
        memcpy((char *)dst + doff * es, (const char *)src + soff * es, n * es);
        return;
    }
    float buf[OPDB_VEC_CHUNK];
    for (size_t i = 0; i < n; i += OPDB_VEC_CHUNK) {
        size_t m = n - i < OPDB_VEC_CHUNK ? n - i : OPDB_VEC_CHUNK;
        opdb_vec_load(buf, src, sdt, soff + i, m);
        opdb_vec_store(dst, ddt, doff + i, buf, m);
    }
}

void opdb_vec_exp(float *x, size_t n) {
    const float lo = -87.33654f, hi = 88.02969f; /* ln(FLT_MIN), just below ln(FLT_MAX) */
    for (size_t c = 0; c < n; c += INT_SUB) {
        size_t m = n - c < INT_SUB ? n - c : INT_SUB;
        float *v = x + c, t[INT_SUB];
        for (size_t i = 0; i < m; i++) t[i] = v[i] >= lo ? v[i] : lo;
        for (size_t i = 0; i < m; i++) t[i] = t[i] <= hi ? t[i] : hi;
        for (size_t i = 0; i < m; i++) {
            /* exp(t) = 2^k * exp(r), k = round(t / ln2), r = t - k*ln2 (ln2 in two
             * parts), exp(r) by the Cephes expf polynomial (rel. error ~2e-7). */
            float k = (t[i] * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
            float r = t[i] - k * 0.693359375f + k * 2.12194440e-4f;
            float p = 1.9875691500e-4f;
            p = p * r + 1.3981999507e-3f;
            p = p * r + 8.3334519073e-3f;
            p = p * r + 4.1665795894e-2f;
            p = p * r + 1.6666665459e-1f;
            p = p * r + 5.0000001201e-1f;
            p = p * r * r + r + 1.0f;
            uint32_t bits = (uint32_t)((int32_t)k + 127) << 23;
            float scale;
            memcpy(&scale, &bits, 4);
            t[i] = p * scale;
        }
        for (size_t i = 0; i < m; i++) t[i] = v[i] > hi ? INFINITY : t[i];
        for (size_t i = 0; i < m; i++) v[i] = v[i] >= lo ? t[i] : 0.0f; /* -inf and NaN -> 0 */
    }
}

/* Reductions keep 8 partial results so they vectorise without -ffast-math. */
float opdb_vec_sum(const float *x, size_t n) {
    float part[8] = {0};
    size_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) part[k] += x[j + k];
    for (; j < n; j++) part[0] += x[j];
    float acc = 0.0f;
    for (int k = 0; k < 8; k++) acc += part[k];
    return acc;
}

float opdb_vec_dot(const float *a, const float *b, size_t n) {
    float part[8] = {0};
    size_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) part[k] += a[j + k] * b[j + k];
    for (; j < n; j++) part[0] += a[j] * b[j];
    float acc = 0.0f;
    for (int k = 0; k < 8; k++) acc += part[k];
    return acc;
}

float opdb_vec_max(const float *x, size_t n, float init) {
    float part[8] = {init, init, init, init, init, init, init, init};
    size_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) part[k] = x[j + k] > part[k] ? x[j + k] : part[k];
    for (; j < n; j++) part[0] = x[j] > part[0] ? x[j] : part[0];
    float m = init;
    for (int k = 0; k < 8; k++) m = part[k] > m ? part[k] : m;
    return m;
}

float opdb_vec_sumsq(opdb_vec_ref x, size_t off, size_t n) {
    float buf[OPDB_VEC_CHUNK];
    float acc = 0.0f;
    for (size_t i = 0; i < n; i += OPDB_VEC_CHUNK) {
        size_t m = n - i < OPDB_VEC_CHUNK ? n - i : OPDB_VEC_CHUNK;
        opdb_vec_load(buf, x.data, x.dt, off + i, m);
        acc += opdb_vec_dot(buf, buf, m);
    }
    return acc;
}

float opdb_vec_rmsnorm_row(void *y, opdb_dtype ydt, size_t yoff, opdb_vec_ref x, size_t xoff, opdb_vec_ref gamma,
                           opdb_vec_ref beta, size_t n, float eps) {
    float rstd = 1.0f / sqrtf(opdb_vec_sumsq(x, xoff, n) / (float)n + eps);
    float xb[OPDB_VEC_CHUNK], gb[OPDB_VEC_CHUNK], bb[OPDB_VEC_CHUNK];
    for (size_t i = 0; i < n; i += OPDB_VEC_CHUNK) {
        size_t m = n - i < OPDB_VEC_CHUNK ? n - i : OPDB_VEC_CHUNK;
        opdb_vec_load(xb, x.data, x.dt, xoff + i, m);
        opdb_vec_load(gb, gamma.data, gamma.dt, i, m);
        for (size_t j = 0; j < m; j++) xb[j] = xb[j] * rstd * gb[j];
        if (beta.data) {
            opdb_vec_load(bb, beta.data, beta.dt, i, m);
            for (size_t j = 0; j < m; j++) xb[j] += bb[j];
        }
        opdb_vec_store(y, ydt, yoff + i, xb, m);
    }
    return rstd;
}

void opdb_vec_rope_interleave_row(void *y, opdb_dtype ydt, size_t yoff, opdb_vec_ref x, size_t xoff,
                                  opdb_vec_ref cos, size_t coff, opdb_vec_ref sin, size_t soff, size_t d) {
    float xb[OPDB_VEC_ROPE_MAX], cb[OPDB_VEC_ROPE_MAX], sb[OPDB_VEC_ROPE_MAX], yb[OPDB_VEC_ROPE_MAX];
    size_t h = d / 2;
    opdb_vec_load(xb, x.data, x.dt, xoff, d);
    opdb_vec_load(cb, cos.data, cos.dt, coff, d);
    opdb_vec_load(sb, sin.data, sin.dt, soff, d);
    /* q[i] = x[2i], q[i+h] = x[2i+1]; rotate_half(q) = (-q[h:], q[:h]). */
    for (size_t i = 0; i < h; i++) {
        float ev = xb[2 * i], od = xb[2 * i + 1];
        yb[i] = ev * cb[i] - od * sb[i];
        yb[i + h] = od * cb[i + h] + ev * sb[i + h];
    }
    opdb_vec_store(y, ydt, yoff, yb, d);
}

void opdb_vec_rope_neox_inplace(void *y, opdb_dtype ydt, size_t yoff, const float *cos, const float *sin,
                                size_t rope) {
    float v[OPDB_VEC_ROPE_MAX], o[OPDB_VEC_ROPE_MAX];
    size_t h = rope / 2;
    opdb_vec_load(v, y, ydt, yoff, rope);
    for (size_t i = 0; i < h; i++) {
        o[i] = v[i] * cos[i] - v[i + h] * sin[i];
        o[i + h] = v[i + h] * cos[i] + v[i] * sin[i];
    }
    opdb_vec_store(y, ydt, yoff, o, rope);
}

int opdb_bcast_shape(const opdb_tensor *a, const opdb_tensor *b, opdb_tensor *out) {
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    out->ndim = n;
    for (int i = 0; i < n; i++) {
        int ia = a->ndim - n + i, ib = b->ndim - n + i;
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out->dims[i] = da == 1 ? db : da;
    }
    return 0;
}

int opdb_bcast_init(opdb_bcast *bc, const opdb_tensor *out, const opdb_tensor *in) {
    if (in->ndim > out->ndim) return -1;
    bc->ndim = out->ndim;
    int64_t s = 1;
    for (int i = out->ndim - 1; i >= 0; i--) {
        int k = in->ndim - out->ndim + i;
        int64_t d = k >= 0 ? in->dims[k] : 1;
        bc->dims[i] = out->dims[i];
        if (d != out->dims[i] && d != 1) return -1;
        bc->stride[i] = d == 1 ? 0 : s;
        s *= d;
    }
    return 0;
}

int64_t opdb_bcast_row_offset(const opdb_bcast *bc, int64_t row) {
    int64_t off = 0;
    for (int i = bc->ndim - 2; i >= 0; i--) {
        int64_t d = bc->dims[i];
        off += (row % d) * bc->stride[i];
        row /= d;
    }
    return off;
}

void opdb_vec_copy_box(void *dst, const int64_t *ddims, const void *src, const int64_t *sdims, int ndim, size_t es) {
    if (ndim == 0) {
        memcpy(dst, src, es);
        return;
    }
    int64_t rows = 1;
    for (int i = 0; i < ndim - 1; i++) rows *= ddims[i];
    int64_t dlast = ddims[ndim - 1], slast = sdims[ndim - 1];
    int64_t keep = dlast < slast ? dlast : slast;
    size_t dbytes = (size_t)dlast * es, kbytes = (size_t)keep * es;
    OPDB_OMP_FOR(rows * dlast)
    for (int64_t r = 0; r < rows; r++) {
        OPDB_PIN();
        char *d = (char *)dst + (size_t)r * dbytes;
        /* Decompose r over the leading output dims; the row exists in src
         * only when every index is inside the source box. */
        int64_t rem = r, soff = 0, sstride = 1;
        bool inside = true;
        for (int i = ndim - 2; i >= 0; i--) {
            int64_t idx = rem % ddims[i];
            rem /= ddims[i];
            if (idx >= sdims[i]) inside = false;
            soff += idx * sstride;
            sstride *= sdims[i];
        }
        if (inside) {
            memcpy(d, (const char *)src + (size_t)(soff * slast) * es, kbytes);
            memset(d + kbytes, 0, dbytes - kbytes);
        } else {
            memset(d, 0, dbytes);
        }
    }
}

int opdb_vec_box_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    opdb_vec_copy_box(p->out[0].data, p->out[0].dims, p->in[0].data, p->in[0].dims, p->in[0].ndim,
                      opdb_dtype_size(p->in[0].dtype));
    return 0;
}

static inline int64_t index_at(const void *idx, opdb_dtype dt, int64_t i) {
    return dt == OPDB_DT_I64 ? ((const int64_t *)idx)[i] : (int64_t)((const int32_t *)idx)[i];
}

/* Index range check before any copy, so a bad index leaves dst untouched. */
static int check_indices(const void *idx, opdb_dtype dt, int64_t n, int64_t nrows, const char *op, opdb_err *err) {
    for (int64_t i = 0; i < n; i++) {
        int64_t v = index_at(idx, dt, i);
        if (v < 0 || v >= nrows)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: index %lld at position %lld is outside [0, %lld)", op,
                             (long long)v, (long long)i, (long long)nrows);
    }
    return 0;
}

int opdb_vec_gather_rows(void *out, const void *src, size_t row_bytes, int64_t nrows, const void *idx,
                         opdb_dtype idx_dt, int64_t n, const char *op, opdb_err *err) {
    if (check_indices(idx, idx_dt, n, nrows, op, err)) return -1;
    OPDB_OMP_FOR(n * (int64_t)row_bytes / 4)
    for (int64_t i = 0; i < n; i++) {
        OPDB_PIN();
        memcpy((char *)out + (size_t)i * row_bytes, (const char *)src + (size_t)index_at(idx, idx_dt, i) * row_bytes,
               row_bytes);
    }
    return 0;
}

int opdb_vec_scatter_rows(void *dst, int64_t nrows, const void *src, size_t row_bytes, const void *idx,
                          opdb_dtype idx_dt, int64_t n, const char *op, opdb_err *err) {
    if (check_indices(idx, idx_dt, n, nrows, op, err)) return -1;
    OPDB_OMP_FOR(n * (int64_t)row_bytes / 4)
    for (int64_t i = 0; i < n; i++) {
        OPDB_PIN();
        memcpy((char *)dst + (size_t)index_at(idx, idx_dt, i) * row_bytes, (const char *)src + (size_t)i * row_bytes,
               row_bytes);
    }
    return 0;
}

void opdb_fill_perm_prefix(int32_t *out, int64_t n, int64_t total, uint64_t *rng) {
    /* Partial Fisher-Yates over 0..total-1; only the first n draws matter. */
    int32_t *perm = opdb_xmalloc((size_t)(total > 0 ? total : 1) * sizeof *perm);
    for (int64_t i = 0; i < total; i++) perm[i] = (int32_t)i;
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i + (int64_t)(opdb_rng_next(rng) % (uint64_t)(total - i));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
        out[i] = perm[i];
    }
    free(perm);
}

double opdb_problem_io_bytes(const opdb_op_problem *p) {
    double b = 0.0;
    for (int i = 0; i < p->nin; i++) b += (double)opdb_tensor_bytes(&p->in[i]);
    for (int i = 0; i < p->nout; i++) b += (double)opdb_tensor_bytes(&p->out[i]);
    return b;
}
