// Kernels that reduce along the last dim, one thread block per row:
// RmsNorm, AddRmsNormBias, SoftmaxV2, ArgMaxV2, DynamicQuant. fp32
// arithmetic throughout.
#include <string.h>

#include "cu_common.cuh"
#include "cu_kernels.cuh"

namespace {

// Threads per row: a warp multiple, no more than the row needs, at most 1024.
int row_block(int64_t cols) {
    int64_t b = (cols + 31) / 32 * 32;
    if (b > 256) b = 256;
    return b < 32 ? 32 : (int)b;
}

int rows_need(const opdb_op_problem *p, int nin, int nout, const char *op, opdb_err *err) {
    if (opdb_cu_need(p, nin, nout, op, err)) return -1;
    if (opdb_cu_rows(&p->in[0]).cols < 1) return opdb_cu_fail(err, "%s: empty last dim", op);
    return 0;
}

// ---- RmsNorm and AddRmsNormBias: x = x1 (+ x2, stored to xs in its dtype
// and read back rounded, as the CPU kernel does); y = x * rsqrt(mean(x^2) +
// eps) * gamma (+ beta); rstd per row when asked for.
struct NormArgs {
    const void *x1, *x2, *gamma, *beta;   // x2, beta: NULL when absent
    opdb_dtype t1, t2, tg, tb;
    void *y, *xs;                         // xs: the sum x1 + x2 (with x2)
    opdb_dtype ty, txs;
    float *rstd;
    int64_t cols;
    float eps;
};

__global__ void k_rmsnorm(NormArgs a) {
    __shared__ float sh[32];
    const int64_t base = (int64_t)blockIdx.x * a.cols;
    float ss = 0;
    for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
        float v = cu_ld(a.x1, a.t1, base + c);
        if (a.x2) {
            cu_st(a.xs, a.txs, base + c, v + cu_ld(a.x2, a.t2, base + c));
            v = cu_ld(a.xs, a.txs, base + c);   // this thread's own write
        }
        ss += v * v;
    }
    float rstd = rsqrtf(cu_block_sum(ss, sh) / (float)a.cols + a.eps);
    for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
        float v = a.x2 ? cu_ld(a.xs, a.txs, base + c) : cu_ld(a.x1, a.t1, base + c);
        v = v * rstd * cu_ld(a.gamma, a.tg, c);
        if (a.beta) v += cu_ld(a.beta, a.tb, c);
        cu_st(a.y, a.ty, base + c, v);
    }
    if (a.rstd && threadIdx.x == 0) a.rstd[blockIdx.x] = rstd;
}

int norm_launch(opdb_cu *cu, const NormArgs &a, int64_t rows, const char *what, opdb_err *err) {
    if (rows == 0) return 0;
    k_rmsnorm<<<(unsigned)rows, row_block(a.cols), 0, cu->stream>>>(a);
    return opdb_cu_check_launch(what, err);
}

// eps = fparam[0] (src/replay/ops/op_rms_norm.c, op_add_rms_norm_bias.c), else the reference's 1e-6.
float rms_eps(const opdb_op_problem *p) { return p->fparam[0] > 0 ? (float)p->fparam[0] : 1e-6f; }

// RmsNorm normalises over gamma's elements (iparam[0]), the trailing dims of x.
CuRows rms_rows(const opdb_op_problem *p) {
    CuRows r;
    r.cols = p->iparam[0] > 0 ? p->iparam[0] : opdb_cu_numel(&p->in[1]);
    r.rows = r.cols > 0 ? opdb_cu_numel(&p->in[0]) / r.cols : 0;
    return r;
}

bool rstd_ok(const opdb_op_problem *p, int slot, int64_t rows) {
    const opdb_tensor *t = &p->out[slot];
    return p->nout <= slot || t->ndim == 0 || (t->dtype == OPDB_DT_F32 && opdb_cu_numel(t) == rows);
}

int rmsnorm_check(const opdb_op_problem *p, opdb_err *err) {
    if (rows_need(p, 2, 1, "RmsNorm", err)) return -1;
    CuRows r = rms_rows(p);
    if (r.cols < 1 || opdb_cu_numel(&p->in[1]) != r.cols || r.rows * r.cols != opdb_cu_numel(&p->in[0]) ||
        opdb_cu_numel(&p->out[0]) != opdb_cu_numel(&p->in[0]))
        return opdb_cu_fail(err, "RmsNorm: gamma's %lld elements must tile x's trailing dims, y the shape of x",
                            (long long)opdb_cu_numel(&p->in[1]));
    if (!rstd_ok(p, 1, r.rows)) return opdb_cu_fail(err, "RmsNorm: rstd must be fp32 with one value per row");
    return 0;
}

