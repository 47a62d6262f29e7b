/* opdb check: the percentile and conformal-interval arithmetic, the spread
 * buckets, and leave-one-out over a small table (the hidden row is never its
 * own neighbour; a repeat of its shape answers for it). */
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

#include "analysis/check_internal.h"
#include "opdb/query.h"
#include "query/loo.h"

static void percentile_linear(void **state) {
    (void)state;
    double x[5] = {1, 2, 3, 4, 10};
    assert_true(ck_percentile(x, 5, 0.5) == 3);
    assert_true(fabs(ck_percentile(x, 5, 0.9) - 7.6) < 1e-12);
    assert_true(ck_percentile(x, 5, 1.0) == 10);
    assert_true(isnan(ck_percentile(x, 0, 0.5)));
}

static void conformal_bounds(void **state) {
    (void)state;
    double e[19];
    for (int i = 0; i < 19; i++) e[i] = (double)(18 - i) / 100; /* unsorted on purpose */
    ck_interval iv;
    assert_true(ck_interval_of(e, 19, &iv));
    /* n = 19: 90% takes the 1st and 19th order statistics, 80% the 2nd and 18th */
    assert_true(iv.lo90 == 0.0 && iv.hi90 == 0.18);
    assert_true(iv.lo80 == 0.01 && iv.hi80 == 0.17);
    assert_int_equal(iv.n, 19);
    /* 18 residuals cannot bound a 90% interval */
    assert_false(ck_interval_of(e, 18, &iv));
}

static void spread_buckets(void **state) {
    (void)state;
    double one[1] = {64};
    assert_true(q_loo_spread(one, 1, 1) == 0);
    double two[2] = {16, 32};
    assert_true(q_loo_spread(two, 2, 1) == 1);
    double grid[6] = {1, 100, 4, 100, 1, 200}; /* 3 points x 2 axes: log2 4 on the first */
    assert_true(q_loo_spread(grid, 3, 2) == 2);
    double zero[2] = {0, 8};
    assert_true(isinf(q_loo_spread(zero, 2, 1)));
    assert_int_equal(q_loo_bucket(0), 0);
    assert_int_equal(q_loo_bucket(1), 1);
    assert_int_equal(q_loo_bucket(2), 2);
    assert_int_equal(q_loo_bucket(3.5), 3);
    assert_int_equal(q_loo_bucket(INFINITY), 3);
    assert_string_equal(q_loo_bucket_name(1), "near");
}

typedef struct seen {
    double pred[8];
    bool rec[8], interior[8];
    int n;
} seen;

static void on_table(void *ctx, const q_loo_table *t) {
    (void)ctx;
    assert_string_equal(t->kernel, "Gelu");
    assert_string_equal(t->path, "generic");
    assert_int_equal(t->indexed, 5);
}

static void on_row(void *ctx, const q_loo_case *k) {
    seen *s = ctx;
    if (k->group != -1) return; /* the query's own order */
    s->pred[k->row] = k->predicted;
    s->rec[k->row] = k->recovered;
    s->interior[k->row] = k->interior;
    s->n++;
}

static void leave_one_out(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_test_check_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/Gelu.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)\n"
          "\"8,64\",DT_BF16,ND,\"8,64\",DT_BF16,ND,2.0\n"
          "\"16,64\",DT_BF16,ND,\"16,64\",DT_BF16,ND,4.0\n"
          "\"24,64\",DT_BF16,ND,\"24,64\",DT_BF16,ND,100.0\n"
          "\"16,64\",DT_BF16,ND,\"16,64\",DT_BF16,ND,6.0\n"
          "\"32,64\",DT_BF16,ND,\"32,64\",DT_BF16,ND,8.0\n",
          f);
    fclose(f);
    opdb_err err;
    opdb_err_clear(&err);
    opdb_qdb *db = opdb_qdb_open(dir, NULL, &err);
    assert_non_null(db);
    seen s;
    memset(&s, 0, sizeof s);
    q_loo_cb cb = {on_table, on_row, &s};
    assert_int_equal(q_loo_run(db, &cb, &err), 0);
    assert_int_equal(s.n, 5);
    /* M=8 and M=32 are on the edge: no extrapolation */
    assert_false(s.rec[0]);
    assert_false(s.rec[4]);
    assert_false(s.interior[0]);
    /* the first M=16 row hidden: its repeat (6.0) answers, never itself (4.0) */
    assert_true(s.rec[1] && s.pred[1] == 6.0);
    assert_true(s.rec[3] && s.pred[3] == 4.0);
    /* M=24 hidden: between M=16 (median of 4 and 6) and M=32 */
    assert_true(s.rec[2] && s.pred[2] == 5.0 + 0.5 * (8.0 - 5.0));
    assert_true(s.interior[2]);
    opdb_qdb_close(db);
    unlink(path);
    rmdir(dir);
}

typedef struct seen2 {
    bool rec[8];
    double pred[8];
} seen2;

static void on_table2(void *ctx, const q_loo_table *t) {
    (void)ctx;
    assert_string_equal(t->path, "matmul");
    assert_int_equal(t->ngroups, 7);
    assert_string_equal(t->group_names[3], "M,K");
}

static void on_row2(void *ctx, const q_loo_case *k) {
    seen2 *s = ctx;
    if (k->row != 4) return; /* the centre of the 3 x 3 grid */
    s->rec[k->group + 1] = k->recovered;
    s->pred[k->group + 1] = k->predicted;
}

/* 2-D groups go through the Delaunay interpolation with the row hidden: on a
 * latency linear in M and K the centre of a 3 x 3 grid comes back as the
 * plane of its neighbours (32), not as its own latency (42) */
static void leave_one_out_2d(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_test_check_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/MatMulV2.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)\n", f);
    for (int m = 8; m <= 24; m += 8)
        for (int k = 64; k <= 192; k += 64)
            fprintf(f, "\"%d,%d;256,%d\",DT_BF16;DT_BF16,ND;ND,\"%d,256\",DT_BF16,ND,%g\n", m, k, k, m,
                    m + k / 8.0 + (m == 16 && k == 128 ? 10 : 0)); /* the centre off the plane: never its own answer */
    fclose(f);
    opdb_err err;
    opdb_err_clear(&err);
    opdb_qdb *db = opdb_qdb_open(dir, NULL, &err);
    assert_non_null(db);
    seen2 s;
    memset(&s, 0, sizeof s);
    q_loo_cb cb = {on_table2, on_row2, &s};
    assert_int_equal(q_loo_run(db, &cb, &err), 0);
    /* query order: M alone answers first */
    assert_true(s.rec[0] && fabs(s.pred[0] - 32) < 1e-9);
    assert_true(s.rec[1 + 0] && fabs(s.pred[1 + 0] - 32) < 1e-9); /* M */
    assert_true(s.rec[1 + 1] && fabs(s.pred[1 + 1] - 32) < 1e-9); /* K */
    assert_false(s.rec[1 + 2]);                                    /* N: one value */
    assert_true(s.rec[1 + 3] && fabs(s.pred[1 + 3] - 32) < 1e-9); /* M,K: Delaunay, centre hidden */
    assert_false(s.rec[1 + 6]);                                    /* M,K,N: N has one value */
    opdb_qdb_close(db);
    unlink(path);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(percentile_linear),
        cmocka_unit_test(conformal_bounds),
        cmocka_unit_test(spread_buckets),
        cmocka_unit_test(leave_one_out),
        cmocka_unit_test(leave_one_out_2d),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
