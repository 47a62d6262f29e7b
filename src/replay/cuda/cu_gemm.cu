// GEMM family on cuBLASLt: MatMulV2/V3/Common, BatchMatMulV2 (strided
// batched), TransposeBatchMatMul (output permutation folded into the output
// layout), GroupedMatmul (one GEMM per group). fp32 accumulation; fp32
// inputs use CUBLAS_COMPUTE_32F, i.e. no TF32.
//
// Shapes come from the plan's GEMM record in iparam when it has one, else
// from the tensors alone (row-major): A (.., M, K); B stored
// either (.., N, K) -- the CSV's weight layout, used transposed -- or
// (.., K, N); C (.., M, N). Row-major C = A.op(B) is computed as the
// column-major C^T = op(B)^T . A^T, so no data is ever transposed.
#include <stdlib.h>
#include <string.h>

#include "cu_common.cuh"
#include "cu_kernels.cuh"

namespace {

struct GemmShape {
    int64_t m, n, k, batch;
    bool trans_b;                   // B stored (N, K)
    int64_t ldc;                    // row stride of C (n, or batch*n for TransposeBatchMatMul)
    int64_t stride_a, stride_b, stride_c;   // batch strides in elements (0: shared)
    opdb_dtype ta, tb, tc;
    uint32_t align;                 // guaranteed byte alignment of the A/B/C pointers (0: 256, cudaMalloc's)
};

struct GemmPlan {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;    // for the cuBLASLt operands: la = our B, lb = our A
    cublasLtMatmulAlgo_t algo;
    int64_t m;                            // rows of A this plan was made for
};

cudaDataType_t cu_type(opdb_dtype dt) {
    switch (dt) {
    case OPDB_DT_F32: return CUDA_R_32F;
    case OPDB_DT_F16: return CUDA_R_16F;
    case OPDB_DT_BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
    }
}

bool gemm_dtype_ok(opdb_dtype dt) {
    return dt == OPDB_DT_F32 || dt == OPDB_DT_F16 || dt == OPDB_DT_BF16;
}

const char *dt_name(opdb_dtype dt) {
    static const char *const names[] = {"undefined", "fp32", "fp16", "bf16", "fp64", "int8",
                                        "uint8",     "int16", "int32", "int64", "bool"};
    return (unsigned)dt < sizeof names / sizeof names[0] ? names[dt] : "?";
}

int dtypes_ok(opdb_dtype ta, opdb_dtype tb, opdb_dtype tc, opdb_err *err) {
    if (gemm_dtype_ok(ta) && tb == ta && gemm_dtype_ok(tc)) return 0;
    return opdb_cu_fail(err, "CUDA GEMM takes fp32/fp16/bf16 inputs of one type and a float output, got %s, %s -> %s",
                        dt_name(ta), dt_name(tb), dt_name(tc));
}

void plan_destroy(GemmPlan *g) {
    if (g->la) cublasLtMatrixLayoutDestroy(g->la);
    if (g->lb) cublasLtMatrixLayoutDestroy(g->lb);
    if (g->lc) cublasLtMatrixLayoutDestroy(g->lc);
    if (g->desc) cublasLtMatmulDescDestroy(g->desc);
    memset(g, 0, sizeof *g);
}

int layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld,
           int64_t batch, int64_t stride, opdb_err *err) {
    if (opdb_cu_check_blas(cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld),
                           "cublasLtMatrixLayoutCreate", err))
        return -1;
    if (batch > 1) {
        int32_t b = (int32_t)batch;
        if (opdb_cu_check_blas(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                                &b, sizeof b), "batch count", err) ||
            opdb_cu_check_blas(cublasLtMatrixLayoutSetAttribute(
                                   *l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
                               "batch stride", err))
            return -1;
    }
    return 0;
}

