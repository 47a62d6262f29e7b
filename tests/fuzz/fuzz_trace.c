/* libFuzzer target: the input is a Chrome trace (plain or gzip); the
 * streaming reader behind `opdb trace2csv` must never crash, leak, or fail
 * without an error message, and its two paths (one thread; a tokenizing
 * thread replayed on the caller's, src/trace/trace_pipe.c) must give the
 * same output, exit status and error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/trace2csv.h"

typedef struct outcome {
    int rc;
    unsigned long long rows;
    opdb_err err;
    char *out;
    size_t n;
} outcome;

/* mode: the call's trace_pipeline (-1: one thread, 1: a tokenizing thread). */
static void run(const char *path, int mode, outcome *o) {
    FILE *mem = open_memstream(&o->out, &o->n);
    if (!mem) abort();
    opdb_err_clear(&o->err);
    o->rows = 0;
    opdb_trace2csv_opts to;
    opdb_trace2csv_opts_init(&to);
    to.trace_path = path, to.out = mem;
    to.modes.trace_pipeline = mode;
    o->rc = opdb_trace2csv_run(&to, &o->rows, &o->err);
    fclose(mem);
    if (o->rc != 0 && o->err.msg[0] == '\0') abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[] = "/tmp/opdb_fuzz_trace.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) abort();
    if (size && write(fd, data, size) != (ssize_t)size) abort();
    close(fd);
    outcome a, b;
    run(path, -1, &a);
    run(path, 1, &b);
    if (a.rc != b.rc || a.rows != b.rows || strcmp(a.err.msg, b.err.msg) != 0 || a.n != b.n ||
        memcmp(a.out, b.out, a.n) != 0)
        abort(); /* the two reading paths disagree */
    free(a.out);
    free(b.out);
    unlink(path);
    return 0;
}
