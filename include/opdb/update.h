/* `opdb update`: merge msprof op_summary measurements into a database and
 * report what changed (spec update-and-report.md). */
#ifndef OPDB_UPDATE_H
#define OPDB_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The reference's replay catalogue (sorted): what --ops accepts and which
 * database CSVs are touched. */
extern const char *const opdb_replay_ops[];
extern const size_t opdb_nreplay_ops;
bool opdb_is_replay_op(const char *normalised_name);

typedef struct opdb_update_opts {
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
    const char *timestamp;         /* report file stamp; NULL: $OPDB_REPORT_TIMESTAMP or now */
    FILE *out;                     /* where the report goes (stdout) */
} opdb_update_opts;

int opdb_update_run(const opdb_update_opts *o, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
