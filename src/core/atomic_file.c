/* Atomic replacement: temp file in the target folder + fsync + rename.
 * While a temp file exists its name is registered so that SIGINT/SIGTERM/
 * SIGHUP handlers can remove it before the process dies. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "opdb/fs.h"

static char g_inflight[4096];
static volatile sig_atomic_t g_has_inflight;

static void on_fatal_signal(int sig) {
    if (g_has_inflight) unlink(g_inflight);
    signal(sig, SIG_DFL);
    raise(sig);
}

void opdb_atomic_install_signal_cleanup(void) {
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static mode_t current_umask(void) {
    mode_t m = umask(0);
    umask(m);
    return m;
}

int opdb_atomic_write(const char *path, const void *data, size_t n, opdb_err *err) {
    char *dir = opdb_path_parent(path);
    const char *base = opdb_path_basename(path);
    size_t need = strlen(dir) + strlen(base) + 32;
    if (need > sizeof g_inflight) {
        free(dir);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: path too long", path);
    }
    char tmpl[sizeof g_inflight];
    snprintf(tmpl, sizeof tmpl, "%s/.%s.tmp.XXXXXX", dir, base);
    free(dir);

    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    /* Register the name before the file can exist, atomically w.r.t. signals. */
    sigprocmask(SIG_BLOCK, &block, &old);
    int fd = mkstemp(tmpl);
    if (fd >= 0) {
        memcpy(g_inflight, tmpl, strlen(tmpl) + 1);
        g_has_inflight = 1;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot create temporary file: %s", path, strerror(errno));

    const char *p = data;
    size_t left = n;
    int e = 0;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            e = errno;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (!e && fchmod(fd, 0666 & ~current_umask()) != 0) e = errno;
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (!e && rename(tmpl, path) != 0) e = errno;
    sigprocmask(SIG_BLOCK, &block, &old);
    if (e) unlink(tmpl);
    g_has_inflight = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (e) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot write: %s", path, strerror(e));
    return 0;
}
