/* The interpolation wrapper of `opdb query`: the 1-D interpolation math
 * (median merge of duplicate coordinates, linear between the bracketing
 * points), the order in which regime groups and latency labels are tried,
 * sqrt-seq attention, and the griddata path against hand-computed
 * barycentric values. Expected values are worked out by hand here, never
 * taken from opdb's output. */
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

#include "opdb/query.h"
#include "query/interp_internal.h"

static char g_dir[256];

static void put(const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char k_mapping[] = "interpolation_policy:\n"
                                "  kernel_overrides:\n"
                                "    FusedInferAttentionScore:\n"
                                "      axis_transform: sqrt_seq\n"
                                "operator_mappings:\n"
                                "  aten.mm.default:\n"
                                "    kernel_type: MatMulV2\n"
                                "  t.mm_labels:\n"
                                "    kernel_type: MatMulV3\n"
                                "  t.mm_formats:\n"
                                "    kernel_type: MatMulCommon\n"
                                "  t.mm_fault:\n"
                                "    kernel_type: BatchMatMulV2\n"
                                "  t.fia:\n"
                                "    kernel_type: FusedInferAttentionScore\n"
                                "    query_mode: attention_special\n";

#define MMH "Input Shapes,Input Data Types,Input Formats,Average Duration(us)\n"
#define MMROW(m, fmt, lat) "\"" #m ",128;128,256\",DT_BF16;DT_BF16," fmt "," #lat "\n"

static int setup(void **s) {
    (void)s;
    snprintf(g_dir, sizeof g_dir, "/tmp/opdb_test_query_interp_XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    put("op_mapping.yaml", k_mapping);
    /* M=16 -> 10; M=64 three times: merged to their median 40 */
    put("MatMulV2.csv", MMH MMROW(16, "ND;ND", 10.0) MMROW(64, "ND;ND", 30.0) MMROW(64, "ND;ND", 40.0)
                            MMROW(64, "ND;ND", 41.0));
    /* preferred rows (Average Duration) at 16 and 64; alternate rows (only the
     * profiler's column) at 8 and 32 */
    put("MatMulV3.csv", "Input Shapes,Input Data Types,Input Formats,Average Duration(us),"
                        "Profiling Average Duration(us)\n"
                        "\"8,128;128,256\",DT_BF16;DT_BF16,ND;ND,,100.0\n"
                        "\"16,128;128,256\",DT_BF16;DT_BF16,ND;ND,10.0,\n"
                        "\"32,128;128,256\",DT_BF16;DT_BF16,ND;ND,,200.0\n"
                        "\"64,128;128,256\",DT_BF16;DT_BF16,ND;ND,40.0,\n");
    /* a group with a non-ND format comes first in the file but is tried after the all-ND group */
    put("MatMulCommon.csv", MMH MMROW(16, "ND;NCHW", 100.0) MMROW(64, "ND;NCHW", 400.0) MMROW(16, "ND;ND", 10.0)
                                MMROW(64, "ND;ND", 40.0));
    /* a row without a latency whose shapes cannot be read: invisible to the
     * exact scan, but the wrapper's points read every row */
    put("BatchMatMulV2.csv", MMH MMROW(16, "ND;ND", 10.0) ",DT_BF16;DT_BF16,ND;ND,\n" MMROW(64, "ND;ND", 40.0));
    /* elementwise: io numel 3*16*128 -> 2, 3*64*128 -> 8 */
    put("Add.csv", "Input Shapes,Input Data Types,Output Shapes,Output Data Types,Average Duration(us)\n"
                   "\"16,128;16,128\",DT_BF16;DT_BF16,\"16,128\",DT_BF16,2.0\n"
                   "\"64,128;64,128\",DT_BF16;DT_BF16,\"64,128\",DT_BF16,8.0\n");
    put("FusedInferAttentionScore.csv",
        "Input Shapes,Input Data Types,Runtime avg_seq_len,Runtime sparse_mode,Runtime num_key_value_heads,"
        "Runtime input_layout,Average Duration(us)\n"
        "\"4,8,128;4,1,128\",DT_BF16;DT_BF16,1024,3,1,TND,20.0\n"
        "\"4,8,128;4,1,128\",DT_BF16;DT_BF16,4096,3,1,TND,40.0\n");
    return 0;
}

static int teardown(void **s) {
    (void)s;
    const char *f[] = {"op_mapping.yaml", "MatMulV2.csv", "MatMulV3.csv", "MatMulCommon.csv",
                       "BatchMatMulV2.csv", "Add.csv", "FusedInferAttentionScore.csv"};
    char p[512];
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        snprintf(p, sizeof p, "%s/%s", g_dir, f[i]);
        unlink(p);
    }
    rmdir(g_dir);
    return 0;
}

static void quiet(void *ctx, const char *line) {
    (void)ctx;
    (void)line;
}

/* one query line in the given mode (the result's strings live as long as the database) */
static opdb_qdb *ask(const char *line, bool quirks, opdb_qresult *r) {
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    o.reference_quirks = quirks;
    o.warn = quiet;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_qdb *db = opdb_qdb_open(g_dir, &o, &err);
    assert_non_null(db);
    assert_int_equal(opdb_query_json(db, line, strlen(line), false, r), 0);
    return db;
}

static void expect_interp(const char *line, double lat, double conf, const char *rule, const char *kernel) {
    for (int quirks = 0; quirks < 2; quirks++) {
        opdb_qresult r;
        opdb_qdb *db = ask(line, quirks, &r);
        if (r.source != OPDB_SRC_INTERPOLATED) fprintf(stderr, "%s: %s %s\n", line, r.miss_reason, r.error ? r.error : "");
        assert_int_equal(r.source, OPDB_SRC_INTERPOLATED);
        assert_true(fabs(r.latency_us - lat) <= 1e-12 * lat);
        assert_true(r.confidence == conf);
        assert_string_equal(r.shape_match_rule, rule);
        assert_string_equal(r.kernel_type, kernel);
        opdb_qresult_free(&r);
        opdb_qdb_close(db);
    }
}

#define MM(op, m)                                                                                                      \
    "{\"op\": \"" op "\", \"args\": [{\"shape\": [" #m ", 128], \"dtype\": \"bfloat16\"}, {\"shape\": [128, 256], "    \
    "\"dtype\": \"bfloat16\"}]}"

static void test_linear_between_median_merged_points(void **s) {
    (void)s;
    /* 10 + (24 - 16) / (64 - 16) * (40 - 10) */
    expect_interp(MM("aten.mm.default", 24), 15.0, 0.7, "interpolated_1d_linear", "MatMulV2");
}

static void test_kernel_level_matmul(void **s) {
    (void)s;
    expect_interp("{\"kernel\": \"MatMulV2\", \"inputs\": [{\"shape\": [24, 128], \"dtype\": \"DT_BF16\"}, "
                  "{\"shape\": [128, 256], \"dtype\": \"DT_BF16\"}]}",
                  15.0, 0.7, "interpolated_1d_linear", "MatMulV2");
}

static void test_kernel_level_elementwise(void **s) {
    (void)s;
    /* io numel 3*40*128 lies half-way between the rows' */
    expect_interp("{\"kernel\": \"Add\", \"match\": \"elementwise\", \"inputs\": [{\"shape\": [40, 128], "
                  "\"dtype\": \"DT_BF16\"}, {\"shape\": [40, 128], \"dtype\": \"DT_BF16\"}], \"outputs\": "
                  "[{\"shape\": [40, 128], \"dtype\": \"DT_BF16\"}]}",
                  5.0, 0.7, "interpolated_1d_linear", "Add");
}

static void test_no_extrapolation(void **s) {
    (void)s;
    opdb_qresult r;
    opdb_qdb *db = ask(MM("aten.mm.default", 100), true, &r);
    assert_int_equal(r.source, OPDB_SRC_MISS);
    assert_string_equal(r.miss_reason, "compute_multidim_interpolation_failed");
    opdb_qresult_free(&r);
    opdb_qdb_close(db);
}

static void test_preferred_points_before_alternate(void **s) {
    (void)s;
    /* both subsets bracket 24: the preferred one answers, 10 + 8/48 * 30 */
    expect_interp(MM("t.mm_labels", 24), 15.0, 0.7, "interpolated_1d_linear", "MatMulV3");
    /* only the alternate subset brackets 12: 100 + 4/24 * 100 */
    expect_interp(MM("t.mm_labels", 12), 100.0 + 4.0 / 24.0 * 100.0, 0.7, "interpolated_1d_linear", "MatMulV3");
}

static void test_all_nd_group_before_earlier_group(void **s) {
    (void)s;
    expect_interp(MM("t.mm_formats", 24), 15.0, 0.7, "interpolated_1d_linear", "MatMulCommon");
}

static void test_unreadable_cell_of_a_row_without_latency(void **s) {
    (void)s;
    opdb_qresult r;
    /* the reference raises while building its points: an error result */
    opdb_qdb *db = ask(MM("t.mm_fault", 24), true, &r);
    assert_int_equal(r.source, OPDB_SRC_ERROR);
    assert_string_equal(r.miss_reason, "error:bad_cell");
    opdb_qresult_free(&r);
    opdb_qdb_close(db);
    /* the default mode skips the row */
    db = ask(MM("t.mm_fault", 24), false, &r);
    assert_int_equal(r.source, OPDB_SRC_INTERPOLATED);
    assert_true(fabs(r.latency_us - 15.0) < 1e-12);
    opdb_qresult_free(&r);
    opdb_qdb_close(db);
}

#define FIA(t, avg)                                                                                                    \
    "{\"op\": \"t.fia\", \"args\": [{\"shape\": [" #t ", 8, 128]}, {\"shape\": [4, 1, 128]}, null, null, null, "      \
    "null, {\"shape\": [4], \"dtype\": \"int64\", \"values\": [" #avg ", " #avg ", " #avg ", " #avg "]}]}"

static void test_attention_sqrt_seq(void **s) {
    (void)s;
    /* 20 + (sqrt(2048) - 32) / (64 - 32) * (40 - 20) */
    double want = 20 + (sqrt(2048.0) - 32) / 32 * 20;
    expect_interp(FIA(4, 2048), want, 0.7, "interpolated_1d_linear_sqrt", "FusedInferAttentionScore");
    /* 16 tokens block-pad the rows' 4 */
    expect_interp(FIA(16, 2048), want, 0.7, "interpolated_1d_linear_sqrt", "FusedInferAttentionScore");
}

/* ---- griddata */

static void test_griddata_triangle_barycentric(void **s) {
    (void)s;
    const double P[] = {0, 0, 1, 0, 0, 1}, V[] = {1, 2, 3}, t[] = {0.25, 0.25};
    double y, w[4];
    int vid[4];
    assert_null(ip_griddata(P, V, 3, 2, t, &y, w, vid));
    /* weights (0.5, 0.25, 0.25) on values (1, 2, 3) */
    assert_true(fabs(y - 1.75) < 1e-12);
    double ws = 0;
    for (int k = 0; k < 3; k++) ws += w[k];
    assert_true(fabs(ws - 1) < 1e-12);
}

static void test_griddata_plane_any_triangulation(void **s) {
    (void)s;
    /* values on the plane 1 + x + 2y: every triangulation gives the plane */
    const double P[] = {0, 0, 2, 0, 0, 2, 2, 2, 1, 1}, V[] = {1, 3, 5, 7, 4};
    const double t[] = {0.5, 1.5};
    double y, w[4];
    int vid[4];
    assert_null(ip_griddata(P, V, 5, 2, t, &y, w, vid));
    assert_true(fabs(y - 4.5) < 1e-12);
}

static void test_griddata_tetrahedron(void **s) {
    (void)s;
    const double P[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, V[] = {1, 2, 3, 4}, t[] = {0.1, 0.2, 0.3};
    double y, w[4];
    int vid[4];
    assert_null(ip_griddata(P, V, 4, 3, t, &y, w, vid));
    /* weights (0.4, 0.1, 0.2, 0.3) */
    assert_true(fabs(y - 2.4) < 1e-12);
}

static void test_griddata_refusals(void **s) {
    (void)s;
    const double P[] = {0, 0, 1, 0, 0, 1}, V[] = {1, 2, 3}, out[] = {1, 1};
    double y, w[4];
    int vid[4];
    assert_string_equal(ip_griddata(P, V, 3, 2, out, &y, w, vid), "outside_convex_hull");
    const double L[] = {0, 0, 1, 1, 2, 2}, t[] = {0.5, 0.5};
    assert_string_equal(ip_griddata(L, V, 3, 2, t, &y, w, vid), "degenerate_point_cloud");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_between_median_merged_points),
        cmocka_unit_test(test_kernel_level_matmul),
        cmocka_unit_test(test_kernel_level_elementwise),
        cmocka_unit_test(test_no_extrapolation),
        cmocka_unit_test(test_preferred_points_before_alternate),
        cmocka_unit_test(test_all_nd_group_before_earlier_group),
        cmocka_unit_test(test_unreadable_cell_of_a_row_without_latency),
        cmocka_unit_test(test_attention_sqrt_seq),
        cmocka_unit_test(test_griddata_triangle_barycentric),
        cmocka_unit_test(test_griddata_plane_any_triangulation),
        cmocka_unit_test(test_griddata_tetrahedron),
        cmocka_unit_test(test_griddata_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
