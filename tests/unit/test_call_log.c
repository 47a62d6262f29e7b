/* A call's logger (opdb_log in its options) gets that call's warnings and
 * notes, on the calling thread and on the worker threads the call starts,
 * and nothing of another call running at the same time; the process-wide
 * handler stays the default for a call that gives none. */
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
#include "opdb/grid.h"
#include "opdb/progress.h"

enum { ROUNDS = 200 };

typedef struct sink {
    atomic_int warnings, notes, foreign; /* foreign: a line carrying another call's tag */
    const char *tag;
} sink;

static void on_warn(void *ctx, const char *line) {
    sink *s = ctx;
    if (strstr(line, "tag=") && !strstr(line, s->tag)) s->foreign++;
    s->warnings++;
}

static void on_note(void *ctx, const char *line) {
    sink *s = ctx;
    if (strstr(line, "tag=") && !strstr(line, s->tag)) s->foreign++;
    s->notes++;
}

/* A worker of the call: its lines must reach the call's logger. */
static void *worker(void *arg) {
    const char *tag = arg;
    opdb_warn("worker tag=%s", tag);
    opdb_note("worker tag=%s", tag);
    return NULL;
}

typedef struct job {
    sink s;
    char root[64];
} job;

/* ROUNDS real entry-point calls (grid --from-misses with nothing collected:
 * one "no row to add" warning each), and as many scopes that warn and note
 * from this thread and from a worker. */
static void *caller(void *arg) {
    job *j = arg;
    opdb_log log = {on_warn, on_note, NULL, &j->s, NULL};
    FILE *out = fopen("/dev/null", "w");
    for (int i = 0; i < ROUNDS; i++) {
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
        opdb_warn("caller tag=%s", j->s.tag);
        pthread_t th;
        if (opdb_thread_create(&th, worker, (void *)j->s.tag)) fail_msg("thread");
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

static void test_two_calls_two_loggers(void **state) {
    (void)state;
    g_default_lines = 0;
    opdb_set_warn_handler(on_default, NULL);
    opdb_set_note_handler(on_default, NULL);
    job a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.s.tag = "A;", b.s.tag = "B;";
    snprintf(a.root, sizeof a.root, "/tmp/opdb_call_log_XXXXXX");
    assert_non_null(mkdtemp(a.root));
    memcpy(b.root, a.root, sizeof a.root);
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, caller, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, caller, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    for (job *j = &a; j; j = j == &a ? &b : NULL) {
        /* per round: the entry point's warning, the caller's and the worker's */
        assert_int_equal(j->s.warnings, 3 * ROUNDS);
        assert_int_equal(j->s.notes, ROUNDS);
        assert_int_equal(j->s.foreign, 0);
    }
    assert_int_equal(g_default_lines, 0);
    /* outside any call the process-wide handler is the default */
    opdb_warn("outside");
    opdb_note("outside");
    assert_int_equal(g_default_lines, 2);
    opdb_set_warn_handler(NULL, NULL);
    opdb_set_note_handler(NULL, NULL);
    rmdir(a.root);
}

/* A call inside a call: a NULL function keeps the enclosing call's, a set
 * one replaces it until the inner call returns. */
static void test_nested_scopes(void **state) {
    (void)state;
    sink outer = {0}, inner = {0};
    outer.tag = inner.tag = "";
    opdb_log lo = {on_warn, on_note, NULL, &outer, NULL};
    opdb_log li = {on_warn, NULL, NULL, &inner, NULL};
    opdb_log none = {NULL, NULL, NULL, NULL, NULL};
    opdb_call_scope s1 = opdb_call_enter(&lo);
    opdb_call_scope s2 = opdb_call_enter(&none);
    opdb_warn("kept");
    opdb_call_scope s3 = opdb_call_enter(&li);
    opdb_warn("inner");
    opdb_note("note stays outer");
    opdb_call_leave(&s3);
    opdb_call_leave(&s2);
    opdb_warn("outer again");
    opdb_call_leave(&s1);
    assert_int_equal(outer.warnings, 2);
    assert_int_equal(outer.notes, 1);
    assert_int_equal(inner.warnings, 1);
    assert_int_equal(inner.notes, 0);
}

static int g_drawn, g_erased;
static void on_progress(void *ctx, const char *line) {
    (void)ctx;
    if (*line) g_drawn++;
    else g_erased++;
}

/* A progress callback in the log takes the progress line (drawn on stderr
 * only when it is a terminal otherwise). */
static void test_progress_to_callback(void **state) {
    (void)state;
    opdb_log l = {NULL, NULL, on_progress, NULL, NULL};
    opdb_call_scope s = opdb_call_enter(&l);
    opdb_progress p;
    opdb_progress_init(&p, false);
    assert_true(p.enabled);
    opdb_progress_stage(&p, "rows", 10);
    opdb_progress_update(&p, 5, NULL);
    opdb_progress_clear(&p);
    opdb_progress_init(&p, true); /* asked off: nothing even with a callback */
    opdb_progress_update(&p, 5, NULL);
    opdb_call_leave(&s);
    assert_int_equal(g_drawn, 1);
    assert_int_equal(g_erased, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_calls_two_loggers),
        cmocka_unit_test(test_nested_scopes),
        cmocka_unit_test(test_progress_to_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
