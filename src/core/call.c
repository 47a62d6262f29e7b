/* See call.h. The sinks live in thread-local storage, so two calls running
 * at once on different threads each report to their own logger. */
#include "core/call.h"

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

typedef struct start {
    void *(*fn)(void *);
    void *arg;
    opdb_call_scope scope;
} start;

static void *thread_main(void *p) {
    start s = *(start *)p;
    free(p);
    t_scope = s.scope;
    return s.fn(s.arg);
}

int opdb_thread_create(pthread_t *th, void *(*fn)(void *), void *arg) {
    start *s = opdb_xmalloc(sizeof *s);
    s->fn = fn;
    s->arg = arg;
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
        atomic_long *left = opdb_xmalloc(sizeof *left);
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

void opdb_call_set_txn(struct opdb_txn_run *run) { t_scope.txn = run; }
