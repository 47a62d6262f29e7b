/* What every command entry point does on entry: check the caller's options
 * struct, and make the call's logger (opdb_log, error.h) and modes the ones
 * that opdb_warn, opdb_note, the progress line and the signature use on this
 * thread and on the worker threads the call starts (thread-local: two calls
 * on two threads never see each other's). */
#ifndef OPDB_CORE_CALL_H
#define OPDB_CORE_CALL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

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
    struct opdb_txn_run *txn;  /* the call's all-or-nothing run (core/txn_stage.h), shared by its threads and inner calls; NULL until it begins one */
    unsigned depth;            /* opdb_call_enter's in force (0: outside any call) */
} opdb_call_scope;

/* 0 when `size` (the struct's size field; o NULL counts as 0) is the size
 * of the options struct this library was built with, else -1 with err:
 * "<type>: not initialised by <type>_init" (a zeroed struct) or the size it
 * does not know. */
int opdb_opts_check(const void *o, size_t size, size_t known, const char *type, opdb_err *err);

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
/* Makes run the all-or-nothing run of the call in force on this thread
 * (until its opdb_call_leave; outside any call, until the run ends). */
void opdb_call_set_txn(struct opdb_txn_run *run);

#endif
