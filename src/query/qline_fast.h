/* The query line's fast JSON reader (qline_fast.c). */
#ifndef OPDB_QUERY_QLINE_FAST_H
#define OPDB_QUERY_QLINE_FAST_H

#include <stddef.h>
#include <yajl/yajl_parse.h>

#include "query/query_internal.h"

/* Feeds the callbacks the events yajl would for text, when text is an object
 * in the plain subset; 1 then. 0 when it is not (or a callback refused):
 * events may have been delivered, and the caller starts again with yajl. */
int q_json_fast(const yajl_callbacks *cb, void *ctx, const char *text, size_t n);

/* The common op-level query line read straight into q (qline_direct.c): 1,
 * or 0 when the line is not in that form (the general reader takes it). */
int q_line_direct(opdb_arena *a, const char *text, size_t n, q_query *q);

/* A hash of the line's bytes without its id's value: lines that differ only
 * in their ids hash equal (never 0). Where a query's first exact-hit map
 * probe starts; any value would still give exact answers. */
uint64_t q_line_hash(const char *text, size_t n);
/* The hash under it: n bytes at p from seed, in four lanes of words; back:
 * how many bytes before p may be read (the last word may start there) */
uint64_t q_lanes_hash(const unsigned char *p, size_t n, size_t back, uint64_t seed);

/* A JSON number's value as the query reader makes it: an int when it is
 * written as one and fits, else a Python float (qline.c). */
qv *q_json_number(opdb_arena *a, const char *s, size_t n);

#endif
