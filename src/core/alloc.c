/* Allocation helpers and the one out-of-memory policy of opdb: a failed
 * allocation prints "opdb: out of memory (allocating N bytes)" and exits 1
 * (a runtime failure), wherever it happens (malloc, mmap of big arrays,
 * capacity overflow of a growing array).  Also the page size, asked once. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "opdb/core.h"

void opdb_die_oom(size_t n) {
    fprintf(stderr, "opdb: out of memory (allocating %zu bytes)\n", n);
    exit(1);
}

void *opdb_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) opdb_die_oom(n);
    return p;
}

void *opdb_xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) opdb_die_oom(n * size);
    return p;
}

void *opdb_xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) opdb_die_oom(n);
    return q;
}

char *opdb_xstrdup(const char *s) {
    size_t n = strlen(s);
    char *p = opdb_xmalloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

size_t opdb_grow_cap(size_t cap, size_t nr, size_t elem) {
    size_t c = cap >= 4 ? cap : 4;
    do { /* doubling: n pushes cost O(n) copying in all */
        if (c > SIZE_MAX / 2) opdb_die_oom(SIZE_MAX);
        c *= 2;
    } while (c < nr);
    if (elem && c > SIZE_MAX / elem) opdb_die_oom(SIZE_MAX);
    return c;
}

size_t opdb_page_size(void) {
    long p = sysconf(_SC_PAGESIZE); /* glibc answers from memory, no system call */
    return p > 0 ? (size_t)p : 4096;
}
