/* Merging aggregated rows into database CSVs (docs/UPDATE.md §2). */
#ifndef OPDB_UPDATE_UPDATE_DB_H
#define OPDB_UPDATE_UPDATE_DB_H

#include <stdbool.h>
#include "opdb/core.h"
#include "opdb/update.h"
#include "update/op_summary.h"
#include "update/update_result.h"

typedef struct update_run {
    update_result *r;
    size_t n;
    opdb_strvec unmatched_ops; /* profiled catalogue operators with no CSV (default mode) */
    unsigned long long *unmatched_rows;
    opdb_strvec foreign_ops;        /* profiled operators outside the catalogue: not replayable here */
    unsigned long long *foreign_rows;
    opdb_strvec foreign_csv;        /* their existing table's file name, or "" */
} update_run;

/* Applies the aggregation to the database folder. */
int update_db(const opdb_update_opts *o, const op_summary_agg *agg, update_run *run, opdb_err *err);
void update_run_free(update_run *run);

/* Which CSVs a run touches (also used by the missing-only short-circuit). */
int update_target_csvs(const opdb_update_opts *o, opdb_strvec *paths, opdb_err *err);

#endif
