/* File-system helpers: Python-pathlib-style path text, directory creation,
 * sorted recursive discovery, and atomic replacement of files. */
#ifndef OPDB_FS_H
#define OPDB_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* pathlib's str(Path(p)): collapse `//` and `/./`, drop a trailing `/`,
 * keep `..`; "" becomes ".". Returns malloc'd string. */
OPDB_API char *opdb_path_normalize(const char *p);
/* a + "/" + b, normalised. malloc'd. */
OPDB_API char *opdb_path_join(const char *a, const char *b);
/* Name of the parent folder of `p` (Path(p).parent.name). malloc'd. */
OPDB_API char *opdb_path_parent_name(const char *p);
/* Parent path (Path(p).parent). malloc'd. */
OPDB_API char *opdb_path_parent(const char *p);
/* Final component (Path(p).name). Points into p. */
OPDB_API const char *opdb_path_basename(const char *p);
/* pathlib ordering: compare component by component, bytewise. */
OPDB_API int opdb_path_cmp(const char *a, const char *b);

OPDB_API bool opdb_is_dir(const char *p);
OPDB_API bool opdb_is_file(const char *p);
OPDB_API bool opdb_path_exists(const char *p);
/* mkdir -p. */
/* The whole of path into out (cleared first; NUL-terminated, also when
 * empty). Errors name the file: cannot open, read failed. */
OPDB_API int opdb_read_file(const char *path, opdb_strbuf *out, opdb_err *err);
OPDB_API int opdb_mkdirs(const char *p, opdb_err *err);

/* Recursive listing of regular files below root (not following symlinked
 * folders, like Path.rglob), filtered by `keep(name)`, sorted with
 * opdb_path_cmp. Returns count; *out is a malloc'd array of malloc'd paths. */
typedef bool (*opdb_name_filter)(const char *name, void *ctx);
OPDB_API int opdb_find_files(const char *root, opdb_name_filter keep, void *ctx, char ***out,
                    size_t *count, opdb_err *err);
OPDB_API void opdb_free_paths(char **paths, size_t count);

/* -1 with a clear error when an entry of dir named like a table (*.csv) is
 * not a regular file (or a link to one): a FIFO, device, folder or socket.
 * opdb_dir_lock checks it before locking. */
OPDB_API int opdb_dir_check_tables(const char *dir, opdb_err *err);

/* Exclusive advisory lock (flock) on a folder, so concurrent writers to one
 * database serialise. Refuses a folder opdb_dir_check_tables refuses. Blocks, saying so in a note (opdb_note) if it has to wait.
 * Returns a descriptor to pass to opdb_dir_unlock, or -1 with err set. */
OPDB_API int opdb_dir_lock(const char *dir, opdb_err *err);
/* The same lock, without acting on what killed runs left (for discarding an
 * invalid journal). */
OPDB_API int opdb_dir_lock_plain(const char *dir, opdb_err *err);
OPDB_API void opdb_dir_unlock(int fd);

/* Atomic file replacement: write to a temp file in the same folder, fsync,
 * rename over the target.  A failed or interrupted run leaves the old file.
 * Temp files of a run that is killed by SIGINT/SIGTERM are removed. */
OPDB_API int opdb_atomic_write(const char *path, const void *data, size_t n, opdb_err *err);

/* The same, streamed: open, append to f->buf (flushed by opdb_atomic_flush
 * whenever the caller likes), then commit (or abort: the target is untouched). */
/* What a file was when it was read (stat: device, inode, size, mtime,
 * ctime; or absent), so that a writer can refuse to replace a file another
 * program changed meanwhile. */
typedef struct opdb_file_id {
    bool taken, absent;
    uint64_t dev, ino, size;
    int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
} opdb_file_id;
OPDB_API void opdb_file_id_take(const char *path, opdb_file_id *id);
/* true when not taken, or when path is still that file (or still absent). */
OPDB_API bool opdb_file_id_same(const char *path, const opdb_file_id *id);

typedef struct opdb_atomic_file {
    int fd, slot, err;
    char tmpl[4096];
    char *path;       /* the file replaced: a symlink's target (written through the link) */
    char *named;      /* the path as given (the link itself, whose folder keeps the journal) */
    opdb_strbuf buf;
    opdb_file_id expect; /* opdb_atomic_expect */
} opdb_atomic_file;
OPDB_API int opdb_atomic_open(opdb_atomic_file *f, const char *path, opdb_err *err);
OPDB_API int opdb_atomic_flush(opdb_atomic_file *f);
/* Flushes f->buf, then writes p[0..n) straight to the file (no copy into
 * the buffer: for long runs of bytes that are already in memory). */
OPDB_API int opdb_atomic_append_direct(opdb_atomic_file *f, const void *p, size_t n);
OPDB_API int opdb_atomic_commit(opdb_atomic_file *f, opdb_err *err);
OPDB_API void opdb_atomic_abort(opdb_atomic_file *f);
/* The commit fails (target untouched) unless the target is still `id`. */
OPDB_API void opdb_atomic_expect(opdb_atomic_file *f, const opdb_file_id *id);

