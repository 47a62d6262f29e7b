/* Two-thread reading of a big trace: one thread runs zlib + yajl and records
 * yajl's tokens (strings already unescaped, numbers as text, the byte offset
 * at each container end) into batches; the calling thread replays them into
 * the reader's own yajl callbacks, so the event state machine and the
 * caller's callback run exactly as on one thread, in file order. Only where
 * the time goes changes: tokenizing and analysis overlap on two cores. */
#ifndef OPDB_TRACE_PIPE_H
#define OPDB_TRACE_PIPE_H
#include <stdbool.h>
#include <yajl/yajl_parse.h>
#include "opdb/core.h"

/* Deepest nesting the reader follows; both paths cancel at the same
 * container, so the error and its byte offset are the same. */
#define TRACE_MAX_DEPTH 256

/* One yajl pass over a (possibly gzip) file; the handle and the offset of
 * the chunk being parsed are visible to callbacks for byte offsets. */
typedef struct trace_yajl_run {
    yajl_handle h;
    unsigned long long chunk_off;
} trace_yajl_run;

/* Parses path with cbs/ctx; a callback's 0 is a deliberate stop (no error)
 * when stopped(ctx) says so, else an error with the byte offset. Errors:
 * cannot open, invalid or truncated JSON, read failures. */
int opdb_trace_yajl_file(const char *path, const yajl_callbacks *cbs, void *ctx, bool (*stopped)(void *),
                         trace_yajl_run *y, opdb_err *err);

/* Whether path is worth a second thread: the call's modes.trace_pipeline 1
 * always, -1 never; otherwise (by_default) files of 4 MiB or more on a
 * machine with several CPUs. */
bool opdb_trace_pipe_wanted(const char *path, bool by_default);

/* Replays path's tokens into cbs/ctx (set_offset(ctx, off) is called before
 * each container-end callback with the offset yajl had reached there).
 * Returns 0 when every token was replayed or a callback returned 0 (a stop),
 * the parse error after replaying every token before it, or -2 when no
 * thread could be started (nothing was replayed). */
int opdb_trace_pipe_replay(const char *path, const yajl_callbacks *cbs, void *ctx,
                           void (*set_offset)(void *, unsigned long long), opdb_err *err);
#endif
