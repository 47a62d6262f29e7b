/* openblas_gemm N [REPS] [THREADS]: OpenBLAS's own best single-precision GEMM
 * on this machine, the reference `opdb bench` is compared with (perf/replay.sh).
 * C(N,N) = A(N,N) . B(N,N)^T with B stored (N, K) like a database MatMulV2
 * weight; one warm-up call, then REPS timed calls (default 5), hot cache; prints
 * "N best_us GFLOP/s". THREADS defaults to the online CPUs, set explicitly:
 * this Debian OpenBLAS build left to its own default ran at one core's speed
 * on the 2-core VM (108 against 222 GFLOP/s for N = 1024). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int n); /* OpenBLAS extension, not in every cblas.h */

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: openblas_gemm N [REPS] [THREADS]\n");
        return 2;
    }
    int n = atoi(argv[1]), reps = argc > 2 ? atoi(argv[2]) : 5;
    if (n <= 0 || reps <= 0) {
        fprintf(stderr, "openblas_gemm: N and REPS must be positive\n");
        return 2;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    openblas_set_num_threads(argc > 3 ? atoi(argv[3]) : cpus > 0 ? (int)cpus : 1);
    size_t nn = (size_t)n * (size_t)n;
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "openblas_gemm: out of memory\n");
        return 1;
    }
    unsigned s = 12345;
    for (size_t i = 0; i < nn; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
        s = s * 1103515245u + 12345u;
        b[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    }
    double best = 0;
    for (int r = 0; r <= reps; r++) {
        double t0 = now_us();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double t = now_us() - t0;
        if (r > 0 && (best == 0 || t < best)) best = t; /* r == 0 is the warm-up */
    }
    printf("%d %.3f %.3f\n", n, best, 2.0 * n * (double)n * n / best * 1e-3);
    free(a), free(b), free(c);
    return 0;
}
