/* The floor for perf/comm.sh: a bare MPI loop of one collective, timed as
 * opdb-comm times it (warm-up, barrier, CLOCK_MONOTONIC around N iterations,
 * maximum over ranks) but with nothing else: no per-iteration clock reads,
 * no statistics, no output but one number.
 *   mpirun -np N comm_raw OP BYTES WARMUP ITERS   (OP: all_reduce | all_gather)
 * prints "<µs per iteration>" on rank 0 (float32 elements).
 *   mpirun -np N comm_raw OP BYTES WARMUP ITERS pair
 * runs, in one process, 20 alternating chunks of ITERS/20 iterations: the bare
 * loop, then opdb-comm's loop (a clock read and a store after every
 * iteration), and prints "<bare best> <opdb-loop best> <bare median>
 * <opdb-loop median>" in µs per iteration: the harness's own cost without
 * the noise between two processes started at different times. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: comm_raw OP BYTES WARMUP ITERS [pair]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int gather = !strcmp(argv[1], "all_gather");
    int el = atoi(argv[2]) / 4, warm = atoi(argv[3]), iters = atoi(argv[4]);
    float *s = calloc((size_t)el + 1, 4), *r = calloc((size_t)el * (size_t)n + 1, 4);
    for (int i = 0; i < warm; i++)
        gather ? MPI_Allgather(s, el, MPI_FLOAT, r, el, MPI_FLOAT, MPI_COMM_WORLD)
               : MPI_Allreduce(s, r, el, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (argc == 6 && !strcmp(argv[5], "pair")) {
        enum { CHUNKS = 20 };
        int k = iters / CHUNKS > 0 ? iters / CHUNKS : 1;
        double *t = calloc((size_t)k, sizeof *t), bare[CHUNKS], loop[CHUNKS];
        for (int c = 0; c < CHUNKS; c++)
            for (int h = 0; h < 2; h++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = now_us();
                for (int i = 0; i < k; i++) {
                    gather ? MPI_Allgather(s, el, MPI_FLOAT, r, el, MPI_FLOAT, MPI_COMM_WORLD)
                           : MPI_Allreduce(s, r, el, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                    if (h) t[i] = now_us();
                }
                double us = (now_us() - t0) / k, mx;
                MPI_Allreduce(&us, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                (h ? loop : bare)[c] = mx;
            }
        if (rank == 0) {
            qsort(bare, CHUNKS, sizeof *bare, cmp);
            qsort(loop, CHUNKS, sizeof *loop, cmp);
            printf("%.4f %.4f %.4f %.4f\n", bare[0], loop[0], (bare[9] + bare[10]) / 2, (loop[9] + loop[10]) / 2);
        }
        free(t), free(s), free(r);
        MPI_Finalize();
        return 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us();
    for (int i = 0; i < iters; i++)
        gather ? MPI_Allgather(s, el, MPI_FLOAT, r, el, MPI_FLOAT, MPI_COMM_WORLD)
               : MPI_Allreduce(s, r, el, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double us = (now_us() - t0) / iters, mx;
    MPI_Reduce(&us, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%.4f\n", mx);
    free(s), free(r);
    MPI_Finalize();
    return 0;
}
