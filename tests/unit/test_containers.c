/* The shared containers of include/opdb/core.h: opdb_strvec, OPDB_ALLOC_GROW
 * and opdb_grow_cap, the page size, and the one out-of-memory policy
 * (src/core/alloc.c: a message on stderr and exit 1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "cli/cli_process.h"
#include "opdb/core.h"

static void test_strvec_push_copies_and_owns(void **state) {
    (void)state;
    opdb_strvec s = {0};
    char buf[8] = "abc";
    opdb_strvec_push(&s, buf);
    buf[0] = 'x'; /* a copy was pushed */
    opdb_strvec_push_owned(&s, opdb_xstrdup("def"));
    assert_int_equal(s.n, 2);
    assert_string_equal(s.v[0], "abc");
    assert_string_equal(s.v[1], "def");
    assert_true(s.cap >= s.n);
    opdb_strvec_free(&s);
    assert_null(s.v);
    assert_int_equal(s.n, 0);
    assert_int_equal(s.cap, 0);
    opdb_strvec_free(&s); /* freeing an empty one is fine */
}

static void test_strvec_many_keep_order(void **state) {
    (void)state;
    opdb_strvec s = {0};
    for (int i = 0; i < 1000; i++) {
        char b[16];
        snprintf(b, sizeof b, "s%d", i);
        opdb_strvec_push(&s, b);
    }
    assert_int_equal(s.n, 1000);
    for (int i = 0; i < 1000; i++) {
        char b[16];
        snprintf(b, sizeof b, "s%d", i);
        assert_string_equal(s.v[i], b);
        assert_int_equal(opdb_strvec_find(&s, b), i);
    }
    assert_int_equal(opdb_strvec_find(&s, "s1000"), -1);
    opdb_strvec_free(&s);
}

static void test_strvec_insert_and_find(void **state) {
    (void)state;
    opdb_strvec s = {0};
    assert_int_equal(opdb_strvec_find(&s, "a"), -1);
    opdb_strvec_insert_owned(&s, 0, opdb_xstrdup("c"));  /* into an empty one */
    opdb_strvec_insert_owned(&s, 0, opdb_xstrdup("a"));  /* at the front */
    opdb_strvec_insert_owned(&s, 1, opdb_xstrdup("b"));  /* in the middle */
    opdb_strvec_insert_owned(&s, 3, opdb_xstrdup("d"));  /* at the end */
    opdb_strvec_insert_owned(&s, 99, opdb_xstrdup("e")); /* past the end: appended */
    opdb_strvec_push(&s, "b");
    const char *want[] = {"a", "b", "c", "d", "e", "b"};
    assert_int_equal(s.n, 6);
    for (size_t i = 0; i < s.n; i++) assert_string_equal(s.v[i], want[i]);
    assert_int_equal(opdb_strvec_find(&s, "b"), 1); /* the first of two */
    assert_int_equal(opdb_strvec_find(&s, "e"), 4);
    opdb_strvec_free(&s);
}

static void test_alloc_grow_keeps_contents(void **state) {
    (void)state;
    long long *v = NULL;
    size_t n = 0, cap = 0;
    for (long long i = 0; i < 10000; i++) {
        OPDB_ALLOC_GROW(v, n + 1, cap);
        assert_true(cap >= n + 1);
        v[n++] = i * 3;
    }
    for (size_t i = 0; i < n; i++) assert_int_equal(v[i], (long long)i * 3);
    assert_true(cap < 2 * n + 16); /* doubling, not more */
    free(v);
}

static void test_alloc_grow_other_cap_types_and_jumps(void **state) {
    (void)state;
    uint32_t *a = NULL;
    int icap = 0;
    OPDB_ALLOC_GROW(a, 1000, icap); /* a jump past the doubling: room for 1000 at once */
    assert_true(icap >= 1000);
    for (int i = 0; i < 1000; i++) a[i] = (uint32_t)i;
    uint32_t *before = a;
    OPDB_ALLOC_GROW(a, (size_t)icap, icap); /* room already: untouched */
    assert_ptr_equal(a, before);
    uint32_t ucap = (uint32_t)icap;
    OPDB_ALLOC_GROW(a, ucap + 1u, ucap);
    assert_true(ucap > (uint32_t)icap);
    for (int i = 0; i < 1000; i++) assert_int_equal(a[i], (uint32_t)i);
    free(a);
}

static void test_grow_cap_doubles_and_covers(void **state) {
    (void)state;
    assert_true(opdb_grow_cap(0, 1, 8) >= 1);
    assert_int_equal(opdb_grow_cap(16, 17, 8), 32);
    assert_int_equal(opdb_grow_cap(16, 100, 8), 128);
    assert_true(opdb_grow_cap(3, 4, 1) >= 4);
}

static void test_page_size(void **state) {
    (void)state;
    size_t p = opdb_page_size();
    assert_true(p >= 4096);
    assert_int_equal(p & (p - 1), 0);
    assert_int_equal(p, (size_t)sysconf(_SC_PAGESIZE));
}

/* Runs fn in a child; returns its exit status and what it wrote to stderr. */
static int in_child(void (*fn)(void), char *err, size_t errsz) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < errsz && (r = read(fds[0], err + got, errsz - 1 - got)) > 0) got += (size_t)r;
    err[got] = '\0';
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void overflow_cap(void) {
    cli_install_oom_handler();
    (void)opdb_grow_cap(SIZE_MAX / 2 + 1, SIZE_MAX, 1);
}
static void overflow_bytes(void) {
    cli_install_oom_handler();
    (void)opdb_grow_cap(8, 9, SIZE_MAX / 4);
}
static void overflow_no_handler(void) { (void)opdb_grow_cap(8, 9, SIZE_MAX / 4); }

/* Under the CLI's handler: one line and exit status 1.  The library alone
 * neither prints nor exits: it aborts. */
static void test_oom_policy_is_one_line_and_exit_1(void **state) {
    (void)state;
    char err[512];
    assert_int_equal(in_child(overflow_no_handler, err, sizeof err), 128 + SIGABRT);
    assert_null(strstr(err, "out of memory"));
    assert_int_equal(in_child(overflow_cap, err, sizeof err), 1);
    assert_non_null(strstr(err, "opdb: out of memory"));
    assert_int_equal(in_child(overflow_bytes, err, sizeof err), 1);
    assert_non_null(strstr(err, "opdb: out of memory"));
    assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1); /* one line */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strvec_push_copies_and_owns),
        cmocka_unit_test(test_strvec_many_keep_order),
        cmocka_unit_test(test_strvec_insert_and_find),
        cmocka_unit_test(test_alloc_grow_keeps_contents),
        cmocka_unit_test(test_alloc_grow_other_cap_types_and_jumps),
        cmocka_unit_test(test_grow_cap_doubles_and_covers),
        cmocka_unit_test(test_page_size),
        cmocka_unit_test(test_oom_policy_is_one_line_and_exit_1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
