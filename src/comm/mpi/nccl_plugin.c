/* libopdb_comm_nccl.so: the collectives of `opdb comm bench --backend nccl`
 * on one CUDA device per rank (see nccl_api.h). Built only when CUDA and
 * NCCL are found; loaded by the opdb-comm helper only for --backend nccl. */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/comm.h"
#include "comm/mpi/nccl_api.h"

typedef struct ncomm {
    ncclComm_t comm;
    cudaStream_t stream;
    int nranks, rank;
} ncomm;

static int cuda_fail(cudaError_t e, const char *what, char *msg, size_t cap) {
    snprintf(msg, cap, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}
static int nccl_fail(ncclResult_t r, const char *what, char *msg, size_t cap) {
    snprintf(msg, cap, "%s: %s", what, ncclGetErrorString(r));
    return -1;
}

static int devices(int *n, char *msg, size_t cap) {
    cudaError_t e = cudaGetDeviceCount(n);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaGetDeviceCount", msg, cap);
}

static int unique_id(void *id, char *msg, size_t cap) {
    ncclUniqueId u;
    ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess) return nccl_fail(r, "ncclGetUniqueId", msg, cap);
    memcpy(id, &u, sizeof u);
    return 0;
}

static int comm_init(void **out, const void *id, int nranks, int rank, int device, char *msg, size_t cap) {
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return cuda_fail(e, "cudaSetDevice", msg, cap);
    ncomm *c = calloc(1, sizeof *c);
    if (!c) return snprintf(msg, cap, "out of memory"), -1;
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclResult_t r = ncclCommInitRank(&c->comm, nranks, u, rank);
    if (r != ncclSuccess) return free(c), nccl_fail(r, "ncclCommInitRank", msg, cap);
    if ((e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        ncclCommDestroy(c->comm);
        free(c);
        return cuda_fail(e, "cudaStreamCreate", msg, cap);
    }
    c->nranks = nranks;
    c->rank = rank;
    *out = c;
    return 0;
}

static void comm_free(void *p) {
    ncomm *c = p;
    if (!c) return;
    ncclCommDestroy(c->comm);
    cudaStreamDestroy(c->stream);
    free(c);
}

static void *dev_alloc(size_t bytes) {
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) return NULL;
    /* The collectives run on a non-blocking stream, which does not wait for
     * the legacy default stream: finish the memset before returning. */
    if (cudaMemset(p, 0, bytes ? bytes : 1) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
        cudaFree(p);
        return NULL;
    }
    return p;
}
static void dev_release(void *p) { cudaFree(p); }

static int upload(void *dev, const void *host, size_t bytes, char *msg, size_t cap) {
    /* From pageable memory cudaMemcpy may return before the DMA lands, and
     * the collectives' non-blocking stream would not wait for it. */
    cudaError_t e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaMemcpy to the device", msg, cap);
}
static int download(void *host, const void *dev, size_t bytes, char *msg, size_t cap) {
    cudaError_t e = cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaMemcpy to the host", msg, cap);
}

static ncclDataType_t dtype_of(int d, size_t *size) {
    switch (d) {
    case OPDB_NCCL_INT8: *size = 1; return ncclInt8;
    case OPDB_NCCL_FP16: *size = 2; return ncclFloat16;
    case OPDB_NCCL_BF16: *size = 2; return ncclBfloat16;
    default: *size = 4; return ncclFloat32;
    }
}

static int run(void *p, int op, int dtype, const void *send, void *recv, size_t count, char *msg, size_t cap) {
    ncomm *c = p;
    size_t es;
    ncclDataType_t dt = dtype_of(dtype, &es);
    ncclResult_t r = ncclSuccess;
    switch (op) {
    case OPDB_COMM_ALL_REDUCE: r = ncclAllReduce(send, recv, count, dt, ncclSum, c->comm, c->stream); break;
    case OPDB_COMM_ALL_GATHER: r = ncclAllGather(send, recv, count, dt, c->comm, c->stream); break;
    case OPDB_COMM_REDUCE_SCATTER: r = ncclReduceScatter(send, recv, count, dt, ncclSum, c->comm, c->stream); break;
    case OPDB_COMM_ALL_TO_ALL: /* NCCL's all-to-all is grouped point-to-point, as nccl-tests does it */
        r = ncclGroupStart();
        for (int peer = 0; peer < c->nranks && r == ncclSuccess; peer++) {
            r = ncclSend((const char *)send + (size_t)peer * count * es, count, dt, peer, c->comm, c->stream);
            if (r == ncclSuccess) r = ncclRecv((char *)recv + (size_t)peer * count * es, count, dt, peer, c->comm, c->stream);
        }
        if (r == ncclSuccess) r = ncclGroupEnd();
        else ncclGroupEnd();
        break;
    default: r = ncclBroadcast(send, recv, count, dt, 0, c->comm, c->stream); break;
    }
    if (r != ncclSuccess) return nccl_fail(r, "NCCL collective", msg, cap);
    cudaError_t e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cudaStreamSynchronize", msg, cap);
}

__attribute__((visibility("default"))) const opdb_comm_nccl_api opdb_comm_nccl_plugin = {
    OPDB_COMM_NCCL_ABI, devices, unique_id, comm_init, comm_free, dev_alloc, dev_release, upload, download, run,
};
