/* Ascend profiler SQLite exports (ascend_pytorch_profiler_*.db, msprof_*.db;
 * docs/ingest-formats.md §2) read as the rows of a kernel_details.csv, so the
 * CSV path's row decoding and aggregation apply unchanged. */
#ifndef OPDB_INGEST_ASCEND_DB_H
#define OPDB_INGEST_ASCEND_DB_H

#include "ingest/columns.h"

/* One kernel as CSV cells laid out by L (durations and counters rendered
 * with 17 significant digits, so they parse back to the exact doubles).
 * Non-zero stops the read and is returned. */
typedef int (*ascend_db_row_cb)(void *ctx, const kd_colmap *L, const opdb_field *f, int nf, opdb_err *err);

/* Kernels = COMPUTE_TASK_INFO joined to TASK on globalTaskId, in (startNs,
 * globalTaskId) order. The file is opened read-only; immutable unless a
 * non-empty -wal file beside it holds committed rows, which are then read too
 * (or, where SQLite cannot read the log, the file is refused with the reason).
 * A NULL, non-numeric or overflowing time gives a Duration(us) cell that is not
 * a finite number (the row is skipped and counted). Returns 0,
 * 1 when it is an SQLite file but not a usable export (why says what it is
 * and what to do), -1 on errors (a malformed database: err names the file). */
int ascend_db_read(const char *path, ascend_db_row_cb cb, void *ctx, char *why, size_t cap, opdb_err *err);

#endif