int plan_make(opdb_cu *cu, const GemmShape *s, GemmPlan *g, opdb_err *err) {
    memset(g, 0, sizeof *g);
    g->m = s->m;
    if (dtypes_ok(s->ta, s->tb, s->tc, err)) return -1;
    cublasOperation_t opa = s->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, opb = CUBLAS_OP_N;
    cudaDataType_t tab = cu_type(s->ta), tc = cu_type(s->tc);
    int rc = 0;
    rc |= opdb_cu_check_blas(cublasLtMatmulDescCreate(&g->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                             "cublasLtMatmulDescCreate", err);
    if (!rc)
        rc |= opdb_cu_check_blas(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa,
                                                                sizeof opa), "TRANSA", err);
    if (!rc)
        rc |= opdb_cu_check_blas(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb,
                                                                sizeof opb), "TRANSB", err);
    // Our B as column-major: (K x N, ld K) used transposed, or (N x K, ld N).
    if (!rc)
        rc |= s->trans_b ? layout(&g->la, tab, s->k, s->n, s->k, s->batch, s->stride_b, err)
                         : layout(&g->la, tab, s->n, s->k, s->n, s->batch, s->stride_b, err);
    // Our A (M, K) row-major is column-major K x M with ld K.
    if (!rc) rc |= layout(&g->lb, tab, s->k, s->m, s->k, s->batch, s->stride_a, err);
    if (!rc) rc |= layout(&g->lc, tc, s->n, s->m, s->ldc, s->batch, s->stride_c, err);
    if (rc) {
        plan_destroy(g);
        return -1;
    }
    cublasLtMatmulPreference_t pref = NULL;
    uint64_t ws = cu->workspace_bytes;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    memset(&res, 0, sizeof res);
    rc |= opdb_cu_check_blas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", err);
    if (!rc)
        rc |= opdb_cu_check_blas(cublasLtMatmulPreferenceSetAttribute(
                                     pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                                 "workspace preference", err);
    // Offsets into a buffer (GroupedMatmul) can be less aligned than cudaMalloc's 256 bytes,
    // which the heuristic otherwise assumes; say so, or it may pick a kernel that faults.
    uint32_t align = s->align ? s->align : 256;
    const cublasLtMatmulPreferenceAttributes_t aligns[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && !rc; i++)
        rc |= opdb_cu_check_blas(cublasLtMatmulPreferenceSetAttribute(pref, aligns[i], &align, sizeof align),
                                 "alignment preference", err);
    if (!rc)
        rc |= opdb_cu_check_blas(cublasLtMatmulAlgoGetHeuristic(cu->lt, g->desc, g->la, g->lb, g->lc,
                                                                g->lc, pref, 1, &res, &found),
                                 "cublasLtMatmulAlgoGetHeuristic", err);
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (!rc && found == 0)
        rc = opdb_cu_fail(err, "cuBLASLt has no algorithm for M=%lld N=%lld K=%lld batch=%lld",
                          (long long)s->m, (long long)s->n, (long long)s->k, (long long)s->batch);
    if (rc) {
        plan_destroy(g);
        return -1;
    }
    g->algo = res.algo;
    return 0;
}

int plan_run(opdb_cu *cu, const GemmPlan *g, const void *a, const void *b, void *c, opdb_err *err) {
    const float alpha = 1.0f, beta = 0.0f;
    return opdb_cu_check_blas(cublasLtMatmul(cu->lt, g->desc, &alpha, b, g->la, a, g->lb, &beta, c, g->lc,
                                             c, g->lc, &g->algo, cu->workspace, cu->workspace_bytes,
                                             cu->stream),
                              "cublasLtMatmul", err);
}

int64_t lead(const opdb_tensor *t, int keep) {   // product of all but the last `keep` dims
    int64_t n = 1;
    for (int i = 0; i < t->ndim - keep; i++) n *= t->dims[i];
    return n;
}

void dims_text(const opdb_tensor *t, char *buf, size_t n) {
    size_t o = (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < t->ndim && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, i ? ",%lld" : "%lld", (long long)t->dims[i]);
    if (o < n) snprintf(buf + o, n - o, ")");
}

int shape_error(const char *what, const opdb_op_problem *p, opdb_err *err) {
    char a[96], b[96], c[96];
    dims_text(&p->in[0], a, sizeof a);
    dims_text(&p->in[1], b, sizeof b);
    dims_text(&p->out[0], c, sizeof c);
    return opdb_cu_fail(err, "%s: A %s, B %s, C %s", what, a, b, c);
}

