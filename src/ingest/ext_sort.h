/* External sort of fixed-size records in bounded memory.
 *
 * Records are pushed into a buffer of at most `budget` bytes; a full buffer is
 * sorted and written to an unlinked temporary file (a "run"), and the runs are
 * merged back in order when read, with the last buffer merged straight from
 * memory. Small inputs never touch the disk. At most
 * XS_MAX_RUNS runs are kept: reaching it merges them into one, so memory is
 * budget + XS_MAX_RUNS read buffers whatever the number of records.
 * The comparator must be a total order (ties broken by a sequence number) so
 * the output does not depend on where the runs were cut. */
#ifndef OPDB_INGEST_EXT_SORT_H
#define OPDB_INGEST_EXT_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "opdb/core.h"

#define XS_MAX_RUNS 64

typedef int (*xs_cmp)(const void *, const void *);

typedef struct xs_run {
    FILE *f;            /* NULL: the last buffer, merged from memory */
    unsigned char *cur; /* the run's current record (merge) */
} xs_run;

typedef struct xsort {
    size_t rec, max_recs;   /* record size; records per in-memory buffer */
    xs_cmp cmp;
    unsigned char *buf;
    size_t n, cap;          /* records in buf; allocated records */
    xs_run runs[XS_MAX_RUNS + 1]; /* + the in-memory last buffer */
    size_t nruns;
    size_t *heap, nheap;    /* merge: run indices ordered by their current record */
    size_t pos;             /* in-memory read position */
    unsigned char *out;     /* the record xs_next hands out while merging */
    bool reading;
    bool unsorted;          /* buf holds a record smaller than one before it (else no qsort) */
    unsigned long long total;
    unsigned long long spilled; /* records written to runs (diagnostics, tests) */
} xsort;

void xs_init(xsort *s, size_t rec, size_t budget, xs_cmp cmp);
/* Adds a copy of the record; -1 when a run cannot be written (err names why). */
int xs_push(xsort *s, const void *record, opdb_err *err);
/* Ends pushing; afterwards xs_next hands the records out in order. */
int xs_finish(xsort *s, opdb_err *err);
/* The next record (valid until the next call), NULL at the end; -1 in *rc on a read error. */
const void *xs_next(xsort *s, int *rc, opdb_err *err);
void xs_free(xsort *s);

#endif
