// Device context of the CUDA replay backend: selection, stream, events,
// cuBLASLt handle and workspace, L2 flush, memory helpers, timing.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_common.cuh"

// cuBLASLt workspace: 32 MiB is what NVIDIA recommends for Hopper, plenty before.
static const size_t CU_LT_WORKSPACE = (size_t)32 << 20;

int opdb_cu_fail(opdb_err *err, const char *fmt, ...) {
    if (err && err->code == OPDB_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = OPDB_ERR_RUNTIME;
    }
    return -1;
}

int opdb_cu_check(cudaError_t e, const char *what, opdb_err *err) {
    if (e == cudaSuccess) return 0;
    return opdb_cu_fail(err, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

int opdb_cu_check_blas(cublasStatus_t s, const char *what, opdb_err *err) {
    if (s == CUBLAS_STATUS_SUCCESS) return 0;
    return opdb_cu_fail(err, "%s: cuBLAS status %d", what, (int)s);
}

int opdb_cu_check_launch(const char *kernel, opdb_err *err) {
    return opdb_cu_check(cudaGetLastError(), kernel, err);
}

int64_t opdb_cu_numel(const opdb_tensor *t) {
    if (t->ndim <= 0) return 0;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->dims[i];
    return n;
}

size_t opdb_cu_elem_size(opdb_dtype dt) {
    switch (dt) {
    case OPDB_DT_F64:
    case OPDB_DT_I64: return 8;
    case OPDB_DT_F32:
    case OPDB_DT_I32: return 4;
    case OPDB_DT_F16:
    case OPDB_DT_BF16:
    case OPDB_DT_I16: return 2;
    case OPDB_DT_I8:
    case OPDB_DT_U8:
    case OPDB_DT_BOOL: return 1;
    default: return 0;
    }
}

bool opdb_cu_is_float(opdb_dtype dt) {
    return dt == OPDB_DT_F32 || dt == OPDB_DT_F16 || dt == OPDB_DT_BF16 || dt == OPDB_DT_F64;
}

CuRows opdb_cu_rows(const opdb_tensor *t) {
    CuRows r;
    r.cols = t->ndim > 0 ? t->dims[t->ndim - 1] : 1;
    r.rows = r.cols > 0 ? opdb_cu_numel(t) / r.cols : 0;
    return r;
}

int opdb_cu_need(const opdb_op_problem *p, int nin, int nout, const char *op, opdb_err *err) {
    if (p->nin < nin || p->nout < nout)
        return opdb_cu_fail(err, "%s needs %d input(s) and %d output(s)", op, nin, nout);
    for (int i = 0; i < nin; i++)
        if (p->in[i].ndim < 1) return opdb_cu_fail(err, "%s: input %d is absent", op, i);
    for (int i = 0; i < nout; i++)
        if (p->out[i].ndim < 1) return opdb_cu_fail(err, "%s: output %d is absent", op, i);
    return 0;
}

int opdb_cu_no_prepare(opdb_cu *cu, const opdb_op_problem *p, const opdb_op_problem *host, void **state,
                       opdb_err *err) {
    (void)cu, (void)p, (void)host, (void)err;
    *state = NULL;
    return 0;
}

void opdb_cu_no_release(void *state) { (void)state; }

// Map from output index to the offset in `t` under right-aligned broadcasting.
int opdb_cu_broadcast_map(const opdb_tensor *t, const opdb_tensor *out, CuMap *m, opdb_err *err) {
    memset(m, 0, sizeof *m);
    if (t->ndim > out->ndim) return opdb_cu_fail(err, "input rank %d exceeds output rank %d", t->ndim, out->ndim);
    m->ndim = out->ndim;
    int64_t stride = 1;
    for (int d = out->ndim - 1; d >= 0; d--) {
        int di = d - (out->ndim - t->ndim);
        m->dims[d] = out->dims[d];
        if (di < 0) continue;
        if (t->dims[di] == out->dims[d]) m->stride[d] = t->dims[di] == 1 ? 0 : stride;
        else if (t->dims[di] != 1)
            return opdb_cu_fail(err, "dim %d of size %lld does not broadcast to %lld", di,
                                (long long)t->dims[di], (long long)out->dims[d]);
        stride *= t->dims[di];
    }
    return 0;
}

bool opdb_cu_same_dims(const opdb_tensor *a, const opdb_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

unsigned opdb_cu_grid(const opdb_cu *cu, int64_t n, int block) {
    // Enough blocks to fill every SM several times; grid-stride loops do the rest.
    int64_t want = (n + block - 1) / block;
    int64_t cap = (int64_t)cu->prop.multiProcessorCount * 32;
    if (want > cap) want = cap;
    return want < 1 ? 1u : (unsigned)want;
}

extern "C" int opdb_cu_open(int index, opdb_cu **out, opdb_err *err) {
    *out = NULL;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        opdb_cu_fail(err, "no CUDA device (%s)",
                     e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices");
        return OPDB_CU_NO_DEVICE;
    }
    if (index < 0 || index >= count)
        return opdb_cu_fail(err, "CUDA device %d does not exist (%d device%s)", index, count,
                            count == 1 ? "" : "s");
    opdb_cu *cu = (opdb_cu *)calloc(1, sizeof *cu);
    if (!cu) return opdb_cu_fail(err, "out of host memory");
    cu->device = index;
    int l2 = 0;
    if (opdb_cu_check(cudaSetDevice(index), "cudaSetDevice", err) ||
        opdb_cu_check(cudaGetDeviceProperties(&cu->prop, index), "cudaGetDeviceProperties", err) ||
        opdb_cu_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, index), "L2 size", err) ||
        opdb_cu_check(cudaDeviceGetAttribute(&cu->clock_khz, cudaDevAttrClockRate, index),
                      "clock rate", err) ||
        opdb_cu_check(cudaStreamCreateWithFlags(&cu->stream, cudaStreamNonBlocking),
                      "cudaStreamCreate", err) ||
        opdb_cu_check(cudaEventCreate(&cu->ev_start), "cudaEventCreate", err) ||
        opdb_cu_check(cudaEventCreate(&cu->ev_stop), "cudaEventCreate", err) ||
        opdb_cu_check_blas(cublasLtCreate(&cu->lt), "cublasLtCreate", err) ||
        opdb_cu_check(cudaHostAlloc((void **)&cu->hold_host, sizeof(int), cudaHostAllocMapped), "cudaHostAlloc", err) ||
        opdb_cu_check(cudaHostGetDevicePointer((void **)&cu->hold_dev, (void *)cu->hold_host, 0),
                      "cudaHostGetDevicePointer", err)) {
        opdb_cu_close(cu);
        return -1;
    }
    cu->l2_bytes = (size_t)l2;
    // Twice the L2 so that nothing the timed kernel touched survives the flush.
    cu->flush_bytes = 2 * (cu->l2_bytes > ((size_t)1 << 20) ? cu->l2_bytes : ((size_t)1 << 20));
    cu->workspace_bytes = CU_LT_WORKSPACE;
    if (opdb_cu_check(cudaMalloc(&cu->workspace, cu->workspace_bytes), "cudaMalloc(workspace)", err) ||
        opdb_cu_check(cudaMalloc(&cu->flush, cu->flush_bytes), "cudaMalloc(L2 flush buffer)", err)) {
        opdb_cu_close(cu);
        return -1;
    }
    *out = cu;
    return 0;
}

extern "C" void opdb_cu_close(opdb_cu *cu) {
    if (!cu) return;
    cudaSetDevice(cu->device);
    if (cu->stream) cudaStreamSynchronize(cu->stream);
    if (cu->flush) cudaFree(cu->flush);
    if (cu->workspace) cudaFree(cu->workspace);
    if (cu->hold_host) cudaFreeHost((void *)cu->hold_host);
    if (cu->lt) cublasLtDestroy(cu->lt);
    if (cu->ev_start) cudaEventDestroy(cu->ev_start);
    if (cu->ev_stop) cudaEventDestroy(cu->ev_stop);
    if (cu->stream) cudaStreamDestroy(cu->stream);
    free(cu);
}

extern "C" const char *opdb_cu_device_name(const opdb_cu *cu) { return cu->prop.name; }

static void cu_versions(int *rt_major, int *rt_minor, int *blas_major, int *blas_minor) {
    int rt = 0;
    cudaRuntimeGetVersion(&rt);   // e.g. 13000
    *rt_major = rt / 1000;
    *rt_minor = (rt % 1000) / 10;
    size_t lt = cublasLtGetVersion();   // e.g. 130100
    *blas_major = (int)(lt / 10000);
    *blas_minor = (int)(lt / 100 % 100);
}

extern "C" void opdb_cu_stack(const opdb_cu *cu, char *buf, size_t n) {
    (void)cu;
    int a, b, c, d;
    cu_versions(&a, &b, &c, &d);
    snprintf(buf, n, "cuda%d.%d_cublas%d.%d", a, b, c, d);
}

extern "C" void opdb_cu_describe(const opdb_cu *cu, char *buf, size_t n) {
    int a, b, c, d;
    cu_versions(&a, &b, &c, &d);
    snprintf(buf, n, "%s (sm_%d%d, %d SMs, %zu MiB L2), CUDA %d.%d, cuBLASLt %d.%d", cu->prop.name,
             cu->prop.major, cu->prop.minor, cu->prop.multiProcessorCount, cu->l2_bytes >> 20, a, b,
             c, d);
}

extern "C" void opdb_cu_get_props(const opdb_cu *cu, opdb_cu_props *out) {
    out->major = cu->prop.major;
    out->minor = cu->prop.minor;
    out->sm_count = cu->prop.multiProcessorCount;
    out->clock_khz = cu->clock_khz;
    out->l2_bytes = cu->l2_bytes;
}

extern "C" int opdb_cu_alloc(opdb_cu *cu, size_t bytes, void **dptr, opdb_err *err) {
    (void)cu;
    *dptr = NULL;
    // A zero-element tensor still gets a distinct, valid pointer.
    cudaError_t e = cudaMalloc(dptr, bytes ? bytes : 256);
    if (e == cudaSuccess) return 0;
    *dptr = NULL;
    cudaGetLastError();   // clear the sticky-free error state
    return opdb_cu_fail(err, "cudaMalloc(%zu bytes): %s", bytes, cudaGetErrorString(e));
}

extern "C" void opdb_cu_free(opdb_cu *cu, void *dptr) {
    (void)cu;
    if (dptr) cudaFree(dptr);
}

extern "C" int opdb_cu_upload(opdb_cu *cu, void *dst, const void *src, size_t bytes, opdb_err *err) {
    if (!bytes) return 0;
    if (opdb_cu_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cu->stream), "upload", err))
        return -1;
    return opdb_cu_check(cudaStreamSynchronize(cu->stream), "upload", err);
}

