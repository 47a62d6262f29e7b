/* All-or-nothing runs (fs.h, opdb_txn_*).  While a run is open, every atomic
 * file commit only stages its temp file (written and fsynced, not renamed).
 * At the end the staged set is recorded in DIR/.opdb-journal (written as a
 * temp file, fsynced, renamed), then every temp file is renamed over its
 * target and the journal removed.  A run killed before the journal exists
 * leaves only temp files (removed by the next writer: the old database); one
 * killed after it is rolled forward by the next writer (the new database).
 * SIGINT/SIGTERM/SIGHUP are held off from the journal to its removal. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/fs.h"

#define JOURNAL_NAME OPDB_JOURNAL_NAME
#define JOURNAL_MAGIC "opdb-journal 1"

typedef struct staged {
    char *tmp, *path; /* absolute */
    opdb_file_id expect;
    struct staged *next;
} staged;

static staged *_Atomic g_head; /* read by the signal handler */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_depth;
static char *g_dir;
static atomic_int opdb_txn_state;

int opdb_txn_state_now(void) { return atomic_load(&opdb_txn_state); }

static void hold_signals(sigset_t *old) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &s, old);
}

static char *absolute(const char *p) {
    if (p[0] == '/') return opdb_xstrdup(p);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return opdb_xstrdup(p);
    char *a = opdb_xmalloc(strlen(cwd) + strlen(p) + 2);
    sprintf(a, "%s/%s", cwd, p);
    return a;
}

bool opdb_txn_active(void) { return atomic_load(&opdb_txn_state) == OPDB_TXN_STAGING; }

int opdb_txn_begin(const char *dir) {
    pthread_mutex_lock(&g_mu);
    if (g_depth++ == 0) {
        g_dir = absolute(dir);
        atomic_store(&g_head, NULL);
        atomic_store(&opdb_txn_state, OPDB_TXN_STAGING);
    }
    pthread_mutex_unlock(&g_mu);
    return 0;
}

void opdb_txn_stage(const char *tmp, const char *path, const opdb_file_id *expect) {
    staged *s = opdb_xcalloc(1, sizeof *s);
    s->tmp = absolute(tmp);
    s->path = absolute(path);
    if (expect) s->expect = *expect;
    pthread_mutex_lock(&g_mu);
    s->next = atomic_load(&g_head);
    atomic_store(&g_head, s); /* published whole: the handler sees it or not */
    pthread_mutex_unlock(&g_mu);
}

void opdb_txn_remove_staged(void) {
    if (atomic_load(&opdb_txn_state) != OPDB_TXN_STAGING) return;
    for (staged *s = atomic_load(&g_head); s; s = s->next) unlink(s->tmp);
}

void opdb_file_id_take(const char *path, opdb_file_id *id) {
    struct stat st;
    memset(id, 0, sizeof *id);
    id->taken = true;
    if (stat(path, &st) != 0) {
        id->absent = true;
        return;
    }
    id->dev = (uint64_t)st.st_dev;
    id->ino = (uint64_t)st.st_ino;
    id->size = (uint64_t)st.st_size;
    id->mtime_s = (int64_t)st.st_mtim.tv_sec;
    id->mtime_ns = (int64_t)st.st_mtim.tv_nsec;
    id->ctime_s = (int64_t)st.st_ctim.tv_sec;
    id->ctime_ns = (int64_t)st.st_ctim.tv_nsec;
}

bool opdb_file_id_same(const char *path, const opdb_file_id *id) {
    if (!id->taken) return true;
    opdb_file_id now;
    opdb_file_id_take(path, &now);
    if (id->absent || now.absent) return id->absent == now.absent;
    return now.dev == id->dev && now.ino == id->ino && now.size == id->size && now.mtime_s == id->mtime_s &&
           now.mtime_ns == id->mtime_ns && now.ctime_s == id->ctime_s && now.ctime_ns == id->ctime_ns;
}

static int fsync_dir_of(const char *path) {
    char *d = opdb_path_parent(path);
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(d);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Whether a and b lie in one folder (same text up to their last '/'). */
static bool same_parent(const char *a, const char *b) {
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    size_t na = sa ? (size_t)(sa - a) : 0, nb = sb ? (size_t)(sb - b) : 0;
    return na == nb && memcmp(a, b, na) == 0;
}

static void free_list(staged *s) {
    while (s) {
        staged *n = s->next;
        free(s->tmp), free(s->path), free(s);
        s = n;
    }
}

/* Renames every pair; the journal lists them first so that a kill in the
 * middle is completed by opdb_txn_recover. */
static int commit_all(staged *head, opdb_err *err) {
    opdb_strbuf j;
    opdb_sb_init(&j);
    opdb_sb_adds(&j, JOURNAL_MAGIC "\n");
    size_t n = 0;
    for (staged *s = head; s; s = s->next, n++) {
        opdb_sb_add(&j, s->tmp, strlen(s->tmp) + 1);
        opdb_sb_add(&j, s->path, strlen(s->path) + 1);
    }
    opdb_sb_adds(&j, "end\n");
    char *jpath = opdb_path_join(g_dir, JOURNAL_NAME);
    int rc = 0;
    if (n > 1) rc = opdb_atomic_write(jpath, j.p, j.n, err); /* one file needs no journal */
    opdb_sb_free(&j);
    /* the journal must be on disk before any rename, or a power loss could
     * leave some tables replaced and no journal to complete them */
    if (rc == 0 && n > 1 && fsync_dir_of(jpath) != 0) {
        int e = errno;
        unlink(jpath);
        for (staged *s = head; s; s = s->next) unlink(s->tmp);
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot sync the folder: %s; nothing was changed", g_dir, strerror(e));
    }
    /* test seam: microseconds between renames, so kill trials land in the commit */
    const char *slow = getenv("OPDB_TEST_COMMIT_PAUSE_US");
    useconds_t pause = slow ? (useconds_t)strtoul(slow, NULL, 10) : 0;
    for (staged *s = head; s && rc == 0; s = s->next) {
        if (pause && s != head) usleep(pause);
        if (rename(s->tmp, s->path) != 0)
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot replace: %s (the journal %s completes it on the next run)",
                           s->path, strerror(errno), jpath);
    }
    if (rc == 0) {
        /* each folder once (tables of one run share one, symlink targets aside); a
         * failure is reported: the tables are replaced but may not survive a power loss */
        int e = 0;
        const char *prev = NULL;
        for (staged *s = head; s; prev = s->path, s = s->next) {
            if (prev && same_parent(prev, s->path)) continue;
            if (fsync_dir_of(s->path) != 0 && !e) e = errno;
        }
        if (n > 1) unlink(jpath);
        if (fsync_dir_of(jpath) != 0 && !e) e = errno;
        if (e)
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the tables were replaced, but syncing the folder failed: %s "
                           "(they may not survive a power loss)", g_dir, strerror(e));
    }
    free(jpath);
    return rc;
}

