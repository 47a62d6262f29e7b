/* Profiler output -> per-operator database tables (`opdb parse`). */
#ifndef OPDB_INGEST_H
#define OPDB_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "opdb/core.h"
#include "opdb/schema.h" /* OPDB_NMETRICS, opdb_metric_names */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_parse_opts {
    size_t size; /* sizeof(opdb_parse_opts), set by opdb_parse_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *profiling_path;  /* a kernel_details/op_summary CSV or a folder */
    const char *output_dir;      /* database folder (created if needed) */
    bool reference_quirks;       /* reproduce the reference exactly, quirks included */
    bool strict;                 /* a non-numeric Duration(us) is an error */
    int threads;                 /* <= 0: one per online CPU */
    bool no_progress;            /* never draw progress bars */
    FILE *reference_stdout;      /* where the reference's own messages go (stdout) */
    bool merge;                  /* combine rows with existing tables instead of replacing them */
    bool replace;                /* replace existing tables even when that loses rows, columns or cells
                                    (without merge or replace such a table makes the run fail, nothing written) */
    bool kineto_simple;          /* PyTorch traces through the simple two-pass reader the streaming one is
                                    tested against (opdb: OPDB_KINETO_SIMPLE=1) */
    size_t kineto_sort_bytes;    /* > 0: bytes each record sort of a PyTorch trace holds before it spills to a
                                    temp file (tests force spills; opdb: OPDB_KINETO_SORT_BYTES) */
} opdb_parse_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_parse_opts_init_sized(opdb_parse_opts *o, size_t size);
#define opdb_parse_opts_init(o) opdb_parse_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

typedef struct opdb_table_summary {
    char *file;                  /* file name written, e.g. "MatMulV2.csv" */
    size_t shapes;               /* rows (distinct shape groups) */
    unsigned long long launches; /* kernel launches aggregated */
    double total_us;             /* sum of their durations */
} opdb_table_summary;

typedef struct opdb_parse_result {
    size_t files_written;        /* as the reference counts them */
    opdb_table_summary *tables;  /* one per table written, in write order */
    size_t ntables;
    size_t input_files;
    unsigned long long rows_read;
    size_t groups;
    unsigned long long device_unattributed; /* PyTorch traces: device events without launch/operator */
    size_t inputs_skipped;       /* recognised-but-unusable files skipped in a folder */
} opdb_parse_result;

/* What a `parse` input is, decided by content (docs/ingest-formats.md §1). */
typedef enum opdb_input_kind {
    OPDB_INPUT_CSV,            /* text: kernel_details / op_summary, or another CSV */
    OPDB_INPUT_SQLITE,         /* SQLite database (Ascend profiler export, or not) */
    OPDB_INPUT_JSON,           /* JSON, plain or gzip (a PyTorch profiler trace, or not) */
} opdb_input_kind;

/* Classifies path by its first bytes. -1 with err set when it cannot be read. */
OPDB_API int opdb_input_detect(const char *path, opdb_input_kind *kind, opdb_err *err);

/* For a CSV whose header lacks the columns parse needs: what the file is and
 * what to do, one line (e.g. "profiled without shapes (Level0): ..."); "" when
 * the header looks like a usable kernel_details / op_summary file. */
OPDB_API void opdb_csv_profile_hint(const char *path, char *buf, size_t cap);

/* Runs the whole parse. Returns 0 on success, -1 with err set otherwise. */
OPDB_API int opdb_parse_run(const opdb_parse_opts *opts, opdb_parse_result *res, opdb_err *err);
OPDB_API void opdb_parse_result_free(opdb_parse_result *res);
/* `opdb parse --json`: the run's summary as a JSON object (2-space indent, no
 * final newline) into out; database is the folder written, input the path
 * given. Keys are listed in docs/GUIDE.md. */
OPDB_API void opdb_parse_result_json(const opdb_parse_result *res, const char *database, const char *input,
                                     opdb_strbuf *out);

#ifdef __cplusplus
}
#endif
#endif
