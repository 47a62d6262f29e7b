/* All-or-nothing runs (fs.h, opdb_txn_*).  While a run is open, every atomic
 * file commit only stages its temp file (written and fsynced, not renamed).
 * At the end every target is checked (no directory, nothing immutable, a
 * writable folder) before anything is renamed; each existing table gets a
 * hard-linked backup; the staged set is recorded in a journal in each folder
 * it touches (core/journal.h: plain names only), then every temp file is
 * renamed over its target and the journals and backups removed.  A run
 * killed before its journals exist leaves only temp files and backups
 * (removed by the next writer: the old database); one killed after is rolled
 * forward by the next writer (the new database), or rolled back from the
 * backups when a target can no longer be replaced.  SIGINT/SIGTERM/SIGHUP
 * are held off from the journals to their removal.  A run is the call's
 * that began it (core/txn_stage.h): commits of other calls never join it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/call.h"
#include "core/journal.h"
#include "core/txn_stage.h"
#include "opdb/fs.h"

typedef opdb_staged staged;

/* Still the file read, by what a writer of its bytes changes (size, mtime):
 * not its ctime, which the commit's own backup link changes. */
static bool same_bytes(const char *path, const opdb_file_id *id) {
    if (!id->taken) return true;
    opdb_file_id now;
    opdb_file_id_take(path, &now);
    if (id->absent || now.absent) return id->absent == now.absent;
    return now.dev == id->dev && now.ino == id->ino && now.size == id->size && now.mtime_s == id->mtime_s &&
           now.mtime_ns == id->mtime_ns;
}

static int fsync_dir(const char *d) {
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static int fsync_dir_of(const char *path) {
    char *d = opdb_path_parent(path);
    int rc = fsync_dir(d);
    free(d);
    return rc;
}

/* Whether a and b lie in one folder (same text up to their last '/'). */
static bool same_parent(const char *a, const char *b) {
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    size_t na = sa ? (size_t)(sa - a) : 0, nb = sb ? (size_t)(sb - b) : 0;
    return na == nb && memcmp(a, b, na) == 0;
}

/* Why `path` cannot be replaced by a rename (NULL when it can, as far as
 * can be told beforehand): a directory or other non-file where it goes, an
 * immutable or append-only file or folder, a folder this process cannot
 * write. */
static const char *cannot_replace(const char *path) {
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return "a directory is in its place";
        if (!S_ISREG(st.st_mode)) return "something that is not a regular file is in its place";
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC), fl = 0;
        if (fd >= 0) {
            bool locked = ioctl(fd, FS_IOC_GETFLAGS, &fl) == 0 && (fl & (FS_IMMUTABLE_FL | FS_APPEND_FL));
            close(fd);
            if (locked) return "it is immutable or append-only (chattr)";
        }
    } else if (errno != ENOENT) {
        return "it cannot be examined";
    }
    char *d = opdb_path_parent(path);
    const char *why = NULL;
    if (access(d, W_OK | X_OK) != 0) why = "its folder is not writable";
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fl = 0;
    if (!why && fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &fl) == 0 && (fl & (FS_IMMUTABLE_FL | FS_APPEND_FL)))
        why = "its folder is immutable or append-only (chattr)";
    if (fd >= 0) close(fd);
    free(d);
    return why;
}

/* Six random name characters, like mkstemp's. */
static void random_suffix(char *x) {
    static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static _Atomic unsigned long counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long v = (unsigned long)getpid() * 2654435761u ^ (unsigned long)ts.tv_nsec ^
                      (counter++ * 0x9e3779b97f4a7c15UL) ^ (unsigned long)(uintptr_t)x;
    for (int i = 0; i < 6; i++) {
        v = v * 6364136223846793005UL + 1442695040888963407UL;
        x[i] = abc[(v >> 33) % (sizeof abc - 1)];
    }
}

/* A hard link ".NAME.old.XXXXXX" next to s->path, so that a commit that
 * cannot complete can be rolled back.  Where links are not possible the
 * entry is marked: roll forward is then its only way. */
static void make_backup(staged *s) {
    struct stat st;
    s->had_old = lstat(s->path, &st) == 0;
    if (!s->had_old) return;
    char *d = opdb_path_parent(s->path);
    const char *base = opdb_path_basename(s->path);
    size_t n = strlen(d) + strlen(base) + 16;
    char *b = opdb_xmalloc(n);
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(b, n, "%s/.%s.old.XXXXXX", d, base);
        random_suffix(b + strlen(b) - 6);
        if (link(s->path, b) == 0) {
            s->backup = b;
            free(d);
            return;
        }
        if (errno != EEXIST) break;
    }
    free(b);
    free(d);
    s->no_backup = true;
}