// K and N from B's last two dims; N known from C. Prefers the CSV's (N, K).
int resolve_b(const opdb_tensor *b, int64_t k, int64_t n, bool *trans_b) {
    if (b->ndim < 2) return -1;
    int64_t x = b->dims[b->ndim - 2], y = b->dims[b->ndim - 1];
    if (x == n && y == k) *trans_b = true;
    else if (x == k && y == n) *trans_b = false;
    else return -1;
    return 0;
}

// MatMulV2/V3/Common and BatchMatMulV2: A (.., M, K), B (.., N, K) | (.., K, N), C (.., M, N).
int shape_matmul(const opdb_op_problem *p, GemmShape *s, opdb_err *err) {
    const opdb_tensor *a = &p->in[0], *b = &p->in[1], *c = &p->out[0];
    if (p->nin < 2 || p->nout < 1 || a->ndim < 1 || b->ndim < 2 || c->ndim < 1)
        return shape_error("GEMM needs A, B and C tensors", p, err);
    memset(s, 0, sizeof *s);
    s->k = a->dims[a->ndim - 1];
    s->m = a->ndim >= 2 ? a->dims[a->ndim - 2] : 1;
    s->n = c->dims[c->ndim - 1];
    if (resolve_b(b, s->k, s->n, &s->trans_b)) return shape_error("GEMM shapes do not chain", p, err);
    int64_t batch_a = a->ndim >= 2 ? lead(a, 2) : 1, batch_b = lead(b, 2);
    if (opdb_cu_numel(c) != batch_a * s->m * s->n) return shape_error("GEMM output size mismatch", p, err);
    s->ta = a->dtype;
    s->tb = b->dtype;
    s->tc = c->dtype;
    s->ldc = s->n;
    s->batch = 1;
    if (batch_b == 1) {
        s->m *= batch_a;   // one weight for every batch: a single taller GEMM
    } else if (batch_b == batch_a) {
        s->batch = batch_a;
        s->stride_a = s->m * s->k;
        s->stride_b = s->k * s->n;
        s->stride_c = s->m * s->n;
    } else {
        return shape_error("GEMM batch dims differ", p, err);
    }
    return 0;
}

// TransposeBatchMatMul: A (B, M, K), B (B, K, N) -> C (M, B, N): batch b of
// the product lands at C[:, b, :], i.e. row stride B*N, batch stride N.
int shape_tbmm(const opdb_op_problem *p, GemmShape *s, opdb_err *err) {
    const opdb_tensor *a = &p->in[0], *b = &p->in[1], *c = &p->out[0];
    if (p->nin < 2 || p->nout < 1 || a->ndim != 3 || b->ndim != 3 || c->ndim != 3)
        return shape_error("TransposeBatchMatMul needs 3-D A, B and C", p, err);
    memset(s, 0, sizeof *s);
    s->batch = a->dims[0];
    s->m = a->dims[1];
    s->k = a->dims[2];
    s->n = c->dims[2];
    if (b->dims[0] != s->batch || c->dims[0] != s->m || c->dims[1] != s->batch ||
        resolve_b(b, s->k, s->n, &s->trans_b))
        return shape_error("TransposeBatchMatMul shapes do not chain", p, err);
    s->ta = a->dtype;
    s->tb = b->dtype;
    s->tc = c->dtype;
    s->ldc = s->batch * s->n;
    s->stride_a = s->m * s->k;
    s->stride_b = s->k * s->n;
    s->stride_c = s->n;
    return 0;
}

// The plan's own GEMM record (src/replay/cpu/gemm.c, opdb_gemm_store):
// iparam[0..6] = batch, m, n, k, trans_b, c_ld (0: n), c_stride (0: m*c_ld);
// A's batch stride m*k; B shared (stride 0) when it holds k*n elements.
bool has_gemm_record(const opdb_op_problem *p) {
    return p->iparam[0] > 0 && p->iparam[1] > 0 && p->iparam[2] > 0 && p->iparam[3] > 0;
}

