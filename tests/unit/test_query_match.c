/* The row matcher and selection on small hand-made databases: each shape
 * rule, the padding-distance quirk in both modes, latency priority, the core
 * envelope, semantic uniqueness, cell faults in both modes, and dispatch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "query_fixture.h"

static const char k_map[] =
    "operator_mappings:\n"
    "  aten.mm.default: {kernel_type: MatMulV2}\n"
    "  aten.norm.default: {kernel_type: RmsNorm}\n"
    "  aten.index.Tensor: {kernel_type: Index}\n"
    "  aten.quant.default: {kernel_type: DynamicQuant}\n"
    "  aten.bad.default: {kernel_type: Bad}\n"
    "  aten.view.default: {zero_cost: yes}\n"
    "  aten.skip.default: {accepted_miss: true}\n"
    "  aten.notdict.default: 5\n"
    "  aten.alt.default: {kernel_type: MatMulV2, alternate_kernel_types: Bad}\n"
    "  tensor_cast.attention.default: {kernel_type: FIA, query_mode: attention_special}\n"
    "  aten.add.Tensor: {kernel_type: Add, query_mode: elementwise}\n"
    "latency_policy:\n"
    "  kernel_overrides:\n"
    "    RmsNorm: {profiling_core_envelope_fallback: {max_duration_to_core_ratio: 1.5}}\n"
    "query_selection_policy: {kernel_overrides: {FIA: {require_semantic_unique: true}}}\n";

/* weights stored (N,K): an M=1 row first, then the exact M=16 row */
static const char k_mm[] = "Input Shapes,Input Data Types,Input Formats,Average Duration(us),Profiling Average Duration(us)\n"
                           "\"\"\"1,128;256,128\"\"\",DT_BF16;DT_BF16,ND;ND,4.0,\n"
                           "\"16,128;256,128\",DT_BF16;DT_BF16,ND;ND,5.0,\n"
                           "\"16,128;128,256\",DT_BF16;DT_BF16,ND;ND,,6.0\n"
                           "\"24,128;128,256\",DT_BF16;DT_BF16,ND;ND,7.0,\n"
                           "\"2,8,16,16;128,256\",DT_BF16;DT_BF16,FRACTAL_NZ;ND,8.0,\n"
                           "\"24,128;128,512\",DT_BF16;DT_BF16,ND;ND,6.5,\n";
static const char k_norm[] = "Input Shapes,Input Data Types,Accelerator Core,Profiling Average Duration(us),"
                             "Profiling Average aicore_time(us),Profiling Average aiv_time(us)\n"
                             "\"32,4096;4096\",DT_BF16;DT_BF16,MIX_AIC,10.0,2.0,4.0\n";
static const char k_index[] = "Input Shapes,Input Data Types,Duration(us)\n\"64,1\",INT64,3.0\n";
static const char k_quant[] = "Input Shapes,Input Data Types,Duration(us)\n\"4,4096\",DT_BF16,2.0\n";
static const char k_bad[] = "Input Shapes,Input Data Types,Duration(us)\n\"4,16\",DT_BF16,1.0\nN/A,DT_BF16,2.0\n"
                            "\"4,16\",DT_BF16,3.0\n";
static const char k_fia[] = "Input Shapes,Input Data Types,Runtime avg_seq_len,Runtime sparse_mode,"
                            "Runtime num_key_value_heads,Profiling Average Duration(us)\n"
                            "\"1,8,128\",DT_BF16,100,3,1,9.0\n"
                            "\"16,8,128\",DT_BF16,100,3,1,9.5\n";
static const char k_add[] = "Input Shapes,Input Data Types,Output Shapes,Output Data Types,Duration(us)\n"
                            "\"1,128\",DT_BF16,\"1,128\",DT_BF16,1.0\n"
                            "\"16,128\",DT_BF16,\"16,128\",FLOAT,2.0\n";

static char *g_dir;