typedef struct folder_journal {
    char *dir, *jpath;
    bool written;
} folder_journal;

/* The distinct folders of the tables, in first-seen order. */
static folder_journal *journal_folders(staged *head, size_t *n) {
    folder_journal *f = NULL;
    size_t cap = 0;
    *n = 0;
    for (staged *s = head; s; s = s->next) {
        char *d = opdb_path_parent(s->table);
        size_t i = 0;
        while (i < *n && strcmp(f[i].dir, d) != 0) i++;
        if (i < *n) {
            free(d);
            continue;
        }
        OPDB_ALLOC_GROW(f, *n + 1, cap);
        f[*n].dir = d;
        f[*n].jpath = opdb_path_join(d, OPDB_JOURNAL_NAME);
        f[*n].written = false;
        (*n)++;
    }
    return f;
}

static void journal_text(staged *head, const char *dir, opdb_strbuf *j) {
    opdb_sb_clear(j);
    opdb_sb_adds(j, OPDB_JOURNAL_MAGIC);
    for (staged *s = head; s; s = s->next) {
        char *d = opdb_path_parent(s->table);
        bool mine = strcmp(d, dir) == 0;
        free(d);
        if (!mine) continue;
        const char *bk = s->backup ? opdb_path_basename(s->backup)
                                   : s->no_backup ? OPDB_JOURNAL_NO_BACKUP : OPDB_JOURNAL_ABSENT;
        const char *names[3] = {opdb_path_basename(s->tmp), opdb_path_basename(s->table), bk};
        for (int k = 0; k < 3; k++) opdb_sb_add(j, names[k], strlen(names[k]) + 1);
    }
    opdb_sb_adds(j, OPDB_JOURNAL_END);
}

/* Undo the renames done so far, last first, then drop every temp file; -1
 * when some entry cannot be undone.  Each step leaves what the journal
 * describes: a new file goes back to its temp name first (the entry then
 * reads as not yet renamed), then the backup back to the table's name; so
 * a failure at any point (a disk that fails every rename from now on) still
 * leaves a journal the next run completes. */
static int roll_back_staged(staged *head) {
    size_t n = 0;
    for (staged *s = head; s; s = s->next) n += s->renamed;
    staged **done = opdb_xmalloc((n ? n : 1) * sizeof *done);
    size_t k = 0;
    for (staged *s = head; s; s = s->next)
        if (s->renamed) done[k++] = s;
    int rc = 0;
    while (k > 0 && rc == 0) {
        staged *s = done[--k];
        if (rename(s->path, s->tmp) != 0) {
            rc = -1;
            break;
        }
        s->renamed = false;
        if (!s->had_old) continue;
        if (!s->backup || rename(s->backup, s->path) != 0) rc = -1;
        else {
            free(s->backup);
            s->backup = NULL;
        }
    }
    free(done);
    if (rc == 0)
        for (staged *s = head; s; s = s->next) unlink(s->tmp);
    return rc;
}

static void drop_backups(staged *head) {
    for (staged *s = head; s; s = s->next)
        if (s->backup) unlink(s->backup);
}

/* Renames every pair; the journals list them first so that a kill in the
 * middle is completed by opdb_txn_recover. */
