/* src/comm: bus-bandwidth factors, tiers and groups, the written row with the
 * dispatch overhead, 16-bit float conversions, statistics, the fit and the
 * configuration order (docs/COMM.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/comm_bench_args.h"
#include "opdb/comm.h"

/* nccl-tests: allreduce 2(n-1)/n, allgather/reducescatter/alltoall (n-1)/n, broadcast 1; checked
 * through exact integer identities so the test does not restate the formula. */
static void test_busbw_factors_2_to_1024(void **s) {
    (void)s;
    for (int n = 2; n <= 1024; n++) {
        double ar = opdb_comm_busbw_factor(OPDB_COMM_ALL_REDUCE, n);
        assert_true(fabs(ar * n - 2.0 * (n - 1)) < 1e-9);
        assert_true(ar >= 1.0 && ar < 2.0);
        for (int op = OPDB_COMM_ALL_GATHER; op <= OPDB_COMM_ALL_TO_ALL; op++) {
            double f = opdb_comm_busbw_factor((opdb_comm_op)op, n);
            assert_true(fabs(f * n - (n - 1)) < 1e-9);
            assert_true(fabs(ar - 2 * f) < 1e-12);
        }
        assert_true(opdb_comm_busbw_factor(OPDB_COMM_BROADCAST, n) == 1.0);
    }
    assert_true(opdb_comm_busbw_factor(OPDB_COMM_ALL_REDUCE, 2) == 1.0);
    assert_true(opdb_comm_busbw_factor(OPDB_COMM_ALL_REDUCE, 8) == 1.75);
    assert_true(opdb_comm_busbw_factor(OPDB_COMM_ALL_GATHER, 4) == 0.75);
}

static void test_tiers_of_spec_examples(void **s) {
    (void)s;
    opdb_comm_grid g = {3, {48, 8, 2}};
    assert_int_equal(opdb_comm_tier_of_range(&g, 0, 2), 2);
    assert_int_equal(opdb_comm_tier_of_range(&g, 0, 4), 1);
    assert_int_equal(opdb_comm_tier_of_range(&g, 0, 8), 1);
    assert_int_equal(opdb_comm_tier_of_range(&g, 0, 16), 1);
    assert_int_equal(opdb_comm_tier_of_range(&g, 0, 32), 0);
    assert_int_equal(opdb_comm_tier_of_range(&g, 0, 1), 2);
    long long base = -1;
    char msg[256];
    assert_int_equal(opdb_comm_group(&g, 16, 1, &base, msg, sizeof msg), 0);
    assert_int_equal(base, 0);
    assert_int_equal(opdb_comm_group(&g, 4, 2, &base, msg, sizeof msg), -1);
    assert_string_equal(msg, "num_devices=4 exceeds span size 2 for tier=2, grid_shape=[48, 8, 2]");
}

static void test_row_with_overhead_spec_example(void **s) {
    (void)s;
    opdb_comm_overheads t;
    opdb_comm_overheads_default(&t);
    double ov = opdb_comm_overhead_of(&t, OPDB_COMM_ALL_REDUCE, 16);
    assert_true(ov == 7.7);
    assert_true(opdb_comm_overhead_of(&t, OPDB_COMM_ALL_GATHER, 8) == 1.2);
    assert_true(opdb_comm_overhead_of(&t, OPDB_COMM_ALL_TO_ALL, 16) == 0.0);
    opdb_comm_row r = opdb_comm_make_row(1048576, 16, "DT_BF16", 1, 40.123, ov);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_comm_row_format(&sb, &r);
    assert_string_equal(sb.p, "1048576,16,DT_BF16,1,47.82,21.93\r\n");
    opdb_sb_clear(&sb);
    r = opdb_comm_make_row(1024, 2, "DT_FLOAT", 2, 0.0, 0.0);
    opdb_comm_row_format(&sb, &r);
    assert_string_equal(sb.p, "1024,2,DT_FLOAT,2,0.0,0.0\r\n");
    opdb_sb_free(&sb);
    opdb_comm_overheads_free(&t);
}

