/*
 * core_pingpong.c - how far apart the host placed this machine's first two
 * CPUs: the round trip of a cache line written in turn by a thread pinned to
 * each. On the 2-vCPU VMs the benchmarks run on it reads about 55 ns when
 * the two share a die (and its L3) and about 320 ns when they do not; a
 * multi-threaded run's CPU time depends on which (perf/query.sh prints it
 * before and after its rounds).
 *
 * Usage: core_pingpong [ROUND_TRIPS]     prints "pingpong_ns=N"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static _Alignas(64) _Atomic long g_turn;
static long g_n = 300000;

static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *answer(void *arg)
{
    (void)arg;
    pin(1);
    for (long i = 0; i < g_n; i++) {
        while (atomic_load_explicit(&g_turn, memory_order_acquire) != 2 * i + 1) {
        }
        atomic_store_explicit(&g_turn, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) g_n = atol(argv[1]);
    if (g_n <= 0 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        printf("pingpong_ns=NA\n");
        return 0;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, answer, NULL) != 0) return 1;
    pin(0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < g_n; i++) {
        atomic_store_explicit(&g_turn, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&g_turn, memory_order_acquire) != 2 * i + 2) {
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    printf("pingpong_ns=%.0f\n", s / (double)g_n * 1e9);
    return 0;
}
