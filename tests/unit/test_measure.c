/* The measurement engine with a fake backend whose "durations" come from a
 * script, so the stop rule, the fixed count, cache eviction and the
 * statistics are checked without depending on real time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/measure.h"

typedef struct fake {
    const double *seq;   /* durations returned in turn; the last one repeats */
    size_t nseq, calls, flushes;
    size_t fail_at;      /* 1-based call that fails; 0 = never */
} fake;

static int fake_run(opdb_backend *b, void *inst, double *us, opdb_err *err) {
    (void)inst;
    fake *f = b->impl;
    f->calls++;
    if (f->fail_at && f->calls == f->fail_at) return opdb_fail(err, OPDB_ERR_RUNTIME, "kernel failed on call %zu", f->calls);
    *us = f->seq[f->calls - 1 < f->nseq ? f->calls - 1 : f->nseq - 1];
    return 0;
}

static void fake_flush(opdb_backend *b) { ((fake *)b->impl)->flushes++; }

static opdb_backend make_backend(fake *f) {
    opdb_backend b;
    memset(&b, 0, sizeof b);
    b.name = "fake";
    b.run = fake_run;
    b.flush_cache = fake_flush;
    b.impl = f;
    return b;
}

/* Measures fake f with options o (err cleared first). */
static int measure_fake(fake *f, const opdb_measure_opts *o, opdb_measure_result *r, opdb_err *err) {
    opdb_backend b = make_backend(f);
    opdb_err_clear(err);
    return opdb_measure(&b, NULL, o, r, err);
}

/* Deterministic options: one warm-up run, no timeout unless a test sets one. */
static opdb_measure_opts opts(void) {
    opdb_measure_opts o;
    opdb_measure_opts_init(&o);
    o.warmup_s = 0;
    o.timeout_s = 1e9;
    return o;
}

static void test_defaults(void **state) {
    (void)state;
    opdb_measure_opts o;
    opdb_measure_opts_init(&o);
    assert_int_equal(o.min_samples, 10);
    assert_true(o.min_time_s == 0.5);
    assert_true(o.target_precision_pct == 1.0);
    assert_true(o.timeout_s == 15.0);
    assert_int_equal(o.repeat_count, 0);
    assert_false(o.hot_cache);
}

static void test_stable_stops_at_min_samples(void **state) {
    (void)state;
    double seq[] = {100.0};
    fake f = {seq, 1, 0, 0, 0};
    opdb_measure_opts o = opts();
    o.min_time_s = 0.0005; /* 5 samples of 100 us */
    opdb_measure_result r;
    opdb_err err;
    assert_int_equal(measure_fake(&f, &o, &r, &err), 0);
    assert_int_equal(r.st.n, 10);
    assert_int_equal(r.warmup_runs, 1);
    assert_int_equal(f.calls, 11);
    assert_int_equal(f.flushes, 10); /* one eviction before every sample, none in warm-up */
    assert_true(r.stop_rule_met);
    assert_true(r.st.min == 100.0 && r.st.median == 100.0 && r.st.rsd_pct == 0.0);
}

static void test_min_time_dominates(void **state) {
    (void)state;
    double seq[] = {20000.0};
    fake f = {seq, 1, 0, 0, 0};
    opdb_measure_opts o = opts();
    /* 2 s of (fake) sample time = 100 samples; the real time spent sampling,
     * the other way to meet min_time, stays far below 2 s for 100 fake calls */
    o.min_time_s = 2.0;
    opdb_measure_result r;
    opdb_err err;
    assert_int_equal(measure_fake(&f, &o, &r, &err), 0);
    assert_int_equal(r.st.n, 100);
    assert_true(r.stop_rule_met);
}

/* Exact binomial ranks, computed independently (Python, math.comb). */
static void test_median_ci_ranks(void **state) {
    (void)state;
    static const size_t want[][3] = {{6, 1, 6}, {10, 2, 9}, {20, 6, 15}, {100, 40, 61}, {1000, 469, 532}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t lo = 0, hi = 0;
        assert_true(opdb_median_ci_ranks(want[i][0], 0.95, &lo, &hi));
        assert_int_equal(lo, want[i][1]);
        assert_int_equal(hi, want[i][2]);
    }
    size_t lo, hi;
    for (size_t n = 0; n <= 5; n++) assert_false(opdb_median_ci_ranks(n, 0.95, &lo, &hi));
    /* the normal approximation beyond 1000 agrees with the exact ranks within one */
    assert_true(opdb_median_ci_ranks(1001, 0.95, &lo, &hi));
    assert_true(lo >= 469 && lo <= 471 && hi == 1002 - lo);
    assert_true(opdb_median_ci_ranks(5000, 0.95, &lo, &hi));
    assert_true(lo >= 2430 && lo <= 2432 && hi == 5001 - lo);
}

