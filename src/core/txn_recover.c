/* What the next holder of a folder lock does about killed runs (fs.h,
 * opdb_txn_recover): a journal left in the folder is checked entry by entry
 * (core/journal.h) and then rolled forward, or rolled back from its backups
 * when a target can no longer be replaced; temp files and backups of killed
 * runs are removed.  Only the folder itself and opdb's own subfolders are
 * touched: a subfolder may be another database, with its own lock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/journal.h"
#include "opdb/fs.h"

/* opdb's own subfolders of a database folder: their journals and temp files
 * belong to the folder's lock. */
static const char *const own_subfolders[] = {OPDB_REPORTS_DIR, OPDB_BENCH_WORK_DIR};

typedef struct planned {
    char *real, *tmp, *backup; /* absolute; backup NULL for "-" and "!" */
    bool tmp_there, absent_before, no_backup;
    bool outside; /* a link out of the folder: left as it is */
    const char *table_path;    /* dir/table as named */
} planned;

typedef struct loaded {
    char *jpath;
    opdb_strbuf text;
    opdb_journal j;
    planned *p;
    char **table_paths;
} loaded;

static void loaded_free(loaded *L) {
    for (size_t i = 0; i < L->j.n; i++) {
        free(L->p[i].real), free(L->p[i].tmp), free(L->p[i].backup);
        free(L->table_paths[i]);
    }
    free(L->p);
    free(L->table_paths);
    opdb_journal_free(&L->j);
    opdb_sb_free(&L->text);
    free(L->jpath);
    memset(L, 0, sizeof *L);
}

static int invalid(const char *jpath, const char *why, opdb_err *err) {
    return opdb_fail(err, OPDB_ERR_RUNTIME,
                     "%s: invalid journal: %s; nothing was renamed (`opdb validate --repair --discard-journal` deletes it)",
                     jpath, why);
}

/* Reads the journal without following a link or blocking on a FIFO. */
static int read_journal(const char *jpath, opdb_strbuf *out, opdb_err *err) {
    int fd = open(jpath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP) return invalid(jpath, "a symbolic link", err);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot read the journal: %s", jpath, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return invalid(jpath, "not a regular file", err);
    }
    if ((uint64_t)st.st_size > OPDB_JOURNAL_MAX_BYTES) {
        close(fd);
        return invalid(jpath, "larger than any journal opdb writes", err);
    }
    opdb_sb_clear(out);
    char buf[65536];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot read the journal: %s", jpath, strerror(e));
        }
        if (r == 0) break;
        opdb_sb_add(out, buf, (size_t)r);
        if (out->n > OPDB_JOURNAL_MAX_BYTES) {
            close(fd);
            return invalid(jpath, "larger than any journal opdb writes", err);
        }
    }
    close(fd);
    return 0;
}

/* Loads dir's journal: 0 none, 1 loaded and every entry resolved, -1 invalid
 * (err set).  A table that is a symbolic link is written through: its temp
 * file and backup lie next to the file it points to, named after it. */