static int commit_all(staged *head, const char *run_dir, opdb_err *err) {
    size_t n = 0;
    for (staged *s = head; s; s = s->next) n++;
    /* before anything is renamed: every target can be replaced, every name
     * is one a journal may hold */
    for (staged *s = head; s; s = s->next) {
        const char *why = cannot_replace(s->path);
        const char *name = opdb_path_basename(s->table);
        const char *np = opdb_journal_table_problem(name);
        if (why || np) {
            for (staged *t = head; t; t = t->next) unlink(t->tmp);
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot be replaced: %s; nothing was changed", s->table,
                             why ? why : np);
        }
    }
    size_t nf = 0;
    folder_journal *fj = NULL;
    int rc = 0;
    if (n > 1) { /* one file needs no journal: its rename is all or nothing */
        for (staged *s = head; s; s = s->next) make_backup(s);
        fj = journal_folders(head, &nf);
        /* the locked folder's journal is written last and removed last: while it is
         * missing, the journals of its own subfolders (reports/) belong to a run that
         * was not committed, and recovery rolls them back instead of forward */
        for (size_t i = 0; i + 1 < nf; i++)
            if (run_dir && strcmp(fj[i].dir, run_dir) == 0) {
                folder_journal t = fj[i];
                memmove(&fj[i], &fj[i + 1], (nf - i - 1) * sizeof *fj);
                fj[nf - 1] = t;
                break;
            }
        opdb_strbuf j;
        opdb_sb_init(&j);
        for (size_t i = 0; i < nf && rc == 0; i++) {
            journal_text(head, fj[i].dir, &j);
            rc = opdb_atomic_write(fj[i].jpath, j.p, j.n, err);
            fj[i].written = rc == 0;
            /* the journal must be on disk before any rename, or a power loss could
             * leave some tables replaced and no journal to complete them */
            if (rc == 0 && fsync_dir(fj[i].dir) != 0)
                rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot sync the folder: %s; nothing was changed", fj[i].dir,
                               strerror(errno));
        }
        opdb_sb_free(&j);
        if (rc) {
            for (size_t i = 0; i < nf; i++)
                if (fj[i].written) unlink(fj[i].jpath);
            for (staged *t = head; t; t = t->next) unlink(t->tmp);
            drop_backups(head);
        }
    }
    /* test seam: microseconds between renames, so kill trials land in the commit */
    useconds_t pause = (useconds_t)opdb_call_now()->modes.commit_pause_us;
    for (staged *s = head; s && rc == 0; s = s->next) {
        if (pause && s != head) usleep(pause);
        /* checked again right before its rename: another program that wrote the
         * table while the journal was written loses nothing */
        bool changed = !same_bytes(s->path, &s->expect);
        if (!changed && rename(s->tmp, s->path) == 0) {
            s->renamed = true;
            continue;
        }
        int e = changed ? 0 : errno;
        if (roll_back_staged(head) == 0) {
            drop_backups(head);
            for (size_t i = 0; i < nf; i++) unlink(fj[i].jpath);
            for (size_t i = 0; i < nf; i++) fsync_dir(fj[i].dir);
            if (changed)
                rc = opdb_fail(err, OPDB_ERR_RUNTIME,
                               "%s: changed by another program during this run; nothing was changed (run again)", s->path);
            else
                rc = opdb_fail(err, OPDB_ERR_RUNTIME,
                               "%s: cannot replace: %s; the run was rolled back: nothing was changed", s->table,
                               strerror(e));
        } else {
            rc = opdb_fail(err, OPDB_ERR_RUNTIME,
                           "%s: cannot replace: %s, and the run could not be rolled back: the journal %s lists what "
                           "remains (`opdb validate` reports it)",
                           s->table, changed ? "changed by another program" : strerror(e), nf ? fj[0].jpath : run_dir);
        }
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
        drop_backups(head);
        for (size_t i = 0; i < nf; i++) unlink(fj[i].jpath);
        for (size_t i = 0; i < nf; i++)
            if (fsync_dir(fj[i].dir) != 0 && !e) e = errno;
        if (e)
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the tables were replaced, but syncing the folder failed: %s "
                           "(they may not survive a power loss)", run_dir, strerror(e));
    }
    for (size_t i = 0; i < nf; i++) free(fj[i].dir), free(fj[i].jpath);
    free(fj);
    return rc;
}

int opdb_txn_end(bool commit, opdb_err *err) {
    const char *dir = NULL;
    opdb_txn_run *run = opdb_txn_run_now();
    if (!run || !opdb_txn_stage_close(run, &dir)) {
        opdb_txn_stage_drop(run);
        return 0;
    }
    sigset_t old;
    opdb_txn_hold_signals(&old);
    staged *rev = opdb_txn_stage_list(run);
    int rc = 0;
    if (commit)
        for (staged *s = rev; s && rc == 0; s = s->next)
            if (!opdb_file_id_same(s->path, &s->expect))
                rc = opdb_fail(err, OPDB_ERR_RUNTIME,
                               "%s: changed by another program during this run; nothing was changed (run again)",
                               s->path);
    if (commit && rc == 0) {
        opdb_txn_stage_set_state(run, OPDB_TXN_COMMITTING);
        rc = commit_all(rev, dir, err);
    } else {
        for (staged *s = rev; s; s = s->next) unlink(s->tmp);
        if (commit) rc = -1;
    }
    opdb_txn_stage_reset(run, commit && rc == 0 ? OPDB_TXN_DONE : OPDB_TXN_NONE);
    opdb_txn_stage_free(rev);
    opdb_txn_stage_drop(run);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
