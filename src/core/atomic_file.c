/* Atomic replacement: temp file in the target folder + fsync + rename.
 * While a temp file exists its name is registered (one slot per concurrent
 * writer) so that the program's SIGINT/SIGTERM/SIGHUP handlers can remove
 * it before the process dies (opdb_atomic_remove_inflight; the library
 * installs no handler). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/call.h"
#include "opdb/fs.h"

#define SLOTS 16
static char g_inflight[SLOTS][4096];
/* Atomic (lock-free, so the signal handler may read it): writers update a
 * slot outside the mutex while another thread's take_slot scans. */
static atomic_int g_used[SLOTS];
static pthread_mutex_t g_slot_mu = PTHREAD_MUTEX_INITIALIZER;

void opdb_atomic_remove_inflight(void) {
    for (int i = 0; i < SLOTS; i++)
        if (atomic_load(&g_used[i]) == 1) unlink(g_inflight[i]);
    opdb_txn_remove_staged();
}

/* Slot states: 0 free, 1 holds the name of an existing temp file, 2 taken. */
static int take_slot(void) {
    pthread_mutex_lock(&g_slot_mu);
    int s = -1;
    for (int i = 0; i < SLOTS && s < 0; i++)
        if (!atomic_load(&g_used[i])) s = i;
    if (s >= 0) atomic_store(&g_used[s], 2);
    pthread_mutex_unlock(&g_slot_mu);
    return s;
}

/* Six random name characters, like mkstemp's. */
static void random_suffix(char *x) {
    static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static _Atomic unsigned long counter;
    unsigned long v = (unsigned long)getpid() * 2654435761u ^ (unsigned long)time(NULL) ^
                      (counter++ * 0x9e3779b97f4a7c15UL) ^ (unsigned long)(uintptr_t)x;
    for (int i = 0; i < 6; i++) {
        v = v * 6364136223846793005UL + 1442695040888963407UL;
        x[i] = abc[(v >> 33) % (sizeof abc - 1)];
    }
}

static mode_t g_umask;
static void read_umask(void) {
    g_umask = umask(0);
    umask(g_umask);
}

static void signal_set(sigset_t *block) {
    sigemptyset(block);
    sigaddset(block, SIGINT);
    sigaddset(block, SIGTERM);
    sigaddset(block, SIGHUP);
}

/* An open temp file is held by the call: removed if the call fails for
 * lack of memory.  The node keeps its own copy of the name (a worker that
 * ran out has left the frame of its opdb_atomic_file). */
typedef struct held_tmp {
    opdb_call_res res; /* key: the descriptor */
    int slot;
    bool closed;
    char tmpl[4096];
} held_tmp;

static void release_tmp(opdb_call_res *r) {
    held_tmp *h = (held_tmp *)r;
    sigset_t block, old;
    signal_set(&block);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    if (!h->closed) close((int)r->key);
    unlink(h->tmpl);
    if (h->slot >= 0) atomic_store(&g_used[h->slot], 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    free(h);
}

int opdb_atomic_open(opdb_atomic_file *f, const char *path, opdb_err *err) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, read_umask);
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->slot = -1;
    /* A symlinked target is written through the link (its target replaced),
     * never replaced by a regular file. */
    char *resolved = NULL;
    f->named = opdb_xstrdup(path);
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        resolved = realpath(path, NULL);
        if (!resolved) {
            free(f->named);
            f->named = NULL;
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: symbolic link to a missing file: not replaced", path);
        }
        path = resolved;
    }
    char *dir = opdb_path_parent(path);
    const char *base = opdb_path_basename(path);
    size_t need = strlen(dir) + strlen(base) + 32;
    if (need > sizeof f->tmpl) {
        free(dir);
        free(resolved);
        free(f->named);
        f->named = NULL;
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: path too long", path);
    }
    snprintf(f->tmpl, sizeof f->tmpl, "%s/.%s.tmp.XXXXXX", dir, base);
    free(dir);
    f->path = opdb_xstrdup(path);
    free(resolved);
    opdb_sb_init(&f->buf);

    held_tmp *held = opdb_xmalloc(sizeof *held); /* before the file: running out then leaves none */
    /* The name is registered before the file exists (a handler that runs
     * first just fails to unlink it), with signals held off meanwhile. */
    f->slot = take_slot();
    sigset_t block, old;
    signal_set(&block);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    for (int attempt = 0; attempt < 100 && f->fd < 0; attempt++) {
        random_suffix(f->tmpl + strlen(f->tmpl) - 6);
        if (f->slot >= 0) {
            memcpy(g_inflight[f->slot], f->tmpl, strlen(f->tmpl) + 1);
            atomic_store(&g_used[f->slot], 1);
        }
        f->fd = open(f->tmpl, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (f->fd < 0 && errno != EEXIST) break;
    }
    int open_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (f->fd < 0) {
        if (f->slot >= 0) atomic_store(&g_used[f->slot], 0);
        opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot create temporary file: %s", path, strerror(open_errno));
        free(f->path);
        f->path = NULL;
        free(f->named);
        f->named = NULL;
        free(held);
        return -1;
    }
    held->slot = f->slot;
    held->closed = false;
    memcpy(held->tmpl, f->tmpl, sizeof held->tmpl);
    if (!opdb_call_hold(&held->res, release_tmp, f->fd)) free(held);
    return 0;
}

