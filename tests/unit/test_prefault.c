/* The prefault thread (src/core/prefault.c): regions queued while it runs
 * become resident, their contents are never changed (the owner may be
 * writing them), and it stops cleanly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "opdb/core.h"

/* Pages of [p, p + n) that are resident. */
static size_t resident_pages(void *p, size_t n) {
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), np = n / ps, count = 0;
    unsigned char vec[4096];
    if (np > sizeof vec || mincore(p, np * ps, vec) != 0) return 0;
    for (size_t i = 0; i < np; i++) count += vec[i] & 1;
    return count;
}

static void test_queued_region_becomes_resident_unchanged(void **state) {
    (void)state;
    const size_t n = (size_t)8 << 20;
    const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    opdb_prefault_begin();
    unsigned char *p = opdb_big_alloc(n); /* queued by the allocation itself */
    /* the owner writes its first 2 MiB (a huge page, where it gets one)
     * while the thread populates: both must stand; the rest is the
     * thread's alone */
    const size_t owned = (size_t)2 << 20;
    for (size_t i = 0; i < owned; i += 3 * ps) p[i + 7] = (unsigned char)(i / ps % 251 + 1);
    size_t want = (n - owned) / ps, got = 0;
    for (int tries = 0; tries < 400 && (got = resident_pages(p + owned, n - owned)) < want; tries++) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    opdb_prefault_end();
#ifdef MADV_POPULATE_WRITE
    /* kernels before 5.14 refuse MADV_POPULATE_WRITE: nothing is populated there */
    void *q = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    bool supported = q != MAP_FAILED && madvise(q, ps, MADV_POPULATE_WRITE) == 0;
    if (q != MAP_FAILED) munmap(q, ps);
    if (supported) assert_int_equal(got, want);
#else
    (void)got;
    (void)want;
#endif
    for (size_t i = 0; i < n; i++) {
        unsigned char expect = i < owned && i % (3 * ps) == 7 ? (unsigned char)((i - 7) / ps % 251 + 1) : 0;
        if (p[i] != expect) fail_msg("byte %zu is %u, expected %u", i, p[i], expect);
    }
    opdb_big_free(p, n);
}

/* Without a running thread, queuing is a no-op (the bytes stay as they are); begin/end pair up
 * again, and a nested begin neither starts a second thread nor breaks the next end. */
static void test_idle_queue_and_restart(void **state) {
    (void)state;
    char buf[64];
    memset(buf, 0x5a, sizeof buf);
    opdb_prefault(buf, sizeof buf); /* not running: ignored */
    opdb_prefault_end();            /* not running: nothing to stop */
    for (size_t i = 0; i < sizeof buf; i++) assert_int_equal((unsigned char)buf[i], 0x5a);
    const size_t n = (size_t)4 << 20;
    for (int round = 0; round < 3; round++) {
        opdb_prefault_begin();
        opdb_prefault_begin(); /* already running */
        unsigned char *p = opdb_big_alloc(n);
        assert_non_null(p);
        opdb_prefault(p, n);
        opdb_prefault_end();
        /* after end the region is whole and zeroed, and writable */
        for (size_t i = 0; i < n; i += 4096) assert_int_equal(p[i], 0);
        p[n - 1] = (unsigned char)(round + 1);
        assert_int_equal(p[n - 1], round + 1);
        opdb_big_free(p, n);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queued_region_becomes_resident_unchanged),
        cmocka_unit_test(test_idle_queue_and_restart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
