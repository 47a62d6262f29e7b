/* What a CSV holds, from its header (docs/ingest-formats.md §1): folders pick
 * their kernel_details / op_summary files by this, not by file name. */
#ifndef OPDB_INGEST_DETECT_H
#define OPDB_INGEST_DETECT_H

#include <stdbool.h>
#include <stddef.h>

enum { KD_CSV_EMPTY, KD_CSV_KERNEL_DETAILS, KD_CSV_OP_SUMMARY, KD_CSV_OTHER };
int kd_csv_kind(const char *path);
/* A file that is no CSV table at all (UTF-16/32, binary) or a collective
 * benchmark log: one phrase saying what it is and what to do; false if not. */
bool kd_csv_foreign(const char *path, char *buf, size_t cap);

#endif
