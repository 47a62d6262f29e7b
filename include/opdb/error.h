/* What a program that embeds libopdb needs of every call: the error a
 * call returns, and the process-wide choices the library leaves to the
 * program (it prints, exits, reads the environment and handles signals
 * never on its own): where warnings go, what out of memory does, and the
 * named settings it may read. */
#ifndef OPDB_ERROR_H
#define OPDB_ERROR_H

#include <stddef.h>

#include "opdb/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit-code classes: runtime failure (1) and usage error (2); out of
 * memory (a runtime failure: opdb exits 1) is told apart for programs that
 * embed the library. */
enum { OPDB_OK = 0, OPDB_ERR_RUNTIME = 1, OPDB_ERR_USAGE = 2, OPDB_ERR_NOMEM = 3 };

/* An error travels up to the CLI as one ready-to-print line. */
typedef struct opdb_err {
    int code;          /* OPDB_OK, OPDB_ERR_RUNTIME, OPDB_ERR_USAGE or OPDB_ERR_NOMEM */
    char msg[1024];
} opdb_err;

#if defined(__GNUC__)
#define OPDB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define OPDB_NORETURN __attribute__((noreturn))
#else
#define OPDB_PRINTF(a, b)
#define OPDB_NORETURN
#endif

/* Set err (if not already set) and return -1, so callers can `return opdb_fail(...)`. */
OPDB_API int opdb_fail(opdb_err *err, int code, const char *fmt, ...) OPDB_PRINTF(3, 4);
OPDB_API void opdb_err_clear(opdb_err *err);

/* Warnings are one line each, handed to the call's logger (opdb_log below)
 * or, for a call that gives none and for functions called outside any
 * command entry point, to the handler the program installed here (the opdb
 * command prints "opdb <command>: warning: <line>"); without one they go to
 * stderr prefixed "opdb: warning: ". */
typedef void (*opdb_warn_fn)(void *ctx, const char *line);
OPDB_API void opdb_set_warn_handler(opdb_warn_fn fn, void *ctx);
/* Notes on what a call did beside its result (it waited for another
 * writer's folder lock, completed or rolled back a killed run, removed its
 * temp files): one line each, handed to the call's logger or, as warnings
 * are, to the program's handler; without one they are dropped (opdb prints
 * them on stderr after "opdb: "). */
OPDB_API void opdb_set_note_handler(opdb_warn_fn fn, void *ctx);
/* Where one call's warnings, notes and progress line go: the `log` field of
 * every command's options (the process-wide handlers above are the default
 * for a call that gives none). A NULL function takes the enclosing call's
 * (bench writing back through update), at the outermost call the process
 * default. The functions are called on the calling thread or on a worker
 * thread of the same call, so two calls running at once on two threads
 * each get only their own lines. */
typedef struct opdb_log {
    opdb_warn_fn warn;      /* a warning, one line without prefix */
    opdb_warn_fn note;      /* a note, one line */
    opdb_warn_fn progress;  /* the progress line to draw, "" to erase it; NULL: drawn on stderr when it
                               is a terminal */
    void *ctx;              /* handed to each */
    opdb_warn_fn nothing;   /* a warning that the run produced nothing meaningful (no rows, no matches, less
                               than asked), one line: the caller counts them (opdb's --strict exits 1 on
                               any); NULL: handed to warn like any warning */
} opdb_log;
/* Modes of one call that tests and measurements choose: the `modes` field
 * of a command's options. A zero field is the default or, in a call made
 * inside another (bench writing back through update), the enclosing
 * call's. opdb's CLI fills them from OPDB_TRACE_PIPELINE,
 * OPDB_TEST_FAIL_WRITE_AFTER and OPDB_TEST_COMMIT_PAUSE_US. */
typedef struct opdb_modes {
    int trace_pipeline;            /* reading a trace: 1 tokenizes on a second thread, -1 on the reading thread,
                                      0 as the reader decides (by the file's size) */
    long fail_commit;              /* > 0: the call's fail_commit-th file commit fails as if the disk were full
                                      (the all-or-nothing tests) */
    unsigned long commit_pause_us; /* > 0: a pause between a transaction's renames, so that a kill lands in
                                      the commit (the kill trials) */
} opdb_modes;
/* Out of memory inside a command entry point (opdb_update_run, ...) or a
 * database handle call (opdb_qdb_open, opdb_query...) ends that call: it
 * returns failure with err->code OPDB_ERR_NOMEM and the message "out of
 * memory (N bytes)", after letting go of what it held beyond its return
 * (the folder lock, the open all-or-nothing run with its temp files: the
 * database is left as it was; its worker threads, stopped and joined).
 * Memory the failed call had allocated is not freed (it leaks); a query
 * handle whose call failed refuses later calls with OPDB_ERR_NOMEM (close
 * it and open a new one).  The query value builders and result lines
 * (query.h) return their failure value the same way.  Only the library's
 * internal containers, used by the CLI and the tests outside any call,
 * have no error to return: they call the program's handler, set once
 * before any other call (opdb's CLI prints one line and exits 1), and
 * abort if there is none or it returns. */
typedef void (*opdb_oom_fn)(size_t bytes);
OPDB_API void opdb_set_oom_handler(opdb_oom_fn fn);

/* Named settings (the library reads no environment variable): fn returns
 * the value of a setting, or NULL when unset; without fn every setting is
 * unset (the defaults).  opdb's CLI answers from its environment for the
 * names it lists in src/cli/cli_process.c (data root, temp folder, input
 * limits, repeat counts: the program's environment; a call's modes are in
 * its options, opdb_modes above).  Set once before any other call. */
typedef const char *(*opdb_setting_fn)(const char *name);
OPDB_API void opdb_set_settings(opdb_setting_fn fn);

#ifdef __cplusplus
}
#endif

#endif