static int load(const char *dir, loaded *L, opdb_err *err) {
    memset(L, 0, sizeof *L);
    L->jpath = opdb_path_join(dir, OPDB_JOURNAL_NAME);
    opdb_sb_init(&L->text);
    struct stat st;
    if (lstat(L->jpath, &st) != 0 && errno == ENOENT) {
        loaded_free(L);
        return 0;
    }
    if (read_journal(L->jpath, &L->text, err) ||
        opdb_journal_parse(L->text.p ? L->text.p : "", L->text.n, L->jpath, &L->j, err)) {
        loaded_free(L);
        return -1;
    }
    L->p = opdb_xcalloc(L->j.n, sizeof *L->p);
    L->table_paths = opdb_xcalloc(L->j.n, sizeof *L->table_paths);
    for (size_t i = 0; i < L->j.n; i++) {
        const opdb_journal_entry *e = &L->j.e[i];
        planned *p = &L->p[i];
        char *t = L->table_paths[i] = opdb_path_join(dir, e->table);
        p->table_path = t;
        if (lstat(t, &st) == 0 && S_ISLNK(st.st_mode)) {
            /* written through the link only while it stays in this folder: a
             * journal never acts on files elsewhere */
            char *r = realpath(t, NULL), *rdir = r ? opdb_path_parent(r) : NULL, *here = realpath(dir, NULL);
            p->outside = !r || !here || strcmp(rdir, here) != 0;
            p->real = r ? r : opdb_xstrdup(t);
            free(rdir), free(here);
        } else {
            p->real = opdb_xstrdup(t);
        }
        char *rd = opdb_path_parent(p->real);
        const char *rb = opdb_path_basename(p->real);
        const char *why = NULL;
        if (!opdb_journal_aux_name(e->tmp, "tmp", rb)) why = "its temp file is not named after it";
        else if (!strcmp(e->backup, OPDB_JOURNAL_ABSENT)) p->absent_before = true;
        else if (!strcmp(e->backup, OPDB_JOURNAL_NO_BACKUP)) p->no_backup = true;
        else if (!opdb_journal_aux_name(e->backup, "old", rb)) why = "its backup is not named after it";
        if (why) {
            char msg[128];
            snprintf(msg, sizeof msg, "entry %zu: %s", i + 1, why);
            free(rd);
            invalid(L->jpath, msg, err);
            loaded_free(L);
            return -1;
        }
        p->tmp = opdb_path_join(rd, e->tmp);
        if (!p->absent_before && !p->no_backup) p->backup = opdb_path_join(rd, e->backup);
        free(rd);
        if (p->outside) continue;
        if (lstat(p->tmp, &st) == 0) {
            if (!S_ISREG(st.st_mode)) {
                char msg[128];
                snprintf(msg, sizeof msg, "entry %zu: its temp file is not a regular file", i + 1);
                invalid(L->jpath, msg, err);
                loaded_free(L);
                return -1;
            }
            p->tmp_there = true;
        }
    }
    return 1;
}

static bool immutable(const char *path, int flags) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | flags), fl = 0;
    if (fd < 0) return false;
    bool r = ioctl(fd, FS_IOC_GETFLAGS, &fl) == 0 && (fl & (FS_IMMUTABLE_FL | FS_APPEND_FL));
    close(fd);
    return r;
}

/* Why entry p cannot be rolled forward (NULL when it can). */
static const char *forward_problem(const planned *p) {
    if (!p->tmp_there || p->outside) return NULL; /* renamed before the kill; or not ours to touch */
    struct stat st;
    if (lstat(p->real, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return "a directory is in its place";
        if (!S_ISREG(st.st_mode)) return "something that is not a regular file is in its place";
        if (immutable(p->real, 0)) return "it is immutable or append-only (chattr)";
    }
    char *d = opdb_path_parent(p->real);
    const char *why = access(d, W_OK | X_OK) != 0                 ? "its folder is not writable"
                      : immutable(d, O_DIRECTORY)                  ? "its folder is immutable or append-only (chattr)"
                                                                   : NULL;
    free(d);
    return why;
}

/* Why entry p cannot be rolled back (NULL when it can). */
static const char *back_problem(const planned *p) {
    if (p->tmp_there || p->outside) return NULL; /* never renamed: the old file is still there */
    struct stat st;
    if (p->no_backup) return "no backup of its old version could be made";
    if (p->absent_before) return NULL;
    if (lstat(p->backup, &st) != 0 || !S_ISREG(st.st_mode)) return "its backup is missing";
    return NULL;
}

int opdb_txn_journal_status(const char *dir, char *msg, size_t cap) {
    opdb_err err;
    opdb_err_clear(&err);
    loaded L;
    int r = load(dir, &L, &err);
    if (r == 0) return OPDB_JOURNAL_NONE;
    if (r < 0) {
        snprintf(msg, cap, "%s", err.msg);
        return OPDB_JOURNAL_INVALID;
    }
    int status = OPDB_JOURNAL_UNFINISHED;
    for (size_t i = 0; i < L.j.n && status == OPDB_JOURNAL_UNFINISHED; i++) {
        const char *why = forward_problem(&L.p[i]);
        if (why) {
            status = OPDB_JOURNAL_BACK;
            snprintf(msg, cap, "%s: a killed run cannot be completed (%s: %s); `opdb validate --repair` rolls it back",
                     L.jpath, L.p[i].table_path, why);
        }
    }
    for (size_t i = 0; i < L.j.n && status == OPDB_JOURNAL_BACK; i++) {
        const char *why = back_problem(&L.p[i]);
        if (why) {
            status = OPDB_JOURNAL_STUCK;
            snprintf(msg, cap, "%s: a killed run can be neither completed nor rolled back (%s: %s); move the "
                     "directory or immutable file away, then run `opdb validate --repair`",
                     L.jpath, L.p[i].table_path, why);
        }
    }
    if (status == OPDB_JOURNAL_UNFINISHED)
        snprintf(msg, cap, "%s: unfinished run: a killed run left its journal (%zu file(s)); `opdb validate --repair` "
                 "completes it", L.jpath, L.j.n);
    loaded_free(&L);
    return status;
}

static void drop_backups(loaded *L) {
    for (size_t i = 0; i < L->j.n; i++)
        if (L->p[i].backup && !L->p[i].outside) unlink(L->p[i].backup);
}

static void sync_dir(const char *d) {
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        if (fsync(fd) != 0) { /* best effort: the renames are done either way */
        }
        close(fd);
    }
}