static void test_half_conversions_round_trip(void **s) {
    (void)s;
    for (unsigned h = 0; h < 65536; h++) {
        float f = opdb_fp16_to_float((unsigned short)h);
        if (f == f) assert_int_equal(opdb_float_to_fp16(f), h);
        float b = opdb_bf16_to_float((unsigned short)h);
        if (b == b) assert_int_equal(opdb_float_to_bf16(b), h);
    }
    assert_true(opdb_fp16_to_float(0x3c00) == 1.0f);
    assert_int_equal(opdb_float_to_fp16(65520.0f), 0x7c00); /* rounds to inf */
    assert_int_equal(opdb_float_to_bf16(1.00390625f), 0x3f80); /* tie to even */
}

static void test_stats_median_p90(void **s) {
    (void)s;
    double v[] = {5, 1, 4, 2, 3, 10, 9, 8, 7, 6};
    opdb_comm_stats st;
    opdb_comm_stats_of(v, 10, &st);
    assert_true(st.min == 1 && st.max == 10 && st.median == 5.5 && st.mean == 5.5);
    assert_true(fabs(st.p90 - 9.1) < 1e-12);
}

static void test_fit_exact_line(void **s) {
    (void)s;
    double m[] = {1024, 65536, 1048576, 16777216}, t[4];
    for (int i = 0; i < 4; i++) t[i] = 3.0 + m[i] / 50e3; /* 50 GB/s */
    opdb_comm_fit f;
    opdb_comm_fit_points(m, t, 4, &f);
    assert_true(fabs(f.alpha_us - 3.0) < 1e-6);
    assert_true(fabs(1e-3 / f.beta_us_per_byte - 50.0) < 1e-6);
    assert_true(f.r2 > 0.999999 && f.max_rel_res < 1e-9);
}

static void test_predict_worked_example(void **s) {
    (void)s;
    double p = opdb_comm_predict_us(OPDB_COMM_ALL_REDUCE, 1048576, 16, 1);
    assert_true(fabs(p - 19.2853) < 1e-3); /* docs/COMM.md: 4 us + 15.29 us = 19.29 */
    assert_true(opdb_comm_predict_us(OPDB_COMM_ALL_GATHER, 1024, 1, 1) == 0.0);
}

static void test_budget_iters(void **s) {
    (void)s;
    assert_int_equal(opdb_comm_budget_iters(0.01, 100.0), 100);    /* 10 ms of 100 us iterations */
    assert_int_equal(opdb_comm_budget_iters(0.01, 3000.0), 3);     /* floor */
    assert_int_equal(opdb_comm_budget_iters(0.001, 5000.0), 1);    /* at least one */
    assert_int_equal(opdb_comm_budget_iters(10.0, 0.01), OPDB_COMM_BUDGET_MAX_ITERS); /* capped */
    assert_int_equal(opdb_comm_budget_iters(1.0, 0.0), OPDB_COMM_BUDGET_MAX_ITERS);   /* clock did not move */
}

static void test_config_order_and_skips(void **s) {
    (void)s;
    char *argv[] = {"bench", "--ops", "all_gather", "all_reduce", "--num-devices", "2", "4", "--topology-tier", "2", "1",
                    "--bytes-grid", "1024", "2048"};
    opdb_comm_bench_opts o;
    assert_int_equal(cli_comm_bench_parse(13, argv, &o), 0);
    char *buf = NULL;
    size_t len = 0, n = 0;
    FILE *w = open_memstream(&buf, &len);
    opdb_comm_config *c = opdb_comm_configs(&o, &n, w, NULL);
    fclose(w);
    /* nd 4 at tier 2 exceeds the die span 2: skipped per op */
    assert_int_equal(n, 2 * (2 + 2 + 2));
    assert_int_equal(c[0].op, OPDB_COMM_ALL_GATHER);
    assert_true(c[0].nd == 2 && c[0].tier == 2 && c[0].bytes == 1024);
    assert_true(c[1].bytes == 2048 && c[2].tier == 1 && c[4].nd == 4 && c[4].tier == 1);
    assert_int_equal(c[6].op, OPDB_COMM_ALL_REDUCE);
    assert_non_null(strstr(buf, "opdb comm bench: warning: skipping tier=2, num_devices=4: num_devices=4 exceeds span size 2"));
    free(buf);
    free(c);
    /* the same stderr line under --reference-quirks: the reference's is no byte-compared output */
    o.reference_quirks = true;
    w = open_memstream(&buf, &len);
    c = opdb_comm_configs(&o, &n, w, NULL);
    fclose(w);
    assert_non_null(strstr(buf, "opdb comm bench: warning: skipping tier=2"));
    assert_null(strstr(buf, "WARNING"));
    free(buf);
    free(c);
    opdb_comm_bench_opts_free(&o);
}

