/* Plain-C building blocks of the CPU kernels of the elementwise, norm,
 * rotary and data-movement operators: every float dtype is staged through
 * fp32 in small stack chunks (bf16/fp16 stay bf16/fp16 in memory), plus
 * broadcasting index math and OpenMP loop annotations. */
#ifndef OPDB_REPLAY_CPU_VEC_H
#define OPDB_REPLAY_CPU_VEC_H

#include <stddef.h>
#include <stdint.h>
#include "opdb/replay.h"
#include "replay/cpu/kernels.h"

/* Elements staged per chunk (4 KiB of fp32: stays in L1 per thread). */
#define OPDB_VEC_CHUNK 1024
/* Longest vector the rotary and attention kernels stage at once (head dims). */
#define OPDB_VEC_ROPE_MAX 4096
/* Below this many elements of work a loop stays single-threaded. */
#define OPDB_PAR_MIN_WORK 32768

/* `#pragma omp parallel for` over the CPU backend's threads when built with
 * OpenMP, nothing otherwise; `work` (elements touched) keeps tiny problems
 * on the caller's thread. Loop bodies start with OPDB_PIN(). */
#if defined(_OPENMP)
#define OPDB_PRAGMA_(x) _Pragma(#x)
#define OPDB_OMP_FOR(work)                                                                                           \
    OPDB_PRAGMA_(omp parallel for num_threads(opdb_cpu_threads()) schedule(static) if ((work) >= OPDB_PAR_MIN_WORK))
#else
#define OPDB_OMP_FOR(work)
#endif
/* Pin an OpenMP worker to its CPU on first use (a no-op afterwards). */
#define OPDB_PIN() opdb_cpu_pin_worker()

/* dst[0..n) = element src[off..off+n) as fp32 (integers converted). */
void opdb_vec_load(float *dst, const void *src, opdb_dtype dt, size_t off, size_t n);
/* element dst[off..off+n) = src[0..n): floats rounded to nearest even,
 * integers rounded half to even and saturated (NaN -> the lowest value),
 * bool = (v != 0). */
void opdb_vec_store(void *dst, opdb_dtype dt, size_t off, const float *src, size_t n);
/* Copy n elements between buffers of any two dtypes (memcpy when equal). */
void opdb_vec_convert(void *dst, opdb_dtype ddt, size_t doff, const void *src, opdb_dtype sdt, size_t soff,
                      size_t n);

/* x[i] = exp(x[i]) in place, vectorisable (Cephes polynomial, relative
 * error ~2e-7); below ln(FLT_MIN) (-inf included) and NaN give 0. */
void opdb_vec_exp(float *x, size_t n);

/* Sum of x[0..n) and max(init, x[0..n)) (NaN elements are skipped by max). */
float opdb_vec_sum(const float *x, size_t n);
float opdb_vec_max(const float *x, size_t n, float init);
/* Dot product of two fp32 vectors (8 partial sums). */
float opdb_vec_dot(const float *a, const float *b, size_t n);

/* A strided view of one operand for row-wise kernels. */
typedef struct opdb_vec_ref {
    const void *data;
    opdb_dtype dt;
} opdb_vec_ref;

/* Sum of squares of n elements starting at element off, accumulated in fp32. */
float opdb_vec_sumsq(opdb_vec_ref x, size_t off, size_t n);
/* RMS normalisation of one row of n elements: y = x * rstd * gamma (+ beta),
 * rstd = 1/sqrt(mean(x^2) + eps); gamma/beta are (n,) vectors (beta.data may
 * be NULL). Returns rstd. */
float opdb_vec_rmsnorm_row(void *y, opdb_dtype ydt, size_t yoff, opdb_vec_ref x, size_t xoff, opdb_vec_ref gamma,
                           opdb_vec_ref beta, size_t n, float eps);