static int setup(void **state) {
    (void)state;
    g_dir = qf_mkdir();
    qf_write(g_dir, "op_mapping.yaml", k_map);
    qf_write(g_dir, "MatMulV2.csv", k_mm);
    qf_write(g_dir, "RmsNorm.csv", k_norm);
    qf_write(g_dir, "Index.csv", k_index);
    qf_write(g_dir, "DynamicQuant.csv", k_quant);
    qf_write(g_dir, "Bad.csv", k_bad);
    qf_write(g_dir, "FIA.csv", k_fia);
    qf_write(g_dir, "Add.csv", k_add);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    qf_rmdir(g_dir);
    return 0;
}

/* "latency_us": x and "shape_match_rule": y of a query */
static void expect(bool quirks, const char *q, const char *want) {
    opdb_qdb *db = qf_open(g_dir, quirks, false, 0);
    assert_non_null(db);
    char *line = qf_line(db, q, false);
    if (!strstr(line, want)) fail_msg("%s\n  wanted %s\n  got    %s", q, want, line);
    free(line);
    opdb_qdb_close(db);
}

#define MM(a, b) "{\"id\": 1, \"op\": \"aten.mm.default\", \"args\": [{\"shape\": " a "}, {\"shape\": " b "}]}"

static void test_rules(void **state) {
    (void)state;
    for (int m = 0; m < 2; m++) {
        expect(m, MM("[24, 128]", "[128, 256]"), "\"latency_us\": 7.0, \"source\": \"MEASURED\", \"confidence\": 1.0, "
                                                 "\"shape_match_rule\": \"identity\"");
        expect(m, MM("[1, 24, 128]", "[128, 256]"), "\"latency_us\": 7.0, \"source\": \"MEASURED\", \"confidence\": 1.0, "
                                                    "\"shape_match_rule\": \"batch_strip\"");
        /* a FRACTAL_NZ cell (2,8,16,16) is the shape (32,128); in quirks mode the M=1 row
         * (padded and transposed, distance 0) comes first */
        expect(m, MM("[32, 128]", "[128, 256]"), m ? "\"latency_us\": 4.0" : "\"latency_us\": 8.0");
        expect(m, MM("[32, 128]", "[128, 512]"), "\"latency_us\": 6.5, \"source\": \"MEASURED\", \"confidence\": 1.0, "
                                                 "\"shape_match_rule\": \"padding\"");
        /* only the query side pads up */
        expect(m, MM("[20, 128]", "[128, 256]"), "\"miss_reason\": \"shape_mismatch\"");
        expect(m, "{\"op\": \"aten.norm.default\", \"args\": [{\"shape\": [2, 16, 4096]}, {\"shape\": [4096]}]}",
               "\"shape_match_rule\": \"flatten_3d\"");
        expect(m, "{\"op\": \"aten.index.Tensor\", \"args\": [{\"shape\": [1, 64], \"dtype\": \"int64\"}]}",
               "\"shape_match_rule\": \"singleton_axis_transpose\"");
        expect(m, "{\"op\": \"aten.quant.default\", \"args\": [{\"shape\": [4, 2, 2048]}]}",
               "\"shape_match_rule\": \"merge_last_dims\"");
        expect(m, MM("[24, 128]", "[64, 256]"), "\"miss_reason\": \"shape_mismatch\"");
        expect(m, MM("[24, 128]", "[128, 256], \"dtype\": \"int8\""), "\"miss_reason\": \"shape_mismatch\"");
    }
}

static void test_padding_distance_quirk(void **state) {
    (void)state;
    /* M=16 against weights stored (N,K): the M=1 row pads (1 -> 16) and transposes: distance 0 with the
     * reference's rule, so it ties with the exact M=16 row and file order takes it */
    expect(true, MM("[16, 128]", "[128, 256]"), "\"latency_us\": 4.0, \"source\": \"MEASURED\", \"confidence\": 1.0, "
                                               "\"shape_match_rule\": \"transpose\"");
    /* the default mode counts the padded input: the exact row wins */
    expect(false, MM("[16, 128]", "[128, 256]"), "\"latency_us\": 5.0");
}

