/* See call.h. The sinks live in thread-local storage, so two calls running
 * at once on different threads each report to their own logger. */
#include "core/call.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "opdb/core.h"

static _Thread_local opdb_call_scope t_scope;

static void take(opdb_log_sink *s, opdb_warn_fn fn, void *ctx) {
    if (!fn) return;
    s->fn = fn;
    s->ctx = ctx;
}

opdb_call_scope opdb_call_enter(const opdb_log *log) {
    opdb_call_scope saved = t_scope;
    t_scope.depth++;
    if (log) {
        take(&t_scope.warn, log->warn, log->ctx);
        take(&t_scope.note, log->note, log->ctx);
        take(&t_scope.progress, log->progress, log->ctx);
        take(&t_scope.nothing, log->nothing, log->ctx);
    }
    return saved;
}

void opdb_call_leave(const opdb_call_scope *saved) {
    if (t_scope.commits_left != saved->commits_left) free(t_scope.commits_left); /* this call's own countdown */
    t_scope = *saved;
}

opdb_call_scope opdb_call_current(void) { return t_scope; }

void opdb_call_set_reference_signatures(bool on) { t_scope.reference_signatures = on; }

bool opdb_call_reference_signatures(void) { return t_scope.reference_signatures; }

/* A worker thread's own jump target: out of memory on a worker never jumps
 * to another thread's stack. */
typedef struct worker {
    sigjmp_buf jb;
    void (*wake)(void *);
    void *wake_arg;
} worker;

static _Thread_local worker *t_worker;

/* Mutexes taken by opdb_call_lock on this thread, unlocked on out of memory. */
#define HELD_LOCKS 8
static _Thread_local pthread_mutex_t *t_locks[HELD_LOCKS];
static _Thread_local int t_nlocks;

typedef struct start {
    void *(*fn)(void *);
    void *arg;
    void (*wake)(void *);
    void *wake_arg;
    opdb_call_scope scope;
} start;

static void *thread_main(void *p) {
    start s = *(start *)p;
    free(p);
    t_scope = s.scope;
    if (!t_scope.guard) return s.fn(s.arg);
    worker w = {.wake = s.wake, .wake_arg = s.wake_arg};
    if (sigsetjmp(w.jb, 0)) { /* ran out: the call is marked failed, the waiter woken */
        t_worker = NULL;
        return NULL;
    }
    t_worker = &w;
    void *r = s.fn(s.arg);
    t_worker = NULL;
    return r;
}

int opdb_thread_create_wake(pthread_t *th, void *(*fn)(void *), void *arg, void (*wake)(void *), void *wake_arg) {
    start *s = malloc(sizeof *s); /* not opdb_xmalloc: out of memory calls into this file */
    if (!s) {
        opdb_call_oom(sizeof *s); /* inside a call: the call fails */
        return ENOMEM;
    }
    s->fn = fn;
    s->arg = arg;
    s->wake = wake;
    s->wake_arg = wake_arg;
    s->scope = t_scope;
    int rc = pthread_create(th, NULL, thread_main, s);
    if (rc) free(s);
    return rc;
}

void opdb_call_set_modes(const opdb_modes *m) {
    if (!m) return;
    if (m->trace_pipeline) t_scope.modes.trace_pipeline = m->trace_pipeline;
    if (m->commit_pause_us) t_scope.modes.commit_pause_us = m->commit_pause_us;
    if (m->fail_commit > 0) {
        t_scope.modes.fail_commit = m->fail_commit;
        atomic_long *left = malloc(sizeof *left);
        if (!left) { /* set right after the entry point armed its guard: the call fails */
            opdb_call_oom(sizeof *left);
            abort();
        }
        atomic_init(left, m->fail_commit);
        t_scope.commits_left = left; /* freed by the opdb_call_leave of the enclosing enter */
    }
}

const opdb_call_scope *opdb_call_now(void) { return &t_scope; }

bool opdb_call_commit_fails(void) {
    atomic_long *left = t_scope.commits_left;
    if (!left) return false;
    long v = atomic_load(left);
    while (v > 0)
        if (atomic_compare_exchange_weak(left, &v, v - 1)) return v == 1;
    return false;
}

void opdb_call_set_no_map(bool on) { t_scope.no_map = on; }

int opdb_thread_create(pthread_t *th, void *(*fn)(void *), void *arg) {
    return opdb_thread_create_wake(th, fn, arg, NULL, NULL);
}

void opdb_call_arm(opdb_call_guard *g) {
    if (t_scope.guard) return; /* nested: the outermost call's target */
    atomic_init(&g->failed, false);
    atomic_init(&g->bytes, 0);
    pthread_mutex_init(&g->mu, NULL);
    g->held = NULL;
    t_scope.guard = g;
}