static int write_all(int fd, const char *p, size_t left) {
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        p += w;
        left -= (size_t)w;
    }
    return 0;
}

int opdb_atomic_flush(opdb_atomic_file *f) {
    if (!f->err && f->buf.n) f->err = write_all(f->fd, f->buf.p, f->buf.n);
    opdb_sb_clear(&f->buf);
    return f->err;
}

int opdb_atomic_append_direct(opdb_atomic_file *f, const void *p, size_t n) {
    if (opdb_atomic_flush(f)) return f->err;
    f->err = write_all(f->fd, p, n);
    return f->err;
}

void opdb_atomic_expect(opdb_atomic_file *f, const opdb_file_id *id) { f->expect = *id; }

static int finish(opdb_atomic_file *f, bool commit, opdb_err *err) {
    held_tmp *h = (held_tmp *)opdb_call_drop(release_tmp, f->fd);
    int e = commit ? opdb_atomic_flush(f) : ECANCELED;
    if (!e && commit && opdb_call_commit_fails()) e = ENOSPC; /* test seam: the call's modes.fail_commit */
    if (!e && fchmod(f->fd, 0666 & ~g_umask) != 0) e = errno;
    if (!e && fsync(f->fd) != 0) e = errno;
    if (close(f->fd) != 0 && !e) e = errno;
    if (h) { /* still the call's until staged or renamed (staging allocates) */
        h->closed = true;
        opdb_call_hold(&h->res, release_tmp, (intptr_t)h);
    }
    bool changed = !e && !opdb_file_id_same(f->path, &f->expect);
    bool staged = !e && !changed && opdb_txn_active();
    if (staged) opdb_txn_stage(f->tmpl, f->path, f->named, &f->expect); /* renamed by opdb_txn_end */
    else if (!e && !changed && rename(f->tmpl, f->path) != 0) e = errno;
    if (h) free(opdb_call_drop(release_tmp, (intptr_t)h)); /* the run's now, renamed, or removed below */
    sigset_t block, old;
    signal_set(&block);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    if (e || changed) unlink(f->tmpl);
    if (f->slot >= 0) atomic_store(&g_used[f->slot], 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    int rc = 0;
    if (changed && commit)
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: changed by another program during this run; not replaced (run again)",
                       f->path);
    else if (e && commit) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot write: %s", f->path, strerror(e));
    opdb_sb_free(&f->buf);
    free(f->path);
    f->path = NULL;
    free(f->named);
    f->named = NULL;
    f->fd = -1;
    return rc;
}

int opdb_atomic_commit(opdb_atomic_file *f, opdb_err *err) { return finish(f, true, err); }
void opdb_atomic_abort(opdb_atomic_file *f) { finish(f, false, NULL); }

int opdb_atomic_write(const char *path, const void *data, size_t n, opdb_err *err) {
    opdb_atomic_file f;
    if (opdb_atomic_open(&f, path, err)) return -1;
    f.err = write_all(f.fd, data, n);
    return opdb_atomic_commit(&f, err);
}
