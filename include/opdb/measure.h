/* The measurement engine of `opdb bench`: how one prepared operator is timed
 * (method in docs/REPLAY.md "Measurement").
 *
 * A time-budgeted warm-up, then samples until the stop rule holds:
 *   n >= min_samples AND (sum of sample times or time spent sampling) >= min_time AND the 95%
 *   distribution-free confidence interval of the median is within
 *   target_precision (half-width relative to the median)
 * or the wall-clock timeout is reached.  The interval narrows as samples
 * accumulate (about 1/sqrt(n)), so noisy rows stop too, where a bound on
 * the samples' spread would never be met.  With a
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
    size_t size; /* sizeof(opdb_measure_opts), set by opdb_measure_opts_init */
    long repeat_count;     /* > 0: exactly this many samples, no stop rule */
    long min_samples;      /* default 10 */
    double min_time_s;     /* default 0.5: accumulated sample time, or time spent sampling (evictions included) */
    double target_precision_pct; /* default 1: CI half-width / median * 100 */
    double timeout_s;      /* default 15: wall clock, warm-up and evictions included */
    double warmup_s;       /* default 0.05: warm-up budget (at least one run) */
    bool hot_cache;        /* no eviction between samples */
    bool keep_samples;     /* hand the samples over in opdb_measure_result.samples */
} opdb_measure_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_measure_opts_init_sized(opdb_measure_opts *o, size_t size);
#define opdb_measure_opts_init(o) opdb_measure_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

/* Order statistics and spread of n >= 1 samples (v is reordered). */
typedef struct opdb_sample_stats {
    size_t n;
    double min, median, p20, p80, mean;
    double rsd_pct;        /* sample standard deviation / mean * 100 (0 when n < 2) */
    double ci_lo, ci_hi;   /* 95% confidence interval of the median; NAN when n < 6 */
} opdb_sample_stats;

#define OPDB_MEDIAN_CI_CONFIDENCE 0.95

/* Ranks (1-based, lo <= hi = n + 1 - lo) of the order statistics that bound
 * the distribution-free confidence interval of the median of n samples: the
 * largest lo with P(B <= lo - 1) <= (1 - confidence) / 2, B ~ binomial(n, 1/2).
 * Exact for n <= 1000, the normal approximation above. false when no such
 * rank exists (n < 6 at 95%). */
OPDB_API bool opdb_median_ci_ranks(size_t n, double confidence, size_t *lo, size_t *hi);

/* The stop decision on the samples so far (sorted ascending, n of them,
 * sum_us their total): the rule above without the timeout. */
OPDB_API bool opdb_stop_rule_met(const opdb_measure_opts *o, const double *sorted, size_t n, double sum_us);

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

/* What a short pilot of one prepared row found (opdb bench --plan). */
typedef struct opdb_pilot {
    double setup_s;        /* prepare + release */
    double run_s;          /* one execution, warm */
    double sample_s;       /* one sample as the stop rule takes it: eviction + execution + loop */
    double spread;         /* the executions' robust relative spread: 1.4826 * MAD / median */
} opdb_pilot;

/* The expected wall time of measuring that row with o, in `passes`
 * interleaved passes (each with 1/passes of min_time and timeout), setup
 * included. The samples the median's interval needs: the interval's
 * half-width is about z * 1.2533 * spread / sqrt(n) of the median (the
 * median's standard error under a normal shape), so n = (z * 1.2533 *
 * spread / precision)^2, at least min_samples; then at least min_time of
 * sampling, at most the timeout. A fixed count takes exactly its samples. */
OPDB_API double opdb_measure_estimate_s(const opdb_measure_opts *o, const opdb_pilot *p, int passes);

/* Monotonic clock in seconds. */
OPDB_API double opdb_now_s(void);
/* The cost of one clock read pair in microseconds (minimum over many tries):
 * measured once at the start of a run and recorded with its results. */
OPDB_API double opdb_timer_overhead_us(void);

/* The fixed repeat count: flag (if given) > the OPDB_REPLAY_REPEAT_COUNT setting >
 * MSMODELING_OP_REPLAY_REPEAT_COUNT > none (*out = 0). Messages as the
 * reference: "--repeat-count must be positive, got N", "<ENV> must be an
 * integer, got 'x'", "<ENV> must be positive, got 'x'". */
OPDB_API int opdb_repeat_count_resolve(const char *flag, long *out, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