int opdb_call_oom_return(opdb_call_guard *g, const opdb_call_scope *saved, opdb_err *err) {
    pthread_mutex_destroy(&g->mu);
    opdb_call_leave(saved);
    if (err) {
        err->code = OPDB_ERR_NOMEM;
        snprintf(err->msg, sizeof err->msg, "out of memory (%zu bytes)", atomic_load(&g->bytes));
    }
    return -1;
}

bool opdb_call_hold(opdb_call_res *r, void (*release)(opdb_call_res *), intptr_t key) {
    opdb_call_guard *g = t_scope.guard;
    r->release = release;
    r->key = key;
    r->prev = r->next = NULL;
    if (!g) return false;
    pthread_mutex_lock(&g->mu);
    r->next = g->held;
    if (g->held) g->held->prev = r;
    g->held = r;
    pthread_mutex_unlock(&g->mu);
    return true;
}

static void unlink_res(opdb_call_guard *g, opdb_call_res *r) {
    if (r->prev) r->prev->next = r->next;
    else g->held = r->next;
    if (r->next) r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

opdb_call_res *opdb_call_drop(void (*release)(opdb_call_res *), intptr_t key) {
    opdb_call_guard *g = t_scope.guard;
    if (!g) return NULL;
    pthread_mutex_lock(&g->mu);
    opdb_call_res *r = g->held;
    while (r && !(r->release == release && r->key == key)) r = r->next;
    if (r) unlink_res(g, r);
    pthread_mutex_unlock(&g->mu);
    return r;
}

bool opdb_call_failed(void) {
    opdb_call_guard *g = t_scope.guard;
    return g && atomic_load(&g->failed);
}

static void unlock_held_locks(void) {
    while (t_nlocks > 0) pthread_mutex_unlock(t_locks[--t_nlocks]);
}

/* The calling thread fails the call: everything held let go (a pool's
 * workers joined first: they were started last), then the jump. */
static _Noreturn void fail_call(opdb_call_guard *g) {
    unlock_held_locks();
    for (;;) {
        pthread_mutex_lock(&g->mu);
        opdb_call_res *r = g->held;
        if (r) unlink_res(g, r);
        pthread_mutex_unlock(&g->mu);
        if (!r) break;
        r->release(r); /* outside the list's mutex: joining a worker that adds to it */
    }
    siglongjmp(g->jb, 1);
}

void opdb_call_oom(size_t bytes) {
    opdb_call_guard *g = t_scope.guard;
    if (!g) return;
    size_t none = 0;
    atomic_compare_exchange_strong(&g->bytes, &none, bytes ? bytes : 1);
    atomic_store(&g->failed, true);
    worker *w = t_worker;
    if (!w) fail_call(g);
    unlock_held_locks();
    t_worker = NULL;
    if (w->wake) w->wake(w->wake_arg);
    siglongjmp(w->jb, 1);
}

void opdb_call_check(void) {
    opdb_call_guard *g = t_scope.guard;
    if (!g || !atomic_load(&g->failed)) return;
    if (t_worker) opdb_call_oom(atomic_load(&g->bytes));
    fail_call(g);
}

static void release_workers(opdb_call_res *r) {
    opdb_call_workers *w = (opdb_call_workers *)r;
    if (w->stop) w->stop(w->arg);
    for (size_t i = 0; i < w->n; i++)
        if (!w->up || w->up[i]) pthread_join(w->th[i], NULL);
}

void opdb_call_hold_workers(opdb_call_workers *w, pthread_t *th, const bool *up, size_t n, void (*stop)(void *),
                            void *arg) {
    w->th = th;
    w->up = up;
    w->n = n;
    w->stop = stop;
    w->arg = arg;
    opdb_call_hold(&w->res, release_workers, (intptr_t)w);
}

void opdb_call_drop_workers(opdb_call_workers *w) { (void)opdb_call_drop(release_workers, (intptr_t)w); }

void opdb_call_lock(pthread_mutex_t *mu) {
    pthread_mutex_lock(mu);
    if (t_nlocks < HELD_LOCKS) t_locks[t_nlocks++] = mu;
}

void opdb_call_unlock(pthread_mutex_t *mu) {
    for (int i = t_nlocks; i-- > 0;)
        if (t_locks[i] == mu) {
            t_locks[i] = t_locks[--t_nlocks];
            break;
        }
    pthread_mutex_unlock(mu);
}

void opdb_call_set_txn(struct opdb_txn_run *run) { t_scope.txn = run; }