int shape_from_record(const opdb_op_problem *p, GemmShape *s, opdb_err *err) {
    const int64_t *q = p->iparam;
    if (p->nin < 2 || p->nout < 1 || p->out[0].ndim < 1)
        return shape_error("GEMM needs A, B and C tensors", p, err);
    memset(s, 0, sizeof *s);
    s->batch = q[0], s->m = q[1], s->n = q[2], s->k = q[3], s->trans_b = q[4] != 0;
    s->ldc = q[5] ? q[5] : s->n;
    s->stride_c = q[6] ? q[6] : s->m * s->ldc;
    s->stride_a = s->m * s->k;
    s->stride_b = opdb_cu_numel(&p->in[1]) == s->k * s->n ? 0 : s->k * s->n;
    s->ta = p->in[0].dtype, s->tb = p->in[1].dtype, s->tc = p->out[0].dtype;
    if (opdb_cu_numel(&p->in[0]) != s->batch * s->m * s->k ||
        (s->stride_b && opdb_cu_numel(&p->in[1]) != s->batch * s->k * s->n) ||
        opdb_cu_numel(&p->out[0]) < s->batch * s->m * s->n)
        return shape_error("GEMM record does not match the tensors", p, err);
    if (s->stride_b == 0 && s->batch > 1 && s->ldc == s->n && s->stride_c == s->m * s->n) {
        s->m *= s->batch;   // one weight for every batch: a single taller GEMM
        s->batch = 1;
    }
    if (s->batch == 1) s->stride_a = s->stride_b = s->stride_c = 0;
    return 0;
}

int shape_any(const opdb_op_problem *p, GemmShape *s, opdb_err *err,
              int (*infer)(const opdb_op_problem *, GemmShape *, opdb_err *)) {
    if (has_gemm_record(p) ? shape_from_record(p, s, err) : infer(p, s, err)) return -1;
    return dtypes_ok(s->ta, s->tb, s->tc, err);
}

struct MatmulState {
    GemmPlan plan;
    bool no_plan;           // an empty product: nothing to run (M or N = 0) or C = 0 (K = 0)
    size_t zero_bytes;
};

int matmul_prepare_with(opdb_cu *cu, const opdb_op_problem *p, void **state, opdb_err *err,
                        int (*infer)(const opdb_op_problem *, GemmShape *, opdb_err *)) {
    GemmShape s;
    if (shape_any(p, &s, err, infer)) return -1;
    MatmulState *st = (MatmulState *)calloc(1, sizeof *st);
    if (!st) return opdb_cu_fail(err, "out of host memory");
    // cuBLASLt takes no zero-sized matrices; an empty product is what the CPU computes too.
    st->no_plan = s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0;
    if (st->no_plan && s.k == 0)
        st->zero_bytes = (size_t)opdb_cu_numel(&p->out[0]) * opdb_cu_elem_size(p->out[0].dtype);
    if (!st->no_plan && plan_make(cu, &s, &st->plan, err)) {
        free(st);
        return -1;
    }
    *state = st;
    return 0;
}

int matmul_check(const opdb_op_problem *p, const opdb_op_problem *host, opdb_err *err) {
    (void)host;
    // opdb_matmul_plan's own flags (iparam[7] A stored (K, M), iparam[8] bias):
    // the CPU kernel handles them, this one not yet -- say so, never time a different GEMM.
    if (p->iparam[7] || p->iparam[8])
        return opdb_cu_fail(err, "MatMul on CUDA: %s is not supported yet (replay it with --device cpu)",
                            p->iparam[7] ? "an A operand stored (K, M)" : "a bias input");
    GemmShape s;
    return shape_any(p, &s, err, shape_matmul);
}

int tbmm_check(const opdb_op_problem *p, const opdb_op_problem *host, opdb_err *err) {
    (void)host;
    GemmShape s;
    return shape_any(p, &s, err, shape_tbmm);
}

int matmul_prepare(opdb_cu *cu, const opdb_op_problem *p, const opdb_op_problem *host, void **state,
                   opdb_err *err) {
    (void)host;
    return matmul_prepare_with(cu, p, state, err, shape_matmul);
}

int tbmm_prepare(opdb_cu *cu, const opdb_op_problem *p, const opdb_op_problem *host, void **state,
                 opdb_err *err) {
    (void)host;
    return matmul_prepare_with(cu, p, state, err, shape_tbmm);
}

