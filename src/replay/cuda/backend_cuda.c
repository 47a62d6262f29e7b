/* The CUDA replay backend (opdb bench --backend cuda): inputs are filled on
 * the host exactly as the CPU backend fills them (default fill from the
 * seed, then the op's structured fill), uploaded once, and each run() is a
 * batch of back-to-back launches between CUDA events on the device's
 * stream, synchronised (one launch for kernels of 100 us or more).
 * All CUDA calls live in the .cu files behind cu_api.h. Built as the plugin
 * module libopdb_cuda.so (see loader.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/cuda/cu_api.h"

typedef struct cuda_impl {
    opdb_cu *cu;
    bool hot_cache;
    int launch_batch;       /* opdb_backend_opts.launch_batch */
} cuda_impl;

/* Device memory the extra buffer sets of one row may take: a batch is sized
 * for about 100 us, so only rows that move less than this get one. */
#define EXTRA_SET_BYTES ((size_t)1 << 30)

typedef struct cuda_inst {
    const opdb_cu_kernel *kernel;
    opdb_op_problem dev;    /* the problem with device pointers */
    void *state;            /* the kernel's prepare() result (cuBLASLt plans) */
    int batch;              /* launches per timed sample */
    int nsets;              /* distinct buffer sets the launches rotate over (1: dev only) */
    opdb_op_problem *extra; /* sets 1 .. nsets-1 */
    const opdb_op_problem **sets;
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

static void free_sets(opdb_cu *cu, cuda_inst *in) {
    for (int s = 0; s + 1 < in->nsets && in->extra; s++) {
        free_tensors(cu, in->extra[s].in, in->extra[s].nin, true);
        free_tensors(cu, in->extra[s].out, in->extra[s].nout, true);
    }
    free(in->extra);
    free(in->sets);
    in->extra = NULL;
    in->sets = NULL;
    in->nsets = 0;
}

static size_t set_bytes(const opdb_op_problem *p) {
    size_t n = 0;
    for (int i = 0; i < p->nin; i++) n += p->in[i].ndim > 0 ? opdb_tensor_bytes(&p->in[i]) : 0;
    for (int i = 0; i < p->nout; i++) n += p->out[i].ndim > 0 ? opdb_tensor_bytes(&p->out[i]) : 0;
    return n;
}

/* Copies of the row's buffers (inputs copied from the first set, outputs
 * zeroed) for the launches of a batch: with a cold cache each launch of a
 * batch then reads data that the flush before the batch evicted, as a single
 * launch would. With a hot cache every launch uses the same buffers. */
static int make_sets(opdb_cu *cu, cuda_inst *in, int want, opdb_err *err) {
    size_t per = set_bytes(&in->dev);
    if (per && (size_t)(want - 1) > EXTRA_SET_BYTES / per) want = 1 + (int)(EXTRA_SET_BYTES / per);
    in->sets = calloc((size_t)want, sizeof *in->sets);
    in->extra = want > 1 ? calloc((size_t)want - 1, sizeof *in->extra) : NULL;
    if (!in->sets || (want > 1 && !in->extra)) return opdb_fail(err, OPDB_ERR_RUNTIME, "out of host memory");
    in->sets[0] = &in->dev;
    in->nsets = 1;
    for (int s = 1; s < want; s++) {
        opdb_op_problem *e = &in->extra[s - 1];
        *e = in->dev;
        clear_data(e);
        in->nsets++; /* counted first, so a failure frees what was allocated */
        in->sets[s] = e;
        for (int i = 0; i < e->nin; i++) {
            if (e->in[i].ndim <= 0) continue;
            size_t b = opdb_tensor_bytes(&e->in[i]);
            if (opdb_cu_alloc(cu, b, &e->in[i].data, err) || opdb_cu_copy(cu, e->in[i].data, in->dev.in[i].data, b, err))
                return -1;
        }
        for (int i = 0; i < e->nout; i++) {
            if (e->out[i].ndim <= 0) continue;
            size_t b = opdb_tensor_bytes(&e->out[i]);
            if (opdb_cu_alloc(cu, b, &e->out[i].data, err) || opdb_cu_memset(cu, e->out[i].data, 0, b, err)) return -1;
        }
    }
    return 0;
}

/* Launches per sample: the fixed count asked for, else enough launches for
 * about OPDB_LAUNCH_BATCH_TARGET_US of device time, judged from the fastest
 * of three single timed launches (after one untimed, so plans and caches are
 * warm); then the buffer sets the batch rotates over. */
static int calibrate(cuda_impl *im, cuda_inst *in, opdb_err *err) {
    if (opdb_cu_run_sync(im->cu, in->kernel, &in->dev, in->state, err)) return -1;
    int batch = im->launch_batch;
    if (batch <= 0) {
        double best = 0;
        for (int i = 0; i < 3; i++) {
            double us;
            if (!im->hot_cache) opdb_cu_flush_l2(im->cu);
            if (opdb_cu_timed(im->cu, in->kernel, &in->dev, in->state, &us, err)) return -1;
            if (i == 0 || us < best) best = us;
        }
        batch = best <= 0 ? OPDB_LAUNCH_BATCH_MAX : (int)(OPDB_LAUNCH_BATCH_TARGET_US / best + 0.999);
        if (batch > OPDB_LAUNCH_BATCH_MAX) batch = OPDB_LAUNCH_BATCH_MAX;
        if (batch < 1) batch = 1;
    }
    in->batch = batch;
    return make_sets(im->cu, in, im->hot_cache ? 1 : batch, err);
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
    bool prepared = rc == 0;
    if (rc == 0) rc = calibrate(im, in, err);
    free_tensors(im->cu, host->in, host->nin, false);
    free_tensors(im->cu, host->out, host->nout, false);
    free(host);
    if (rc) {
        if (err->code == OPDB_OK) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: CUDA prepare failed", op->name);
        if (prepared) k->release(in->state);
        free_sets(im->cu, in);
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
    return opdb_cu_timed_batch(im->cu, in->kernel, in->sets, in->nsets, in->batch, in->state, elapsed_us, err);
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
    free_sets(im->cu, in);
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
    opdb_backend_opts defaults = {.size = sizeof defaults};
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
    im->launch_batch = o->launch_batch;
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
