// Shared by the CUDA kernel files: the device context, error helpers and
// dtype-generic element access.
#ifndef OPDB_CU_COMMON_CUH
#define OPDB_CU_COMMON_CUH

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "cu_api.h"

struct opdb_cu {
    int device;
    cudaDeviceProp prop;
    int clock_khz;
    size_t l2_bytes;
    cudaStream_t stream;
    cudaEvent_t ev_start, ev_stop;
    cublasLtHandle_t lt;
    void *workspace;            // cuBLASLt workspace
    size_t workspace_bytes;
    void *flush;                // 2x L2, overwritten by opdb_cu_flush_l2
    size_t flush_bytes;
    unsigned flush_value;
    volatile int *hold_host;    // mapped pinned flag that holds the stream (opdb_cu_timed)
    int *hold_dev;
};

// Like opdb_fail, but local: these files must link without libopdb (tests/cuda).
int opdb_cu_fail(opdb_err *err, const char *fmt, ...) OPDB_PRINTF(2, 3);
int opdb_cu_check(cudaError_t e, const char *what, opdb_err *err);
int opdb_cu_check_blas(cublasStatus_t s, const char *what, opdb_err *err);
// After a kernel launch: a launch-configuration error is reported now.
int opdb_cu_check_launch(const char *kernel, opdb_err *err);

int64_t opdb_cu_numel(const opdb_tensor *t);
size_t opdb_cu_elem_size(opdb_dtype dt);
bool opdb_cu_is_float(opdb_dtype dt);

// The problem has at least nin inputs and nout outputs, all present.
int opdb_cu_need(const opdb_op_problem *p, int nin, int nout, const char *op, opdb_err *err);
// prepare() and release() of kernels that keep no state between prepare() and launch().
int opdb_cu_no_prepare(opdb_cu *cu, const opdb_op_problem *p, const opdb_op_problem *host, void **state,
                       opdb_err *err);
void opdb_cu_no_release(void *state);

// Grid size for a grid-stride loop over n elements.
unsigned opdb_cu_grid(const opdb_cu *cu, int64_t n, int block);

// Element i of a buffer of any opdb dtype, as float (device side). The
// switch is uniform across a launch, so it costs no divergence.
__device__ __forceinline__ float cu_ld(const void *p, opdb_dtype dt, int64_t i) {
    switch (dt) {
    case OPDB_DT_F32: return ((const float *)p)[i];
    case OPDB_DT_F16: return __half2float(((const __half *)p)[i]);
    case OPDB_DT_BF16: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case OPDB_DT_F64: return (float)((const double *)p)[i];
    case OPDB_DT_I8: return (float)((const int8_t *)p)[i];
    case OPDB_DT_U8:
    case OPDB_DT_BOOL: return (float)((const uint8_t *)p)[i];
    case OPDB_DT_I16: return (float)((const int16_t *)p)[i];
    case OPDB_DT_I32: return (float)((const int32_t *)p)[i];
    case OPDB_DT_I64: return (float)((const int64_t *)p)[i];
    default: return 0.0f;
    }
}

__device__ __forceinline__ void cu_st(void *p, opdb_dtype dt, int64_t i, float v) {
    switch (dt) {
    case OPDB_DT_F32: ((float *)p)[i] = v; break;
    case OPDB_DT_F16: ((__half *)p)[i] = __float2half_rn(v); break;
    case OPDB_DT_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v); break;
    case OPDB_DT_F64: ((double *)p)[i] = v; break;
    case OPDB_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case OPDB_DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case OPDB_DT_BOOL: ((uint8_t *)p)[i] = v != 0.0f; break;
    case OPDB_DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case OPDB_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case OPDB_DT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: break;
    }
}

// Integer element (indices): exact for 64-bit values.
__device__ __forceinline__ int64_t cu_ld_index(const void *p, opdb_dtype dt, int64_t i) {
    switch (dt) {
    case OPDB_DT_I64: return ((const int64_t *)p)[i];
    case OPDB_DT_I32: return ((const int32_t *)p)[i];
    case OPDB_DT_I16: return ((const int16_t *)p)[i];
    case OPDB_DT_I8: return ((const int8_t *)p)[i];
    case OPDB_DT_U8:
    case OPDB_DT_BOOL: return ((const uint8_t *)p)[i];
    default: return (int64_t)cu_ld(p, dt, i);
    }
}

// Maps a contiguous output index to an input offset through per-dimension
// strides (0 = broadcast); shared by Add, MaskedFill, Transpose and Slice.
struct CuMap {
    int ndim;
    int64_t dims[OPDB_MAX_DIMS];       // output dims
    int64_t stride[OPDB_MAX_DIMS];     // input element stride for each output dim
};

__device__ __forceinline__ int64_t cu_map(const CuMap &m, int64_t i) {
    int64_t off = 0;
    for (int d = m.ndim - 1; d >= 0; d--) {
        int64_t q = i / m.dims[d];
        off += (i - q * m.dims[d]) * m.stride[d];
        i = q;
    }
    return off;
}

// Map from an index of `out` to the offset in `t` under right-aligned
// (numpy) broadcasting; -1 + err when t does not broadcast to out.
int opdb_cu_broadcast_map(const opdb_tensor *t, const opdb_tensor *out, CuMap *m, opdb_err *err);
bool opdb_cu_same_dims(const opdb_tensor *a, const opdb_tensor *b);

// Row-wise kernels see a tensor as rows x cols over its last dim.
struct CuRows {
    int64_t rows, cols;
};
CuRows opdb_cu_rows(const opdb_tensor *t);

// Block-wide reductions for the row kernels (blockDim.x a multiple of 32, <= 1024).
__device__ __forceinline__ float cu_warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float cu_warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// `sh` holds 32 floats; every thread gets the result. Max with -INFINITY
// as `none`, sum with 0.
template <bool Max>
__device__ __forceinline__ float cu_block_reduce(float v, float *sh) {
    v = Max ? cu_warp_max(v) : cu_warp_sum(v);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();   // sh may still be read by a previous reduction
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    int nw = (blockDim.x + 31) >> 5;
    v = lane < nw ? sh[lane] : Max ? -INFINITY : 0.0f;
    return Max ? cu_warp_max(v) : cu_warp_sum(v);
}
__device__ __forceinline__ float cu_block_sum(float v, float *sh) { return cu_block_reduce<false>(v, sh); }
__device__ __forceinline__ float cu_block_max(float v, float *sh) { return cu_block_reduce<true>(v, sh); }

// The table entry of a kernel without state; the check function is last
// (it may be a template with commas in its arguments).
#define OPDB_CU_STATELESS(name, launch, ...) \
    const opdb_cu_kernel opdb_cu_k_##name = {#name, __VA_ARGS__, opdb_cu_no_prepare, launch, opdb_cu_no_release};

// check() of kernels whose validation needs only the problem.
template <int (*Check)(const opdb_op_problem *, opdb_err *)>
int opdb_cu_check_only(const opdb_op_problem *p, const opdb_op_problem *host, opdb_err *err) {
    (void)host;
    return Check(p, err);
}
// check() of kernels whose validation builds launch arguments of type A.
template <typename A, int (*Make)(const opdb_op_problem *, A *, opdb_err *)>
int opdb_cu_check_made(const opdb_op_problem *p, const opdb_op_problem *host, opdb_err *err) {
    (void)host;
    A args;
    return Make(p, &args, err);
}

#endif
