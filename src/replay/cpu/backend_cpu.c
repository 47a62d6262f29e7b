/* The CPU replay backend: host buffers, OpenBLAS + OpenMP kernels on a fixed
 * number of pinned OpenMP threads, CLOCK_MONOTONIC timing, LLC eviction by sweeping
 * a buffer of twice the last-level cache. */
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "replay/cpu/blas.h"
#include "core/call.h"
#include "replay/cpu/kernels.h"

/* Process-wide state read by the kernels (one CPU backend at a time). */
static int g_threads = 1;
static int g_cpus[CPU_SETSIZE];
static int g_generation;

int opdb_cpu_threads(void) { return g_threads; }

static void pin_self(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

void opdb_cpu_pin_worker(void) {
    static _Thread_local int pinned_generation = -1;
    if (pinned_generation == g_generation) return;
    pinned_generation = g_generation;
    int t = omp_get_thread_num();
    if (t > 0) pin_self(g_cpus[t % g_threads]);   /* thread 0 is the caller, pinned at create */
}

typedef struct cpu_impl {
    opdb_backend_opts opts;
    cpu_set_t saved_mask;    /* the caller's affinity before pinning, restored by destroy */
    unsigned char *evict;    /* >= 2x LLC, swept by flush_cache */
    size_t evict_bytes;
} cpu_impl;

typedef struct cpu_inst {
    const opdb_op_def *op;
    opdb_op_problem p;
    void *workspace;
} cpu_inst;

opdb_op_problem *opdb_cpu_inst_problem(void *inst) { return &((cpu_inst *)inst)->p; }

static void *alloc64(size_t n) {
    size_t r = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, r ? r : 64);
    if (!p) return NULL;
    memset(p, 0, r ? r : 64);   /* touch every page now, so faults are never timed */
    return p;
}

/* Largest cache size the sysfs cache hierarchy of cpu0 reports, else sysconf. */
static size_t llc_bytes(void) {
    size_t best = 0;
    for (int i = 0; i < 16; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        unsigned long v = 0;
        char unit = 0;
        if (fscanf(f, "%lu%c", &v, &unit) >= 1) {
            size_t b = v * (unit == 'K' ? 1024ul : unit == 'M' ? 1048576ul : 1ul);
            if (b > best) best = b;
        }
        fclose(f);
    }
    if (!best) {
        long s = sysconf(_SC_LEVEL3_CACHE_SIZE);
        best = s > 0 ? (size_t)s : 32ul << 20;
    }
    return best;
}

static void cpu_model(char *out, size_t cap) {
    snprintf(out, cap, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        char *v = strchr(line, ':');
        if (!v) break;
        v++;
        while (*v == ' ' || *v == '\t') v++;
        size_t n = strcspn(v, "\r\n");
        while (n && v[n - 1] == ' ') n--;
        snprintf(out, cap, "%.*s", (int)n, v);
        break;
    }
    fclose(f);
}

/* "0.3.21" from openblas_get_config() ("OpenBLAS 0.3.21 NO_AFFINITY ..."). */
static void openblas_version(char *out, size_t cap) {
    const char *c = opdb_blas_config();
    const char *v = c ? strstr(c, "OpenBLAS ") : NULL;
    if (!v) {
        snprintf(out, cap, "unknown");
        return;
    }
    v += 9;
    snprintf(out, cap, "%.*s", (int)strcspn(v, " "), v);
}

static bool cpu_supports(opdb_backend *b, const opdb_op_def *op, const char **reason) {
    (void)b;
    if (op->cpu_run) return true;
    *reason = op->cpu_skip_reason ? op->cpu_skip_reason : "no CPU kernel for this operator";
    return false;
}

static void release_inst(cpu_inst *in) {
    for (int i = 0; i < in->p.nin; i++) free(in->p.in[i].data);
    for (int i = 0; i < in->p.nout; i++) free(in->p.out[i].data);
    free(in->workspace);
    free(in);
}

static int alloc_tensors(opdb_tensor *t, int n, opdb_err *err) {
    for (int i = 0; i < n; i++) {
        t[i].data = NULL;
        if (t[i].ndim <= 0) continue;
        t[i].data = alloc64(opdb_tensor_bytes(&t[i]));
        if (!t[i].data)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "out of memory: %zu bytes for a tensor", opdb_tensor_bytes(&t[i]));
    }
    return 0;
}

static int cpu_prepare(opdb_backend *b, const opdb_op_def *op, const opdb_op_problem *p, uint64_t seed, void **inst,
                       opdb_err *err) {
    (void)b;
    cpu_inst *in = calloc(1, sizeof *in);
    if (!in) return opdb_fail(err, OPDB_ERR_RUNTIME, "out of memory");
    in->op = op;
    in->p = *p;
    /* Every slot's data pointer starts NULL so release_inst is safe at any point. */
    for (int i = 0; i < OPDB_MAX_TENSORS; i++) in->p.in[i].data = in->p.out[i].data = NULL;
    if (alloc_tensors(in->p.in, in->p.nin, err) || alloc_tensors(in->p.out, in->p.nout, err)) {
        release_inst(in);
        return -1;
    }
    if (p->workspace_bytes && !(in->workspace = alloc64(p->workspace_bytes))) {
        release_inst(in);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "out of memory: %zu bytes of workspace", p->workspace_bytes);
    }
    /* Default fill of every input, then the op's structured inputs on top. */
    uint64_t rng = seed;
    for (int i = 0; i < in->p.nin; i++) opdb_replay_fill_default(&in->p.in[i], &rng);
    if (op->fill && op->fill(&in->p, seed, err)) {
        release_inst(in);
        return -1;
    }
    *inst = in;
    return 0;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cpu_run(opdb_backend *b, void *inst, double *elapsed_us, opdb_err *err) {
    (void)b;
    cpu_inst *in = inst;
    double t0 = now_us();
    int rc = in->op->cpu_run(&in->p, in->workspace, err);
    *elapsed_us = now_us() - t0;
    return rc;
}

