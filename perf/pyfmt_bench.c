/*
 * pyfmt_bench.c - repr(float) alone: the integer shortest-digits formatter
 * (opdb_py_fmt_repr) against the snprintf + strtod one it replaced
 * (opdb_py_fmt_repr_slow).
 *
 * Usage: pyfmt_bench [-r ROUNDS] FILE
 *
 * Reads every JSON number with a '.' or an exponent out of FILE (e.g. the
 * results `opdb query` writes: their latencies) and formats all of them with
 * each formatter in turn, ROUNDS times interleaved (default 5), checking the
 * two texts are the same. Prints the count and, for each, the best and median
 * CPU nanoseconds per number (thread CPU time: the host may be shared).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opdb/pystr.h"
#include "pycompat/pyshortest.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the numbers of text that are JSON floats (a '.' or 'e' in the token) */
static double *floats_of(const char *t, size_t *n_out) {
    size_t n = 0, cap = 1024;
    double *v = malloc(cap * sizeof *v);
    for (const char *p = t; v && *p;) {
        if ((*p == '-' || (*p >= '0' && *p <= '9')) && (p == t || strchr(" [:,", p[-1]))) {
            char *end;
            double x = strtod(p, &end);
            size_t len = (size_t)(end - p);
            if (len && (memchr(p, '.', len) || memchr(p, 'e', len) || memchr(p, 'E', len))) {
                if (n == cap) {
                    double *w = realloc(v, (cap *= 2) * sizeof *v);
                    if (!w) {
                        free(v);
                        return NULL;
                    }
                    v = w;
                }
                v[n++] = x;
            }
            p = len ? end : p + 1;
        } else {
            p++;
        }
    }
    *n_out = n;
    return v;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0;
    char *s = malloc(cap + 1);
    for (size_t k; s && (k = fread(s + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            char *w = realloc(s, (cap *= 2) + 1);
            if (!w) free(s);
            s = w;
        }
    }
    fclose(f);
    if (s) s[n] = '\0';
    return s;
}

int main(int argc, char **argv) {
    int rounds = 5, a = 1;
    if (argc > 2 && strcmp(argv[1], "-r") == 0) {
        rounds = atoi(argv[2]);
        a = 3;
    }
    if (argc != a + 1 || rounds < 1) {
        fprintf(stderr, "usage: pyfmt_bench [-r ROUNDS] FILE\n");
        return 2;
    }
    char *text = slurp(argv[a]);
    if (!text) {
        fprintf(stderr, "pyfmt_bench: %s: cannot read\n", argv[a]);
        return 1;
    }
    size_t n = 0;
    double *v = floats_of(text, &n);
    free(text);
    if (!v || n == 0) {
        fprintf(stderr, "pyfmt_bench: %s: no floats\n", argv[a]);
        free(v);
        return 1;
    }
    double *t_fast = malloc((size_t)rounds * sizeof *t_fast), *t_slow = malloc((size_t)rounds * sizeof *t_slow);
    if (!t_fast || !t_slow) return 1;
    char a_buf[40], b_buf[40];
    size_t sink = 0;
    for (size_t i = 0; i < n; i++) {
        opdb_py_fmt_repr(a_buf, sizeof a_buf, v[i]);
        opdb_py_fmt_repr_slow(b_buf, sizeof b_buf, v[i]);
        if (strcmp(a_buf, b_buf) != 0) {
            fprintf(stderr, "pyfmt_bench: %a: fast %s, reference %s\n", v[i], a_buf, b_buf);
            return 1;
        }
    }
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        for (size_t i = 0; i < n; i++) sink += opdb_py_fmt_repr(a_buf, sizeof a_buf, v[i]) + (unsigned char)a_buf[0];
        double t1 = now();
        for (size_t i = 0; i < n; i++) sink += opdb_py_fmt_repr_slow(b_buf, sizeof b_buf, v[i]) + (unsigned char)b_buf[0];
        double t2 = now();
        t_fast[r] = (t1 - t0) * 1e9 / (double)n;
        t_slow[r] = (t2 - t1) * 1e9 / (double)n;
    }
    qsort(t_fast, (size_t)rounds, sizeof *t_fast, cmp_d);
    qsort(t_slow, (size_t)rounds, sizeof *t_slow, cmp_d);
    printf("numbers %zu (checksum %zu)\n", n, sink % 1000);
    printf("fast  ns/number best %.1f median %.1f\n", t_fast[0], t_fast[rounds / 2]);
    printf("slow  ns/number best %.1f median %.1f\n", t_slow[0], t_slow[rounds / 2]);
    printf("speedup (best) %.2fx\n", t_slow[0] / t_fast[0]);
    free(t_fast);
    free(t_slow);
    free(v);
    return 0;
}
