/* `opdb trace2csv`: flatten the complete ("X") events of a performance-model
 * Chrome trace into CSV (docs/INGEST.md §4). */
#ifndef OPDB_TRACE2CSV_H
#define OPDB_TRACE2CSV_H

#include <stdio.h>
#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes to output_path atomically, or to out when output_path is NULL. */
OPDB_API int opdb_trace2csv_run(const char *trace_path, const char *output_path, FILE *out, unsigned long long *rows,
                       opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
