/*
 * query_api.c - lookups per second through the C API (perf/query.sh).
 *
 * Usage: query_api [-c ENTRIES] [-l] [-a] DB_DIR SECONDS FILE...   (each FILE: JSONL queries of one class)
 *
 * Opens DB_DIR with every table loaded at open (eager_load; -l: lazily, each
 * table on first use), prints the open time, then for each FILE answers its
 * lines with opdb_query_json on one thread, cycling through them for about
 * SECONDS, and prints lookups per second and the share of each result
 * source (times are the process's CPU time, so a shared host does not
 * count against it). -c sets the result cache's entries (default 0: off, every lookup
 * is computed). Lookups answer into one reused result buffer
 * (opdb_query_json_buf); -a allocates each result (opdb_query_json), as
 * before that call existed. first_per_s is the first pass over the file's
 * lines alone: the handle has not seen them yet, so the exact-hit map and
 * the result cache are filling (the file's repeats within that pass still
 * find them). Query lines are read into memory first: the time is the
 * lookup's, not the file's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opdb/query.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the host may be shared */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct lines {
    char *text;
    size_t *start, *len, n;
} lines;

static int read_lines(const char *path, lines *L) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    L->text = malloc((size_t)size + 1);
    if (!L->text || fread(L->text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        return -1;
    }
    fclose(f);
    L->text[size] = 0;
    size_t cap = 1024;
    L->start = malloc(cap * sizeof *L->start);
    L->len = malloc(cap * sizeof *L->len);
    L->n = 0;
    for (size_t i = 0; i < (size_t)size;) {
        char *nl = memchr(L->text + i, '\n', (size_t)size - i);
        size_t e = nl ? (size_t)(nl - L->text) : (size_t)size;
        if (e > i) {
            if (L->n == cap) {
                cap *= 2;
                L->start = realloc(L->start, cap * sizeof *L->start);
                L->len = realloc(L->len, cap * sizeof *L->len);
            }
            L->start[L->n] = i;
            L->len[L->n++] = e - i;
        }
        i = e + 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    size_t cache = 0;
    bool eager = true, alloc = false;
    int ai = 1;
    for (; ai < argc && argv[ai][0] == '-'; ai++) {
        if (strcmp(argv[ai], "-l") == 0) eager = false;
        else if (strcmp(argv[ai], "-a") == 0) alloc = true;
        else if (strcmp(argv[ai], "-c") == 0 && ai + 1 < argc) cache = (size_t)atol(argv[++ai]);
        else break;
    }
    argv += ai - 1;
    argc -= ai - 1;
    if (argc < 4) {
        fprintf(stderr, "usage: query_api [-c ENTRIES] [-l] [-a] DB_DIR SECONDS FILE...\n");
        return 2;
    }
    double secs = atof(argv[2]);
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    o.eager_load = eager;
    o.result_cache = cache;
    static const int grid[] = {8, 2};
    o.grid = grid;
    o.grid_n = 2;
    o.tp_size = 8;
    opdb_err err = {0};
    double t0 = now();
    opdb_qdb *db = opdb_qdb_open(argv[1], &o, &err);
    double t_open = now() - t0;
    if (!db) {
        fprintf(stderr, "query_api: %s\n", err.msg);
        return 1;
    }
    printf("open_s=%.4f\n", t_open);
    for (int a = 3; a < argc; a++) {
        lines L;
        if (read_lines(argv[a], &L) != 0 || L.n == 0) {
            fprintf(stderr, "query_api: cannot read %s\n", argv[a]);
            return 1;
        }
        size_t done = 0, by_src[OPDB_SRC_ERROR + 1] = {0};
        opdb_qresult_buf *buf = opdb_qresult_buf_new();
        double start = now(), elapsed = 0, first = 0;
        while (elapsed < secs) {
            for (size_t i = 0; i < L.n; i++) {
                opdb_qresult r;
                int rc = alloc ? opdb_query_json(db, L.text + L.start[i], L.len[i], false, &r)
                               : opdb_query_json_buf(db, L.text + L.start[i], L.len[i], false, buf, &r);
                if (rc != 0) return 1;
                by_src[r.source]++;
                opdb_qresult_free(&r);
            }
            done += L.n;
            elapsed = now() - start;
            if (first == 0) first = elapsed;
        }
        opdb_qresult_buf_free(buf);
        const char *name = strrchr(argv[a], '/');
        printf("%s lookups=%zu seconds=%.3f per_s=%.0f first_per_s=%.0f", name ? name + 1 : argv[a], done, elapsed,
               (double)done / elapsed, (double)L.n / first);
        for (int s = 0; s <= OPDB_SRC_ERROR; s++)
            if (by_src[s]) printf(" %s=%.1f%%", opdb_qsource_name((opdb_qsource)s), 100.0 * (double)by_src[s] / (double)done);
        printf("\n");
        free(L.text);
        free(L.start);
        free(L.len);
    }
    opdb_qdb_close(db);
    return 0;
}