static void test_envelope_dispatch_errors(void **state) {
    (void)state;
    for (int m = 0; m < 2; m++) {
        /* 10 / max(2, 4) > 1.5: the core envelope 4.0 */
        expect(m, "{\"op\": \"aten.norm.default\", \"args\": [{\"shape\": [32, 4096]}, {\"shape\": [4096]}]}",
               "\"latency_us\": 4.0");
        expect(m, "{\"op\": \"torch.ops.aten.view.default\"}",
               "\"latency_us\": 0.0, \"source\": \"MEASURED\", \"confidence\": 1.0, \"shape_match_rule\": \"zero_cost\", "
               "\"kernel_type\": \"\"");
        expect(m, "{\"op\": \"aten.skip.default\"}", "\"kernel_type\": \"accepted_miss\"");
        expect(m, "{\"op\": \"aten.nothing\"}", "\"miss_reason\": \"unmapped\"");
        expect(m, "{\"op\": \"aten.notdict.default\"}", "\"miss_reason\": \"error:bad_mapping\"");
        expect(m, "{\"op\": \"aten.alt.default\", \"args\": [{\"shape\": [1]}]}", "\"miss_reason\": \"error:bad_mapping\"");
        expect(m, "not json", "{\"id\": null, \"hit\": false");
    }
    /* a cell that cannot be read: an error in quirks mode, the row skipped by default */
    expect(true, "{\"op\": \"aten.bad.default\", \"args\": [{\"shape\": [4, 16]}]}", "\"miss_reason\": \"error:bad_cell\"");
    expect(true, "{\"op\": \"aten.bad.default\", \"args\": [{\"shape\": [4, 16]}]}", "Bad.csv:3: Input Shapes");
    expect(false, "{\"op\": \"aten.bad.default\", \"args\": [{\"shape\": [4, 16]}]}", "\"latency_us\": 1.0");
}

#define FIA(t)                                                                                                       \
    "{\"op\": \"tensor_cast.attention.default\", \"args\": [{\"shape\": [" t ", 8, 128]}, {\"shape\": [100, 1, 128]}, " \
    "{\"shape\": [100, 1, 128]}, null, null, null, {\"shape\": [2], \"dtype\": \"int32\", \"values\": [96, 104]}]}"

static void test_attention_and_elementwise(void **state) {
    (void)state;
    /* T=1 and T=16 rows at the same length tie in quirks mode (padding both ways): ambiguous */
    expect(true, FIA("16"), "\"miss_reason\": \"ambiguous_semantic_match:FIA\"");
    /* the default mode adds 1 to a row whose T differs: the exact row wins */
    expect(false, FIA("16"), "\"latency_us\": 9.5, \"source\": \"MEASURED\", \"confidence\": 0.9, "
                             "\"shape_match_rule\": \"attention\"");
    /* elementwise: quirks take the first accepted row (1 pads to 16), the default the exact one, scaled 2/4 */
    const char *ew = "{\"op\": \"aten.add.Tensor\", \"args\": [], \"out\": {\"shape\": [16, 128]}}";
    expect(true, ew, "\"latency_us\": 1.0, \"source\": \"MEASURED\", \"confidence\": 1.0");
    expect(false, ew, "\"latency_us\": 1.0, \"source\": \"MEASURED\", \"confidence\": 0.9");
}

static void test_explain_names_rows(void **state) {
    (void)state;
    opdb_qdb *db = qf_open(g_dir, false, false, 0);
    char *line = qf_line(db, MM("[24, 128]", "[128, 256]"), true);
    assert_non_null(strstr(line, "\"rows\": [{\"file\": \"MatMulV2.csv\", \"line\": 5, \"kernel\": \"MatMulV2\", "
                                 "\"latency_us\": 7.0, \"latency_column\": \"Average Duration(us)\", \"rule\": "
                                 "\"identity\", \"input_rules\": [\"identity\", \"identity\"], \"distance\": 0, \"ties\": 1}]"));
    free(line);
    opdb_qdb_close(db);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_padding_distance_quirk),
        cmocka_unit_test(test_envelope_dispatch_errors),
        cmocka_unit_test(test_attention_and_elementwise),
        cmocka_unit_test(test_explain_names_rows),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