/* A size that is no whole number of elements is refused (1 byte of bfloat16
 * moved nothing and was recorded as a 1-byte row); --reference-quirks keeps it. */
static void test_bytes_grid_whole_elements(void **state) {
    (void)state;
    char *one[] = {"bench", "--bytes-grid", "1", "1024"};
    char *odd[] = {"bench", "--bytes-grid", "1024", "6", "--dtype", "torch.float32"};
    char *zero[] = {"bench", "--bytes-grid", "0"};
    char *ok[] = {"bench", "--bytes-grid", "1", "3", "--dtype", "torch.int8"};
    char *quirks[] = {"bench", "--bytes-grid", "1", "--reference-quirks"};
    opdb_comm_bench_opts o;
    assert_int_equal(cli_comm_bench_parse(4, one, &o), 2);
    opdb_comm_bench_opts_free(&o);
    assert_int_equal(cli_comm_bench_parse(6, odd, &o), 2);
    opdb_comm_bench_opts_free(&o);
    assert_int_equal(cli_comm_bench_parse(3, zero, &o), 2);
    opdb_comm_bench_opts_free(&o);
    assert_int_equal(cli_comm_bench_parse(6, ok, &o), 0);
    assert_true(o.nbytes == 2 && o.bytes[0] == 1 && o.bytes[1] == 3);
    opdb_comm_bench_opts_free(&o);
    assert_int_equal(cli_comm_bench_parse(4, quirks, &o), 0);
    assert_true(o.nbytes == 1 && o.bytes[0] == 1);
    opdb_comm_bench_opts_free(&o);
}

/* An overhead table with an infinite overhead is refused (it gave inf rows). */
static void test_overhead_table_finite(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_test_ovh_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/ovh.csv", dir);
    static const char *const bad[] = {"op,num_devices,overhead_us\nall_reduce,2,inf\n", "all_reduce,2,1e999\n",
                                      "all_reduce,2,nan\n", "all_reduce,2,-1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(bad[i], f);
        fclose(f);
        opdb_comm_overheads t = {NULL, 0};
        opdb_err err;
        opdb_err_clear(&err);
        assert_int_equal(opdb_comm_overheads_load(&t, path, &err), -1);
        assert_non_null(strstr(err.msg, "ovh.csv:"));
        opdb_comm_overheads_free(&t);
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("op,num_devices,overhead_us\nall_reduce,2,1.5\n", f);
    fclose(f);
    opdb_comm_overheads t = {NULL, 0};
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_comm_overheads_load(&t, path, &err), 0);
    assert_true(t.n == 1 && opdb_comm_overhead_of(&t, OPDB_COMM_ALL_REDUCE, 2) == 1.5);
    opdb_comm_overheads_free(&t);
    unlink(path);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overhead_table_finite),
        cmocka_unit_test(test_bytes_grid_whole_elements),
        cmocka_unit_test(test_busbw_factors_2_to_1024),
        cmocka_unit_test(test_tiers_of_spec_examples),
        cmocka_unit_test(test_row_with_overhead_spec_example),
        cmocka_unit_test(test_half_conversions_round_trip),
        cmocka_unit_test(test_stats_median_p90),
        cmocka_unit_test(test_fit_exact_line),
        cmocka_unit_test(test_predict_worked_example),
        cmocka_unit_test(test_config_order_and_skips),
        cmocka_unit_test(test_budget_iters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