static int finish(const char *dir, loaded *L) {
    drop_backups(L);
    unlink(L->jpath);
    /* the journal's folder, and the folders of tables written through links */
    sync_dir(dir);
    for (size_t i = 0; i < L->j.n; i++) {
        if (L->p[i].outside) continue;
        char *d = opdb_path_parent(L->p[i].real);
        if (strcmp(d, dir) != 0) sync_dir(d);
        free(d);
    }
    return 0;
}

/* uncommitted: the journal of a subfolder whose database folder has none (its
 * journal is written last): when nothing was renamed yet, the run is rolled back */
static int recover_journal(const char *dir, bool uncommitted, opdb_err *err) {
    loaded L;
    int r = load(dir, &L, err);
    if (r <= 0) return r;
    const char *fwd = NULL;
    size_t bad = 0;
    bool none_renamed = true;
    for (size_t i = 0; i < L.j.n; i++)
        if (!L.p[i].outside && !L.p[i].tmp_there) none_renamed = false;
    if (uncommitted && none_renamed && L.j.n) fwd = "the run was not committed (its database folder has no journal)";
    for (size_t i = 0; i < L.j.n && !fwd; i++)
        if ((fwd = forward_problem(&L.p[i]))) bad = i;
    size_t done = 0;
    int rc = 0;
    if (!fwd) {
        for (size_t i = 0; i < L.j.n && rc == 0; i++) {
            if (!L.p[i].tmp_there) continue;
            if (rename(L.p[i].tmp, L.p[i].real) != 0) {
                rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot complete the interrupted run: %s (the journal %s "
                               "stays; `opdb validate` reports it)", L.p[i].table_path, strerror(errno), L.jpath);
            } else {
                L.p[i].tmp_there = false;
                done++;
            }
        }
        if (rc == 0) {
            finish(dir, &L);
            opdb_note("%s: completed an interrupted run (%zu files replaced)", dir, done);
        }
        loaded_free(&L);
        return rc;
    }
    /* it cannot be completed: back to the old tables, if every entry allows */
    for (size_t i = 0; i < L.j.n; i++) {
        const char *why = back_problem(&L.p[i]);
        if (why) {
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: a killed run can be neither completed (%s: %s) nor rolled back "
                           "(%s: %s); move it away, then run `opdb validate --repair`", L.jpath, L.p[bad].table_path,
                           fwd, L.p[i].table_path, why);
            loaded_free(&L);
            return rc;
        }
    }
    for (size_t i = 0; i < L.j.n && rc == 0; i++) {
        planned *p = &L.p[i];
        if (p->outside) {
            continue;
        } else if (p->tmp_there) {
            unlink(p->tmp);
        } else if (p->absent_before) {
            struct stat st; /* the new file itself, never what a link points to */
            if (lstat(p->table_path, &st) == 0 && S_ISREG(st.st_mode)) unlink(p->table_path);
        } else if (rename(p->backup, p->real) != 0) {
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot roll back the interrupted run: %s (the journal %s stays)",
                           p->table_path, strerror(errno), L.jpath);
        } else {
            free(p->backup);
            p->backup = NULL;
        }
    }
    if (rc == 0) {
        finish(dir, &L);
        opdb_note("%s: rolled back an interrupted run that could not be completed (%s: %s)", dir,
                  L.p[bad].table_path, fwd);
    }
    loaded_free(&L);
    return rc;
}

