/* What merging one database CSV found (update_csv.c), for the report
 * (update_report.c).  Kept
 * apart from update_db.h so the per-CSV modules below update_db do not
 * include it (no include cycles: scripts/check_include_cycles.py). */
#ifndef OPDB_UPDATE_UPDATE_RESULT_H
#define OPDB_UPDATE_UPDATE_RESULT_H

#include <stdbool.h>
#include <stddef.h>

#include "opdb/core.h"
#include "opdb/update.h"

/* A hotspot: a row whose microbenchmark/profiling ratio is outside [0.8, 1.2]. */
typedef struct gap {
    char *op, *csv_name, *sig;
    double mb, prof, diff, ratio;
} gap;

typedef struct dup_sig {
    char *sig;
    size_t count;
} dup_sig;

typedef struct update_result {
    char *path, *stem, *name;
    long updated, added, unchanged;
    opdb_strvec missing, deleted, no_sample;
    opdb_strvec added_rows;   /* default mode: the rows added, kept apart from missing */
    unsigned long na_skipped; /* default mode: profiled rows with N/A shapes not added */
    unsigned long matched;    /* profiled rows that found their database row */
    dup_sig *dups;
    size_t ndups;
    gap *gaps;
    size_t ngaps, capgaps;
} update_result;

#endif
