/* The allocation helpers the query maps use (src/core/alloc.c): zeroed
 * memory that is written at once (resident, so that a probe before the first
 * write maps no shared zero page), pages faulted in for writing without their
 * contents changing even while another thread writes them, and the brief
 * mutex still excluding. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/alloc.h"
#include "opdb/core.h"

/* Pages of [p, p + n) (whole pages) that are resident. */
static size_t resident_pages(void *p, size_t n) {
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), np = n / ps, count = 0;
    static unsigned char vec[8192];
    if (np > sizeof vec || mincore(p, np * ps, vec) != 0) return 0;
    for (size_t i = 0; i < np; i++) count += vec[i] & 1;
    return count;
}

static void test_zeroed_is_zero_and_resident(void **state) {
    (void)state;
    static const size_t sizes[] = {0, 1, 7, 4095, 4097, 1 << 16, (size_t)3 << 20, (size_t)8 << 20};
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        unsigned char *p = opdb_xzeroed(n, 1);
        assert_non_null(p);
        if (n >= ((size_t)1 << 20)) {
            /* before anything reads them (a read maps the zero page, which counts as resident): the
             * whole pages inside are all written, so resident (calloc's fresh mapping leaves them out) */
            uintptr_t a = ((uintptr_t)p + ps - 1) / ps * ps, e = ((uintptr_t)p + n) / ps * ps;
            size_t whole = (e - a) / ps;
            assert_int_equal(resident_pages((void *)a, e - a), whole);
        }
        for (size_t i = 0; i < n; i++)
            if (p[i]) fail_msg("size %zu: byte %zu is %u", n, i, p[i]);
        free(p);
    }
    /* n * size is checked like calloc's: an element size times a count */
    uint64_t *q = opdb_xzeroed(1000, sizeof *q);
    for (size_t i = 0; i < 1000; i++) assert_int_equal(q[i], 0);
    free(q);
}

enum { TOUCH_PAGES = 1024, WRITES = 200 };

typedef struct writer {
    unsigned char *p;
    size_t ps;
    atomic_bool go;
} writer;

/* adds 1 to the first byte of every page, WRITES times, atomically */
static void *write_pages(void *arg) {
    writer *w = arg;
    while (!atomic_load(&w->go)) {
    }
    for (int k = 0; k < WRITES; k++)
        for (size_t i = 0; i < TOUCH_PAGES; i++) __atomic_fetch_add(w->p + i * w->ps, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void test_touch_changes_nothing(void **state) {
    (void)state;
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), n = TOUCH_PAGES * ps;
    unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    /* a pattern on some pages, the others never written (read once: mapped to the zero page) */
    for (size_t i = 0; i < TOUCH_PAGES; i += 3) p[i * ps + 17] = (unsigned char)(i * 7 + 1);
    volatile unsigned char sink = 0;
    for (size_t i = 1; i < TOUCH_PAGES; i += 3) sink ^= p[i * ps];
    (void)sink;
    opdb_touch_pages(p + 1, n - 2); /* ends inside pages: every page they reach is touched */
    assert_int_equal(resident_pages(p, n), TOUCH_PAGES);
    for (size_t i = 0; i < TOUCH_PAGES; i++)
        for (size_t j = 0; j < ps; j++) {
            unsigned char want = (i % 3 == 0 && j == 17) ? (unsigned char)(i * 7 + 1) : 0;
            if (p[i * ps + j] != want) fail_msg("page %zu byte %zu: %u, want %u", i, j, p[i * ps + j], want);
        }
    /* while another thread adds to the pages' first bytes, a touch loses none of its adds */
    memset(p, 0, n);
    writer w = {p, ps, false};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, write_pages, &w), 0);
    atomic_store(&w.go, true);
    for (int k = 0; k < WRITES; k++) opdb_touch_pages(p, n);
    pthread_join(th, NULL);
    for (size_t i = 0; i < TOUCH_PAGES; i++) assert_int_equal(p[i * ps], WRITES);
    opdb_touch_pages(NULL, 10); /* nothing to do */
    opdb_touch_pages(p, 0);
    munmap(p, n);
}

enum { ADDS = 200000 };

typedef struct counter {
    pthread_mutex_t mu;
    long n; /* guarded by mu (not atomic: the mutex must exclude) */
} counter;

static void *add_many(void *arg) {
    counter *c = arg;
    for (int i = 0; i < ADDS; i++) {
        pthread_mutex_lock(&c->mu);
        c->n++;
        pthread_mutex_unlock(&c->mu);
    }
    return NULL;
}

static void test_brief_mutex_excludes(void **state) {
    (void)state;
    counter c;
    opdb_mutex_init_brief(&c.mu);
    c.n = 0;
    pthread_t th[3];
    for (int i = 0; i < 3; i++) assert_int_equal(pthread_create(&th[i], NULL, add_many, &c), 0);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    assert_int_equal(c.n, 3L * ADDS);
    pthread_mutex_destroy(&c.mu);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zeroed_is_zero_and_resident),
        cmocka_unit_test(test_touch_changes_nothing),
        cmocka_unit_test(test_brief_mutex_excludes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
