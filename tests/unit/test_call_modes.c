/* What a call counts and chooses is its own: the warnings that it produced
 * nothing meaningful reach its log's `nothing` sink only (two calls on two
 * threads never see each other's count), and its modes (opdb_modes in its
 * options) hold on its threads and in the calls it makes, never in another
 * call running at the same time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/call.h"
#include "opdb/core.h"
#include "opdb/fs.h"
#include "opdb/grid.h"

enum { ROUNDS = 150 };

typedef struct counts {
    atomic_int warnings, nothing, foreign; /* foreign: a line carrying another call's tag */
    const char *tag;
} counts;

static void on_warn(void *ctx, const char *line) {
    counts *c = ctx;
    if (strstr(line, "tag=") && !strstr(line, c->tag)) c->foreign++;
    c->warnings++;
}

static void on_nothing(void *ctx, const char *line) {
    counts *c = ctx;
    if (strstr(line, "tag=") && !strstr(line, c->tag)) c->foreign++;
    c->nothing++;
}

static void *nothing_worker(void *arg) {
    opdb_warn_nothing("worker tag=%s", (const char *)arg);
    return NULL;
}

typedef struct job {
    counts c;
    int rounds;
    char root[64];
} job;

/* `rounds` real entry-point calls (grid --from-misses with nothing
 * collected: one "no row to add" warning each), and as many scopes that
 * warn from this thread and from a worker. */
static void *caller(void *arg) {
    job *j = arg;
    opdb_log log = {on_warn, NULL, NULL, &j->c, on_nothing};
    FILE *out = fopen("/dev/null", "w");
    for (int i = 0; i < j->rounds; i++) {
        opdb_grid_misses *m = opdb_grid_misses_new();
        opdb_grid_miss_opts o;
        opdb_grid_miss_opts_init(&o);
        o.log = log;
        o.root = j->root, o.plan = true, o.out = out;
        opdb_err err;
        opdb_err_clear(&err);
        if (opdb_grid_from_misses(&o, m, &err)) fail_msg("%s", err.msg);
        opdb_grid_misses_free(m);

        opdb_call_scope saved = opdb_call_enter(&log);
        opdb_warn_nothing("caller tag=%s", j->c.tag);
        opdb_warn("a plain warning tag=%s", j->c.tag);
        pthread_t th;
        if (opdb_thread_create(&th, nothing_worker, (void *)j->c.tag)) fail_msg("thread");
        pthread_join(th, NULL);
        opdb_call_leave(&saved);
    }
    fclose(out);
    return NULL;
}

static int g_default_lines;
static void on_default(void *ctx, const char *line) {
    (void)ctx;
    (void)line;
    g_default_lines++;
}

static void test_two_calls_two_nothing_counts(void **state) {
    (void)state;
    g_default_lines = 0;
    opdb_set_warn_handler(on_default, NULL);
    job a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.c.tag = "A;", b.c.tag = "B;";
    a.rounds = ROUNDS, b.rounds = 2 * ROUNDS;
    snprintf(a.root, sizeof a.root, "/tmp/opdb_call_modes_XXXXXX");
    assert_non_null(mkdtemp(a.root));
    memcpy(b.root, a.root, sizeof a.root);
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, caller, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, caller, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    for (job *j = &a; j; j = j == &a ? &b : NULL) {
        /* per round: the entry point's, the caller's and the worker's */
        assert_int_equal(j->c.nothing, 3 * j->rounds);
        assert_int_equal(j->c.warnings, j->rounds); /* the plain ones only */
        assert_int_equal(j->c.foreign, 0);
    }
    assert_int_equal(g_default_lines, 0);
    opdb_set_warn_handler(NULL, NULL);
    rmdir(a.root);
}

/* A log without a nothing sink hands those lines to its warn sink; an
 * inner call's log without one keeps the enclosing call's. */
static void test_nothing_falls_back_to_warn(void **state) {
    (void)state;
    counts outer = {0}, inner = {0};
    outer.tag = inner.tag = "";
    opdb_log only_warn = {on_warn, NULL, NULL, &inner, NULL};
    opdb_log both = {on_warn, NULL, NULL, &outer, on_nothing};
    opdb_call_scope s1 = opdb_call_enter(&only_warn);
    opdb_warn_nothing("to warn");
    opdb_call_leave(&s1);
    assert_int_equal(inner.warnings, 1);
    assert_int_equal(inner.nothing, 0);
    memset(&inner, 0, sizeof inner);
    s1 = opdb_call_enter(&both);
    opdb_call_scope s2 = opdb_call_enter(&only_warn);
    opdb_warn_nothing("to the outer nothing sink");
    opdb_call_leave(&s2);
    opdb_call_leave(&s1);
    assert_int_equal(outer.nothing, 1);
    assert_int_equal(inner.warnings + inner.nothing + outer.warnings, 0);
}

