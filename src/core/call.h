/* What every command entry point does on entry: check the caller's options
 * struct, and make the call's logger (opdb_log, error.h) and modes the ones
 * that opdb_warn, opdb_note, the progress line and the signature use on this
 * thread and on the worker threads the call starts (thread-local: two calls
 * on two threads never see each other's). */
#ifndef OPDB_CORE_CALL_H
#define OPDB_CORE_CALL_H

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opdb/error.h"

typedef struct opdb_log_sink {
    opdb_warn_fn fn;
    void *ctx;
} opdb_log_sink;

/* What is in force on a thread: the sinks (a NULL fn: the process-wide
 * default) and the call's modes. */
typedef struct opdb_call_scope {
    opdb_log_sink warn, note, progress;
    bool reference_signatures; /* opdb_signature: the reference's rules (a MatMul row's bias is no part of it) */
    opdb_log_sink nothing;     /* opdb_warn_nothing's lines (a NULL fn: the warn sink) */
    opdb_modes modes;          /* the call's modes (opdb_call_set_modes) */
    atomic_long *commits_left; /* modes.fail_commit's countdown, shared by the call's threads and inner calls */
    bool no_map;               /* tests: opdb_file_view_map maps nothing, so every view is a read one */
    struct opdb_call_guard *guard; /* the outermost call's out-of-memory target, NULL outside any call */
    struct opdb_txn_run *txn;  /* the call's all-or-nothing run (core/txn_stage.h), shared by its threads and inner calls; NULL until it begins one */
    unsigned depth;            /* opdb_call_enter's in force (0: outside any call) */
} opdb_call_scope;

/* 0 when `size` (the struct's size field; o NULL counts as 0) is the size
 * of the options struct this library was built with, else -1 with err:
 * "<type>: not initialised by <type>_init" (a zeroed struct) or the size it
 * does not know. */
int opdb_opts_check(const void *o, size_t size, size_t known, const char *type, opdb_err *err);

/* The body of opdb_<x>_init_sized (api.h): the defaults, as many bytes of
 * them as the caller's struct has (size), zeros past the library's own
 * struct, and size in the struct's first field. */
void opdb_opts_fill(void *o, size_t size, const void *defaults, size_t known);
#define OPDB_OPTS_INIT_SIZED(T, defaults)                                                                              \
    void T##_init_sized(T *o, size_t size) {                                                                           \
        T d_;                                                                                                          \
        defaults(&d_);                                                                                                 \
        opdb_opts_fill(o, size, &d_, sizeof d_);                                                                       \
    }

/* Installs log's non-NULL functions for this thread (the others stay as the
 * enclosing call left them) and returns what was in force, modes included,
 * for opdb_call_leave when the call returns. log may be NULL. */
opdb_call_scope opdb_call_enter(const opdb_log *log);
void opdb_call_leave(const opdb_call_scope *saved);
/* The sinks and modes in force on this thread. */
opdb_call_scope opdb_call_current(void);
/* Sets the signature rules of the call in force on this thread (until its
 * opdb_call_leave), and reads them. */
void opdb_call_set_reference_signatures(bool on);
bool opdb_call_reference_signatures(void);

/* pthread_create whose thread starts with the creating thread's sinks: a
 * call's workers report to the call's logger. The thread must end before
 * the call returns (the sinks point into the caller's options). */
int opdb_thread_create(pthread_t *th, void *(*fn)(void *), void *arg);

/* Installs m's non-zero modes in the call in force on this thread (once per
 * call, right after opdb_call_enter; opdb_call_leave restores the enclosing
 * call's). m may be NULL. */
void opdb_call_set_modes(const opdb_modes *m);
/* The call in force on this thread, read in place (valid on this thread
 * until its next opdb_call_enter, opdb_call_leave or setter). */
const opdb_call_scope *opdb_call_now(void);
/* Whether this call's next file commit is the one modes.fail_commit names
 * (counted across the call's threads and the calls it makes). */
bool opdb_call_commit_fails(void);
/* Tests: file views of the call in force on this thread are never mapped
 * (the read path of opdb_file_view_map's callers, compared with the mapped
 * one). */
void opdb_call_set_no_map(bool on);
/* ---- Out of memory: the call returns OPDB_ERR_NOMEM instead of the
 * process aborting.  Each entry point arms a jump target in its own frame
 * (OPDB_CALL_GUARD, right after opdb_call_enter); a failed allocation on
 * the calling thread releases what the call holds that outlives it (the
 * opdb_call_res list: folder locks, the open all-or-nothing run, temp
 * files, running worker threads) and jumps back there.  Memory the call
 * had allocated is not freed (it leaks).  A nested call (bench writing
 * back through update) uses the outermost call's target. */

