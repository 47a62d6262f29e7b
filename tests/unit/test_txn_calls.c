/* An all-or-nothing run belongs to the call that began it: two calls on two
 * threads, each with its own run on its own folder, stage, commit and roll
 * back independently; a commit from a thread with no run open is renamed at
 * once, never staged into another call's run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/call.h"
#include "core/txn_stage.h"
#include "opdb/core.h"
#include "opdb/fs.h"

static pthread_barrier_t g_bar;

static void put(const char *dir, const char *name, const char *text) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Whether dir/name holds text ("" for a missing file); safe off the test's thread. */
static bool holds(const char *dir, const char *name, const char *text) {
    char path[256], got[64] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(got, sizeof got, f)) got[0] = 0;
        fclose(f);
    }
    return strcmp(got, text) == 0;
}

static void expect(const char *dir, const char *name, const char *text) {
    if (!holds(dir, name, text)) fail_msg("%s/%s: expected \"%s\"", dir, name, text);
}

static int count_tmp(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

static bool atomic_put(const char *dir, const char *name, const char *text) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    opdb_err err;
    opdb_err_clear(&err);
    return opdb_atomic_write(path, text, strlen(text), &err) == 0;
}

typedef struct run_job {
    char dir[64];
    bool in_call;  /* inside opdb_call_enter, else a call of its own on its thread */
    bool commit;   /* how its run ends */
    int turn;      /* 0: ends first, 1: ends after the other */
    bool active_while_open, rc_ok, ok; /* ok: every write and check on its threads held */
    bool worker_ok;
} run_job;

static void *stage_c(void *arg) {
    run_job *j = arg;
    j->worker_ok = atomic_put(j->dir, "c.csv", "new\n"); /* a worker of the call: staged into the call's run */
    return NULL;
}

static void *run_caller(void *arg) {
    run_job *j = arg;
    opdb_call_scope saved = {0};
    if (j->in_call) saved = opdb_call_enter(NULL);
    opdb_txn_begin(j->dir);
    j->ok = atomic_put(j->dir, "a.csv", "new\n") && atomic_put(j->dir, "b.csv", "new\n");
    pthread_t th;
    if (opdb_thread_create(&th, stage_c, j) == 0) pthread_join(th, NULL);
    j->ok = j->ok && j->worker_ok;
    pthread_barrier_wait(&g_bar); /* both runs staged */
    j->active_while_open = opdb_txn_active();
    j->ok = j->ok && holds(j->dir, "a.csv", "old\n") && holds(j->dir, "c.csv", ""); /* staged, not yet renamed */
    pthread_barrier_wait(&g_bar);
    for (int t = 0; t < 2; t++) {
        if (t == j->turn) {
            opdb_err err;
            opdb_err_clear(&err);
            j->rc_ok = opdb_txn_end(j->commit, &err) == 0;
        }
        pthread_barrier_wait(&g_bar);
    }
    if (j->in_call) opdb_call_leave(&saved);
    return NULL;
}

static void two_runs(bool first_commits, bool first_in_call, bool second_in_call) {
    run_job j[2];
    memset(j, 0, sizeof j);
    for (int k = 0; k < 2; k++) {
        snprintf(j[k].dir, sizeof j[k].dir, "/tmp/opdb_txn_calls_XXXXXX");
        assert_non_null(mkdtemp(j[k].dir));
        put(j[k].dir, "a.csv", "old\n");
        put(j[k].dir, "b.csv", "old\n");
        j[k].turn = k;
        j[k].commit = k == 0 ? first_commits : !first_commits;
    }
    j[0].in_call = first_in_call, j[1].in_call = second_in_call;
    pthread_barrier_init(&g_bar, NULL, 2);
    pthread_t th[2];
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&th[k], NULL, run_caller, &j[k]), 0);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    pthread_barrier_destroy(&g_bar);
    for (int k = 0; k < 2; k++) {
        assert_true(j[k].ok);
        assert_true(j[k].active_while_open);
        const char *want = j[k].commit ? "new\n" : "old\n";
        expect(j[k].dir, "a.csv", want);
        expect(j[k].dir, "b.csv", want);
        expect(j[k].dir, "c.csv", j[k].commit ? "new\n" : "");
        assert_true(j[k].commit ? j[k].rc_ok : true);
        assert_int_equal(count_tmp(j[k].dir), 0);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", j[k].dir);
        assert_int_equal(system(cmd), 0);
    }
}

