/* `opdb update`: merge msprof op_summary measurements into a database and
 * report what changed (docs/UPDATE.md). */
#ifndef OPDB_UPDATE_H
#define OPDB_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Values a caller sets beside the merged durations (opdb bench's MicroBench
 * statistics), for the rows of one CSV with one signature. */
typedef struct opdb_update_extra {
    const char *csv_stem;          /* the CSV's file stem (its operator) */
    const char *sig;               /* opdb_signature() of the row, op = csv_stem */
    const char *const *values;     /* one per opdb_update_opts.extra_cols; NULL = leave the cell */
    bool drop;                     /* delete the rows with this signature instead */
} opdb_update_extra;

/* The "Operator Execution Status" report section (docs/UPDATE.md §3.3). */
typedef struct opdb_update_status_entry {
    const char *op, *reason;
} opdb_update_status_entry;

typedef struct opdb_update_status {
    const char *const *success;
    size_t nsuccess;
    const opdb_update_status_entry *failed, *skipped;
    size_t nfailed, nskipped;
} opdb_update_status;

typedef struct opdb_update_opts {
    size_t size; /* sizeof(opdb_update_opts), set by opdb_update_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *db_dir;            /* target database folder */
    const char *const *prof_paths; /* PROF_* folders or folders holding them */
    size_t nprof;
    const char *const *ops;        /* normalised selection; NULL/0 = all */
    size_t nops;
    bool missing_only;             /* --update-mode missing-only */
    bool prune;                    /* --prune-empty-duration-rows */
    bool quirks;                   /* --reference-quirks */
    bool add_new_ops;              /* create CSVs for profiled operators without one */
    bool json;                     /* print a JSON summary instead of the Markdown report */
    long ep_size;                  /* --dispatch-ffn-combine-ep-size (0 = none) */
    const char *timestamp;         /* report file stamp; NULL or "": now (opdb: $OPDB_REPORT_TIMESTAMP) */
    FILE *out;                     /* where the report goes (stdout) */
    /* opdb bench additions (all zero for `opdb update`): */
    const char *const *extra_cols; /* appended after the existing columns where absent */
    size_t nextra_cols;
    const opdb_update_extra *extra;/* values of extra_cols set on updated/added rows; drops */
    size_t nextra;
    bool lock_held;                /* the caller already holds opdb_dir_lock(db_dir) */
    bool bench_rows;               /* rows from opdb bench: each CSV takes only its own operator's
                                      rows (no MatMul aliasing), MatMul CSVs may gain rows */
    bool no_metrics;               /* the rows carry no hardware counters (opdb bench on a CPU/GPU):
                                      MicroBench <metric> cells are left as they are (empty in new
                                      rows) instead of being set to 0.000000 */
    const opdb_update_status *status; /* report section; NULL = none */
    bool eager;                    /* simple path: every row tokenized, held as a dict row and
                                      rendered (opdb: OPDB_UPDATE_EAGER=1); same bytes, slower */
    const char *title;             /* the report's heading; NULL: "Profile Update Report" */
    const char *gaps_not_compared; /* non-NULL: the measured and profiled durations come from unlike
                                      devices, so no hotspot is reported; this says why */
    struct opdb_update_totals *totals; /* non-NULL: filled by a run that returns 0 */
    bool reference_signatures;     /* match rows by the reference's signature (a MatMul row with a bias
                                      matches one without): _init sets it, as `opdb update` does in both
                                      modes; bench's write-back sets its --reference-quirks */
} opdb_update_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_update_opts_init_sized(opdb_update_opts *o, size_t size);
#define opdb_update_opts_init(o) opdb_update_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

/* What a write-back did, for the caller's one-line summary. */
typedef struct opdb_update_totals {
    size_t tables;                 /* CSV files touched */
    long updated, added, deleted;  /* rows */
} opdb_update_totals;

OPDB_API int opdb_update_run(const opdb_update_opts *o, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
