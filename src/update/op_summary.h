/* msprof op_summary files -> per-operator aggregated rows (docs/INGEST.md §2):
 * per (OP Type, signature): minimum Task Duration, metric means, the first
 * row's descriptive cells. */
#ifndef OPDB_UPDATE_OP_SUMMARY_H
#define OPDB_UPDATE_OP_SUMMARY_H

#include <stdbool.h>
#include "opdb/core.h"
#include "opdb/schema.h"
#include "opdb/signature.h"
#include "update/agg_metric.h"

#define AGG_MAX_KEYS 40

/* The keys of the aggregated rows, in insertion order like the reference's
 * dict (a key set); shared by every row with the same keys (with or without
 * EP Size). */
typedef struct agg_keyset {
    int n;
    const char *key[AGG_MAX_KEYS];
    signed char num[AGG_MAX_KEYS]; /* -1 string, 0 the minimum duration, 1 + m metric m's mean */
} agg_keyset;

typedef struct agg_row {
    /* what merging reads of every row first, on one cache line */
    const agg_keyset *kset;
    double dur;
    const double *half[2];      /* metric sums over the samples, by half (agg_msum; NULL: 0) */
    const char *key_op, *key_sig; /* the group's OP Type and signature (of the op_summary
                                   EP Size cell: not the row's own for DispatchFFNCombine) */
    size_t key_sig_len;
    unsigned long long samples; /* launches aggregated */
    const char *first;          /* the first launch's cells: base 8 and Task Type, stripped,
                                   each NUL-terminated, back to back (agg_str) */
    const char *ep;             /* EP Size (--dispatch-ffn-combine-ep-size), or NULL */
    bool no_numeric_sample;     /* every Task Duration was non-numeric (default mode):
                                   the duration's value is "" */
    bool finite_only;           /* default mode: a mean past DBL_MAX is written "" */
} agg_row;

#define AGG_K_DUR 8 /* the position of "Average Duration(us)" in every key set */


/* The sum of metric m over r's launches. */
static inline double agg_msum(const agg_row *r, int m) {
    const double *h = r->half[agg_metric_half[m]];
    return h ? h[agg_metric_pos[m]] : 0.0;
}

static inline int agg_nkeys(const agg_row *r) { return r->kset->n; }
static inline const char *agg_key(const agg_row *r, int i) { return r->kset->key[i]; }

typedef struct agg_op {
    char *op;                   /* OP Type as profiled */
    char norm[128];             /* normalised name */
    agg_row **rows;
    size_t n, cap;
} agg_op;

typedef struct op_summary_agg {
    agg_op *ops;                /* in order of first appearance */
    size_t n, cap;
    unsigned long long rows_read;
    unsigned long long rows_rejected; /* rows with a non-finite or negative duration/metric (skipped) */
    opdb_arena arena;           /* rows and their strings */
    void *rows;                 /* the agg_rows of every op, one array */
    size_t rows_bytes;
} op_summary_agg;

/* PROF_* folders from the given paths (a PROF_* folder itself, or any
 * folder searched recursively), then their mindstudio_profiler_output/
 * op_summary_*.csv files, sorted like the reference. */
int op_summary_find_files(const char *const *paths, size_t n, char ***files, size_t *nfiles, opdb_err *err);

int op_summary_aggregate(char **files, size_t nfiles, long ep_size, bool quirks, bool with_metrics, op_summary_agg *out,
                         opdb_err *err);
void op_summary_free(op_summary_agg *a);
const agg_op *op_summary_get(const op_summary_agg *a, const char *op);
/* String key i of r's key set (num -1): a first-launch cell, or EP Size. */
const char *agg_str(const agg_row *r, int i);
/* r's identity cells in opdb_key_cols order: the base columns as agg_str
 * gives them, then EP Size ("" when none). */
void agg_key_cells(const agg_row *r, opdb_span out[OPDB_NKEY_COLS]);
/* The signature cells of r (through agg_key_cells). */
opdb_sig_cells agg_sig_cells(const agg_row *r);
/* Input or Output Shapes of r is N/A (opdb_shape_is_na). */
bool agg_has_na_shape(const agg_row *r);
/* The string value of key i ("%.6f" of numbers, rendered into buf). */
const char *agg_val(const agg_row *r, int i, char buf[400]);
const char *agg_get(const agg_row *r, const char *key, char buf[400]); /* "" when absent */
opdb_span agg_span(const agg_row *r, int i, char buf[400]); /* agg_val with its length */

#endif