static void cpu_flush(opdb_backend *b) {
    cpu_impl *im = b->impl;
    if (im->opts.hot_cache || !im->evict) return;
    /* Read-modify-write one byte per line: every line becomes ours and dirty. */
    volatile unsigned char *p = im->evict;
    for (size_t i = 0; i < im->evict_bytes; i += 64) p[i] = (unsigned char)(p[i] + 1);
}

static void cpu_release(opdb_backend *b, void *inst) {
    (void)b;
    if (inst) release_inst(inst);
}

static void cpu_destroy(opdb_backend *b) {
    if (!b) return;
    cpu_impl *im = b->impl;
    sched_setaffinity(0, sizeof im->saved_mask, &im->saved_mask);
    g_threads = 1; /* kernels run without a backend only in tests: single-threaded */
    g_generation++;
    free(im->evict);
    free(im);
    free(b);
}

/* Pin the caller (OpenMP thread 0) to the first allowed CPU; workers pin themselves. */
static int setup_threads(cpu_impl *im, int *threads, opdb_err *err) {
    /* The CPUs the process had before any backend pinned it (a second
     * backend must not see only the first one's CPU 0). */
    static cpu_set_t process_mask;
    static bool have_mask;
    if (!have_mask && sched_getaffinity(0, sizeof process_mask, &process_mask) != 0) CPU_ZERO(&process_mask);
    have_mask = true;
    im->saved_mask = process_mask;
    int avail = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &im->saved_mask)) g_cpus[avail++] = c;
    if (avail == 0) { /* affinity unknown: assume CPUs 0..n-1 online */
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (avail = 0; avail < (n > 0 ? n : 1) && avail < CPU_SETSIZE; avail++) g_cpus[avail] = avail;
    }
    int n = *threads > 0 ? *threads : avail;
    if (n > avail)
        return opdb_fail(err, OPDB_ERR_USAGE, "--threads %d exceeds the %d CPU(s) this process may use", n, avail);
    g_threads = n;
    g_generation++;
    pin_self(g_cpus[0]);
    /* One thread pool: OpenBLAS runs single-threaded inside the OpenMP
     * workers (cpu/gemm.c), whose busy-waiting would otherwise compete with
     * OpenBLAS's own spinning workers for the same CPUs (cpu/blas.c). */
    if (opdb_blas_load(err)) return -1;
    omp_set_num_threads(n);
    *threads = n;
    return 0;
}

opdb_backend *opdb_backend_cpu_create(const opdb_backend_opts *o, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_backend_opts", err)) return NULL;
    opdb_backend *b = calloc(1, sizeof *b);
    cpu_impl *im = calloc(1, sizeof *im);
    if (!b || !im) {
        free(b);
        free(im);
        opdb_fail(err, OPDB_ERR_RUNTIME, "out of memory");
        return NULL;
    }
    im->opts = *o;
    int threads = o->threads;
    if (setup_threads(im, &threads, err)) {
        free(b);
        free(im);
        return NULL;
    }
    size_t real_evict = 0;
    if (!o->hot_cache) {
        size_t llc = o->cache_bytes ? o->cache_bytes : llc_bytes();
        im->evict_bytes = 2 * llc < (8ul << 20) ? 8ul << 20 : 2 * llc;
        real_evict = im->evict_bytes;
        /* A plan only prices the sweep: 3/2 of the cache this CPU reports
         * still misses on every line, and the real sweep costs in proportion
         * to its size (a --cache-mib of 512 must not cost a plan 1 GiB). */
        size_t pilot = llc_bytes() / 2 * 3;
        if (pilot < (8ul << 20)) pilot = 8ul << 20;
        if (o->estimate_only && pilot < im->evict_bytes) im->evict_bytes = pilot;
        if (!(im->evict = alloc64(im->evict_bytes))) {
            b->impl = im;
            cpu_destroy(b);
            opdb_fail(err, OPDB_ERR_RUNTIME, "out of memory: %zu bytes of cache-eviction buffer", 2 * llc);
            return NULL;
        }
    }
    b->impl = im;
    b->name = "cpu";
    char blas[32];
    openblas_version(blas, sizeof blas);
    cpu_model(b->device_name, sizeof b->device_name);
    int gmaj = __GNUC__, gmin = __GNUC_MINOR__;
    snprintf(b->stack, sizeof b->stack, "openblas%s_gcc%d.%d", blas, gmaj, gmin);
    char cache[48] = ", hot cache";
    if (!o->hot_cache) snprintf(cache, sizeof cache, ", %zu MiB swept per sample", real_evict >> 20);
    b->flush_scale = im->evict_bytes ? (double)real_evict / (double)im->evict_bytes : 1.0;
    snprintf(b->description, sizeof b->description, "%s, OpenBLAS %s, %d pinned thread%s%s", b->device_name, blas,
             threads, threads == 1 ? "" : "s", cache);
    b->supports = cpu_supports;
    b->prepare = cpu_prepare;
    b->run = cpu_run;
    b->flush_cache = cpu_flush;
    b->release = cpu_release;
    b->destroy = cpu_destroy;
    return b;
}
