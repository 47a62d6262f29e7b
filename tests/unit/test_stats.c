/* statistics.median and the reference's naive population std. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"
#include "opdb/stats.h"

static double median_of(const double *v, size_t n) {
    double tmp[64];
    assert_true(n <= 64);
    memcpy(tmp, v, n * sizeof *v);
    return opdb_median(tmp, n);
}

static void test_median_single(void **s) {
    (void)s;
    double v[] = {7.5};
    assert_true(median_of(v, 1) == 7.5);
}

static void test_median_odd_count(void **s) {
    (void)s;
    double v[] = {5, 1, 3};
    assert_true(median_of(v, 3) == 3.0);
}

static void test_median_even_count_means_middle_two(void **s) {
    (void)s;
    double v[] = {4, 1, 3, 2};
    assert_true(median_of(v, 4) == 2.5);
    double w[] = {10, 20};
    assert_true(median_of(w, 2) == 15.0);
}

static void test_median_duplicates(void **s) {
    (void)s;
    double v[] = {2, 2, 2, 9, 1, 2};
    assert_true(median_of(v, 6) == 2.0);
    double w[] = {1, 3, 3, 3, 3, 7, 7, 7};
    assert_true(median_of(w, 8) == 3.0);
    double x[] = {5, 5, 5, 5, 5};
    assert_true(median_of(x, 5) == 5.0);
}

static void test_median_sorted_and_reversed(void **s) {
    (void)s;
    double up[33], down[33];
    for (int i = 0; i < 33; i++) up[i] = i, down[i] = 32 - i;
    assert_true(median_of(up, 33) == 16.0);
    assert_true(median_of(down, 33) == 16.0);
    assert_true(median_of(up, 32) == 15.5);
    assert_true(median_of(down, 32) == 16.5); /* 32..1: middle two are 17 and 16 */
}

static void test_median_negative_values(void **s) {
    (void)s;
    double v[] = {-3, -1, -2, -10};
    assert_true(median_of(v, 4) == -2.5);
}

static void test_median_even_mean_is_rounded_sum_halved(void **s) {
    (void)s;
    /* (a + b) / 2 in double, as Python does */
    double v[] = {0.1, 0.2};
    assert_true(median_of(v, 2) == (0.1 + 0.2) / 2);
    double big[] = {1.7976931348623157e308, 1.7976931348623157e308};
    assert_true(isinf(median_of(big, 2))); /* Python: (x + x) / 2 overflows too */
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t rng_state = 0x1234567;
static uint32_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static void test_median_random_vs_qsort(void **s) {
    (void)s;
    double a[301], b[301];
    for (int it = 0; it < 3000; it++) {
        size_t n = 1 + rng() % 301;
        unsigned range = 1 + rng() % 50; /* small ranges give many duplicates */
        for (size_t i = 0; i < n; i++) a[i] = b[i] = (double)(rng() % range) + (rng() % 4) * 0.25;
        qsort(b, n, sizeof *b, cmp_d);
        double want = n % 2 ? b[n / 2] : (b[n / 2 - 1] + b[n / 2]) / 2;
        double got = opdb_median(a, n);
        if (got != want) {
            print_error("iteration %d n=%zu: got %.17g want %.17g\n", it, n, got, want);
            fail();
        }
    }
}

static void test_median_keeps_the_values(void **s) {
    (void)s;
    /* opdb_median may reorder but must not lose or invent values */
    double a[50], b[50], c[50];
    for (int i = 0; i < 50; i++) a[i] = b[i] = (double)(rng() % 20);
    opdb_median(a, 50);
    memcpy(c, a, sizeof a);
    qsort(b, 50, sizeof *b, cmp_d);
    qsort(c, 50, sizeof *c, cmp_d);
    assert_memory_equal(b, c, sizeof b);
}

static void test_pstd_worked_example(void **s) {
    (void)s;
    /* durations 10, 12, 14: sqrt((100+144+196)/3 - 144) */
    double sum = 10.0 + 12.0 + 14.0, sumsq = 100.0 + 144.0 + 196.0;
    double sd = opdb_pstd_naive(sum, sumsq, 3.0);
    char buf[64];
    opdb_py_fmt_fixed(buf, sizeof buf, sd, 6);
    assert_string_equal(buf, "1.632993");
    assert_true(sd == sqrt(440.0 / 3.0 - 144.0));
}

static void test_pstd_single_value_is_zero(void **s) {
    (void)s;
    assert_true(opdb_pstd_naive(5.0, 25.0, 1.0) == 0.0);
}

static void test_pstd_negative_variance_clamps_to_zero(void **s) {
    (void)s;
    double sd = opdb_pstd_naive(3.0, 2.9999999, 3.0); /* var = 0.99999997 - 1 < 0 */
    assert_false(isnan(sd));
    assert_true(sd == 0.0);
}

static void test_pstd_rounding_negative_variance_from_real_sums(void **s) {
    (void)s;
    /* find identical values whose one-pass variance rounds below zero */
    int found = 0;
    for (int k = 1; k < 2000 && !found; k++) {
        double x = k * 0.1, sum = 0, sumsq = 0;
        for (int i = 0; i < 3; i++) sum += x, sumsq += x * x;
        double mean = sum / 3;
        if (sumsq / 3 - mean * mean < 0) {
            found = 1;
            double sd = opdb_pstd_naive(sum, sumsq, 3.0);
            assert_false(isnan(sd));
            assert_true(sd == 0.0);
        }
    }
    assert_true(found);
}

static void test_pstd_is_naive_not_two_pass(void **s) {
    (void)s;
    /* the one-pass formula, evaluated exactly as written, in double */
    double v[] = {1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 7};
    double sum = 0, sumsq = 0;
    for (int i = 0; i < 4; i++) sum += v[i], sumsq += v[i] * v[i];
    double mean = sum / 4, var = sumsq / 4 - mean * mean;
    double want = sqrt(var > 0 ? var : 0);
    assert_true(opdb_pstd_naive(sum, sumsq, 4.0) == want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_single),
        cmocka_unit_test(test_median_odd_count),
        cmocka_unit_test(test_median_even_count_means_middle_two),
        cmocka_unit_test(test_median_duplicates),
        cmocka_unit_test(test_median_sorted_and_reversed),
        cmocka_unit_test(test_median_negative_values),
        cmocka_unit_test(test_median_even_mean_is_rounded_sum_halved),
        cmocka_unit_test(test_median_random_vs_qsort),
        cmocka_unit_test(test_median_keeps_the_values),
        cmocka_unit_test(test_pstd_worked_example),
        cmocka_unit_test(test_pstd_single_value_is_zero),
        cmocka_unit_test(test_pstd_negative_variance_clamps_to_zero),
        cmocka_unit_test(test_pstd_rounding_negative_variance_from_real_sums),
        cmocka_unit_test(test_pstd_is_naive_not_two_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
