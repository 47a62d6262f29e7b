/* failio.so: an LD_PRELOAD shim for the all-or-nothing trials (docs/GUARANTEES.md
 * point 7).  It fails the Nth call of one kind, counted over the calls that
 * touch files under one folder, as a full disk or a failing device would:
 *
 *   FAILIO_DIR=/abs/folder  only calls on files under it are counted
 *   FAILIO_OP=write|rename|fsync|any
 *   FAILIO_N=N              fail the Nth counted call (0: never; count only)
 *   FAILIO_COUNT=/abs/file  at exit, the number of counted calls is written there
 *
 * write/pwrite/writev fail with ENOSPC, fsync/fdatasync with EIO, rename/
 * renameat with EIO.  Once failed, every later counted call of that kind
 * fails too (a full disk stays full).  The shim is opdb-independent: it only
 * sees libc calls, no seam inside opdb. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { K_WRITE, K_RENAME, K_FSYNC };

static long g_count;     /* counted calls so far (atomic: opdb writes from several threads) */
static int g_failed;     /* the Nth call was reached */

static const char *env(const char *k) {
    const char *v = getenv(k);
    return v && *v ? v : NULL;
}

/* Whether path (absolute or relative to the working folder) lies under FAILIO_DIR. */
static int under_dir(const char *path) {
    const char *dir = env("FAILIO_DIR");
    if (!dir || !path) return 0;
    char buf[2 * PATH_MAX + 2];
    if (path[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) return 0;
        snprintf(buf, sizeof buf, "%s/%s", cwd, path);
        path = buf;
    }
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static int fd_under_dir(int fd) {
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
    return under_dir(path);
}

/* Whether this counted call of kind k must fail. */
static int must_fail(int k) {
    const char *op = env("FAILIO_OP");
    static const char *const names[] = {"write", "rename", "fsync"};
    if (!op || (strcmp(op, "any") != 0 && strcmp(op, names[k]) != 0)) return 0;
    long n = env("FAILIO_N") ? atol(env("FAILIO_N")) : 0;
    long c = __atomic_add_fetch(&g_count, 1, __ATOMIC_SEQ_CST);
    if (n > 0 && c >= n) __atomic_store_n(&g_failed, 1, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&g_failed, __ATOMIC_SEQ_CST);
}

__attribute__((destructor)) static void report(void) {
    const char *p = env("FAILIO_COUNT");
    if (!p) return;
    FILE *f = fopen(p, "w");
    if (f) {
        fprintf(f, "%ld\n", __atomic_load_n(&g_count, __ATOMIC_SEQ_CST));
        fclose(f);
    }
}

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef int (*fsync_fn)(int);
typedef int (*rename_fn)(const char *, const char *);
typedef int (*renameat_fn)(int, const char *, int, const char *);

/* The libc function behind ours (memcpy: ISO C has no object-to-function pointer cast). */
/* The cache is atomic: opdb's writer threads may make their first call at once. */
#define REAL(name, type)                                                \
    static type cache_##name;                                           \
    type real_##name = __atomic_load_n(&cache_##name, __ATOMIC_ACQUIRE); \
    if (!real_##name) {                                                 \
        void *sym_ = dlsym(RTLD_NEXT, #name);                           \
        memcpy(&real_##name, &sym_, sizeof sym_);                       \
        __atomic_store_n(&cache_##name, real_##name, __ATOMIC_RELEASE); \
    }

ssize_t write(int fd, const void *buf, size_t n) {
    REAL(write, write_fn);
    if (fd > 2 && fd_under_dir(fd) && must_fail(K_WRITE)) return errno = ENOSPC, -1;
    return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL(pwrite, pwrite_fn);
    if (fd > 2 && fd_under_dir(fd) && must_fail(K_WRITE)) return errno = ENOSPC, -1;
    return real_pwrite(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    REAL(writev, writev_fn);
    if (fd > 2 && fd_under_dir(fd) && must_fail(K_WRITE)) return errno = ENOSPC, -1;
    return real_writev(fd, iov, cnt);
}

int fsync(int fd) {
    REAL(fsync, fsync_fn);
    if (fd_under_dir(fd) && must_fail(K_FSYNC)) return errno = EIO, -1;
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync, fsync_fn);
    if (fd_under_dir(fd) && must_fail(K_FSYNC)) return errno = EIO, -1;
    return real_fdatasync(fd);
}

int rename(const char *from, const char *to) {
    REAL(rename, rename_fn);
    if (under_dir(to) && must_fail(K_RENAME)) return errno = EIO, -1;
    return real_rename(from, to);
}

int renameat(int dfd, const char *from, int tdfd, const char *to) {
    REAL(renameat, renameat_fn);
    if ((to[0] == '/' || tdfd == AT_FDCWD) && under_dir(to) && must_fail(K_RENAME)) return errno = EIO, -1;
    return real_renameat(dfd, from, tdfd, to);
}
