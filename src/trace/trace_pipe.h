/* Parser/consumer pipeline of the trace reader: for a big trace, yajl
 * parses on a second thread and hands events over in batches, while the
 * caller's callback runs on the calling thread, in file order. The
 * callback sees exactly what the one-thread path gives it; only where the
 * time goes changes (parsing and analysis overlap on two cores). */
#ifndef OPDB_TRACE_PIPE_H
#define OPDB_TRACE_PIPE_H
#include <stdbool.h>
#include <stddef.h>
#include "opdb/trace_reader.h"

/* Offsets into an event's store of one field's key and text. */
typedef struct field_at {
    size_t key, text;
    opdb_jkind kind;
} field_at;

typedef struct trace_pipe trace_pipe;

/* Whether path is worth a second thread: OPDB_TRACE_PIPELINE=1 always, =0
 * never; otherwise files of 4 MiB or more (on disk) on a machine with more
 * than one CPU. */
bool opdb_trace_pipe_wanted(const char *path);
trace_pipe *opdb_trace_pipe_new(void);
void opdb_trace_pipe_free(trace_pipe *p);

/* Parser side: appends one event (its NUL-separated store, top-level
 * fields, args fields). Non-zero once the consumer has stopped the read. */
int opdb_trace_pipe_put(trace_pipe *p, unsigned long long index, unsigned long long offset, const opdb_strbuf *store,
                        const field_at *f, size_t nf, const field_at *a, size_t na);

/* Runs parse(arg, path, err) on a new thread and calls cb for each event on
 * this one. Returns parse's result once every event before its end (or
 * error) was delivered; 0 when cb stopped the read; -2 when no thread could
 * be started (nothing was parsed: the caller parses by itself). */
int opdb_trace_pipe_run(trace_pipe *p, int (*parse)(void *, const char *, opdb_err *), void *arg, const char *path,
                        opdb_trace_cb cb, void *ctx, opdb_err *err);
#endif
