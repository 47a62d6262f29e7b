/* See measure.h. */
#include "opdb/measure.h"
#include "core/call.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Samples kept for the order statistics; a run that reaches it stops (only
 * sub-microsecond kernels with a hot cache get there). */
#define MAX_SAMPLES (1u << 20)

static void measure_defaults(opdb_measure_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->min_samples = 10;
    o->min_time_s = 0.5;
    o->target_precision_pct = 1.0;
    o->timeout_s = 15.0;
    o->warmup_s = 0.05;
}

OPDB_OPTS_INIT_SIZED(opdb_measure_opts, measure_defaults)

double opdb_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double opdb_timer_overhead_us(void) {
    double best = INFINITY;
    for (int i = 0; i < 2000; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double d = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) * 1e-3;
        if (d < best) best = d;
    }
    return best;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double opdb_percentile_sorted(const double *s, size_t n, double q) {
    if (n == 0) return 0.0;
    double pos = q / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    if (lo + 1 >= n) return s[n - 1];
    double frac = pos - (double)lo;
    return s[lo] + (s[lo + 1] - s[lo]) * frac;
}

/* z with P(Z > z) = tail for a standard normal Z, by bisection. */
static double normal_upper_quantile(double tail) {
    double a = 0, b = 40;
    for (int i = 0; i < 200; i++) {
        double m = (a + b) / 2;
        if (0.5 * erfc(m / sqrt(2.0)) > tail) a = m;
        else b = m;
    }
    return (a + b) / 2;
}

bool opdb_median_ci_ranks(size_t n, double confidence, size_t *lo, size_t *hi) {
    double tail = (1.0 - confidence) / 2.0;
    size_t k = 0;
    if (n <= 1000) {
        /* P(B <= j) summed term by term in log space: 2^-n underflows */
        double cdf = 0, lnn = lgamma((double)n + 1) - (double)n * log(2.0);
        for (size_t j = 0; j <= n / 2; j++) {
            cdf += exp(lnn - lgamma((double)j + 1) - lgamma((double)(n - j) + 1));
            if (cdf > tail * (1 + 1e-12)) break;
            k = j + 1;
        }
    } else {
        /* continuity-corrected normal approximation of the same rank */
        double z = normal_upper_quantile(tail);
        double r = floor((double)n / 2.0 - z * sqrt((double)n) / 2.0 + 0.5);
        k = r < 1 ? 0 : (size_t)r;
    }
    if (k == 0) return false;
    *lo = k;
    *hi = n + 1 - k;
    return true;
}

static void median_ci(const double *sorted, size_t n, double *ci_lo, double *ci_hi) {
    size_t lo, hi;
    if (n && opdb_median_ci_ranks(n, OPDB_MEDIAN_CI_CONFIDENCE, &lo, &hi)) {
        *ci_lo = sorted[lo - 1];
        *ci_hi = sorted[hi - 1];
    } else {
        *ci_lo = *ci_hi = NAN;
    }
}

bool opdb_stop_rule_met(const opdb_measure_opts *o, const double *sorted, size_t n, double sum_us) {
    if ((long)n < o->min_samples || sum_us * 1e-6 < o->min_time_s || n == 0) return false;
    double lo, hi;
    median_ci(sorted, n, &lo, &hi);
    if (isnan(lo)) return false;
    double med = opdb_percentile_sorted(sorted, n, 50);
    if (med <= 0) return hi - lo <= 0;
    return (hi - lo) / 2.0 / med * 100.0 <= o->target_precision_pct;
}

void opdb_sample_stats_of(double *v, size_t n, opdb_sample_stats *s) {
    memset(s, 0, sizeof *s);
    s->n = n;
    if (n == 0) return;
    qsort(v, n, sizeof *v, cmp_double);
    /* Welford: no cancellation for tight distributions. */
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) {
        double d = v[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (v[i] - mean);
    }
    s->min = v[0];
    s->median = opdb_percentile_sorted(v, n, 50);
    s->p20 = opdb_percentile_sorted(v, n, 20);
    s->p80 = opdb_percentile_sorted(v, n, 80);
    s->mean = mean;
    s->rsd_pct = n > 1 && mean > 0 ? sqrt(m2 / (double)(n - 1)) / mean * 100.0 : 0.0;
    median_ci(v, n, &s->ci_lo, &s->ci_hi);
}

/* The rule is checked on a sorted copy, at sample counts growing by about
 * 1/16 each time: the cost stays O(n log n) per doubling of n. */
static bool check_now(const opdb_measure_opts *o, const double *v, size_t n, double sum, size_t *next, double **sorted,
                      size_t *scap) {
    if ((long)n < o->min_samples || sum * 1e-6 < o->min_time_s || n < *next) return false;
    *next = n + (n / 16 > 0 ? n / 16 : 1);
    OPDB_ALLOC_GROW(*sorted, n, *scap);
    memcpy(*sorted, v, n * sizeof *v);
    qsort(*sorted, n, sizeof **sorted, cmp_double);
    return opdb_stop_rule_met(o, *sorted, n, sum);
}

