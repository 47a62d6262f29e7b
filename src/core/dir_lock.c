/* The folder lock of database writers, and the checks made under it before
 * any table is opened: apart from path.c, so that path text and discovery
 * need nothing of the transaction recovery the lock runs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/call.h"
#include "opdb/fs.h"

/* A folder lock is held by the call that took it: let go if the call fails
 * for lack of memory, after what a writer killed there would have left is
 * cleaned up as the next writer would (a run that ran out while committing
 * is completed or undone by its journals, leftover temp files removed).
 * That cleanup allocates too: running out again leaves it to the next
 * writer. */
typedef struct held_lock {
    opdb_call_res res; /* key: the descriptor */
    char *dir;
    bool failing;      /* released because the call failed */
} held_lock;

static void release_lock(opdb_call_res *r) {
    held_lock *h = (held_lock *)r;
    if (!h->failing) { /* the first pass: the call is failing */
        h->failing = true;
        opdb_call_hold(r, release_lock, r->key); /* running out again closes it all the same */
        opdb_err err;
        opdb_err_clear(&err);
        (void)opdb_txn_recover(h->dir, NULL, &err);
        (void)opdb_call_drop(release_lock, r->key);
    }
    close((int)r->key);
    free(h->dir);
    free(h);
}

static void free_lock(held_lock *h) {
    free(h->dir);
    free(h);
}

static const char *kind_name(mode_t m) {
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISDIR(m)) return "a folder";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

int opdb_dir_check_tables(const char *dir, opdb_err *err) {
    DIR *d = opendir(dir);
    if (!d) return 0; /* a missing folder is reported by whoever opens it */
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".csv") != 0) continue;
        char *p = opdb_path_join(dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && !S_ISREG(st.st_mode))
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: is %s, not a table file: remove or rename it", p,
                           kind_name(st.st_mode));
        free(p);
    }
    closedir(d);
    return rc;
}

static int lock_plain(const char *dir, opdb_err *err) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot open folder: %s", dir, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        opdb_note("waiting for another opdb writing to %s", dir);
        while (flock(fd, LOCK_EX) != 0) {
            if (errno != EINTR) {
                int e = errno;
                close(fd);
                return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot lock: %s", dir, strerror(e));
            }
        }
    }
    return fd;
}

int opdb_dir_lock_plain(const char *dir, opdb_err *err) {
    held_lock *h = opdb_xmalloc(sizeof *h); /* before the lock: running out then holds nothing */
    h->dir = opdb_xstrdup(dir);
    h->failing = false;
    int fd = lock_plain(dir, err);
    if (fd < 0 || !opdb_call_hold(&h->res, release_lock, fd)) free_lock(h);
    return fd;
}

int opdb_dir_lock(const char *dir, opdb_err *err) {
    int fd = opdb_dir_lock_plain(dir, err);
    if (fd < 0) return -1;
    /* the lock holder is the only writer: finish or clean up killed runs;
     * then, before any table is opened, refuse a FIFO, device or folder
     * named like a table (reading one would block or misbehave) */
    if (opdb_txn_recover(dir, NULL, err) || opdb_dir_check_tables(dir, err)) {
        opdb_dir_unlock(fd);
        return -1;
    }
    return fd;
}

void opdb_dir_unlock(int fd) {
    if (fd < 0) return;
    held_lock *h = (held_lock *)opdb_call_drop(release_lock, fd);
    if (h) free_lock(h);
    close(fd);
}