int rmsnorm_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    CuRows r = rms_rows(p);
    NormArgs a;
    memset(&a, 0, sizeof a);
    a.x1 = p->in[0].data, a.t1 = p->in[0].dtype;
    a.gamma = p->in[1].data, a.tg = p->in[1].dtype;
    a.y = p->out[0].data, a.ty = p->out[0].dtype;
    a.rstd = p->nout >= 2 && p->out[1].ndim > 0 ? (float *)p->out[1].data : NULL;
    a.cols = r.cols, a.eps = rms_eps(p);
    return norm_launch(cu, a, r.rows, "RmsNorm kernel", err);
}

// AddRmsNormBias (src/replay/ops/op_add_rms_norm_bias.c): x1, x2 (T, D),
// gamma (D,), [beta (D,)] -> y (T, D), rstd (T, 1) fp32, x = x1 + x2 (T, D).
int arnb_check(const opdb_op_problem *p, opdb_err *err) {
    if (rows_need(p, 3, 3, "AddRmsNormBias", err)) return -1;
    CuRows r = opdb_cu_rows(&p->in[0]);
    int64_t n = opdb_cu_numel(&p->in[0]);
    bool beta = p->nin >= 4 && p->in[3].ndim > 0;
    if (opdb_cu_numel(&p->in[1]) != n || opdb_cu_numel(&p->in[2]) != r.cols ||
        (beta && opdb_cu_numel(&p->in[3]) != r.cols) || opdb_cu_numel(&p->out[0]) != n ||
        opdb_cu_numel(&p->out[2]) != n || !rstd_ok(p, 1, r.rows))
        return opdb_cu_fail(err, "AddRmsNormBias: needs x1, x2 (T,D), gamma/beta (D,), y and x (T,D), rstd (T,1) fp32");
    return 0;
}

int arnb_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    CuRows r = opdb_cu_rows(&p->in[0]);
    NormArgs a;
    memset(&a, 0, sizeof a);
    a.x1 = p->in[0].data, a.t1 = p->in[0].dtype;
    a.x2 = p->in[1].data, a.t2 = p->in[1].dtype;
    a.gamma = p->in[2].data, a.tg = p->in[2].dtype;
    if (p->nin >= 4 && p->in[3].ndim > 0) a.beta = p->in[3].data, a.tb = p->in[3].dtype;
    a.y = p->out[0].data, a.ty = p->out[0].dtype;
    a.rstd = (float *)p->out[1].data;
    a.xs = p->out[2].data, a.txs = p->out[2].dtype;
    a.cols = r.cols, a.eps = rms_eps(p);
    return norm_launch(cu, a, r.rows, "AddRmsNormBias kernel", err);
}

// ---- SoftmaxV2 along the last dim.
__global__ void k_softmax(const void *x, opdb_dtype tx, void *y, opdb_dtype ty, int64_t cols) {
    __shared__ float sh[32];
    int64_t base = blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, cu_ld(x, tx, base + c));
    m = cu_block_max(m, sh);
    float s = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(cu_ld(x, tx, base + c) - m);
    float inv = 1.0f / cu_block_sum(s, sh);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        cu_st(y, ty, base + c, expf(cu_ld(x, tx, base + c) - m) * inv);
}

int softmax_check(const opdb_op_problem *p, opdb_err *err) {
    if (rows_need(p, 1, 1, "SoftmaxV2", err)) return -1;
    if (opdb_cu_numel(&p->out[0]) != opdb_cu_numel(&p->in[0]))
        return opdb_cu_fail(err, "SoftmaxV2: output size differs from the input's");
    return 0;
}

int softmax_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    CuRows r = opdb_cu_rows(&p->in[0]);
    if (r.rows == 0) return 0;
    k_softmax<<<(unsigned)r.rows, row_block(r.cols), 0, cu->stream>>>(p->in[0].data, p->in[0].dtype, p->out[0].data,
                                                                      p->out[0].dtype, r.cols);
    return opdb_cu_check_launch("SoftmaxV2 kernel", err);
}