/* Something the call holds that must be let go when it fails: a node in
 * the call's list, released last-taken first. */
typedef struct opdb_call_res {
    void (*release)(struct opdb_call_res *r);
    intptr_t key; /* what opdb_call_drop finds it by (a descriptor, a pointer) */
    struct opdb_call_res *prev, *next;
} opdb_call_res;

typedef struct opdb_call_guard {
    sigjmp_buf jb;
    atomic_bool failed;    /* set by whichever thread ran out */
    _Atomic size_t bytes;  /* what it asked for */
    pthread_mutex_t mu;    /* the held list: workers add to it too */
    opdb_call_res *held;
} opdb_call_guard;

/* Makes g the thread's jump target unless an enclosing call has one. */
void opdb_call_arm(opdb_call_guard *g);
/* The end of a call that ran out of memory: err set to "out of memory (N
 * bytes)" with code OPDB_ERR_NOMEM, the scope left; returns -1. */
int opdb_call_oom_return(opdb_call_guard *g, const opdb_call_scope *saved, opdb_err *err);

/* Arms the jump target in the entry point's frame (setjmp must be called in
 * a frame that stays alive): on out of memory the entry point returns -1
 * with err set.  Use right after `opdb_call_scope saved = opdb_call_enter(..)`
 * in a function returning int. */
#define OPDB_CALL_GUARD(saved, err)                                                     \
    opdb_call_guard opdb_guard_;                                                        \
    if (sigsetjmp(opdb_guard_.jb, 0)) return opdb_call_oom_return(&opdb_guard_, &(saved), (err)); \
    opdb_call_arm(&opdb_guard_)

/* OPDB_CALL_GUARD for an entry point that reports failure its own way:
 * on out of memory the scope is left, err (may be NULL) set and `on_oom`
 * runs (it returns). */
#define OPDB_CALL_GUARD_THEN(saved, err, on_oom)                                     \
    opdb_call_guard opdb_guard_;                                                     \
    if (sigsetjmp(opdb_guard_.jb, 0)) {                                              \
        opdb_call_oom_return(&opdb_guard_, &(saved), (err));                         \
        on_oom;                                                                      \
    }                                                                                \
    opdb_call_arm(&opdb_guard_)

/* Adds r to the call's list; false outside any call (nothing to release
 * then: the caller keeps r or frees it). */
bool opdb_call_hold(opdb_call_res *r, void (*release)(opdb_call_res *), intptr_t key);
/* Takes the latest node with this release function and key off the list;
 * returns it (the caller frees it) or NULL. */
opdb_call_res *opdb_call_drop(void (*release)(opdb_call_res *), intptr_t key);
/* Whether the call has failed (a worker ran out of memory): wait loops of
 * the callers of workers stop on it. */
bool opdb_call_failed(void);
/* On the calling thread, after its workers are joined: if one of them ran
 * out of memory, fail the call now (never returns then). */
void opdb_call_check(void);
/* The out-of-memory path (opdb_die_oom): returns only outside any call. */
void opdb_call_oom(size_t bytes);

/* opdb_thread_create whose worker, when it runs out of memory, marks the
 * call failed, calls wake(wake_arg) (it takes the site's mutex and wakes
 * whoever waits on the worker; the worker holds no site mutex when it
 * allocates) and ends. */
int opdb_thread_create_wake(pthread_t *th, void *(*fn)(void *), void *arg, void (*wake)(void *), void *wake_arg);

/* Worker threads that share the calling thread's frame: if the calling
 * thread runs out of memory while they run, stop(arg) (may be NULL: they
 * end by themselves) and every th[i] (with up NULL or up[i]) joined before
 * the jump.  Lives in the site's frame; hold after starting the workers,
 * drop before joining them. */
typedef struct opdb_call_workers {
    opdb_call_res res;
    pthread_t *th;
    const bool *up;
    size_t n;
    void (*stop)(void *);
    void *arg;
} opdb_call_workers;
void opdb_call_hold_workers(opdb_call_workers *w, pthread_t *th, const bool *up, size_t n, void (*stop)(void *),
                            void *arg);
void opdb_call_drop_workers(opdb_call_workers *w);

/* A mutex whose holder unlocks it if it runs out of memory inside (for
 * sections that allocate under a lock shared with later calls). */
void opdb_call_lock(pthread_mutex_t *mu);
void opdb_call_unlock(pthread_mutex_t *mu);
/* Makes run the all-or-nothing run of the call in force on this thread
 * (until its opdb_call_leave; outside any call, until the run ends). */
void opdb_call_set_txn(struct opdb_txn_run *run);

#endif
