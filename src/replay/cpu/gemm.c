/* Floating GEMMs of the replayed matmul family through OpenBLAS. OpenBLAS
 * runs single-threaded; the backend's pinned OpenMP threads each run one
 * slice of C (rows, or columns when C is wide), so only one thread pool
 * exists and nothing spins against the elementwise kernels' threads. */
#include <omp.h>
#include "replay/cpu/blas.h"
#include "replay/cpu/kernels.h"

/* Below this many multiply-adds a GEMM stays on the calling thread. */
#define PAR_MIN_MACS (1 << 18)

int opdb_gemm_check(const char *op, const opdb_tensor *a, const opdb_tensor *b, opdb_err *err) {
    if (!opdb_dtype_is_float(a->dtype) || !opdb_dtype_is_float(b->dtype))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: GEMM needs floating inputs, got %s and %s", op,
                         opdb_dtype_name(a->dtype), opdb_dtype_name(b->dtype));
    if (a->dtype != b->dtype)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: expected both inputs to have the same dtype, got %s and %s", op,
                         opdb_dtype_name(a->dtype), opdb_dtype_name(b->dtype));
    return 0;
}

size_t opdb_gemm_workspace(const opdb_gemm *g, const opdb_tensor *a, const opdb_tensor *b, const opdb_tensor *c) {
    (void)g;
    return opdb_f32_scratch(a) + opdb_f32_scratch(b) + opdb_f32_scratch(c);
}

void opdb_gemm_store(const opdb_gemm *g, opdb_op_problem *p) {
    int64_t *q = p->iparam;
    q[0] = g->batch, q[1] = g->m, q[2] = g->n, q[3] = g->k, q[4] = g->trans_b, q[5] = g->c_ld, q[6] = g->c_stride;
}

opdb_gemm opdb_gemm_load(const opdb_op_problem *p) {
    const int64_t *q = p->iparam;
    opdb_gemm g = {q[0], q[1], q[2], q[3], q[4] != 0, q[5], q[6]};
    return g;
}

void opdb_gemm_account(opdb_op_problem *p, const opdb_gemm *g) {
    opdb_gemm_store(g, p);
    p->flops = 2.0 * (double)g->batch * (double)g->m * (double)g->n * (double)g->k;
    p->bytes = (double)(opdb_tensor_bytes(&p->in[0]) + opdb_tensor_bytes(&p->in[1]) + opdb_tensor_bytes(&p->out[0]));
    p->workspace_bytes = opdb_gemm_workspace(g, &p->in[0], &p->in[1], &p->out[0]);
}

/* One GEMM call on fp32 or double operands (elem = 4 or 8). */
typedef struct slice {
    bool dbl, trans_b;
    int64_t m, n, k, lda, ldb, ldc;
    const void *a, *b;
    void *c;
    bool trans_a; /* A stored (k, m), lda apart */
} slice;

static void run_slice(const slice *s, int64_t i0, int64_t mi, int64_t j0, int64_t nj) {
    if (mi <= 0 || nj <= 0) return;
    const enum CBLAS_TRANSPOSE tb = s->trans_b ? CblasTrans : CblasNoTrans;
    const enum CBLAS_TRANSPOSE ta = s->trans_a ? CblasTrans : CblasNoTrans;
    const int64_t boff = s->trans_b ? j0 * s->ldb : j0; /* B rows are n (trans) or k */
    const int64_t aoff = s->trans_a ? i0 : i0 * s->lda;  /* A rows are k (trans) or m */
    if (s->dbl)
        opdb_blas_dgemm(CblasRowMajor, ta, tb, (int)mi, (int)nj, (int)s->k, 1.0, (const double *)s->a + aoff,
                    (int)s->lda, (const double *)s->b + boff, (int)s->ldb, 0.0, (double *)s->c + i0 * s->ldc + j0,
                    (int)s->ldc);
    else
        opdb_blas_sgemm(CblasRowMajor, ta, tb, (int)mi, (int)nj, (int)s->k, 1.0f, (const float *)s->a + aoff,
                    (int)s->lda, (const float *)s->b + boff, (int)s->ldb, 0.0f, (float *)s->c + i0 * s->ldc + j0,
                    (int)s->ldc);
}

