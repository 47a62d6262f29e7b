/* Streaming reader of Chrome / Kineto trace files: `{"traceEvents": [...]}`
 * or a bare array, plain or gzip-compressed.  Memory is bounded by the
 * largest single event, not by the file. Each event's fields (and the fields
 * of its `args` object) are handed over already rendered the way Python's
 * str() renders the value json.load gives. */
#ifndef OPDB_TRACE_READER_H
#define OPDB_TRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opdb_jkind {
    OPDB_J_NULL, OPDB_J_BOOL, OPDB_J_INT, OPDB_J_FLOAT, OPDB_J_STRING, OPDB_J_LIST, OPDB_J_DICT
} opdb_jkind;

typedef struct opdb_trace_field {
    char *key;
    opdb_jkind kind;
    char *text;      /* Python str() of the value ("" for null) */
} opdb_trace_field;

typedef struct opdb_trace_event {
    opdb_trace_field *f;     /* top-level fields, in file order */
    size_t nf, capf;
    opdb_trace_field *args;  /* fields of the "args" object */
    size_t nargs, capargs;
    unsigned long long index;    /* position in the event array */
    unsigned long long offset;   /* byte offset (uncompressed) where the event ended */
    /* With lists of wanted keys (opdb_trace_read_some): the field named fields[i] / args[i]
     * (the last duplicate), or NULL; NULL without a list. */
    const opdb_trace_field *const *fields_by_want, *const *args_by_want;
} opdb_trace_event;

/* The last field named key (json.load keeps the last duplicate), or NULL. */
OPDB_API const opdb_trace_field *opdb_trace_get(const opdb_trace_event *ev, const char *key);
OPDB_API const opdb_trace_field *opdb_trace_arg(const opdb_trace_event *ev, const char *key);

/* Called once per event, in file order; non-zero stops the read. */
typedef int (*opdb_trace_cb)(const opdb_trace_event *ev, void *ctx);

/* Reads path (gzip detected by content). Errors name the file and the byte offset. */
OPDB_API int opdb_trace_read(const char *path, opdb_trace_cb cb, void *ctx, opdb_err *err);
/* The same, handing over only the named top-level fields and args fields
 * (NULL-terminated lists; a NULL list means all): a consumer that reads a
 * few keys skips copying the rest. */
OPDB_API int opdb_trace_read_some(const char *path, const char *const *fields, const char *const *args, opdb_trace_cb cb,
                         void *ctx, opdb_err *err);
/* The same on one thread unless the call's modes.trace_pipeline is 1 (opdb_trace_read_some
 * tokenizes big files on a second thread): for a consumer whose work per event is cheap next to the
 * tokenizing, handing the tokens between threads costs more CPU than it saves time. */
OPDB_API int opdb_trace_read_serial(const char *path, const char *const *fields, const char *const *args,
                                    opdb_trace_cb cb, void *ctx, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