/* ".NAME.tmp.XXXXXX" and ".NAME.old.XXXXXX": temp files and backups of runs. */
static bool is_leftover(const char *name, void *ctx) {
    (void)ctx;
    return opdb_journal_aux_name(name, "tmp", NULL) || opdb_journal_aux_name(name, "old", NULL);
}

/* Removes leftovers directly inside dir (and anywhere below when deep: opdb's
 * own work folder); returns how many. */
static int remove_leftovers(const char *dir, bool deep) {
    char **v = NULL;
    size_t n = 0;
    opdb_err e;
    opdb_err_clear(&e);
    int gone = 0;
    if (deep) {
        if (opdb_find_files(dir, is_leftover, NULL, &v, &n, &e) < 0) return 0;
        for (size_t i = 0; i < n; i++) gone += unlink(v[i]) == 0;
        opdb_free_paths(v, n);
        return gone;
    }
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!is_leftover(de->d_name, NULL)) continue;
        char *p = opdb_path_join(dir, de->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) gone += unlink(p) == 0;
        free(p);
    }
    closedir(d);
    return gone;
}

static bool real_subfolder(const char *p) {
    struct stat st;
    return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int opdb_txn_recover(const char *dir, int *removed, opdb_err *err) {
    if (removed) *removed = 0;
    size_t nsub = sizeof own_subfolders / sizeof own_subfolders[0];
    char *sub[sizeof own_subfolders / sizeof own_subfolders[0]];
    for (size_t i = 0; i < nsub; i++) sub[i] = opdb_path_join(dir, own_subfolders[i]);
    char *jpath = opdb_path_join(dir, OPDB_JOURNAL_NAME);
    struct stat st;
    bool committed = lstat(jpath, &st) == 0;
    free(jpath);
    /* the subfolders first: the folder's own journal, removed last, still says the run was committed */
    int rc = 0;
    for (size_t i = 0; i < nsub && rc == 0; i++)
        if (real_subfolder(sub[i])) rc = recover_journal(sub[i], !committed, err);
    if (rc == 0) rc = recover_journal(dir, false, err);
    int gone = 0;
    if (rc == 0) {
        gone = remove_leftovers(dir, false);
        for (size_t i = 0; i < nsub; i++)
            if (real_subfolder(sub[i])) gone += remove_leftovers(sub[i], i > 0);
        if (gone) opdb_note("%s: removed %d temp file(s) of killed runs", dir, gone);
    }
    for (size_t i = 0; i < nsub; i++) free(sub[i]);
    if (removed) *removed = gone;
    return rc;
}

static int discard_one(const char *dir, opdb_err *err) {
    loaded L;
    opdb_err e2;
    opdb_err_clear(&e2);
    int r = load(dir, &L, &e2);
    if (r == 0) return 0;
    if (r > 0) {
        int rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the journal is valid: `opdb validate --repair` completes it "
                           "(it is not discarded)", L.jpath);
        loaded_free(&L);
        return rc;
    }
    char *jpath = opdb_path_join(dir, OPDB_JOURNAL_NAME);
    int rc = 0;
    if (unlink(jpath) != 0) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot remove: %s", jpath, strerror(errno));
    else opdb_note("%s: discarded an invalid journal (nothing was renamed): %s", dir, e2.msg);
    free(jpath);
    return rc;
}

int opdb_txn_discard_journal(const char *dir, opdb_err *err) {
    int rc = discard_one(dir, err);
    for (size_t i = 0; i < sizeof own_subfolders / sizeof own_subfolders[0] && rc == 0; i++) {
        char *sub = opdb_path_join(dir, own_subfolders[i]);
        if (real_subfolder(sub)) rc = discard_one(sub, err);
        free(sub);
    }
    return rc;
}
