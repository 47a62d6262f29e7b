/* The query line's fast JSON reader (qline_fast.c). */
#ifndef OPDB_QUERY_QLINE_FAST_H
#define OPDB_QUERY_QLINE_FAST_H

#include <stddef.h>
#include <yajl/yajl_parse.h>

/* Feeds the callbacks the events yajl would for text, when text is an object
 * in the plain subset; 1 then. 0 when it is not (or a callback refused):
 * events may have been delivered, and the caller starts again with yajl. */
int q_json_fast(const yajl_callbacks *cb, void *ctx, const char *text, size_t n);

#endif