/* The interval is read off the sorted samples at those ranks. */
static void test_statistics_ci(void **state) {
    (void)state;
    double v[10] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    opdb_sample_stats s;
    opdb_sample_stats_of(v, 10, &s);
    assert_true(s.ci_lo == 2 && s.ci_hi == 9);
    double w[5] = {1, 2, 3, 4, 5};
    opdb_sample_stats_of(w, 5, &s);
    assert_true(isnan(s.ci_lo) && isnan(s.ci_hi));
}

static void test_stop_decision(void **state) {
    (void)state;
    opdb_measure_opts o = opts();
    o.min_time_s = 0;
    /* 10 samples: ranks 2 and 9 bound the interval; half-width (101-99)/2 = 1% of 100 */
    double tight[10] = {50, 99, 100, 100, 100, 100, 100, 100, 101, 500};
    assert_true(opdb_stop_rule_met(&o, tight, 10, 1450));
    o.target_precision_pct = 0.99;
    assert_false(opdb_stop_rule_met(&o, tight, 10, 1450));
    o.target_precision_pct = 1;
    double wide[10] = {50, 90, 100, 100, 100, 100, 100, 100, 110, 500};
    assert_false(opdb_stop_rule_met(&o, wide, 10, 1450));
    /* min samples and min time still gate the rule */
    o.min_samples = 11;
    assert_false(opdb_stop_rule_met(&o, tight, 10, 1450));
    o.min_samples = 10;
    o.min_time_s = 0.002;
    assert_false(opdb_stop_rule_met(&o, tight, 10, 1450));
    assert_true(opdb_stop_rule_met(&o, tight, 10, 2000));
    /* too few samples for an interval never stop */
    o.min_samples = 1;
    o.min_time_s = 0;
    double few[5] = {100, 100, 100, 100, 100};
    assert_false(opdb_stop_rule_met(&o, few, 5, 500));
}

/* Samples whose spread never shrinks (RSD about 20% for ever) still stop once
 * the median's interval is narrow enough: the rule the RSD bound never met. */
static void test_noisy_row_converges(void **state) {
    (void)state;
    double seq[] = {0 /* warm-up */, 80, 120, 100, 90, 110};
    fake f = {seq, sizeof seq / sizeof seq[0], 0, 0, 0};
    opdb_measure_opts o = opts();
    o.min_time_s = 0;
    /* the last value repeats: after enough 110s the median interval sits on 110 */
    opdb_measure_result r;
    opdb_err err;
    assert_int_equal(measure_fake(&f, &o, &r, &err), 0);
    assert_true(r.stop_rule_met);
    assert_true(r.st.median == 110.0 && r.st.ci_lo == 110.0 && r.st.ci_hi == 110.0);
    assert_true(r.st.n > 10);
}

/* Alternating samples: the median interval spans both values for ever, so
 * only the timeout ends the run, and it is marked so. */
static void test_alternating_needs_timeout(void **state) {
    (void)state;
    double seq[] = {0, 90, 110, 90, 110, 90, 110, 90, 110, 90, 110, 90, 110, 90, 110, 90, 110, 90, 110, 90, 110, 90, 110};
    fake f = {seq, sizeof seq / sizeof seq[0], 0, 0, 0};
    opdb_measure_opts o = opts();
    o.min_time_s = 0;
    o.repeat_count = 0;
    opdb_measure_result r;
    opdb_err err;
    /* 22 samples alternate, then 110 repeats: the rule is met only after the 110s outnumber enough */
    assert_int_equal(measure_fake(&f, &o, &r, &err), 0);
    assert_true(r.stop_rule_met);
    assert_true(r.st.n > 22);
    assert_true(r.st.ci_lo == 110.0);
}

static void test_timeout_keeps_one_sample(void **state) {
    (void)state;
    double seq[] = {100, 300};
    fake f = {seq, 2, 0, 0, 0};
    opdb_measure_opts o = opts();
    o.timeout_s = 0;
    opdb_measure_result r;
    opdb_err err;
    assert_int_equal(measure_fake(&f, &o, &r, &err), 0);
    assert_int_equal(r.st.n, 1);
    assert_false(r.stop_rule_met);
    assert_true(r.st.min == 300.0);
}