/* All-or-nothing runs (txn.c).  Between opdb_txn_begin and opdb_txn_end
 * (taken under the lock of every folder written) every opdb_atomic_commit
 * only stages its file (written, fsynced, not renamed).  opdb_txn_end(true)
 * checks that no target changed since it was read and that every target can
 * be replaced (not a directory, not immutable, a writable folder), backs up
 * the old files (hard links), records the set in a .opdb-journal in each
 * folder (plain names only, fsynced), renames them all and removes the
 * journals; a rename that fails all the same is rolled back from the
 * backups; opdb_txn_end(false) or any error deletes the staged files: the
 * folder is wholly old or wholly new.  A run belongs to the call that began
 * it (an entry point's call, with the threads and inner calls it starts;
 * outside any call, the thread): only that call's commits stage into it,
 * and its nested begin/end pairs join the outermost; another call's run on
 * another thread is its own. */
#define OPDB_JOURNAL_NAME ".opdb-journal"
/* opdb's own subfolders of a database folder (update reports, bench's work
 * files): covered by the folder's lock; any other subfolder may be another
 * database, with its own. */
#define OPDB_REPORTS_DIR "reports"
#define OPDB_BENCH_WORK_DIR ".opdb_bench"
OPDB_API int opdb_txn_begin(const char *dir);
OPDB_API int opdb_txn_end(bool commit, opdb_err *err);
OPDB_API bool opdb_txn_active(void); /* this call's run is open */
/* tmp renamed over path; table: the name as given (path, or a link to it). */
OPDB_API void opdb_txn_stage(const char *tmp, const char *path, const char *table, const opdb_file_id *expect);
/* Async-signal-safe: removes the staged temp files of every open run of the
 * process not yet committing (before its journal). */
OPDB_API void opdb_txn_remove_staged(void);
enum { OPDB_TXN_NONE, OPDB_TXN_STAGING, OPDB_TXN_COMMITTING, OPDB_TXN_DONE };
/* Async-signal-safe, for the whole process: COMMITTING when some open run
 * is renaming, else STAGING when some run is open, else how the last run
 * that ended ended (DONE: committed; NONE: rolled back, or no run yet). */
OPDB_API int opdb_txn_state_now(void);
/* Run under the folder lock (opdb_dir_lock does): completes a run killed
 * after its journals were written (or rolls it back from its backups when a
 * target can no longer be replaced), then removes opdb temp files and
 * backups (".NAME.tmp.XXXXXX", ".NAME.old.XXXXXX") of killed runs in dir and
 * its own subfolders, never in another subfolder; *removed counts them.  A
 * journal whose entries are not plain names of opdb's files in its folder
 * is invalid: an error naming it, nothing renamed. */
OPDB_API int opdb_txn_recover(const char *dir, int *removed, opdb_err *err);
/* What a journal left in dir would make the next writer do (read-only):
 * msg says it in one line for all but NONE. */
enum { OPDB_JOURNAL_NONE, OPDB_JOURNAL_UNFINISHED, OPDB_JOURNAL_BACK, OPDB_JOURNAL_STUCK, OPDB_JOURNAL_INVALID };
OPDB_API int opdb_txn_journal_status(const char *dir, char *msg, size_t cap);
/* Deletes an invalid journal of dir (or of its own subfolders), renaming
 * nothing; a valid one is refused (opdb_txn_recover completes it).  Run
 * under opdb_dir_lock_plain. */
OPDB_API int opdb_txn_discard_journal(const char *dir, opdb_err *err);
/* Removes the temp files of writers in flight and those staged by an open
 * run (async-signal-safe: for the program's handler of SIGINT, SIGTERM,
 * SIGHUP or SIGBUS about to end the process; the library installs none). */
OPDB_API void opdb_atomic_remove_inflight(void);

/* A whole file in memory from offset `from` of its `size` bytes: mapped
 * (private, copy-on-write) where allow_map and the file system allow it,
 * else read into a buffer.  data[len] reads as NUL; a mapped view has
 * OPDB_VIEW_PAD readable NUL bytes from there.  While it is mapped, a
 * file shrunk by another program raises SIGBUS on the next read past its
 * new end: the program's handler (opdb's CLI installs one) may name the
 * file (opdb_file_view_mapped_path) and remove the unfinished files. */
#define OPDB_VIEW_PAD 64
typedef struct opdb_file_view {
    char *data;
    size_t len;
    void *map;        /* the mapping, or NULL when data is malloc'ed */
    size_t map_len;
    char *path;       /* when mapped: for the error */
} opdb_file_view;
OPDB_API int opdb_file_view_open(opdb_file_view *v, int fd, const char *path, uint64_t from, uint64_t size, bool allow_map,
                        opdb_err *err);
/* The mapping only: false (v empty) where the file cannot be mapped or has
 * no bytes from `from` on. */
OPDB_API bool opdb_file_view_map(opdb_file_view *v, int fd, const char *path, uint64_t from, uint64_t size);
OPDB_API void opdb_file_view_close(opdb_file_view *v);
/* The file this thread maps now, else the last one any thread mapped, or
 * NULL (async-signal-safe: for a SIGBUS handler). */
OPDB_API const char *opdb_file_view_mapped_path(void);

#ifdef __cplusplus
}
#endif
#endif