// ---- ArgMaxV2 along the last dim; the first index of the maximum.
__global__ void k_argmax(const void *x, opdb_dtype tx, void *y, opdb_dtype ty, int64_t cols) {
    __shared__ float sv[32];
    __shared__ int64_t si[32];
    int64_t base = blockIdx.x * cols;
    float best = -INFINITY;
    int64_t bi = cols;   // "none yet": loses every tie
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = cu_ld(x, tx, base + c);
        if (v > best || bi == cols) {
            best = v;
            bi = c;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        float ov = __shfl_xor_sync(0xffffffffu, best, o);
        int64_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (oi < cols && (bi == cols || ov > best || (ov == best && oi < bi))) {
            best = ov;
            bi = oi;
        }
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    if (lane == 0) {
        sv[warp] = best;
        si[warp] = bi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < nw; w++)
            if (si[w] < cols && (bi == cols || sv[w] > best || (sv[w] == best && si[w] < bi))) {
                best = sv[w];
                bi = si[w];
            }
        if (ty == OPDB_DT_I64) ((int64_t *)y)[blockIdx.x] = bi;
        else ((int32_t *)y)[blockIdx.x] = (int32_t)bi;
    }
}

int argmax_check(const opdb_op_problem *p, opdb_err *err) {
    if (rows_need(p, 1, 1, "ArgMaxV2", err)) return -1;
    CuRows r = opdb_cu_rows(&p->in[0]);
    if ((p->out[0].dtype != OPDB_DT_I64 && p->out[0].dtype != OPDB_DT_I32) || opdb_cu_numel(&p->out[0]) != r.rows)
        return opdb_cu_fail(err, "ArgMaxV2: output must be int32/int64 with one value per row");
    return 0;
}

int argmax_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    CuRows r = opdb_cu_rows(&p->in[0]);
    if (r.rows == 0) return 0;
    k_argmax<<<(unsigned)r.rows, row_block(r.cols), 0, cu->stream>>>(p->in[0].data, p->in[0].dtype, p->out[0].data,
                                                                     p->out[0].dtype, r.cols);
    return opdb_cu_check_launch("ArgMaxV2 kernel", err);
}

// ---- DynamicQuant: per-row symmetric int8; scale = max|x| / 127, y = round(x / scale).
__global__ void k_dynquant(const void *x, opdb_dtype tx, int8_t *y, float *scale, int64_t cols) {
    __shared__ float sh[32];
    int64_t base = blockIdx.x * cols;
    float m = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, fabsf(cu_ld(x, tx, base + c)));
    m = cu_block_max(m, sh);
    float s = m / 127.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        float q = s > 0 ? rintf(cu_ld(x, tx, base + c) / s) : 0.0f;
        y[base + c] = (int8_t)fminf(127.0f, fmaxf(-128.0f, q));
    }
    if (threadIdx.x == 0 && scale) scale[blockIdx.x] = s;
}

int dynquant_check(const opdb_op_problem *p, opdb_err *err) {
    if (rows_need(p, 1, 1, "DynamicQuant", err)) return -1;
    CuRows r = opdb_cu_rows(&p->in[0]);
    if (p->out[0].dtype != OPDB_DT_I8 || opdb_cu_numel(&p->out[0]) != opdb_cu_numel(&p->in[0]))
        return opdb_cu_fail(err, "DynamicQuant: y must be int8 with the shape of x");
    if (p->nout >= 2 && p->out[1].ndim > 0 && (p->out[1].dtype != OPDB_DT_F32 || opdb_cu_numel(&p->out[1]) != r.rows))
        return opdb_cu_fail(err, "DynamicQuant: scale must be fp32 with one value per row");
    return 0;
}

int dynquant_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    CuRows r = opdb_cu_rows(&p->in[0]);
    float *scale = p->nout >= 2 && p->out[1].ndim > 0 ? (float *)p->out[1].data : NULL;
    if (r.rows == 0) return 0;
    k_dynquant<<<(unsigned)r.rows, row_block(r.cols), 0, cu->stream>>>(p->in[0].data, p->in[0].dtype,
                                                                       (int8_t *)p->out[0].data, scale, r.cols);
    return opdb_cu_check_launch("DynamicQuant kernel", err);
}

}  // namespace

OPDB_CU_STATELESS(RmsNorm, rmsnorm_launch, opdb_cu_check_only<rmsnorm_check>)
OPDB_CU_STATELESS(SoftmaxV2, softmax_launch, opdb_cu_check_only<softmax_check>)
OPDB_CU_STATELESS(ArgMaxV2, argmax_launch, opdb_cu_check_only<argmax_check>)
OPDB_CU_STATELESS(DynamicQuant, dynquant_launch, opdb_cu_check_only<dynquant_check>)
OPDB_CU_STATELESS(AddRmsNormBias, arnb_launch, opdb_cu_check_only<arnb_check>)
