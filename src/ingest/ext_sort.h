/* External sort of fixed-size records in bounded memory.
 *
 * Records are pushed into a buffer of at most `budget` bytes; a full buffer is
 * sorted and written to an unlinked temporary file (a "run"), and the runs are
 * merged back in order when read, with the last buffer merged straight from
 * memory. A run is written encoded: each 8-byte word of a record XOR the same
 * word of the record before it, less its zero bytes at both ends (sorted
 * neighbours share most bytes: a 32-byte record takes about 8), so the
 * kernel copies a quarter of the bytes. Small inputs never touch the disk. At most
 * XS_MAX_RUNS runs are kept: reaching it merges them into one, so memory is
 * budget + XS_MAX_RUNS read buffers (8 KiB) whatever the number of records; all runs
 * of a sort share one unlinked temporary file (one descriptor per sort).
 * The comparator must be a total order (ties broken by a sequence number) so
 * the output does not depend on where the runs were cut. */
#ifndef OPDB_INGEST_EXT_SORT_H
#define OPDB_INGEST_EXT_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include "opdb/core.h"

#define XS_MAX_RUNS 256

typedef int (*xs_cmp)(const void *, const void *);

typedef struct xs_run {
    bool mem;           /* the last buffer, merged from memory */
    unsigned long long off, len, done; /* where the run's encoded bytes lie in the sort's file; read so far */
    unsigned char *cur; /* the run's current record (merge): one of slot's two halves, or in buf */
    unsigned char *slot;          /* two records: each is decoded from the one before it */
    unsigned char *blk;           /* read block of the encoded run */
    size_t bpos, blen;
    bool eof;
} xs_run;

typedef struct xsort {
    size_t rec, max_recs;   /* record size; records per in-memory buffer */
    xs_cmp cmp;
    unsigned char *buf;
    size_t n, cap;          /* records in buf; allocated records */
    xs_run runs[XS_MAX_RUNS + 1]; /* + the in-memory last buffer */
    size_t nruns;
    int fd;                 /* the one temporary file holding every run, when has_file */
    bool has_file;
    unsigned long long fend; /* its size */
    size_t *heap, nheap;    /* merge: run indices ordered by their current record */
    size_t pos;             /* in-memory read position */
    unsigned char *wbuf;    /* encoded bytes waiting to be written to a run */
    size_t wn;
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
