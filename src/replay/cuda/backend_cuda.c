/* The CUDA replay backend (opdb bench --backend cuda): inputs are filled on
 * the host exactly as the CPU backend fills them (default fill from the
 * seed, then the op's structured fill), uploaded once, and each run() is
 * one launch between CUDA events on the device's stream, synchronised.
 * All CUDA calls live in the .cu files behind cu_api.h. Built as the plugin
 * module libopdb_cuda.so (see loader.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/cuda/cu_api.h"

typedef struct cuda_impl {
    opdb_cu *cu;
    bool hot_cache;
} cuda_impl;

typedef struct cuda_inst {
    const opdb_cu_kernel *kernel;
    opdb_op_problem dev;    /* the problem with device pointers */
    void *state;            /* the kernel's prepare() result (cuBLASLt plans) */
} cuda_inst;

static bool cuda_supports(opdb_backend *b, const opdb_op_def *op, const char **reason) {
    (void)b;
    if (opdb_cu_kernel_find(op->name)) return true;
    /* An op that cannot run on a CPU usually cannot here either, for the same reason. */
    *reason = op->cpu_skip_reason ? op->cpu_skip_reason : "no CUDA kernel for this operator";
    return false;
}

static void free_tensors(opdb_cu *cu, opdb_tensor *t, int n, bool device) {
    for (int i = 0; i < n; i++) {
        if (device) opdb_cu_free(cu, t[i].data);
        else free(t[i].data);
        t[i].data = NULL;
    }
}

static void clear_data(opdb_op_problem *p) {
    for (int i = 0; i < OPDB_MAX_TENSORS; i++) p->in[i].data = p->out[i].data = NULL;
}

static int host_alloc(opdb_tensor *t, int n, opdb_err *err) {
    for (int i = 0; i < n; i++) {
        if (t[i].ndim <= 0) continue;
        size_t bytes = opdb_tensor_bytes(&t[i]);
        if (!(t[i].data = calloc(1, bytes ? bytes : 1)))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "out of host memory: %zu bytes for a tensor", bytes);
    }
    return 0;
}

/* Device copies of host's tensors: inputs uploaded, outputs zeroed. */
static int device_alloc(opdb_cu *cu, const opdb_op_problem *host, opdb_op_problem *dev, opdb_err *err) {
    for (int i = 0; i < host->nin; i++) {
        if (host->in[i].ndim <= 0) continue;
        size_t bytes = opdb_tensor_bytes(&host->in[i]);
        if (opdb_cu_alloc(cu, bytes, &dev->in[i].data, err) ||
            opdb_cu_upload(cu, dev->in[i].data, host->in[i].data, bytes, err))
            return -1;
    }
    for (int i = 0; i < host->nout; i++) {
        if (host->out[i].ndim <= 0) continue;
        size_t bytes = opdb_tensor_bytes(&host->out[i]);
        if (opdb_cu_alloc(cu, bytes, &dev->out[i].data, err) || opdb_cu_memset(cu, dev->out[i].data, 0, bytes, err))
            return -1;
    }
    return 0;
}

static int cuda_prepare(opdb_backend *b, const opdb_op_def *op, const opdb_op_problem *p, uint64_t seed, void **inst,
                        opdb_err *err) {
    cuda_impl *im = b->impl;
    *inst = NULL;
    const opdb_cu_kernel *k = opdb_cu_kernel_find(op->name);
    if (!k) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: no CUDA kernel for this operator", op->name);
    cuda_inst *in = calloc(1, sizeof *in);
    opdb_op_problem *host = malloc(sizeof *host);
    if (!in || !host) {
        free(in);
        free(host);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "out of host memory");
    }
    in->kernel = k;
    *host = *p;
    clear_data(host);
    in->dev = *p;
    clear_data(&in->dev);
    int rc = host_alloc(host->in, host->nin, err) || host_alloc(host->out, host->nout, err) ? -1 : 0;
    if (rc == 0) {
        /* The CPU backend's fill order, so both backends see the same inputs. */
        uint64_t rng = seed;
        for (int i = 0; i < host->nin; i++) opdb_replay_fill_default(&host->in[i], &rng);
        if (op->fill && op->fill(host, seed, err)) rc = -1;
    }
    if (rc == 0) rc = k->check(host, host, err);   /* before any device memory is spent */
    if (rc == 0) rc = device_alloc(im->cu, host, &in->dev, err);
    if (rc == 0) rc = k->prepare(im->cu, &in->dev, host, &in->state, err);
    free_tensors(im->cu, host->in, host->nin, false);
    free_tensors(im->cu, host->out, host->nout, false);
    free(host);
    if (rc) {
        if (err->code == OPDB_OK) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: CUDA prepare failed", op->name);
        free_tensors(im->cu, in->dev.in, in->dev.nin, true);
        free_tensors(im->cu, in->dev.out, in->dev.nout, true);
        free(in);
        return -1;
    }
    *inst = in;
    return 0;
}

static int cuda_run(opdb_backend *b, void *inst, double *elapsed_us, opdb_err *err) {
    cuda_impl *im = b->impl;
    cuda_inst *in = inst;
    return opdb_cu_timed(im->cu, in->kernel, &in->dev, in->state, elapsed_us, err);
}

static void cuda_flush(opdb_backend *b) {
    cuda_impl *im = b->impl;
    if (!im->hot_cache) opdb_cu_flush_l2(im->cu);
}

static void cuda_release(opdb_backend *b, void *inst) {
    cuda_impl *im = b->impl;
    cuda_inst *in = inst;
    if (!in) return;
    in->kernel->release(in->state);
    free_tensors(im->cu, in->dev.in, in->dev.nin, true);
    free_tensors(im->cu, in->dev.out, in->dev.nout, true);
    free(in);
}

static void cuda_destroy(opdb_backend *b) {
    if (!b) return;
    cuda_impl *im = b->impl;
    if (im) opdb_cu_close(im->cu);
    free(im);
    free(b);
}

/* The plugin's entry points, looked up by src/replay/cuda/loader.c. */
__attribute__((visibility("default"))) extern const char *const opdb_cuda_plugin_abi;
const char *const opdb_cuda_plugin_abi = OPDB_CUDA_PLUGIN_ABI;

__attribute__((visibility("default"))) opdb_backend *opdb_cuda_plugin_create(const opdb_backend_opts *o,
                                                                              opdb_err *err);
opdb_backend *opdb_cuda_plugin_create(const opdb_backend_opts *o, opdb_err *err) {
    opdb_backend_opts defaults = {0, false, 0, 0};
    if (!o) o = &defaults;
    opdb_cu *cu = NULL;
    if (opdb_cu_open(o->device_index, &cu, err)) return NULL;   /* "no CUDA device (...)" */
    opdb_backend *b = calloc(1, sizeof *b);
    cuda_impl *im = calloc(1, sizeof *im);
    if (!b || !im) {
        free(b);
        free(im);
        opdb_cu_close(cu);
        opdb_fail(err, OPDB_ERR_RUNTIME, "out of host memory");
        return NULL;
    }
    im->cu = cu;
    im->hot_cache = o->hot_cache;
    b->impl = im;
    b->name = "cuda";
    opdb_cu_describe(cu, b->description, sizeof b->description);
    opdb_cu_stack(cu, b->stack, sizeof b->stack);
    snprintf(b->device_name, sizeof b->device_name, "%s", opdb_cu_device_name(cu));
    b->supports = cuda_supports;
    b->prepare = cuda_prepare;
    b->run = cuda_run;
    b->flush_cache = cuda_flush;
    b->release = cuda_release;
    b->destroy = cuda_destroy;
    return b;
}
