/* The staged sets of the open all-or-nothing runs (core/txn_stage.h): each
 * call's run state, the nesting of its begin/end and its list of temp files
 * waiting for their rename; and the process's list of open runs that the
 * signal handler walks (lock-free for it: writers change the list under a
 * mutex, one atomic store each). */
#include "core/txn_stage.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/call.h"

static opdb_txn_run *_Atomic g_open;        /* newest first */
static pthread_mutex_t g_open_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_last_end;               /* how the last run that ended ended */
static _Thread_local opdb_txn_run t_own = {.mu = PTHREAD_MUTEX_INITIALIZER};

void opdb_txn_hold_signals(sigset_t *old) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &s, old);
}

opdb_txn_run *opdb_txn_run_now(void) { return opdb_call_now()->txn; }

/* Some open run committing, else some staging, else how the last one ended. */
int opdb_txn_state_now(void) {
    int seen = -1;
    for (opdb_txn_run *r = atomic_load(&g_open); r; r = atomic_load(&r->next_open)) {
        int st = atomic_load(&r->state);
        if (st == OPDB_TXN_COMMITTING) return st;
        if (st == OPDB_TXN_STAGING) seen = st;
    }
    return seen >= 0 ? seen : atomic_load(&g_last_end);
}

bool opdb_txn_active(void) {
    opdb_txn_run *r = opdb_txn_run_now();
    return r && atomic_load(&r->state) == OPDB_TXN_STAGING;
}

void opdb_txn_stage_set_state(opdb_txn_run *r, int state) { atomic_store(&r->state, state); }

static char *absolute(const char *p) {
    if (p[0] == '/') return opdb_path_normalize(p);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return opdb_path_normalize(p);
    char *a = opdb_path_join(cwd, p);
    return a;
}

static void list_open(opdb_txn_run *r) {
    pthread_mutex_lock(&g_open_mu);
    atomic_store(&r->next_open, atomic_load(&g_open));
    atomic_store(&g_open, r); /* published whole: the handler sees it or not */
    pthread_mutex_unlock(&g_open_mu);
}

/* r keeps its next_open, so a handler standing on it walks on. */
static void unlist(opdb_txn_run *r) {
    pthread_mutex_lock(&g_open_mu);
    opdb_txn_run *_Atomic *at = &g_open;
    while (atomic_load(at) && atomic_load(at) != r) at = &atomic_load(at)->next_open;
    if (atomic_load(at)) atomic_store(at, atomic_load(&r->next_open));
    pthread_mutex_unlock(&g_open_mu);
}

void opdb_txn_stage_free(opdb_staged *s) {
    while (s) {
        opdb_staged *n = s->next;
        free(s->tmp), free(s->path), free(s->table), free(s->backup), free(s);
        s = n;
    }
}

/* Removes r's staged files and forgets the run, whatever its nesting. */
static void abort_run(opdb_txn_run *r) {
    sigset_t old;
    opdb_txn_hold_signals(&old);
    pthread_mutex_lock(&r->mu);
    r->depth = 0;
    opdb_staged *list = atomic_load(&r->head);
    for (opdb_staged *s = list; s; s = s->next) unlink(s->tmp);
    pthread_mutex_unlock(&r->mu);
    opdb_txn_stage_reset(r, OPDB_TXN_NONE);
    opdb_txn_stage_free(list);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void opdb_txn_abort_call(void) {
    opdb_txn_run *r = opdb_txn_run_now();
    if (r && r->depth > 0) abort_run(r);
}

/* A thread that ends with its run still open (a call that returned without
 * ending it) takes the run off the list before its storage goes. */
static pthread_key_t g_exit_key;
static void on_thread_exit(void *p) {
    opdb_txn_run *r = p;
    if (r->depth > 0) abort_run(r);
}
static void make_exit_key(void) { pthread_key_create(&g_exit_key, on_thread_exit); }

/* Each begin is held by the call until its end (core/call.h): a call that
 * runs out of memory rolls its run back (the staged files removed: the old
 * database), or, when it ran out while committing, leaves it as a killed
 * run is (its journals make the next writer finish or undo it). */
typedef struct run_hold {
    opdb_call_res res;
    opdb_txn_run *run;
} run_hold;

static void release_run(opdb_call_res *res) {
    opdb_txn_run *r = ((run_hold *)res)->run;
    free(res);
    pthread_mutex_lock(&r->mu);
    bool outer = r->depth <= 1; /* 0: ran out inside the outermost end */
    if (r->depth > 0) r->depth--;
    pthread_mutex_unlock(&r->mu);
    if (!outer) return;
    sigset_t s, old;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &s, &old);
    opdb_staged *head = atomic_load(&r->head);
    int state = atomic_load(&r->state);
    if (state == OPDB_TXN_STAGING)
        for (opdb_staged *x = head; x; x = x->next) unlink(x->tmp);
    opdb_txn_stage_reset(r, OPDB_TXN_NONE);
    opdb_txn_stage_free(head);
    /* the end held them off, and the jump skips its restoring */
    bool committing = state == OPDB_TXN_COMMITTING;
    pthread_sigmask(committing ? SIG_UNBLOCK : SIG_SETMASK, committing ? &s : &old, NULL);
}