/* Commits of one call: which of them fail as the call's fail_commit says. */
static atomic_int g_file_seq;
static unsigned commit_pattern(const char *dir, int n) {
    unsigned failed = 0;
    char path[128];
    snprintf(path, sizeof path, "%s/opdb_call_modes_%d_%d.txt", dir, (int)getpid(), g_file_seq++);
    for (int i = 0; i < n; i++) {
        opdb_err err;
        opdb_err_clear(&err);
        if (opdb_atomic_write(path, "x\n", 2, &err)) failed |= 1u << i;
    }
    unlink(path);
    return failed;
}

typedef struct modes_job {
    long fail_commit;
    const char *dir;
    unsigned pattern[40];
    int pipeline_seen[40];
} modes_job;

static void *modes_caller(void *arg) {
    modes_job *j = arg;
    for (int r = 0; r < 40; r++) {
        opdb_call_scope saved = opdb_call_enter(NULL);
        opdb_modes m = {.trace_pipeline = j->fail_commit == 2 ? 1 : -1, .fail_commit = j->fail_commit};
        opdb_call_set_modes(&m);
        j->pattern[r] = commit_pattern(j->dir, 6);
        j->pipeline_seen[r] = opdb_call_now()->modes.trace_pipeline;
        opdb_call_leave(&saved);
    }
    return NULL;
}

static void test_two_calls_two_fault_counts(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_call_faults_XXXXXX";
    assert_non_null(mkdtemp(dir));
    modes_job a = {.fail_commit = 2, .dir = dir}, b = {.fail_commit = 5, .dir = dir};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, modes_caller, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, modes_caller, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    for (int r = 0; r < 40; r++) {
        assert_int_equal(a.pattern[r], 1u << 1); /* the 2nd commit of each call, and only it */
        assert_int_equal(b.pattern[r], 1u << 4);
        assert_int_equal(a.pipeline_seen[r], 1);
        assert_int_equal(b.pipeline_seen[r], -1);
    }
    /* outside any call with modes: nothing fails, the defaults hold */
    assert_int_equal(commit_pattern(dir, 6), 0);
    assert_int_equal(opdb_call_now()->modes.trace_pipeline, 0);
    rmdir(dir);
}

static void *commit_once(void *arg) {
    *(unsigned *)arg = commit_pattern("/tmp", 1);
    return NULL;
}

/* An inner call without modes of its own, and the call's workers, count
 * toward the enclosing call's fail_commit; an inner call with its own
 * counts apart, and the outer count resumes after it. */
static void test_nested_and_worker_commits(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_call_nested_XXXXXX";
    assert_non_null(mkdtemp(dir));
    opdb_call_scope s1 = opdb_call_enter(NULL);
    opdb_modes outer = {.fail_commit = 4, .commit_pause_us = 7};
    opdb_call_set_modes(&outer);
    assert_int_equal(commit_pattern(dir, 1), 0); /* 1st */
    opdb_call_scope s2 = opdb_call_enter(NULL);
    opdb_call_set_modes(&(opdb_modes){0});
    assert_int_equal(opdb_call_now()->modes.commit_pause_us, 7);
    assert_int_equal(commit_pattern(dir, 1), 0); /* 2nd */
    opdb_call_scope s3 = opdb_call_enter(NULL);
    opdb_call_set_modes(&(opdb_modes){.fail_commit = 1});
    assert_int_equal(commit_pattern(dir, 2), 1u); /* its own 1st */
    opdb_call_leave(&s3);
    opdb_call_leave(&s2);
    unsigned w = 9;
    pthread_t th;
    assert_int_equal(opdb_thread_create(&th, commit_once, &w), 0); /* 3rd, on a worker */
    pthread_join(th, NULL);
    assert_int_equal(w, 0);
    assert_int_equal(commit_pattern(dir, 2), 1u); /* 4th fails, 5th does not */
    opdb_call_leave(&s1);
    assert_int_equal(opdb_call_now()->modes.commit_pause_us, 0);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_calls_two_nothing_counts),
        cmocka_unit_test(test_nothing_falls_back_to_warn),
        cmocka_unit_test(test_two_calls_two_fault_counts),
        cmocka_unit_test(test_nested_and_worker_commits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
