/* Which input files a parse reads (docs/INGEST.md §1 "Input discovery"). */
#ifndef OPDB_INGEST_DISCOVER_H
#define OPDB_INGEST_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include "opdb/core.h"

typedef struct kd_inputs {
    char **files;            /* kernel_details (or op_summary) CSVs, sorted */
    size_t nfiles;
    char **operator_details; /* operator_details.csv files, sorted (folder input only) */
    size_t nop;
    bool from_op_summary;    /* no kernel_details file: msprof op_summary files instead */
    char **extra;            /* not quirks: SQLite exports and JSON traces (detected by content later) */
    size_t nextra;
    char **unusable;         /* not quirks, folder: other CSVs (op_statistic, unknown ...), reported */
    size_t nunusable;
    bool single;             /* the path was a file */
} kd_inputs;

/* quirks: exactly the reference's discovery (kernel_details only, by name).
 * Otherwise a folder's CSVs are chosen by content (see discover.c).
 * Otherwise a file that is not text (SQLite, gzip or JSON by content) goes to
 * `extra`, and a folder's *.db, *.json and *.gz files are listed there too. */
int kd_discover(const char *path, bool quirks, kd_inputs *in, opdb_err *err);
void kd_inputs_free(kd_inputs *in);
/* The operator_details.csv in the same folder as `file`, or NULL. */
const char *kd_operator_details_for(const kd_inputs *in, const char *file);

#endif