/* Split C over the threads along its longer side (columns in blocks of 16). */
static void run_parallel(const slice *s) {
    const int t = opdb_cpu_threads();
    if (t == 1 || omp_in_parallel() || (double)s->m * (double)s->n * (double)s->k < PAR_MIN_MACS) {
        run_slice(s, 0, s->m, 0, s->n);
        return;
    }
    const bool rows = s->m >= s->n;
#pragma omp parallel num_threads(t)
    {
        opdb_cpu_pin_worker();
        const int64_t id = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t len = rows ? s->m : s->n, unit = rows ? 1 : 16;
        const int64_t per = ((len + nt - 1) / nt + unit - 1) / unit * unit;
        const int64_t lo = id * per < len ? id * per : len, hi = lo + per < len ? lo + per : len;
        if (rows)
            run_slice(s, lo, hi - lo, 0, s->n);
        else
            run_slice(s, 0, s->m, lo, hi - lo);
    }
}

void opdb_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, bool trans_b,
                float *c, int64_t ldc) {
    slice s = {false, trans_b, m, n, k, lda, ldb, ldc, a, b, c, false};
    if (m > 0 && n > 0) run_parallel(&s);
}

int opdb_gemm_run(const opdb_gemm *g, const opdb_tensor *a, const opdb_tensor *b, opdb_tensor *c, void *ws,
                  opdb_err *err) {
    return opdb_gemm_run_ex(g, false, a, b, NULL, c, ws, err);
}

/* C += bias: one row of n repeated, or a whole (m, n) matrix. */
static void add_bias(void *c, bool dbl, int64_t m, int64_t n, int64_t ldc, const void *bias, bool full) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const int64_t bi = full ? i * n + j : j;
            if (dbl) ((double *)c)[i * ldc + j] += ((const double *)bias)[bi];
            else ((float *)c)[i * ldc + j] += ((const float *)bias)[bi];
        }
}

int opdb_gemm_run_ex(const opdb_gemm *g, bool trans_a, const opdb_tensor *a, const opdb_tensor *b,
                     const opdb_tensor *bias, opdb_tensor *c, void *ws, opdb_err *err) {
    const int64_t ldc = g->c_ld ? g->c_ld : g->n, cs = g->c_stride ? g->c_stride : g->m * ldc;
    const int64_t bs = opdb_tensor_numel(b) == g->k * g->n ? 0 : g->k * g->n; /* shared weight: stride 0 */
    if (a->dtype != b->dtype || a->dtype != c->dtype)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "GEMM dtypes differ (%s, %s -> %s)", opdb_dtype_name(a->dtype),
                         opdb_dtype_name(b->dtype), opdb_dtype_name(c->dtype));
    const bool dbl = a->dtype == OPDB_DT_F64;
    const size_t es = dbl ? 8 : 4;
    if (bias && (dbl ? bias->dtype != OPDB_DT_F64 : !opdb_dtype_is_float(bias->dtype)))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "GEMM bias dtype %s does not match %s", opdb_dtype_name(bias->dtype),
                         opdb_dtype_name(a->dtype));
    const void *A = a->data, *B = b->data, *Bias = bias ? bias->data : NULL;
    void *C = c->data;
    if (!dbl) {
        char *w = ws;
        float *wa = (float *)w, *wb = (float *)(w + opdb_f32_scratch(a));
        float *wc = (float *)(w + opdb_f32_scratch(a) + opdb_f32_scratch(b));
        A = opdb_to_f32(a, wa), B = opdb_to_f32(b, wb);
        C = c->dtype == OPDB_DT_F32 ? c->data : wc;
        /* the bias scratch follows C's (opdb_matmul_plan adds it to the workspace) */
        if (bias) Bias = opdb_to_f32(bias, (float *)(w + opdb_f32_scratch(a) + opdb_f32_scratch(b) + opdb_f32_scratch(c)));
    }
    const bool full = bias && opdb_tensor_numel(bias) == g->m * g->n && g->m > 1;
    for (int64_t i = 0; i < g->batch; i++) {
        slice s = {dbl, g->trans_b, g->m, g->n, g->k, trans_a ? g->m : g->k, g->trans_b ? g->k : g->n, ldc,
                   (const char *)A + (size_t)(i * g->m * g->k) * es, (const char *)B + (size_t)(i * bs) * es,
                   (char *)C + (size_t)(i * cs) * es, trans_a};
        if (s.m > 0 && s.n > 0) run_parallel(&s);
        if (Bias) add_bias(s.c, dbl, g->m, g->n, ldc, Bias, full);
    }
    if (C != c->data) opdb_from_f32(C, c, (size_t)opdb_tensor_numel(c));
    return 0;
}
