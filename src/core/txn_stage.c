/* The staged set of the open all-or-nothing run (core/txn_stage.h): the run
 * state the signal handler reads, the nesting of begin/end and the list of
 * temp files waiting for their rename. */
#include "core/txn_stage.h"

#include "core/call.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static opdb_staged *_Atomic g_head; /* read by the signal handler */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_depth;
static char *g_dir;
static atomic_int g_state;

int opdb_txn_state_now(void) { return atomic_load(&g_state); }

bool opdb_txn_active(void) { return atomic_load(&g_state) == OPDB_TXN_STAGING; }

void opdb_txn_stage_set_state(int state) { atomic_store(&g_state, state); }

static char *absolute(const char *p) {
    if (p[0] == '/') return opdb_path_normalize(p);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return opdb_path_normalize(p);
    char *a = opdb_path_join(cwd, p);
    return a;
}

/* Each begin is held by the call until its end: a call that runs out of
 * memory rolls its run back (the staged files removed: the old database),
 * or, when it ran out while committing, leaves it as a killed run is (its
 * journals make the next writer finish or undo it). */
static void release_run(opdb_call_res *r) {
    free(r);
    pthread_mutex_lock(&g_mu);
    bool outer = g_depth <= 1; /* 0: ran out inside the outermost end */
    if (g_depth > 0) g_depth--;
    pthread_mutex_unlock(&g_mu);
    if (!outer) return;
    sigset_t s, old;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &s, &old);
    opdb_staged *head = atomic_load(&g_head);
    bool committing = atomic_load(&g_state) == OPDB_TXN_COMMITTING;
    if (atomic_load(&g_state) == OPDB_TXN_STAGING)
        for (opdb_staged *x = head; x; x = x->next) unlink(x->tmp);
    atomic_store(&g_state, OPDB_TXN_NONE);
    opdb_txn_stage_reset();
    while (head) {
        opdb_staged *n = head->next;
        free(head->tmp), free(head->path), free(head->table), free(head->backup), free(head);
        head = n;
    }
    /* the end held them off, and the jump skips its restoring */
    pthread_sigmask(committing ? SIG_UNBLOCK : SIG_SETMASK, committing ? &s : &old, NULL);
}

void opdb_txn_stage_drop(void) { free(opdb_call_drop(release_run, 0)); }

int opdb_txn_begin(const char *dir) {
    opdb_call_res *r = opdb_xmalloc(sizeof *r);
    char *abs = absolute(dir); /* allocated before the mutex: running out never leaves it locked */
    pthread_mutex_lock(&g_mu);
    if (g_depth++ == 0) {
        g_dir = abs;
        abs = NULL;
        atomic_store(&g_head, NULL);
        atomic_store(&g_state, OPDB_TXN_STAGING);
    }
    pthread_mutex_unlock(&g_mu);
    free(abs);
    if (!opdb_call_hold(r, release_run, 0)) free(r);
    return 0;
}

void opdb_txn_stage(const char *tmp, const char *path, const char *table, const opdb_file_id *expect) {
    opdb_staged *s = opdb_xcalloc(1, sizeof *s);
    s->tmp = absolute(tmp);
    s->path = absolute(path);
    s->table = absolute(table ? table : path);
    if (expect) s->expect = *expect;
    pthread_mutex_lock(&g_mu);
    s->next = atomic_load(&g_head);
    atomic_store(&g_head, s); /* published whole: the handler sees it or not */
    pthread_mutex_unlock(&g_mu);
}

void opdb_txn_remove_staged(void) {
    if (atomic_load(&g_state) != OPDB_TXN_STAGING) return;
    for (opdb_staged *s = atomic_load(&g_head); s; s = s->next) unlink(s->tmp);
}

bool opdb_txn_stage_close(const char **dir) {
    pthread_mutex_lock(&g_mu);
    if (g_depth == 0) { /* no run open: nothing staged */
        pthread_mutex_unlock(&g_mu);
        return false;
    }
    bool outer = --g_depth == 0;
    pthread_mutex_unlock(&g_mu);
    *dir = g_dir;
    return outer;
}

opdb_staged *opdb_txn_stage_list(void) {
    opdb_staged *head = atomic_load(&g_head);
    /* the list was pushed front first: reverse into write order */
    opdb_staged *rev = NULL;
    while (head) {
        opdb_staged *n = head->next;
        head->next = rev;
        rev = head;
        head = n;
    }
    atomic_store(&g_head, rev);
    return rev;
}

void opdb_txn_stage_reset(void) {
    atomic_store(&g_head, NULL);
    free(g_dir);
    g_dir = NULL;
}