int opdb_measure(opdb_backend *b, void *inst, const opdb_measure_opts *o, opdb_measure_result *res, opdb_err *err) {
    memset(res, 0, sizeof *res);
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_measure_opts", err)) return -1;
    double t0 = opdb_now_s();
    double us;
    /* Warm-up: page faults, thread pools, clocks; at least one run. */
    do {
        if (b->run(b, inst, &us, err)) return -1;
        res->warmup_runs++;
    } while (opdb_now_s() - t0 < o->warmup_s && opdb_now_s() - t0 < o->timeout_s);

    size_t cap = 64, n = 0;
    double *v = opdb_xmalloc(cap * sizeof *v);
    double sum = 0, *sorted = NULL, ts = opdb_now_s();
    size_t next = 0, scap = 0;
    int rc = 0;
    for (;;) {
        if (o->repeat_count > 0) {
            if ((long)n >= o->repeat_count) break;
        } else {
            /* min_time is met by the samples' own time or by the time spent
             * sampling (evictions included), whichever comes first: a 5 us
             * kernel would otherwise need 10^5 cold samples */
            double spent = fmax(sum, (opdb_now_s() - ts) * 1e6);
            if (check_now(o, v, n, spent, &next, &sorted, &scap)) {
                res->stop_rule_met = true;
                break;
            }
            /* at least one sample, so every measurement has a result */
            if (n >= 1 && (opdb_now_s() - t0 >= o->timeout_s || n >= MAX_SAMPLES)) break;
        }
        if (!o->hot_cache && b->flush_cache) b->flush_cache(b);
        if (b->run(b, inst, &us, err)) {
            rc = -1;
            break;
        }
        OPDB_ALLOC_GROW(v, n + 1, cap);
        v[n++] = us;
        sum += us;
    }
    if (rc == 0 && o->keep_samples) {
        res->samples = opdb_xmalloc((n ? n : 1) * sizeof *v);
        memcpy(res->samples, v, n * sizeof *v);
    }
    if (rc == 0) opdb_sample_stats_of(v, n, &res->st);
    res->wall_s = opdb_now_s() - t0;
    free(sorted);
    free(v);
    return rc;
}

double opdb_measure_estimate_s(const opdb_measure_opts *o, const opdb_pilot *p, int passes) {
    if (passes < 1) passes = 1;
    double warm = fmax(o->warmup_s, p->run_s);
    if (o->repeat_count > 0) return p->setup_s + warm + (double)o->repeat_count * p->sample_s;
    double min_t = o->min_time_s / passes, to = o->timeout_s / passes;
    double z = normal_upper_quantile((1.0 - OPDB_MEDIAN_CI_CONFIDENCE) / 2.0);
    double need = o->target_precision_pct > 0 ? z * 1.2533 * p->spread * 100.0 / o->target_precision_pct : 0;
    double n = ceil(need * need);
    /* the rule is checked at counts growing by 1/16: half a step is overshot on average */
    n *= 1.0 + 1.0 / 32.0;
    if (n < (double)o->min_samples) n = (double)o->min_samples;
    if (n < 6) n = 6; /* no interval below 6 samples */
    double t = warm + fmax(min_t, n * p->sample_s);
    /* the timeout is looked at before each sample: the one under way finishes */
    if (t > to) t = fmax(to, warm) + p->sample_s;
    return passes * (p->setup_s + t);
}

/* A positive integer, as int(value) after strip would accept it. */
static bool parse_long(const char *s, long *out) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    if (!*s) return false;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || errno) return false;
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') end++;
    if (*end) return false;
    *out = v;
    return true;
}

static bool blank(const char *s) {
    if (!s) return true;
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return false;
    return true;
}

int opdb_repeat_count_resolve(const char *flag, long *out, opdb_err *err) {
    *out = 0;
    if (flag) {
        long v;
        if (!parse_long(flag, &v))
            return opdb_fail(err, OPDB_ERR_USAGE, "argument --repeat-count: invalid int value: '%s'", flag);
        if (v <= 0) return opdb_fail(err, OPDB_ERR_USAGE, "--repeat-count must be positive, got %ld", v);
        *out = v;
        return 0;
    }
    static const char *const envs[2] = {OPDB_REPEAT_ENV, OPDB_REPEAT_ENV_REFERENCE};
    for (int i = 0; i < 2; i++) {
        const char *e = opdb_setting(envs[i]);
        if (blank(e)) continue;
        long v;
        if (!parse_long(e, &v)) return opdb_fail(err, OPDB_ERR_USAGE, "%s must be an integer, got '%s'", envs[i], e);
        if (v <= 0) return opdb_fail(err, OPDB_ERR_USAGE, "%s must be positive, got '%s'", envs[i], e);
        *out = v;
        return 0;
    }
    return 0;
}
