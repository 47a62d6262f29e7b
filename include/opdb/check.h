/* `opdb check`: how far a database can be trusted. Every row with a latency
 * is hidden in turn and asked for through the query engine's interpolation;
 * the errors are summarised per kernel type, axis group and interior /
 * frontier, and calibrate the intervals `opdb query` adds to interpolated
 * answers (docs/CHECK.md). */
#ifndef OPDB_CHECK_H
#define OPDB_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opdb_check_format { OPDB_CHECK_TEXT, OPDB_CHECK_JSON } opdb_check_format;

/* The calibration file `check` writes into the database folder and `query` reads. */
#define OPDB_CALIBRATION_FILE "opdb-calibration.tsv"

typedef struct opdb_check_options {
    size_t size;               /* sizeof(opdb_check_options), set by _init */
    opdb_check_format format;  /* what is written to out */
    FILE *out;                 /* the report; NULL writes none */
    const char *html_path;     /* also write a self-contained HTML report here, or NULL */
    size_t worst;              /* rows listed among the worst (20) */
    bool write_calibration;    /* write OPDB_CALIBRATION_FILE into the folder (temp file + rename, folder lock) */
    /* non-fatal problems, one line each */
    void (*warn)(void *ctx, const char *msg);
    void *warn_ctx;
} opdb_check_options;

OPDB_API void opdb_check_options_init_sized(opdb_check_options *o, size_t size);
#define opdb_check_options_init(o) opdb_check_options_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

typedef struct opdb_check_result {
    size_t kernel_types;       /* tables checked (their path is covered) */
    size_t unchecked_types;    /* tables on a path check does not cover */
    size_t rows;               /* rows held out (with a latency and a point) */
    size_t recovered;          /* ... that got an answer in the query's own order */
    double median_error;       /* median |relative error| of those (NaN when none) */
    /* split-half coverage of the calibrated intervals (NaN when no interval could be formed) */
    double coverage80, coverage90;
    size_t coverage_n;         /* answers the coverage was measured on */
} opdb_check_result;

OPDB_API int opdb_check_run(const char *db_dir, const opdb_check_options *o, opdb_check_result *res, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
