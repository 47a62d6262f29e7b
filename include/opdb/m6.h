/* M6, the end-to-end empirical prediction ratio (docs/ANALYSIS.md §4):
 * the durations of the TC-trace ops the database answered, summed, over the
 * real time of one forward pass in a profiler CSV (hcom rows de-duplicated,
 * AicpuKernel rows excluded, durations quantised as end - start). */
#ifndef OPDB_M6_H
#define OPDB_M6_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "opdb/core.h"
#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_m6_opts {
    size_t size;                /* sizeof(opdb_m6_opts), set by opdb_m6_opts_init */
    opdb_log log;               /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;             /* this call's test and measurement modes (error.h) */
    const char *tc_trace;       /* Chrome trace (.json / .json.gz, object or bare array) */
    const char *prof_trace;     /* forward-pass kernel_details CSV */
    const char *source_filter;  /* comma list; NULL or "" = MEASURED,INTERPOLATED */
    const char *json_output;    /* NULL: no JSON */
    bool quirks;                /* --reference-quirks */
    const char *tc_name, *prof_name; /* shown in the report and JSON ("-" for stdin); NULL: the paths */
    double *ratio;              /* non-NULL: set to M6 by opdb_m6_run on success */
} opdb_m6_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_m6_opts_init_sized(opdb_m6_opts *o, size_t size);
#define opdb_m6_opts_init(o) opdb_m6_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

typedef struct opdb_m6_result {
    double tc_sum;     /* empirical ops, summed (a float from 0.0) */
    double compute;    /* non-hcom rows */
    double hcom;       /* de-duplicated hcom rows */
    double real;       /* compute + hcom */
    double ratio;      /* tc_sum / real, 0.0 when real <= 0 */
    char **filter;     /* the source filter: unique, sorted by code point */
    size_t nfilter;
} opdb_m6_result;

/* Reads both inputs. Errors: "TC trace not found: P", "Prof trace not
 * found: P", invalid JSON (file, byte), a non-numeric dur (file, event, byte). */
OPDB_API int opdb_m6_compute(const opdb_m6_opts *o, opdb_m6_result *r, opdb_err *err);
OPDB_API void opdb_m6_result_free(opdb_m6_result *r);

/* The console report (without the JSON line) and the JSON document. */
OPDB_API void opdb_m6_report(const opdb_m6_opts *o, const opdb_m6_result *r, opdb_strbuf *out);
OPDB_API void opdb_m6_json(const opdb_m6_opts *o, const opdb_m6_result *r, opdb_strbuf *out);

/* Everything `opdb m6` does: compute, write the JSON (parent folders
 * created), print the report to out. */
OPDB_API int opdb_m6_run(const opdb_m6_opts *o, FILE *out, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
