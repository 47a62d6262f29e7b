/* `opdb validate`: check a database folder for problems a consumer would
 * trip over. */
#ifndef OPDB_VALIDATE_H
#define OPDB_VALIDATE_H

#include <stdbool.h>
#include <stdio.h>
#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_validate_result {
    size_t files, rows, problems, warnings; /* problems: errors only */
} opdb_validate_result;

/* The MicroBench column that says whether a measurement met its stop rule
 * (`yes`, or `no` when it ran into the timeout first). */
#define OPDB_MB_CONVERGED_COLUMN "MicroBench Converged"

/* Prints one line per problem (`<file>:<line>: <kind>: <detail>`, warnings
 * as `<file>:<line>: warning: <kind>: <detail>`) and a summary to out, or a
 * JSON document with json. */
typedef struct opdb_validate_opts {
    size_t size; /* sizeof(opdb_validate_opts), set by opdb_validate_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    bool json;   /* the JSON document instead of the lines and summary */
    FILE *out;   /* the report; NULL writes none */
} opdb_validate_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_validate_opts_init_sized(opdb_validate_opts *o, size_t size);
#define opdb_validate_opts_init(o) opdb_validate_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */
OPDB_API int opdb_validate_run(const char *db_dir, const opdb_validate_opts *o, opdb_validate_result *res, opdb_err *err);

/* Completes a run killed while replacing its files (the folder's journal;
 * rolled back when it cannot be completed) and removes temp files of killed
 * runs, under the folder lock.  An invalid journal is an error, unless
 * discard_journal: then it is deleted first (nothing renamed). */
OPDB_API int opdb_db_repair(const char *db_dir, bool discard_journal, opdb_err *err);
/* true while a killed run's journal waits for opdb_db_repair (or any writer). */
OPDB_API bool opdb_db_pending_run(const char *db_dir);

#ifdef __cplusplus
}
#endif
#endif
