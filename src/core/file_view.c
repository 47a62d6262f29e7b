/* A whole file in memory, mapped where the file system allows.
 *
 * A database CSV of tens of MiB read() into a buffer is copied once by the
 * kernel, through a buffer far bigger than the caches, and read back from
 * memory by the tokenizer: on the project's VM, 0.40-0.48 s for the 635 MB
 * of the update bench's database, against 0.12-0.15 s to map the same page
 * cache and read it where it lies.  The mapping is private (a write, which
 * no reader makes, would copy the page, never reach the file).
 *
 * A mapped file that another program shrinks while it is read raises
 * SIGBUS on the next access past its new end.  The library installs no
 * handler: the program's (the CLI's) names the file this thread, or the
 * last one, maps (opdb_file_view_mapped_path), removes the temp files of
 * writers in flight and exits with status 1.  A program without one dies
 * of the signal, its database files still each old or new. */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/call.h"
#include "opdb/fs.h"

/* The file this thread maps now, for the SIGBUS handler. Not initial-exec
 * TLS: that would mark the whole library STATIC_TLS, and a program that
 * dlopens libopdb (the Python binding) then fails to load it. The thread
 * sets it before it reads the mapping, so its TLS block exists by then. */
static __thread const char *t_mapped_path;
/* The last file mapped by any thread: for a thread that reads a mapping
 * another one made (the workers of a batch pipeline). */
static _Atomic(const char *) g_last_mapped_path;

const char *opdb_file_view_mapped_path(void) {
    return t_mapped_path ? t_mapped_path : atomic_load(&g_last_mapped_path);
}

static int read_whole(opdb_file_view *v, int fd, const char *path, uint64_t from, opdb_err *err) {
    v->data = opdb_xmalloc(v->len + 1);
    size_t got = 0;
    while (got < v->len) {
        ssize_t k = pread(fd, v->data + got, v->len - got, (off_t)(from + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    v->data[v->len] = '\0';
    if (got != v->len) {
        free(v->data);
        v->data = NULL;
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    }
    return 0;
}

bool opdb_file_view_map(opdb_file_view *v, int fd, const char *path, uint64_t from, uint64_t size) {
    memset(v, 0, sizeof *v);
    if (opdb_call_now()->no_map) return false; /* tests: the read path */
    size_t ps = opdb_page_size();
    if (size <= from || size > SIZE_MAX - 2 * ps - OPDB_VIEW_PAD) return false;
    /* the file's pages, then anonymous pages up to OPDB_VIEW_PAD bytes past
     * its end: those bytes read as NUL (a mapping is zero past the end of
     * the file) */
    size_t file_len = (size_t)size, total = (file_len + OPDB_VIEW_PAD + ps - 1) / ps * ps;
    char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return false;
    if (mmap(base, file_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
        munmap(base, total); /* a file system without mmap, a pipe */
        return false;
    }
    v->map = base;
    v->map_len = total;
    v->data = base + from;
    v->len = file_len - (size_t)from;
    v->path = opdb_xstrdup(path ? path : "(input)");
    t_mapped_path = v->path;
    atomic_store(&g_last_mapped_path, v->path);
    return true;
}

int opdb_file_view_open(opdb_file_view *v, int fd, const char *path, uint64_t from, uint64_t size, bool allow_map,
                        opdb_err *err) {
    if (allow_map && opdb_file_view_map(v, fd, path, from, size)) return 0;
    memset(v, 0, sizeof *v);
    v->len = size > from ? (size_t)(size - from) : 0;
    return read_whole(v, fd, path, from, err);
}

void opdb_file_view_close(opdb_file_view *v) {
    if (v->map) {
        if (t_mapped_path == v->path) t_mapped_path = NULL;
        const char *mine = v->path;
        atomic_compare_exchange_strong(&g_last_mapped_path, &mine, NULL);
        munmap(v->map, v->map_len);
        free(v->path);
    } else {
        free(v->data);
    }
    memset(v, 0, sizeof *v);
}
