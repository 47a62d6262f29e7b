/* Allocation helpers and the one out-of-memory path of the library: a
 * failed allocation (malloc, mmap of big arrays, capacity overflow of a
 * growing array) inside a command entry point or handle call ends that call
 * with OPDB_ERR_NOMEM (core/call.h).  Outside any call there is no error
 * to return: the program's handler is called (opdb_set_oom_handler; opdb's
 * CLI prints one line and exits 1), and the library aborts if there is
 * none or it returns.  Also the page size, asked once. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/alloc.h"
#include "core/call.h"
#include "opdb/core.h"

static _Atomic(opdb_oom_fn) g_oom;

void opdb_set_oom_handler(opdb_oom_fn fn) { atomic_store(&g_oom, fn); }

void opdb_die_oom(size_t n) {
    opdb_call_oom(n); /* returns only outside any call */
    opdb_oom_fn fn = atomic_load(&g_oom);
    if (fn) fn(n);
    abort();
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

void *opdb_xzeroed(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) opdb_die_oom(SIZE_MAX);
    size_t b = n * size;
    void *p = opdb_xmalloc(b);
    memset(p, 0, b);
    return p;
}

void opdb_touch_pages(void *p, size_t n) {
    if (!p || !n) return;
    uintptr_t ps = opdb_page_size(), a = (uintptr_t)p, end = a + n;
    for (uintptr_t q = a; q < end; q = (q / ps + 1) * ps) {
#if defined(__x86_64__) && defined(__GNUC__)
        /* a write the compiler cannot turn into a load (an idempotent RMW may become one) */
        __asm__ volatile("lock addb $0, (%0)" : : "r"(q) : "memory", "cc");
#else
        __atomic_fetch_add((unsigned char *)q, 0, __ATOMIC_RELAXED);
#endif
    }
}

void opdb_mutex_init_brief(pthread_mutex_t *mu) {
    pthread_mutexattr_t at;
    pthread_mutexattr_init(&at);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_settype(&at, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(mu, &at);
    pthread_mutexattr_destroy(&at);
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