static void test_commit_then_roll_back(void **state) {
    (void)state;
    two_runs(true, true, true);
    two_runs(true, false, true);
}

static void test_roll_back_then_commit(void **state) {
    (void)state;
    two_runs(false, true, true);
    two_runs(false, true, false);
}

/* A thread with no run open: its commit replaces the file at once while
 * another call's run is open, and stays when that run rolls back. */
typedef struct plain_job {
    char dir[64];
    bool ok;
} plain_job;

static void *plain_writer(void *arg) {
    plain_job *p = arg;
    pthread_barrier_wait(&g_bar); /* the other run is open */
    opdb_call_scope saved = opdb_call_enter(NULL);
    p->ok = !opdb_txn_active() && atomic_put(p->dir, "plain.csv", "new\n") && holds(p->dir, "plain.csv", "new\n");
    opdb_call_leave(&saved);
    pthread_barrier_wait(&g_bar);
    return NULL;
}

static void test_other_thread_commits_directly(void **state) {
    (void)state;
    char run_dir[] = "/tmp/opdb_txn_calls_XXXXXX";
    plain_job p;
    snprintf(p.dir, sizeof p.dir, "/tmp/opdb_txn_calls_XXXXXX");
    assert_non_null(mkdtemp(run_dir));
    assert_non_null(mkdtemp(p.dir));
    put(p.dir, "plain.csv", "old\n");
    pthread_barrier_init(&g_bar, NULL, 2);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, plain_writer, &p), 0);
    opdb_call_scope saved = opdb_call_enter(NULL);
    opdb_txn_begin(run_dir);
    assert_true(atomic_put(run_dir, "staged.csv", "new\n"));
    pthread_barrier_wait(&g_bar);
    pthread_barrier_wait(&g_bar); /* the other thread has written */
    opdb_err err;
    opdb_err_clear(&err);
    opdb_txn_end(false, &err);
    opdb_call_leave(&saved);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&g_bar);
    assert_true(p.ok);
    expect(p.dir, "plain.csv", "new\n");
    expect(run_dir, "staged.csv", "");
    assert_int_equal(count_tmp(run_dir), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", run_dir, p.dir);
    assert_int_equal(system(cmd), 0);
}

/* The program's signal handler sees every open run: the state of the
 * process and the staged files of both runs. */
typedef struct open_job {
    char dir[64];
    bool ok;
} open_job;

static void *open_run(void *arg) {
    open_job *j = arg;
    opdb_call_scope saved = opdb_call_enter(NULL);
    opdb_txn_begin(j->dir);
    j->ok = atomic_put(j->dir, "a.csv", "new\n");
    pthread_barrier_wait(&g_bar); /* staged */
    pthread_barrier_wait(&g_bar); /* the handler's work done */
    opdb_err err;
    opdb_err_clear(&err);
    opdb_txn_end(false, &err);
    opdb_call_leave(&saved);
    return NULL;
}

static void test_handler_sees_every_run(void **state) {
    (void)state;
    open_job j[2];
    pthread_barrier_init(&g_bar, NULL, 3);
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        snprintf(j[k].dir, sizeof j[k].dir, "/tmp/opdb_txn_calls_XXXXXX");
        assert_non_null(mkdtemp(j[k].dir));
        assert_int_equal(pthread_create(&th[k], NULL, open_run, &j[k]), 0);
    }
    pthread_barrier_wait(&g_bar);
    assert_false(opdb_txn_active()); /* this thread's call has none */
    assert_int_equal(opdb_txn_state_now(), OPDB_TXN_STAGING);
    for (int k = 0; k < 2; k++) assert_int_equal(count_tmp(j[k].dir), 1);
    opdb_txn_remove_staged();
    for (int k = 0; k < 2; k++) assert_int_equal(count_tmp(j[k].dir), 0);
    pthread_barrier_wait(&g_bar);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    pthread_barrier_destroy(&g_bar);
    assert_int_equal(opdb_txn_state_now(), OPDB_TXN_NONE);
    for (int k = 0; k < 2; k++) {
        assert_true(j[k].ok);
        expect(j[k].dir, "a.csv", "");
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", j[k].dir);
        assert_int_equal(system(cmd), 0);
    }
}

