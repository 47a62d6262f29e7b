/* `opdb diff OLD NEW`: what changed between two database version folders,
 * row by row, with Welch's t-test on the stored statistics (docs/DIFF.md). */
#ifndef OPDB_DIFF_H
#define OPDB_DIFF_H

#include <stdbool.h>
#include <stdio.h>
#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opdb_diff_verdict {
    OPDB_DIFF_REGRESSION,
    OPDB_DIFF_GAIN,
    OPDB_DIFF_DRIFT,
    OPDB_DIFF_SAME,
    OPDB_DIFF_UNKNOWN,
    OPDB_DIFF_ADDED,
    OPDB_DIFF_REMOVED,
    OPDB_DIFF_STATUS_CHANGE,
    OPDB_DIFF_NVERDICTS
} opdb_diff_verdict;

/* The verdict's name as the reports print it (`REGRESSION`, ...). */
OPDB_API const char *opdb_diff_verdict_name(opdb_diff_verdict v);

typedef enum opdb_diff_format { OPDB_DIFF_MARKDOWN, OPDB_DIFF_JSON } opdb_diff_format;

typedef struct opdb_diff_options {
    size_t size;             /* sizeof(opdb_diff_options), set by _init */
    double threshold;        /* a change is large when |new - old| > threshold * old (0.05) */
    double alpha;            /* significant when Welch's two-sided p < alpha (0.05) */
    double offset_factor;    /* a kernel type's median ratio beyond this (or below 1/it) is systematic (1.15) */
    const char *weights_path; /* query results (JSONL) of a model trace, or NULL */
    opdb_diff_format format; /* what is written to out */
    FILE *out;               /* the report; NULL writes none */
    const char *html_path;   /* also write a self-contained HTML report here, or NULL */
    /* non-fatal problems (a skipped file, a bad weights line), one line each */
    void (*warn)(void *ctx, const char *msg);
    void *warn_ctx;
} opdb_diff_options;

OPDB_API void opdb_diff_options_init_sized(opdb_diff_options *o, size_t size);
#define opdb_diff_options_init(o) opdb_diff_options_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

typedef struct opdb_diff_result {
    size_t count[OPDB_DIFF_NVERDICTS]; /* rows (signatures) per verdict */
    size_t kernel_types, offset_kernel_types;
    bool weighted;
    double predicted_change; /* end-to-end, as a fraction (0.02 = 2% slower); with weights */
    /* what could be compared at all: kernel types with a table on both
     * sides, and row identities present on both sides */
    size_t common_kernel_types, paired;
    size_t weights_results;  /* hits with a latency in the weights file */
} opdb_diff_result;

OPDB_API int opdb_diff_run(const char *old_dir, const char *new_dir, const opdb_diff_options *o, opdb_diff_result *res,
                           opdb_err *err);

/* Welch's unequal-variance t-test from two samples' count, mean and sample
 * variance: the two-sided p-value (t distribution, Welch-Satterthwaite
 * degrees of freedom). Both variances 0: 0 when the means differ, else 1.
 * *t and *df (may be NULL) receive the statistic and the degrees of freedom. */
OPDB_API double opdb_welch_p(double n1, double m1, double v1, double n2, double m2, double v2, double *t, double *df);
/* Student's t distribution: P(|T| > |t|) with df degrees of freedom. */
OPDB_API double opdb_t_two_sided_p(double t, double df);
/* The regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1. */
OPDB_API double opdb_betainc(double a, double b, double x);

#ifdef __cplusplus
}
#endif
#endif