/* Interleaved rotary embedding of one row of d (even, <= OPDB_VEC_ROPE_MAX)
 * elements: q = de-interleave(x) (evens then odds), y = q*cos + rotate_half(q)*sin. */
void opdb_vec_rope_interleave_row(void *y, opdb_dtype ydt, size_t yoff, opdb_vec_ref x, size_t xoff,
                                  opdb_vec_ref cos, size_t coff, opdb_vec_ref sin, size_t soff, size_t d);

/* Rotate-half (NeoX) rotary embedding in place on the first `rope` (even,
 * <= OPDB_VEC_ROPE_MAX) elements of y at element yoff: with h = rope/2,
 * y[i] = y[i]*cos[i] - y[i+h]*sin[i], y[i+h] = y[i+h]*cos[i] + y[i]*sin[i]
 * (cos/sin hold h values: the halves of a duplicated cos/sin row). */
void opdb_vec_rope_neox_inplace(void *y, opdb_dtype ydt, size_t yoff, const float *cos, const float *sin,
                                size_t rope);

/* Broadcasting of an operand to an output shape (numpy rules, right-aligned). */
typedef struct opdb_bcast {
    int ndim;                          /* output rank */
    int64_t dims[OPDB_MAX_DIMS];       /* output dims */
    int64_t stride[OPDB_MAX_DIMS];     /* operand element stride per output dim; 0 when broadcast */
} opdb_bcast;

/* out = broadcast shape of a and b (ranks right-aligned); -1 if incompatible. */
int opdb_bcast_shape(const opdb_tensor *a, const opdb_tensor *b, opdb_tensor *out);
/* Strides of `in` as seen from `out`; -1 unless in broadcasts to out one-way. */
int opdb_bcast_init(opdb_bcast *bc, const opdb_tensor *out, const opdb_tensor *in);
/* Element offset in the operand of the start of output row `row` (a row =
 * the last output dim). */
int64_t opdb_bcast_row_offset(const opdb_bcast *bc, int64_t row);
/* Element step along the last output dim (0 or 1 for a contiguous operand). */
static inline int64_t opdb_bcast_inner(const opdb_bcast *bc) {
    return bc->ndim ? bc->stride[bc->ndim - 1] : 0;
}

/* Fill dst (shape ddims) from src (shape sdims, same rank): the overlapping
 * box starting at index 0 is copied, everything else is zero (PadV3 right
 * padding, Slice with zero offsets). es = element size in bytes. */
void opdb_vec_copy_box(void *dst, const int64_t *ddims, const void *src, const int64_t *sdims, int ndim, size_t es);
/* cpu_run of the operators whose single output is the zero-offset box of
 * in0 (Slice, PadV3): opdb_vec_copy_box(out0, in0). */
int opdb_vec_box_run(const opdb_op_problem *p, void *ws, opdb_err *err);
/* out[i, :] = src[idx[i], :] for i < n (rows of row_bytes bytes); -1 with an
 * error when an index is outside [0, nrows). idx_dt is DT_INT32 or DT_INT64. */
int opdb_vec_gather_rows(void *out, const void *src, size_t row_bytes, int64_t nrows, const void *idx,
                         opdb_dtype idx_dt, int64_t n, const char *op, opdb_err *err);
/* dst[idx[i], :] = src[i, :] (in-place scatter of rows); same checks. */
int opdb_vec_scatter_rows(void *dst, int64_t nrows, const void *src, size_t row_bytes, const void *idx,
                          opdb_dtype idx_dt, int64_t n, const char *op, opdb_err *err);
/* The first n values of a uniformly random permutation of 0..total-1 as
 * int32 (n <= total <= INT32_MAX); deterministic for the rng state. */
void opdb_fill_perm_prefix(int32_t *out, int64_t n, int64_t total, uint64_t *rng);

/* Bytes of all inputs plus all outputs (the "minimum bytes moved" of an
 * operator that reads each input once and writes each output once). */
double opdb_problem_io_bytes(const opdb_op_problem *p);

#endif
