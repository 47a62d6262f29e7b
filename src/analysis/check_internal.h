/* opdb check's model: the held-out answers of every table, the per-cell
 * figures (kernel type x axis group x interior/frontier), and the
 * calibration built from the answers in the query's own order. */
#ifndef OPDB_ANALYSIS_CHECK_INTERNAL_H
#define OPDB_ANALYSIS_CHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "opdb/core.h"
#include "opdb/check.h"
#include "query/loo.h"

#define CK_MAXGROUPS Q_LOO_MAXGROUPS

/* a kernel table as checked */
typedef struct ck_table {
    q_loo_table t;             /* group_names, axis_names: static strings */
    char *kernel, *file, *path;
} ck_table;

/* the figures of one cell */
typedef struct ck_stats {
    size_t rows, recovered;
    double median, p90, p99, bias, within10; /* of |relative error| (bias: signed median); NaN when none */
} ck_stats;

/* the held-out answers of one cell: signed relative errors (predicted - actual) / actual */
typedef struct ck_cell {
    size_t rows;
    double *err;
    size_t n, cap;
} ck_cell;

/* one held-out row answered (or not) in the query's own order */
typedef struct ck_answer {
    uint32_t table, line;
    double coords[Q_LOO_MAXAX];
    double actual, predicted;  /* predicted NaN: no answer */
    int dim, bucket;
    bool interior;
} ck_answer;

typedef struct ck_run {
    const char *dir;
    const opdb_check_options *o;
    ck_table *tabs;
    size_t ntabs, captabs;
    ck_cell *cells;            /* per table: (CK_MAXGROUPS + 1) x 2: group g+1 (0: the query's order), interior 0 / frontier 1 */
    ck_answer *ans;
    size_t nans, capans;
    opdb_check_result *res;
} ck_run;

static inline ck_cell *ck_cell_at(const ck_run *r, size_t tab, int group, bool interior) {
    return &r->cells[(tab * (CK_MAXGROUPS + 1) + (size_t)(group + 1)) * 2 + (interior ? 0 : 1)];
}

/* figures of a list of signed relative errors out of rows (sorts err) */
ck_stats ck_stats_of(double *err, size_t n, size_t rows);
/* the figures of a cell (its errors left as they are) */
ck_stats ck_cell_stats(const ck_cell *c);
/* linear-interpolated percentile q in [0, 1] of sorted x */
double ck_percentile(const double *x, size_t n, double q);


/* A conformal interval: the quantiles of the residuals actual / predicted - 1
 * at 80% and 90% (lo, hi), the median |relative error|, the residual count. */
typedef struct ck_interval {
    double lo80, hi80, lo90, hi90, median_abs;
    size_t n;
} ck_interval;
/* the interval of residuals e (n of them, sorted in place); false when n is too small for 90% */
bool ck_interval_of(double *e, size_t n, ck_interval *iv);

/* split-half coverage of the intervals (fills res->coverage*) */
void ck_coverage(ck_run *r);
/* writes OPDB_CALIBRATION_FILE into the folder (the caller holds its lock since the tables were read) */
int ck_write_calibration(ck_run *r, opdb_err *err);

void ck_write_text(const ck_run *r, FILE *out);
void ck_write_json(const ck_run *r, FILE *out);
int ck_write_html(const ck_run *r, const char *path, opdb_err *err);
/* the worst answers (largest |error|, then file order): indexes into r->ans */
size_t ck_worst(const ck_run *r, uint32_t *idx, size_t max);

#endif