extern "C" int opdb_cu_download(opdb_cu *cu, void *dst, const void *src, size_t bytes, opdb_err *err) {
    if (!bytes) return 0;
    if (opdb_cu_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, cu->stream), "download", err))
        return -1;
    return opdb_cu_check(cudaStreamSynchronize(cu->stream), "download", err);
}

extern "C" int opdb_cu_memset(opdb_cu *cu, void *dst, int value, size_t bytes, opdb_err *err) {
    if (!bytes) return 0;
    if (opdb_cu_check(cudaMemsetAsync(dst, value, bytes, cu->stream), "cudaMemsetAsync", err)) return -1;
    return opdb_cu_check(cudaStreamSynchronize(cu->stream), "cudaMemsetAsync", err);
}

extern "C" void opdb_cu_flush_l2(opdb_cu *cu) {
    // A new byte value each time so no layer can skip the write as redundant.
    cu->flush_value = (cu->flush_value + 1) & 0xff;
    cudaMemsetAsync(cu->flush, (int)cu->flush_value, cu->flush_bytes, cu->stream);
    cudaStreamSynchronize(cu->stream);
}

// Spins until the host sets *flag (or a second has passed, so a lost host
// can never hang the device). Queued ahead of the timed work, it holds the
// stream until everything is enqueued, as NVBench's blocking kernel does:
// the events then time the operator on the device, not the host's launch
// latency (which a kernel of a few microseconds would otherwise include).
__global__ void k_hold_stream(const volatile int *flag) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (*flag == 0 && t - t0 < 1000000000ull);
}