int matmul_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    MatmulState *st = (MatmulState *)state;
    if (st->no_plan)
        return st->zero_bytes ? opdb_cu_check(cudaMemsetAsync(p->out[0].data, 0, st->zero_bytes, cu->stream),
                                              "GEMM with K = 0", err)
                              : 0;
    return plan_run(cu, &st->plan, p->in[0].data, p->in[1].data, p->out[0].data, err);
}

void matmul_release(void *state) {
    MatmulState *st = (MatmulState *)state;
    if (!st) return;
    plan_destroy(&st->plan);
    free(st);
}

// ---- GroupedMatmul (src/replay/ops/op_grouped_matmul.c): x (.., K) with M
// rows, weight (G, K, N) or one shared (K, N), group list = cumulative row
// ends (clamped to [0, M], as the CPU kernel reads it), y (M, N); iparam =
// M, N, K, groups. Rows of group g multiply weight[g]: one GEMM per group.
struct GroupedState {
    int64_t groups, k, n;
    int64_t *lo, *hi;       // rows [lo, hi) per group
    bool shared;            // one (K, N) weight for every group
    GemmPlan *plans;        // one per distinct row count (an even split has two)
    int64_t nplans;
    size_t sa, sb, sc;      // element sizes
};

void grouped_release(void *state) {
    GroupedState *st = (GroupedState *)state;
    if (!st) return;
    for (int64_t i = 0; i < st->nplans; i++) plan_destroy(&st->plans[i]);
    free(st->plans);
    free(st->lo);
    free(st->hi);
    free(st);
}

// The group list: the first 1-D integer input after x and weight with one value per group.
const opdb_tensor *group_list(const opdb_op_problem *host, int64_t groups) {
    for (int i = 2; i < host->nin; i++) {
        const opdb_tensor *t = &host->in[i];
        if (t->ndim == 1 && t->dims[0] == groups && t->data && (t->dtype == OPDB_DT_I64 || t->dtype == OPDB_DT_I32))
            return t;
    }
    return NULL;
}

int grouped_setup(const opdb_op_problem *p, const opdb_op_problem *host, GroupedState *st, int64_t *m,
                  opdb_err *err) {
    const opdb_tensor *x = &p->in[0], *w = &p->in[1], *y = &p->out[0];
    if (p->nin < 2 || p->nout < 1 || x->ndim < 1 || (w->ndim != 2 && w->ndim != 3) || y->ndim < 1)
        return shape_error("GroupedMatmul needs x (M,K), weight (G,K,N) or (K,N), y (M,N)", p, err);
    st->k = x->dims[x->ndim - 1];
    *m = opdb_cu_numel(x) / (st->k ? st->k : 1);
    st->n = w->dims[w->ndim - 1];
    st->groups = p->iparam[3] > 0 ? p->iparam[3] : w->ndim == 3 ? w->dims[0] : 1;
    st->shared = w->ndim == 2;
    if (w->dims[w->ndim - 2] != st->k || opdb_cu_numel(y) != *m * st->n || (!st->shared && w->dims[0] < st->groups))
        return shape_error("GroupedMatmul shapes do not chain", p, err);
    if (st->k <= 0 || st->n <= 0) return shape_error("GroupedMatmul: K or N is 0", p, err);
    if (dtypes_ok(x->dtype, w->dtype, y->dtype, err)) return -1;
    st->lo = (int64_t *)calloc((size_t)st->groups, sizeof *st->lo);
    st->hi = (int64_t *)calloc((size_t)st->groups, sizeof *st->hi);
    st->plans = (GemmPlan *)calloc((size_t)st->groups, sizeof *st->plans);
    if (!st->lo || !st->hi || !st->plans) return opdb_cu_fail(err, "out of host memory");
    const opdb_tensor *gl = group_list(host, st->groups);
    for (int64_t g = 0, prev = 0; g < st->groups; g++) {
        int64_t end = gl ? (gl->dtype == OPDB_DT_I64 ? ((const int64_t *)gl->data)[g] : ((const int32_t *)gl->data)[g])
                         : (g + 1) * *m / st->groups;   // no list: an even split
        st->lo[g] = prev < 0 ? 0 : prev > *m ? *m : prev;
        st->hi[g] = end < st->lo[g] ? st->lo[g] : end > *m ? *m : end;
        prev = end;
    }
    return 0;
}

