/* `opdb trace2csv`: flatten the complete ("X") events of a performance-model
 * Chrome trace into CSV (docs/INGEST.md §4). */
#ifndef OPDB_TRACE2CSV_H
#define OPDB_TRACE2CSV_H

#include <stddef.h>
#include <stdio.h>
#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_trace2csv_opts {
    size_t size;             /* sizeof(opdb_trace2csv_opts), set by opdb_trace2csv_opts_init */
    opdb_log log;            /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;          /* this call's test and measurement modes (error.h) */
    const char *trace_path;  /* Chrome trace (.json / .json.gz, object or bare array) */
    const char *output_path; /* CSV written atomically; NULL: written to out */
    FILE *out;
} opdb_trace2csv_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_trace2csv_opts_init_sized(opdb_trace2csv_opts *o, size_t size);
#define opdb_trace2csv_opts_init(o) opdb_trace2csv_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

/* Flattens the trace; *rows is the number of rows written. */
OPDB_API int opdb_trace2csv_run(const opdb_trace2csv_opts *o, unsigned long long *rows, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
