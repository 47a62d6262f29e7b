/* Writing one parse table: replace the file, or (--merge) combine it with the
 * table already in the database (docs/ingest-formats.md
 * "Merging").  Rows of the same shapes are combined from their Profiling
 * Count / Sum / Sum Squares / Min / Max cells, so count, sum, sum of squares,
 * min, max, mean and std are exact; the median is approximate (count-weighted
 * mean of the two medians); new rows are appended. */
#ifndef OPDB_INGEST_TABLE_MERGE_H
#define OPDB_INGEST_TABLE_MERGE_H

#include <stdbool.h>
#include "opdb/core.h"

typedef struct tbl_writer {
    bool merge;              /* combine with an existing file instead of replacing it */
    bool replace;            /* overwrite an existing file even when that loses data */
    size_t replaced;         /* tables that existed and were replaced (not merge) */
    char *first_replaced;
    size_t merged;           /* tables combined with an existing file */
    size_t refused;          /* tables not replaced because data would be lost */
    opdb_strbuf losses;      /* "Add.csv (3 rows the new table lacks; ...)", '; '-joined */
} tbl_writer;

/* Writes `fresh` (a whole CSV table: header + rows, as parse renders it) to
 * path atomically; the caller holds the folder lock.  Without merge or
 * replace, an existing table holding rows, columns or filled cells that
 * `fresh` lacks is left alone and described in w->losses: the caller then
 * fails the run, so no table is replaced (all or nothing). */
int tbl_emit(tbl_writer *w, const char *path, const char *fresh, size_t n, opdb_err *err);
/* -1 with err set when some table was refused (see tbl_emit), else 0. */
int tbl_writer_check(const tbl_writer *w, const char *outdir, opdb_err *err);
/* One stderr line when tables were replaced; frees w's strings. */
void tbl_writer_finish(tbl_writer *w, const char *outdir);

#endif
