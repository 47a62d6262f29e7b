/* Building blocks of the CPU replay kernels: the backend's thread count and
 * pinning, fp32 views of bf16/fp16 tensors, float and int8 GEMMs. */
#ifndef OPDB_REPLAY_CPU_KERNELS_H
#define OPDB_REPLAY_CPU_KERNELS_H

#include "opdb/replay.h"

/* Threads the CPU backend runs with (>= 1); 1 before any backend exists. */
int opdb_cpu_threads(void);
/* Pin the calling OpenMP worker to its CPU once (no-op when already pinned). */
void opdb_cpu_pin_worker(void);

/* The problem a prepared CPU instance runs (tensors hold host data). */
opdb_op_problem *opdb_cpu_inst_problem(void *inst);

/* Bytes of scratch an fp32 copy of t needs: 0 for DT_FLOAT/DT_DOUBLE tensors
 * (used in place), numel*4 rounded up to 64 otherwise. */
size_t opdb_f32_scratch(const opdb_tensor *t);
/* t's values as fp32: t->data itself for DT_FLOAT, else converted into scratch. */
const float *opdb_to_f32(const opdb_tensor *t, float *scratch);
/* Store n fp32 values into t (converted with round-to-nearest-even). */
void opdb_from_f32(const float *src, opdb_tensor *t, size_t n);

/* C = A.B per batch: A (batch, m, k) packed; B (k, n), or (n, k) when
 * trans_b, per batch or shared by all batches (B holding one matrix); C rows
 * c_ld apart (0 = n), batches c_stride apart (0 = m*c_ld). Floating dtypes;
 * A, B and C share one (DT_DOUBLE computes in double, others in fp32). */
typedef struct opdb_gemm {
    int64_t batch, m, n, k;
    bool trans_b;
    int64_t c_ld, c_stride;
} opdb_gemm;
/* Checks the dtypes/shapes a plan() must refuse; -1 with a reason. */
int opdb_gemm_check(const char *op, const opdb_tensor *a, const opdb_tensor *b, opdb_err *err);
size_t opdb_gemm_workspace(const opdb_gemm *g, const opdb_tensor *a, const opdb_tensor *b, const opdb_tensor *c);
int opdb_gemm_run(const opdb_gemm *g, const opdb_tensor *a, const opdb_tensor *b, opdb_tensor *c, void *ws,
                  opdb_err *err);
/* The same with A stored (K, M) when trans_a (2-D A only) and an optional
 * floating bias added to every row of C (numel N) or elementwise (M*N). */
int opdb_gemm_run_ex(const opdb_gemm *g, bool trans_a, const opdb_tensor *a, const opdb_tensor *b,
                     const opdb_tensor *bias, opdb_tensor *c, void *ws, opdb_err *err);
/* Record g in p->iparam[0..6] and restore it (ops keep their own params after). */
void opdb_gemm_store(const opdb_gemm *g, opdb_op_problem *p);
opdb_gemm opdb_gemm_load(const opdb_op_problem *p);

/* Row-major fp32 C (m, n; rows ldc apart) = A (m, k; lda) . B, B (k, n) or (n, k) when trans_b. */
void opdb_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, bool trans_b,
                float *c, int64_t ldc);

/* Grouped GEMM (GroupedMatmul*): rows [gl[g-1], gl[g]) of x (m, k) times
 * weight[g] ((k, n), or one shared 2-D weight), gl = cumulative group_list.
 * int8 x and weight accumulate in int32 and are dequantised by w_scale[g][n]
 * and x_scale[m] (either may be absent, ndim 0); other dtypes run in fp32.
 * y (m, n) fp32; rows past the last group are zero. */
typedef struct opdb_grouped {
    int64_t m, n, k, groups;
} opdb_grouped;
size_t opdb_grouped_workspace(const opdb_grouped *g, const opdb_tensor *x, const opdb_tensor *w,
                              const opdb_tensor *w_scale, const opdb_tensor *x_scale);
void opdb_grouped_run(const opdb_grouped *g, const opdb_tensor *x, const opdb_tensor *w, const opdb_tensor *group_list,
                      const opdb_tensor *w_scale, const opdb_tensor *x_scale, float *y, void *ws);

/* int8 x int8 -> int32: c[m][n] = sum_k a[m*lda + k] * b[k*ldb + n] (B (k, n)
 * rows ldb apart). Plain C, OpenMP over rows, vectorisable inner loop. */
void opdb_gemm_s8(int64_t m, int64_t n, int64_t k, const int8_t *a, int64_t lda, const int8_t *b, int64_t ldb,
                  int32_t *c);

/* Float GEMM problem for the common "A (.., m, k) . B" case: fills flops,
 * bytes and workspace of p from its in[0], in[1], out[0]. */
void opdb_gemm_account(opdb_op_problem *p, const opdb_gemm *g);

#endif
