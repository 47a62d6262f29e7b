/* The measurement engine of `opdb bench`: how one prepared operator is timed
 * (issue 6 point 3; method in docs/REPLAY.md "Measurement").
 *
 * A time-budgeted warm-up, then samples until the stop rule holds:
 *   n >= min_samples AND sum of sample times >= min_time AND RSD <= max_rsd
 * or the wall-clock timeout is reached (NVBench's rule and defaults).  With a
 * fixed repeat count exactly that many samples are taken instead.  The
 * last-level cache is evicted before every sample unless hot_cache. */
#ifndef OPDB_MEASURE_H
#define OPDB_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include "opdb/core.h"
#include "opdb/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPDB_REPEAT_ENV "OPDB_REPLAY_REPEAT_COUNT"
#define OPDB_REPEAT_ENV_REFERENCE "MSMODELING_OP_REPLAY_REPEAT_COUNT"

typedef struct opdb_measure_opts {
    long repeat_count;     /* > 0: exactly this many samples, no stop rule */
    long min_samples;      /* default 10 */
    double min_time_s;     /* default 0.5: accumulated sample time */
    double max_rsd_pct;    /* default 0.5 */
    double timeout_s;      /* default 15: wall clock, warm-up and evictions included */
    double warmup_s;       /* default 0.05: warm-up budget (at least one run) */
    bool hot_cache;        /* no eviction between samples */
    bool keep_samples;     /* hand the samples over in opdb_measure_result.samples */
} opdb_measure_opts;

OPDB_API void opdb_measure_defaults(opdb_measure_opts *o);

/* Order statistics and spread of n >= 1 samples (v is reordered). */
typedef struct opdb_sample_stats {
    size_t n;
    double min, median, p20, p80, mean;
    double rsd_pct;        /* sample standard deviation / mean * 100 (0 when n < 2) */
} opdb_sample_stats;

OPDB_API void opdb_sample_stats_of(double *v, size_t n, opdb_sample_stats *s);
/* Linear-interpolated percentile (numpy's default) of sorted values, q in [0,100]. */
OPDB_API double opdb_percentile_sorted(const double *sorted, size_t n, double q);

typedef struct opdb_measure_result {
    opdb_sample_stats st;  /* over the timed samples (microseconds) */
    size_t warmup_runs;
    bool stop_rule_met;    /* false: stopped by the timeout (or fixed count) */
    double wall_s;         /* whole measurement, warm-up included */
    double *samples;       /* with keep_samples: the st.n samples in the order taken (free()); else NULL */
} opdb_measure_result;

/* Times inst on backend b. Samples are taken with b->run(); errors from it
 * stop the measurement and are returned. */
OPDB_API int opdb_measure(opdb_backend *b, void *inst, const opdb_measure_opts *o, opdb_measure_result *r, opdb_err *err);

/* Monotonic clock in seconds. */
OPDB_API double opdb_now_s(void);
/* The cost of one clock read pair in microseconds (minimum over many tries):
 * measured once at the start of a run and recorded with its results. */
OPDB_API double opdb_timer_overhead_us(void);

/* The fixed repeat count: flag (if given) > $OPDB_REPLAY_REPEAT_COUNT >
 * $MSMODELING_OP_REPLAY_REPEAT_COUNT > none (*out = 0). Messages as the
 * reference: "--repeat-count must be positive, got N", "<ENV> must be an
 * integer, got 'x'", "<ENV> must be positive, got 'x'". */
OPDB_API int opdb_repeat_count_resolve(const char *flag, long *out, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