int grouped_check(const opdb_op_problem *p, const opdb_op_problem *host, opdb_err *err) {
    GroupedState *st = (GroupedState *)calloc(1, sizeof *st);
    if (!st) return opdb_cu_fail(err, "out of host memory");
    int64_t m = 0;
    int rc = grouped_setup(p, host, st, &m, err);
    grouped_release(st);
    return rc;
}

// Largest power of two (<= 256) dividing every group's A, B and C byte offset.
uint32_t grouped_align(const GroupedState *st) {
    uint64_t bits = 256;
    for (int64_t g = 0; g < st->groups; g++) {
        bits |= (uint64_t)(st->lo[g] * st->k) * st->sa;
        bits |= (uint64_t)(st->shared ? 0 : g * st->k * st->n) * st->sb;
        bits |= (uint64_t)(st->lo[g] * st->n) * st->sc;
    }
    return (uint32_t)(bits & (~bits + 1));   // lowest set bit
}

int grouped_prepare(opdb_cu *cu, const opdb_op_problem *p, const opdb_op_problem *host, void **state,
                    opdb_err *err) {
    GroupedState *st = (GroupedState *)calloc(1, sizeof *st);
    if (!st) return opdb_cu_fail(err, "out of host memory");
    int64_t m = 0;
    if (grouped_setup(p, host, st, &m, err)) {
        grouped_release(st);
        return -1;
    }
    st->sa = opdb_cu_elem_size(p->in[0].dtype);
    st->sb = opdb_cu_elem_size(p->in[1].dtype);
    st->sc = opdb_cu_elem_size(p->out[0].dtype);
    for (int64_t g = 0; g < st->groups; g++) {
        int64_t rows = st->hi[g] - st->lo[g];
        bool have = rows == 0;
        for (int64_t i = 0; i < st->nplans && !have; i++) have = st->plans[i].m == rows;
        if (have) continue;
        GemmShape s;
        memset(&s, 0, sizeof s);
        s.m = rows, s.n = st->n, s.k = st->k, s.batch = 1, s.trans_b = false, s.ldc = st->n;
        s.ta = p->in[0].dtype, s.tb = p->in[1].dtype, s.tc = p->out[0].dtype;
        s.align = grouped_align(st);
        if (plan_make(cu, &s, &st->plans[st->nplans], err)) {
            grouped_release(st);
            return -1;
        }
        st->nplans++;
    }
    *state = st;
    return 0;
}

int grouped_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    GroupedState *st = (GroupedState *)state;
    const char *x = (const char *)p->in[0].data, *w = (const char *)p->in[1].data;
    char *y = (char *)p->out[0].data;
    for (int64_t g = 0; g < st->groups; g++) {
        int64_t lo = st->lo[g], rows = st->hi[g] - lo;
        if (rows == 0) continue;
        const GemmPlan *plan = st->plans;
        while (plan->m != rows) plan++;   // prepare() made one for every row count
        const char *wg = w + (st->shared ? 0 : (size_t)(g * st->k * st->n) * st->sb);
        if (plan_run(cu, plan, x + (size_t)(lo * st->k) * st->sa, wg, y + (size_t)(lo * st->n) * st->sc, err))
            return -1;
    }
    return 0;
}

}  // namespace

#define OPDB_CU_GEMM(name, check, prepare, launch, release) \
    const opdb_cu_kernel opdb_cu_k_##name = {#name, check, prepare, launch, release};
OPDB_CU_GEMM(MatMulV2, matmul_check, matmul_prepare, matmul_launch, matmul_release)
OPDB_CU_GEMM(MatMulV3, matmul_check, matmul_prepare, matmul_launch, matmul_release)
OPDB_CU_GEMM(MatMulCommon, matmul_check, matmul_prepare, matmul_launch, matmul_release)
OPDB_CU_GEMM(BatchMatMulV2, matmul_check, matmul_prepare, matmul_launch, matmul_release)
OPDB_CU_GEMM(TransposeBatchMatMul, tbmm_check, tbmm_prepare, matmul_launch, matmul_release)
OPDB_CU_GEMM(GroupedMatmul, grouped_check, grouped_prepare, grouped_launch, grouped_release)