/* Within one call, begin/end nest (an inner call's too): only the
 * outermost end renames; outside any call the thread is a call of its own. */
static void test_nested_in_one_call(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_txn_calls_XXXXXX";
    assert_non_null(mkdtemp(dir));
    opdb_err err;
    opdb_err_clear(&err);
    for (int in_call = 0; in_call < 2; in_call++) {
        put(dir, "a.csv", "old\n");
        put(dir, "b.csv", "old\n");
        opdb_call_scope outer = {0};
        if (in_call) outer = opdb_call_enter(NULL);
        opdb_txn_begin(dir);
        assert_true(atomic_put(dir, "a.csv", "new\n"));
        opdb_call_scope inner = opdb_call_enter(NULL);
        opdb_txn_begin(dir);
        assert_true(atomic_put(dir, "b.csv", "new\n"));
        assert_int_equal(opdb_txn_end(true, &err), 0);
        opdb_call_leave(&inner);
        expect(dir, "b.csv", "old\n"); /* the inner end joined the outer run */
        assert_true(opdb_txn_active());
        assert_int_equal(opdb_txn_end(true, &err), 0);
        assert_int_equal(opdb_txn_state_now(), OPDB_TXN_DONE);
        expect(dir, "a.csv", "new\n");
        expect(dir, "b.csv", "new\n");
        assert_false(opdb_txn_active());
        if (in_call) opdb_call_leave(&outer);
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A call that fails before its end (out of memory) aborts its run: the
 * staged files go, nothing is renamed, and the next run starts clean; so
 * does a run an inner call left open when it returned. */
static void test_abort_call(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_txn_calls_XXXXXX";
    assert_non_null(mkdtemp(dir));
    put(dir, "a.csv", "old\n");
    opdb_call_scope s = opdb_call_enter(NULL);
    opdb_txn_begin(dir);
    opdb_txn_begin(dir);
    assert_true(atomic_put(dir, "a.csv", "new\n"));
    assert_int_equal(count_tmp(dir), 1);
    opdb_txn_abort_call();
    assert_false(opdb_txn_active());
    assert_int_equal(count_tmp(dir), 0);
    expect(dir, "a.csv", "old\n");
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_txn_end(true, &err), 0); /* nothing open: nothing to do */
    opdb_call_leave(&s);

    s = opdb_call_enter(NULL); /* returns with its run open */
    opdb_txn_begin(dir);
    assert_true(atomic_put(dir, "a.csv", "stale\n"));
    opdb_call_leave(&s);
    s = opdb_call_enter(NULL);
    opdb_txn_begin(dir); /* drops the stale run */
    assert_int_equal(count_tmp(dir), 0);
    assert_true(atomic_put(dir, "a.csv", "new\n"));
    assert_int_equal(opdb_txn_end(true, &err), 0);
    opdb_call_leave(&s);
    expect(dir, "a.csv", "new\n");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A thread that ends while its call's run is still open (the call returned
 * without ending it): its staged files go and the run leaves the process's
 * list of open runs. */
static void *leave_open(void *arg) {
    opdb_call_scope s = opdb_call_enter(NULL);
    opdb_txn_begin(arg);
    bool ok = atomic_put(arg, "a.csv", "new\n");
    opdb_call_leave(&s);
    return ok ? arg : NULL;
}

static void test_thread_ends_with_run_open(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_txn_calls_XXXXXX";
    assert_non_null(mkdtemp(dir));
    pthread_t th;
    void *ok = NULL;
    assert_int_equal(pthread_create(&th, NULL, leave_open, dir), 0);
    pthread_join(th, &ok);
    assert_non_null(ok);
    assert_int_equal(count_tmp(dir), 0);
    expect(dir, "a.csv", "");
    assert_int_equal(opdb_txn_state_now(), OPDB_TXN_NONE);
    opdb_txn_remove_staged(); /* walks no run of the ended thread */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_then_roll_back),
        cmocka_unit_test(test_roll_back_then_commit),
        cmocka_unit_test(test_other_thread_commits_directly),
        cmocka_unit_test(test_handler_sees_every_run),
        cmocka_unit_test(test_nested_in_one_call),
        cmocka_unit_test(test_abort_call),
        cmocka_unit_test(test_thread_ends_with_run_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
