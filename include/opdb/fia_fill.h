/* `opdb fia-fill`: back-fill FusedInferAttentionScore runtime metadata dumped
 * as JSONL into the FIA database CSV (docs/INGEST.md §3). */
#ifndef OPDB_FIA_FILL_H
#define OPDB_FIA_FILL_H

#include <stdio.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_fia_fill_opts {
    size_t size; /* sizeof(opdb_fia_fill_opts), set by opdb_fia_fill_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *csv_path;
    const char *jsonl_path;
    const char *output_path;   /* NULL: overwrite csv_path */
    const char *metadata_tag;  /* NULL: "runtime_values_dumped" */
    FILE *out;                 /* completion message */
    bool quirks;               /* the reference's output: always a UTF-8 byte-order mark */
    struct opdb_fia_fill_totals *totals; /* non-NULL: filled on success */
} opdb_fia_fill_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_fia_fill_opts_init_sized(opdb_fia_fill_opts *o, size_t size);
#define opdb_fia_fill_opts_init(o) opdb_fia_fill_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

/* What a run did, for the caller's summary. */
typedef struct opdb_fia_fill_totals {
    size_t rows_in, matched, rows_out; /* CSV data rows read, those back-filled, rows written */
} opdb_fia_fill_totals;

OPDB_API int opdb_fia_fill_run(const opdb_fia_fill_opts *o, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
