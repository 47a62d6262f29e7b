/* See blas.h. */
#include "replay/cpu/blas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int, float,
                         const float *, int, const float *, int, float, float *, int);
typedef void (*dgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int, double,
                         const double *, int, const double *, int, double, double *, int);

static struct {
    pthread_once_t once;
    sgemm_fn sgemm;
    dgemm_fn dgemm;
    char *(*config)(void);
    char why[512];
} g = {PTHREAD_ONCE_INIT, NULL, NULL, NULL, ""};

/* The run-time name first, then the library found when opdb was built. */
static const char *const k_names[] = {"libopenblas.so.0",
#ifdef OPDB_OPENBLAS_PATH
                                      OPDB_OPENBLAS_PATH,
#endif
                                      "libopenblas.so"};

/* A function's address from dlsym (copied: ISO C has no cast from an
 * object pointer to a function pointer). */
#define RESOLVE(h, name, fp) memcpy(&(fp), &(void *){dlsym((h), (name))}, sizeof(fp))

static void load(void) {
    /* OpenBLAS sizes its thread pool in its constructor: one thread, none
     * started.  The CPU backend runs it inside its own pinned OpenMP
     * threads (cpu/gemm.c); a user's own setting is left as it is. */
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    void *h = NULL;
    for (size_t i = 0; i < sizeof k_names / sizeof *k_names && !h; i++) h = dlopen(k_names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(g.why, sizeof g.why, "cannot load OpenBLAS (%s): install libopenblas0", e ? e : "not found");
        return;
    }
    void (*set_threads)(int);
    RESOLVE(h, "openblas_set_num_threads", set_threads);
    RESOLVE(h, "cblas_sgemm", g.sgemm);
    RESOLVE(h, "cblas_dgemm", g.dgemm);
    RESOLVE(h, "openblas_get_config", g.config);
    if (!g.sgemm || !g.dgemm || !set_threads) {
        snprintf(g.why, sizeof g.why, "OpenBLAS lacks cblas_sgemm, cblas_dgemm or openblas_set_num_threads");
        g.sgemm = NULL;
        return;
    }
    set_threads(1); /* also where the user asked for more: one thread pool (the backend's) */
}

int opdb_blas_load(opdb_err *err) {
    pthread_once(&g.once, load);
    return g.sgemm ? 0 : opdb_fail(err, OPDB_ERR_RUNTIME, "%s", g.why);
}

void opdb_blas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
                     float alpha, const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc) {
    g.sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void opdb_blas_dgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
                     double alpha, const double *a, int lda, const double *b, int ldb, double beta, double *c, int ldc) {
    g.dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

const char *opdb_blas_config(void) { return g.config ? g.config() : NULL; }
