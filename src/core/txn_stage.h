/* The staged set of an open all-or-nothing run: what an atomic file commit
 * adds to (atomic_file.c), what the end of the run renames (txn.c) and what
 * a signal handler removes.  Apart from txn.c so that atomic files need
 * nothing of the commit, which itself writes its journals as atomic files.
 * A run belongs to the call that began it (core/call.h carries a pointer to
 * it to the call's threads and inner calls); the process-wide list of open
 * runs is only there for the program's signal handler. */
#ifndef OPDB_CORE_TXN_STAGE_H
#define OPDB_CORE_TXN_STAGE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include "opdb/fs.h"

typedef struct opdb_staged {
    char *tmp, *path; /* absolute: the temp file and the file it replaces (a link's target) */
    char *table;      /* absolute: the name as written (the link itself), whose folder keeps the journal */
    char *backup;     /* hard link to the old file, or NULL */
    bool had_old, no_backup, renamed;
    opdb_file_id expect;
    struct opdb_staged *next;
} opdb_staged;

/* One call's run.  Lives in the thread-local storage of the thread that
 * first began a run with no call's run in force (core/call.h: that thread's
 * call, or the thread itself outside any call). */
typedef struct opdb_txn_run {
    opdb_staged *_Atomic head; /* read by the signal handler */
    atomic_int state;          /* OPDB_TXN_*, read by the signal handler */
    int depth;                 /* begin/end nesting within the call */
    char *dir;                 /* the outermost begin's folder, absolute */
    pthread_mutex_t mu;        /* the call's threads stage and nest at once */
    struct opdb_txn_run *_Atomic next_open; /* the open runs of the process */
} opdb_txn_run;

/* The run of the call in force on this thread, or NULL when it never began
 * one. */
opdb_txn_run *opdb_txn_run_now(void);
/* Closes one begin of r; true when it was the outermost, with *dir the run's
 * folder (absolute, still owned by r). */
bool opdb_txn_stage_close(opdb_txn_run *r, const char **dir);
/* r's staged files in the order they were written (call with the signals
 * held off: the list is reordered in place). */
opdb_staged *opdb_txn_stage_list(opdb_txn_run *r);
void opdb_txn_stage_set_state(opdb_txn_run *r, int state);
/* Forgets r's list (the caller frees it with opdb_txn_stage_free) and
 * folder, sets how it ended (OPDB_TXN_DONE or OPDB_TXN_NONE) and takes it
 * off the open runs. */
void opdb_txn_stage_reset(opdb_txn_run *r, int end_state);
void opdb_txn_stage_free(opdb_staged *s);
/* Holds SIGINT, SIGTERM and SIGHUP off this thread; *old for
 * pthread_sigmask(SIG_SETMASK) to restore. */
void opdb_txn_hold_signals(sigset_t *old);
/* Ends the current call's open run, whatever its nesting, as a rollback:
 * its staged temp files removed, nothing renamed (for a call that fails
 * before it reaches its opdb_txn_end, e.g. out of memory).  Nothing when no
 * run is open. */
void opdb_txn_abort_call(void);
/* The end of one begin of r: its hold on the call let go (core/call.h). */
void opdb_txn_stage_drop(opdb_txn_run *r);

#endif