extern "C" int opdb_cu_timed_batch(opdb_cu *cu, const opdb_cu_kernel *k, const opdb_op_problem *const *sets,
                                   int nsets, int launches, void *state, double *elapsed_us, opdb_err *err) {
    *elapsed_us = 0;
    if (nsets < 1 || launches < 1) return opdb_cu_fail(err, "%s: no launch to time", k->name);
    *cu->hold_host = 0;
    k_hold_stream<<<1, 1, 0, cu->stream>>>(cu->hold_dev);
    int rc = opdb_cu_check_launch("stream hold kernel", err);
    if (!rc) rc = opdb_cu_check(cudaEventRecord(cu->ev_start, cu->stream), "cudaEventRecord", err);
    // Back to back: the device never waits for the host between launches.
    for (int i = 0; i < launches && !rc; i++) rc = k->launch(cu, sets[i % nsets], state, err);
    if (!rc) rc = opdb_cu_check(cudaEventRecord(cu->ev_stop, cu->stream), "cudaEventRecord", err);
    *cu->hold_host = 1;   // release the stream: everything timed is queued
    if (rc) {
        cudaStreamSynchronize(cu->stream);
        return -1;
    }
    if (opdb_cu_check(cudaEventSynchronize(cu->ev_stop), k->name, err)) return -1;
    float ms = 0;
    if (opdb_cu_check(cudaEventElapsedTime(&ms, cu->ev_start, cu->ev_stop), "cudaEventElapsedTime", err))
        return -1;
    *elapsed_us = (double)ms * 1000.0 / launches;
    return 0;
}

extern "C" int opdb_cu_timed(opdb_cu *cu, const opdb_cu_kernel *k, const opdb_op_problem *p,
                             void *state, double *elapsed_us, opdb_err *err) {
    return opdb_cu_timed_batch(cu, k, &p, 1, 1, state, elapsed_us, err);
}

extern "C" int opdb_cu_copy(opdb_cu *cu, void *dst, const void *src, size_t bytes, opdb_err *err) {
    if (!bytes) return 0;
    if (opdb_cu_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cu->stream), "device copy", err))
        return -1;
    return opdb_cu_check(cudaStreamSynchronize(cu->stream), "device copy", err);
}

extern "C" int opdb_cu_run_sync(opdb_cu *cu, const opdb_cu_kernel *k, const opdb_op_problem *p,
                                void *state, opdb_err *err) {
    if (k->launch(cu, p, state, err)) {
        cudaStreamSynchronize(cu->stream);
        return -1;
    }
    return opdb_cu_check(cudaStreamSynchronize(cu->stream), k->name, err);
}