static void test_fixed_count_ignores_rule(void **state) {
    (void)state;
    double seq[] = {5, 50, 500, 5000};
    fake f = {seq, 4, 0, 0, 0};
    opdb_measure_opts o = opts();
    o.repeat_count = 3;
    o.timeout_s = 0;
    o.hot_cache = true;
    opdb_measure_result r;
    opdb_err err;
    assert_int_equal(measure_fake(&f, &o, &r, &err), 0);
    assert_int_equal(r.st.n, 3);
    assert_int_equal(f.flushes, 0);
    assert_false(r.stop_rule_met);
    assert_true(r.st.min == 50.0 && r.st.median == 500.0);
}

/* keep_samples hands over the timed samples in order (not the warm-up);
 * without it nothing is allocated. */
static void test_keep_samples(void **state) {
    (void)state;
    double seq[] = {5, 50, 500, 5000};
    fake f = {seq, 4, 0, 0, 0};
    opdb_measure_opts o = opts();
    o.repeat_count = 3;
    o.keep_samples = true;
    opdb_measure_result r;
    opdb_err err;
    assert_int_equal(measure_fake(&f, &o, &r, &err), 0);
    assert_non_null(r.samples);
    assert_int_equal(r.st.n, 3);
    assert_true(r.samples[0] == 50.0 && r.samples[1] == 500.0 && r.samples[2] == 5000.0);
    free(r.samples);
    fake g = {seq, 4, 0, 0, 0};
    o.keep_samples = false;
    assert_int_equal(measure_fake(&g, &o, &r, &err), 0);
    assert_null(r.samples);
}

static void test_run_error_propagates(void **state) {
    (void)state;
    double seq[] = {100};
    fake f = {seq, 1, 0, 0, 4};
    opdb_measure_opts o = opts();
    opdb_measure_result r;
    opdb_err err;
    assert_int_equal(measure_fake(&f, &o, &r, &err), -1);
    assert_string_equal(err.msg, "kernel failed on call 4");
}

static void test_statistics(void **state) {
    (void)state;
    double v[] = {5, 1, 4, 2, 3};
    opdb_sample_stats s;
    opdb_sample_stats_of(v, 5, &s);
    assert_int_equal(s.n, 5);
    assert_true(s.min == 1 && s.median == 3 && s.mean == 3);
    assert_true(fabs(s.p20 - 1.8) < 1e-12);
    assert_true(fabs(s.p80 - 4.2) < 1e-12);
    assert_true(fabs(s.rsd_pct - sqrt(2.5) / 3 * 100) < 1e-9);
    double w[] = {7, 9};
    opdb_sample_stats_of(w, 2, &s);
    assert_true(s.median == 8 && s.p20 == 7.4);
    double one[] = {42};
    opdb_sample_stats_of(one, 1, &s);
    assert_true(s.p20 == 42 && s.p80 == 42 && s.rsd_pct == 0);
}

static void test_timer_overhead(void **state) {
    (void)state;
    double t = opdb_timer_overhead_us();
    assert_true(t >= 0 && t < 1000);
    double a = opdb_now_s(), b = opdb_now_s();
    assert_true(b >= a);
}

static void check_resolve(const char *flag, int rc, long want, const char *msg) {
    long v = -1;
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_repeat_count_resolve(flag, &v, &err), rc);
    if (rc == 0) assert_int_equal(v, want);
    else assert_string_equal(err.msg, msg);
}

static void test_repeat_count(void **state) {
    (void)state;
    unsetenv(OPDB_REPEAT_ENV);
    unsetenv(OPDB_REPEAT_ENV_REFERENCE);
    check_resolve(NULL, 0, 0, NULL);
    check_resolve("7", 0, 7, NULL);
    check_resolve("0", -1, 0, "--repeat-count must be positive, got 0");
    check_resolve("-3", -1, 0, "--repeat-count must be positive, got -3");
    check_resolve("x", -1, 0, "argument --repeat-count: invalid int value: 'x'");
    setenv(OPDB_REPEAT_ENV_REFERENCE, " 12 ", 1);
    check_resolve(NULL, 0, 12, NULL);
    setenv(OPDB_REPEAT_ENV, "  ", 1); /* blank: ignored */
    check_resolve(NULL, 0, 12, NULL);
    setenv(OPDB_REPEAT_ENV, "5", 1);  /* opdb's variable wins */
    check_resolve(NULL, 0, 5, NULL);
    check_resolve("2", 0, 2, NULL);   /* the flag wins */
    setenv(OPDB_REPEAT_ENV, "abc", 1);
    check_resolve(NULL, -1, 0, "OPDB_REPLAY_REPEAT_COUNT must be an integer, got 'abc'");
    unsetenv(OPDB_REPEAT_ENV);
    setenv(OPDB_REPEAT_ENV_REFERENCE, "0", 1);
    check_resolve(NULL, -1, 0, "MSMODELING_OP_REPLAY_REPEAT_COUNT must be positive, got '0'");
    unsetenv(OPDB_REPEAT_ENV_REFERENCE);
}