void opdb_txn_stage_drop(opdb_txn_run *r) {
    if (r) free(opdb_call_drop(release_run, (intptr_t)r));
}

int opdb_txn_begin(const char *dir) {
    /* allocated before any mutex: running out never leaves one locked */
    run_hold *h = opdb_xmalloc(sizeof *h);
    char *abs = absolute(dir);
    opdb_txn_run *r = opdb_txn_run_now();
    if (!r) { /* the call's first run: this thread's, shared with the threads and calls it starts */
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, make_exit_key);
        r = &t_own;
        if (r->depth > 0) abort_run(r); /* left open by a call that returned without ending it */
        pthread_setspecific(g_exit_key, r);
        opdb_call_set_txn(r);
    }
    pthread_mutex_lock(&r->mu);
    if (r->depth++ == 0) {
        r->dir = abs;
        abs = NULL;
        atomic_store(&r->head, NULL);
        atomic_store(&r->state, OPDB_TXN_STAGING);
        list_open(r);
    }
    pthread_mutex_unlock(&r->mu);
    free(abs);
    h->run = r;
    if (!opdb_call_hold(&h->res, release_run, (intptr_t)r)) free(h);
    return 0;
}

void opdb_txn_stage(const char *tmp, const char *path, const char *table, const opdb_file_id *expect) {
    opdb_txn_run *r = opdb_txn_run_now();
    if (!r) return; /* no run: nothing stages (callers ask opdb_txn_active first) */
    opdb_staged *s = opdb_xcalloc(1, sizeof *s);
    s->tmp = absolute(tmp);
    s->path = absolute(path);
    s->table = absolute(table ? table : path);
    if (expect) s->expect = *expect;
    pthread_mutex_lock(&r->mu);
    s->next = atomic_load(&r->head);
    atomic_store(&r->head, s); /* published whole: the handler sees it or not */
    pthread_mutex_unlock(&r->mu);
}

void opdb_txn_remove_staged(void) {
    for (opdb_txn_run *r = atomic_load(&g_open); r; r = atomic_load(&r->next_open)) {
        if (atomic_load(&r->state) != OPDB_TXN_STAGING) continue; /* a commit's own files go by its journal */
        for (opdb_staged *s = atomic_load(&r->head); s; s = s->next) unlink(s->tmp);
    }
}

bool opdb_txn_stage_close(opdb_txn_run *r, const char **dir) {
    pthread_mutex_lock(&r->mu);
    if (r->depth == 0) { /* no run open: nothing staged */
        pthread_mutex_unlock(&r->mu);
        return false;
    }
    bool outer = --r->depth == 0;
    pthread_mutex_unlock(&r->mu);
    *dir = r->dir;
    return outer;
}

opdb_staged *opdb_txn_stage_list(opdb_txn_run *r) {
    opdb_staged *head = atomic_load(&r->head);
    /* the list was pushed front first: reverse into write order */
    opdb_staged *rev = NULL;
    while (head) {
        opdb_staged *n = head->next;
        head->next = rev;
        rev = head;
        head = n;
    }
    atomic_store(&r->head, rev);
    return rev;
}

void opdb_txn_stage_reset(opdb_txn_run *r, int end_state) {
    atomic_store(&g_last_end, end_state);
    atomic_store(&r->state, end_state);
    unlist(r);
    atomic_store(&r->head, NULL);
    free(r->dir);
    r->dir = NULL;
    /* outside any call a run is the thread's until it ends: a call made later
     * on the thread begins its own */
    if (r == &t_own && opdb_call_now()->depth == 0) opdb_call_set_txn(NULL);
}
