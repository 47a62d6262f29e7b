/* The CUDA side of the replay backend, callable from C.
 *
 * Everything that touches the CUDA runtime or cuBLASLt lives in the .cu
 * files behind this header, so the C glue (backend_cuda.c) compiles with the
 * project's strict gcc flags without CUDA headers, and the self-contained
 * check (tests/cuda/) links these .cu files with nothing but the toolkit:
 * they use only the types of opdb/replay.h, never a libopdb function. */
#ifndef OPDB_CU_API_H
#define OPDB_CU_API_H

#include "opdb/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by opdb_cu_open when the machine has no usable CUDA device. */
#define OPDB_CU_NO_DEVICE (-2)

/* One device: stream, timing events, cuBLASLt handle + workspace, L2 flush buffer. */
typedef struct opdb_cu opdb_cu;

/* Select and initialise device `index`. -1 + err on failure;
 * OPDB_CU_NO_DEVICE + err when there is no device (or no driver). */
int opdb_cu_open(int index, opdb_cu **out, opdb_err *err);
void opdb_cu_close(opdb_cu *cu);

const char *opdb_cu_device_name(const opdb_cu *cu);
/* "cuda13.0_cublas13.0": runtime and cuBLAS versions (the version-dir name). */
void opdb_cu_stack(const opdb_cu *cu, char *buf, size_t n);
/* "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2), CUDA 13.0, cuBLASLt 13.0" */
void opdb_cu_describe(const opdb_cu *cu, char *buf, size_t n);

int opdb_cu_alloc(opdb_cu *cu, size_t bytes, void **dptr, opdb_err *err);
void opdb_cu_free(opdb_cu *cu, void *dptr);
int opdb_cu_upload(opdb_cu *cu, void *dst, const void *src, size_t bytes, opdb_err *err);
int opdb_cu_download(opdb_cu *cu, void *dst, const void *src, size_t bytes, opdb_err *err);
int opdb_cu_memset(opdb_cu *cu, void *dst, int value, size_t bytes, opdb_err *err);

/* Overwrite a buffer of twice the L2 size on the stream and wait (not timed). */
void opdb_cu_flush_l2(opdb_cu *cu);

/* ---- kernels: one entry per operator name ----
 * check() says whether the problem is one this kernel handles (shapes,
 * dtypes, the plan's parameters) without touching a device; `host` is the
 * problem with the filled host inputs (group lists are read from it).
 * prepare() (after a successful check) precomputes what it can for the
 * problem with device pointers in p->in/out[].data (cuBLASLt plans).
 * launch() enqueues one execution on the device's stream. */
typedef struct opdb_cu_kernel {
    const char *name;
    int (*check)(const opdb_op_problem *p, const opdb_op_problem *host, opdb_err *err);
    int (*prepare)(opdb_cu *cu, const opdb_op_problem *p, const opdb_op_problem *host,
                   void **state, opdb_err *err);
    int (*launch)(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err);
    void (*release)(void *state);
} opdb_cu_kernel;

/* By operator name (catalogue name); NULL when there is no CUDA kernel. */
const opdb_cu_kernel *opdb_cu_kernel_find(const char *name);
/* The i-th kernel of the table; NULL past the end. */
const opdb_cu_kernel *opdb_cu_kernel_at(size_t i);

/* One launch between CUDA events on the stream, synchronised; microseconds.
 * The stream is held by a spinning kernel until the launch is queued, so the
 * events see the device time of the operator, not the host's launch latency. */
int opdb_cu_timed(opdb_cu *cu, const opdb_cu_kernel *k, const opdb_op_problem *p, void *state,
                  double *elapsed_us, opdb_err *err);
/* `launches` launches back to back between the same two events, launch i
 * on sets[i % nsets] (copies of one problem in distinct buffers, so that
 * with the L2 flushed before the batch no launch finds its data cached),
 * synchronised; *elapsed_us = the events' interval / launches. A kernel of a
 * few microseconds is then timed over tens of them: the events' resolution
 * (about 0.5 us) and the gaps between single launches no longer dominate. */
int opdb_cu_timed_batch(opdb_cu *cu, const opdb_cu_kernel *k, const opdb_op_problem *const *sets, int nsets,
                        int launches, void *state, double *elapsed_us, opdb_err *err);
/* Device-to-device copy, synchronised. */
int opdb_cu_copy(opdb_cu *cu, void *dst, const void *src, size_t bytes, opdb_err *err);
/* One launch, synchronised (correctness checks, warm-up). */
int opdb_cu_run_sync(opdb_cu *cu, const opdb_cu_kernel *k, const opdb_op_problem *p, void *state,
                     opdb_err *err);

/* Device properties the GEMM sweep needs for its peak estimate. */
typedef struct opdb_cu_props {
    int major, minor, sm_count;
    int clock_khz;          /* SM boost clock (0 when the runtime no longer reports it) */
    size_t l2_bytes;
} opdb_cu_props;
void opdb_cu_get_props(const opdb_cu *cu, opdb_cu_props *out);

#ifdef __cplusplus
}
#endif
#endif