/* The --plan estimate from a pilot: min_time for quiet rows, the samples
 * the interval needs for noisy ones, the timeout at most; passes and a fixed
 * count priced as run. */
static void test_estimate(void **state) {
    (void)state;
    opdb_measure_opts o;
    opdb_measure_opts_init(&o);
    /* quiet: 10 samples would do, min_time (0.5 s) decides: warm-up + 0.5 + setup */
    opdb_pilot quiet = {0.01, 1e-5, 1e-3, 0.001};
    assert_true(fabs(opdb_measure_estimate_s(&o, &quiet, 1) - 0.56) < 1e-9);
    /* 5% spread, 10 ms a sample: (1.96 * 1.2533 * 5)^2 = 151 samples (+1/32) = 1.56 s of sampling */
    opdb_pilot mid = {0.01, 1e-5, 0.01, 0.05};
    double t = opdb_measure_estimate_s(&o, &mid, 1);
    assert_true(t > 1.55 && t < 1.65);
    /* the same at 2 ms a sample needs 0.31 s: min_time decides again */
    mid.sample_s = 0.002;
    assert_true(fabs(opdb_measure_estimate_s(&o, &mid, 1) - 0.56) < 1e-9);
    /* 16% spread at 10 ms: about 1600 samples, past the 15 s timeout: timeout + the sample under way */
    opdb_pilot noisy = {0.01, 1e-5, 0.01, 0.16};
    assert_true(fabs(opdb_measure_estimate_s(&o, &noisy, 1) - 15.02) < 1e-9);
    /* two passes: each with half the timeout, setup paid twice */
    assert_true(fabs(opdb_measure_estimate_s(&o, &noisy, 2) - 2 * (0.01 + 7.5 + 0.01)) < 1e-9);
    /* more spread never costs less */
    double prev = 0;
    for (double sp = 0; sp < 0.3; sp += 0.01) {
        opdb_pilot p = {0.01, 1e-5, 0.005, sp};
        double e = opdb_measure_estimate_s(&o, &p, 1);
        assert_true(e >= prev);
        prev = e;
    }
    /* a 2 s row: one warm-up run, then 10 samples would pass the timeout: setup + 15 s + the sample under way */
    opdb_pilot slow = {0.5, 2.0, 2.0, 0.0};
    assert_true(fabs(opdb_measure_estimate_s(&o, &slow, 1) - (0.5 + 15 + 2.0)) < 1e-9);
    /* a 0.2 s row: warm-up one run (0.2 s), 10 samples (2 s) */
    opdb_pilot mid2 = {0.1, 0.2, 0.2, 0.0};
    assert_true(fabs(opdb_measure_estimate_s(&o, &mid2, 1) - (0.1 + 0.2 + 2.0)) < 1e-9);
    /* fixed count: exactly its samples, no timeout */
    o.repeat_count = 100;
    assert_true(fabs(opdb_measure_estimate_s(&o, &quiet, 3) - (0.01 + 0.05 + 100 * 1e-3)) < 1e-9);
}

/* The library reads no environment variable: this test gives it its own,
 * as opdb's CLI does for the variables it lists. */
static const char *env_setting(const char *name) { return getenv(name); }

int main(void) {
    opdb_set_settings(env_setting);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_stable_stops_at_min_samples),
        cmocka_unit_test(test_min_time_dominates),
        cmocka_unit_test(test_median_ci_ranks),
        cmocka_unit_test(test_statistics_ci),
        cmocka_unit_test(test_stop_decision),
        cmocka_unit_test(test_noisy_row_converges),
        cmocka_unit_test(test_alternating_needs_timeout),
        cmocka_unit_test(test_timeout_keeps_one_sample),
        cmocka_unit_test(test_fixed_count_ignores_rule),
        cmocka_unit_test(test_keep_samples),
        cmocka_unit_test(test_run_error_propagates),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_timer_overhead),
        cmocka_unit_test(test_repeat_count),
        cmocka_unit_test(test_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
