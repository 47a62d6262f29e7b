/* Leave-one-out over a database's interpolation indexes: each row with a
 * latency is hidden in turn and asked for, as a kernel-level query of its own
 * cells would ask, once in the query's own axis-group order and once per
 * axis group alone. The answers go to a callback; `opdb check`
 * (src/analysis/check_*.c) turns them into figures. */
#ifndef OPDB_QUERY_LOO_H
#define OPDB_QUERY_LOO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opdb/core.h"
#include "opdb/query.h"

#define Q_LOO_MAXAX 5
#define Q_LOO_MAXGROUPS 14 /* attention: every 1-3 of its 4 axes */

/* One kernel table: which interpolation path its rows were checked on. */
typedef struct q_loo_table {
    const char *kernel, *file; /* file relative to the database folder */
    const char *path;          /* matmul, quantized_matmul, generic, elementwise, compute_scale, attention_special, moe_fused,
                                  scatter_nd_update_mla, communication; or a path check does not cover */
    bool covered;              /* false: the table is not checked (why says why) */
    const char *why;           /* not covered: one phrase */
    size_t rows;               /* data rows */
    size_t with_latency;       /* rows with an interpolation latency */
    size_t indexed;            /* ... that are points of the path's index (checked) */
    int nax;                   /* the path's axes */
    const char *const *axis_names;
    size_t ngroups;            /* axis groups, in the query's order */
    const char *group_names[Q_LOO_MAXGROUPS];
    int group_dim[Q_LOO_MAXGROUPS];
} q_loo_table;

/* One held-out row asked for on one axis group (group -1: the query's own order). */
typedef struct q_loo_case {
    const q_loo_table *table;
    uint32_t row, line;        /* 0-based data row; 1-based line where its record starts */
    int group;                 /* index into table->group_names, or -1 */
    const double *coords;      /* the row's axes (table->nax of them) */
    double actual;             /* the row's latency */
    bool recovered;            /* an answer came back */
    double predicted;          /* when recovered */
    int dim;                   /* axes of the group that answered */
    double spread;             /* log2 of the widest max/min ratio, on one axis, of the points used */
    bool interior;             /* the other points bracket the row on every axis of the group */
    const char *status;        /* not recovered: the interpolation's reason */
} q_loo_case;

typedef struct q_loo_cb {
    void (*table)(void *ctx, const q_loo_table *t); /* before its rows */
    void (*row)(void *ctx, const q_loo_case *c);
    void *ctx;
} q_loo_cb;

/* Every kernel table of the database folder (its *.csv files, by name); a
 * table that cannot be loaded is skipped with a warning through the
 * database's warning callback. 0, or -1 with err set when the folder cannot
 * be listed. */
int q_loo_run(const opdb_qdb *db, const q_loo_cb *cb, opdb_err *err);

/* The spread of a set of points (npts x dim coordinates, row-major): log2
 * of the largest max/min ratio over the axes; INFINITY when a coordinate is
 * not positive. */
double q_loo_spread(const double *coords, int npts, int dim);

/* The distance bucket of a spread, as calibration groups answers:
 * 0 same (one point, or equal coordinates), 1 near (within 2x on every
 * axis), 2 mid (within 8x), 3 far; and its name. */
#define Q_LOO_NBUCKETS 4
int q_loo_bucket(double spread);
const char *q_loo_bucket_name(int b);

#endif