int opdb_txn_end(bool commit, opdb_err *err) {
    pthread_mutex_lock(&g_mu);
    if (g_depth == 0) { /* no run open: nothing staged */
        pthread_mutex_unlock(&g_mu);
        return 0;
    }
    bool outer = --g_depth == 0;
    pthread_mutex_unlock(&g_mu);
    if (!outer) return 0;
    sigset_t old;
    hold_signals(&old);
    staged *head = atomic_load(&g_head);
    /* the list was pushed front first: reverse into write order */
    staged *rev = NULL;
    while (head) {
        staged *n = head->next;
        head->next = rev;
        rev = head;
        head = n;
    }
    atomic_store(&g_head, rev);
    int rc = 0;
    if (commit)
        for (staged *s = rev; s && rc == 0; s = s->next)
            if (!opdb_file_id_same(s->path, &s->expect))
                rc = opdb_fail(err, OPDB_ERR_RUNTIME,
                               "%s: changed by another program during this run; nothing was changed (run again)",
                               s->path);
    if (commit && rc == 0) {
        atomic_store(&opdb_txn_state, OPDB_TXN_COMMITTING);
        rc = commit_all(rev, err);
    } else {
        for (staged *s = rev; s; s = s->next) unlink(s->tmp);
        if (commit) rc = -1;
    }
    atomic_store(&opdb_txn_state, commit && rc == 0 ? OPDB_TXN_DONE : OPDB_TXN_NONE);
    atomic_store(&g_head, NULL);
    free_list(rev);
    free(g_dir);
    g_dir = NULL;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* ".NAME.tmp.XXXXXX": the names opdb_atomic_open gives temp files. */
static bool is_opdb_temp(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    if (name[0] != '.' || n < 13 || memcmp(name + n - 11, ".tmp.", 5) != 0) return false;
    for (size_t i = n - 6; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
    }
    return true;
}

static int roll_forward(const char *dir, const char *jpath, opdb_err *err) {
    opdb_strbuf j;
    opdb_sb_init(&j);
    if (opdb_read_file(jpath, &j, err)) {
        opdb_sb_free(&j);
        return -1;
    }
    const char *p = j.p, *end = j.p + j.n;
    size_t ml = strlen(JOURNAL_MAGIC "\n");
    if (j.n < ml + 4 || memcmp(p, JOURNAL_MAGIC "\n", ml) != 0 || memcmp(end - 4, "end\n", 4) != 0) {
        opdb_sb_free(&j);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: not an opdb journal; move it away to use this folder", jpath);
    }
    p += ml;
    end -= 4;
    size_t done = 0;
    int rc = 0;
    while (p < end && rc == 0) {
        const char *tmp = p, *z = memchr(p, '\0', (size_t)(end - p));
        const char *path = z ? z + 1 : end, *z2 = z ? memchr(path, '\0', (size_t)(end - path)) : NULL;
        if (!z2) {
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: truncated journal; move it away to use this folder", jpath);
            break;
        }
        p = z2 + 1;
        if (access(tmp, F_OK) != 0) continue; /* renamed before the kill */
        if (rename(tmp, path) != 0)
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot complete the interrupted run: %s", path, strerror(errno));
        else {
            fsync_dir_of(path);
            done++;
        }
    }
    opdb_sb_free(&j);
    if (rc == 0) {
        unlink(jpath);
        fsync_dir_of(jpath);
        fprintf(stderr, "opdb: %s: completed an interrupted run (%zu files replaced)\n", dir, done);
    }
    return rc;
}

int opdb_txn_recover(const char *dir, int *removed, opdb_err *err) {
    if (removed) *removed = 0;
    char *jpath = opdb_path_join(dir, JOURNAL_NAME);
    int rc = 0;
    if (access(jpath, F_OK) == 0) rc = roll_forward(dir, jpath, err);
    free(jpath);
    if (rc) return rc;
    char **tmps = NULL;
    size_t n = 0;
    opdb_err e2;
    opdb_err_clear(&e2);
    if (opdb_find_files(dir, is_opdb_temp, NULL, &tmps, &n, &e2) < 0) return 0; /* cleanup is best effort */
    int gone = 0;
    for (size_t i = 0; i < n; i++) gone += unlink(tmps[i]) == 0;
    opdb_free_paths(tmps, n);
    if (gone) fprintf(stderr, "opdb: %s: removed %d temp file(s) of killed runs\n", dir, gone);
    if (removed) *removed = gone;
    return 0;
}
