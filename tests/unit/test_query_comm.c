/* opdb query: communication (topology tiers, exact row, bracket, alpha-beta
 * fit and its clamp), static composites (MC2 message bytes, the
 * sequence-parallel variant) and moe_fused (projection to the kernel's 7
 * inputs, EP filter, embedded communication). Every expected number is
 * worked out by hand from the small tables written here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/query.h"
#include "query/comm.h"

/* ---- tiers ---------------------------------------------------------------- */

static void test_tier_examples(void **s) {
    (void)s;
    const int grid[3] = {48, 8, 2};
    const int64_t a[2] = {0, 1}, b[4] = {0, 2, 4, 6}, c[2] = {0, 16}, one[1] = {5}, rep[3] = {3, 3, 3};
    assert_int_equal(q_comm_tier_of(a, 2, grid, 3), 2);
    assert_int_equal(q_comm_tier_of(b, 4, grid, 3), 1);
    assert_int_equal(q_comm_tier_of(c, 2, grid, 3), 0);
    /* one rank, or the same rank repeated: the innermost tier */
    assert_int_equal(q_comm_tier_of(one, 1, grid, 3), 2);
    assert_int_equal(q_comm_tier_of(rep, 3, grid, 3), 2);
    /* no grid: no tier */
    assert_int_equal(q_comm_tier_of(a, 2, grid, 0), -1);
}

static void test_tier_wraps_and_floors(void **s) {
    (void)s;
    const int grid[2] = {4, 2};
    /* 8 is beyond a 4x2 grid and wraps onto rank 0's coordinates */
    const int64_t wrap[2] = {0, 8};
    assert_int_equal(q_comm_tier_of(wrap, 2, grid, 2), 1);
    /* -1 has coordinates (3, 1) under floor division: differs from 0 in the outer dim */
    const int64_t neg[2] = {0, -1};
    assert_int_equal(q_comm_tier_of(neg, 2, grid, 2), 0);
    /* 1 and 7: (0,1) and (3,1): outer dim differs */
    const int64_t x[2] = {1, 7};
    assert_int_equal(q_comm_tier_of(x, 2, grid, 2), 0);
    /* 2 and 3: (1,0), (1,1) */
    const int64_t y[2] = {2, 3};
    assert_int_equal(q_comm_tier_of(y, 2, grid, 2), 1);
}

/* ---- the fit -------------------------------------------------------------- */

static void test_fit_exact_line(void **s) {
    (void)s;
    const double x[4] = {1024, 4096, 16384, 65536}, y[4] = {3 + 2e-3 * 1024, 3 + 2e-3 * 4096, 3 + 2e-3 * 16384,
                                                            3 + 2e-3 * 65536};
    double a, b;
    assert_true(q_comm_fit(x, y, 4, &a, &b));
    assert_true(fabs(a - 3) < 1e-9);
    assert_true(fabs(b - 2e-3) < 1e-15);
}

static void test_fit_least_squares(void **s) {
    (void)s;
    /* points (0,1), (1,3), (2,2): beta = 0.5, alpha = 1.5 */
    const double x[3] = {0, 1, 2}, y[3] = {1, 3, 2};
    double a, b;
    assert_true(q_comm_fit(x, y, 3, &a, &b));
    assert_true(fabs(b - 0.5) < 1e-15);
    assert_true(fabs(a - 1.5) < 1e-15);
    /* no spread in x: no line */
    const double x2[2] = {5, 5};
    assert_false(q_comm_fit(x2, y, 2, &a, &b));
    assert_false(q_comm_fit(x, y, 1, &a, &b));
}

static void test_round2(void **s) {
    (void)s;
    assert_true(q_round2(7.861) == 7.86);
    assert_true(q_round2(5.125) == 5.12); /* an exact binary half: to even */
}

/* ---- a database on disk ---------------------------------------------------- */

static char g_dir[256];

static void put(const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char k_mapping[] =
    "operator_mappings:\n"
    "  tensor_cast.all_reduce.default: {kernel_type: hcom_allReduce_, category: communication}\n"
    "  tensor_cast.reduce_scatter.default: {kernel_type: hcom_reduceScatter_, category: communication}\n"
    "  tensor_cast.raw.default: {kernel_type: hcom_raw_, category: communication}\n"
    "  tensor_cast.matmul_all_reduce.default:\n"
    "    composite: true\n"
    "    sub_kernels: [MatMulV2, hcom_allReduce_]\n"
    "    runtime_comm_variants:\n"
    "      sequence_parallel:\n"
    "        source_kernel_type: hcom_allReduce_\n"
    "        kernel_type: hcom_reduceScatter_\n"
    "        message_bytes_mode: per_rank_output\n"
    "        group_type: tensor_parallel\n"
    "        interpolation_method: bracket_linear\n"
    "  tensor_cast.bad_variant.default:\n"
    "    composite: true\n"
    "    sub_kernels: [MatMulV2, hcom_allReduce_]\n"
    "    runtime_comm_variants: {sequence_parallel: {source_kernel_type: hcom_allReduce_, kernel_type: MatMulV2}}\n"
    "  tensor_cast.multihead_latent_attention.default: {composite: true}\n"
    "  tensor_cast.multihead_latent_attention_quant.default: {composite: true}\n"
    "  tensor_cast.mlapo.default: {composite: true, decomposer_options: {kv_cache_query: {mode: pool_dim0_agnostic, "
    "block_size: 128}}}\n"
    "  tensor_cast.dispatch_ffn_combine_quant.default:\n"
    "    kernel_type: DispatchFFNCombine\n"
    "    query_mode: moe_fused\n"
    "    embedded_compute: [{kernel_type: MatMulV2, input_projection: residual_norm_from_activation, "
    "flatten_leading_dims: true}, {kernel_type: MatMulV2, input_projection: routing_weight_cast, output_dtype: FLOAT}]\n"
    "    embedded_communication: {kernel_type: hcom_alltoall_, message_bytes_mode: routed_input}\n"
    "  tensor_cast.mlapo_quant.default:\n"
    "    composite: true\n"
    "    decomposer_options:\n"
    "      visible_kernel_regime: {requires_sequence_parallel: true}\n"
    "      opaque_kernel: {kernel_type: mla_preprocess_0_mix_aic}\n"
    "  tensor_cast.dispatch_ffn_combine.default:\n"
    "    kernel_type: DispatchFFNCombine\n"
    "    query_mode: moe_fused\n"
    "    project_full_shape: true\n"
    "    embedded_communication:\n"
    "      kernel_type: hcom_alltoall_\n"
    "      message_bytes_mode: routed_input\n"
    "      group_type: expert_parallel\n";

/* all-reduce: 4 devices on tiers 1 and 0, 2 devices without a tier */
static const char k_allreduce[] = "message_bytes,num_devices,topology_tier,Duration(us)\n"
                                  "1024,4,1,10\n"
                                  "4096,4,1,16\n"
                                  "4096,4,1,99\n" /* a duplicate: the first one answers exactly */
                                  "16384,4,1,22\n"
                                  "8192,4,1,\n"   /* no duration: never a candidate */
                                  "1024,4,0,30\n"
                                  "16384,4,0,60\n"
                                  "8192,2,1,5\n"
                                  "32768,2,1,9\n";

static const char k_reducescatter[] = "message_bytes,num_devices,Duration(us)\n"
                                      "1024,4,8\n"
                                      "4096,4,20\n"
                                      "2048,4,100\n"
                                      "8192,4,1000\n";

static const char k_matmul[] = "Input Shapes,Input Data Types,Input Formats,Duration(us)\n"
                               "\"16,128;128,256\",DT_BF16;DT_BF16,ND;ND,7.5\n"
                               "\"16,128;128,256\",INT8;INT8,ND;ND,3.25\n";

static const char k_dfc[] =
    "Input Shapes,Input Data Types,Input Formats,EP Size,Duration(us)\n"
    "\"16,64;4,64,32;4,16,64;16,2;128;256;16,2\",DT_BF16;DT_BF16;DT_BF16;INT32;INT64;INT64;FLOAT,ND;ND;ND;ND;ND;ND;ND,16,"
    "400\n"
    "\"16,64;4,64,32;4,16,64;16,2;128;256;16,2\",DT_BF16;DT_BF16;DT_BF16;INT32;INT64;INT64;FLOAT,ND;ND;ND;ND;ND;ND;ND,8,"
    "200\n";

static const char k_alltoall[] = "message_bytes,num_devices,Duration(us)\n"
                                 "2048,8,11\n"
                                 "8192,8,17\n";

/* one mla_preprocess row for t tokens: hidden 64, 2 heads, q_lora 32, kv_lora 16, nope 8, rope 8, block 128
 * (F = 56, Qo = 32, one block) */
static void mlapre_row(char *o, size_t cap, int t, double lat, const char *completeness) {
    snprintf(o, cap,
             "%d,64,2,32,16,8,8,128,krope_ctkv,per_tensor_quant_asymm,FRACTAL_NZ,true,True,%s,"
             "\"%d,64;1,2,56,32;56;32;32;1,1,32,32;32;16;%d,8;%d,8;2,8,16;1,128,1,16;1,128,1,8;%d;1;1;56;1;1;32;1;1\","
             "DT_BF16;INT8;DT_BF16;DT_BF16;DT_BF16;DT_INT8;DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT32;"
             "FLOAT;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT,"
             "ND;FRACTAL_NZ;ND;ND;ND;FRACTAL_NZ;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND,"
             "\"%d,2,16;1,128,1,16;%d,2,8;1,128,1,8;%d,32\",DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16,ND;ND;ND;ND;ND,%g\n",
             t, completeness, t, t, t, t, t, t, t, lat);
}

static const char k_mlapre_head[] =
    "Runtime num_tokens,Runtime hidden_size,Runtime local_num_heads,Runtime q_lora_rank,Runtime kv_lora_rank,"
    "Runtime qk_nope_head_dim,Runtime qk_rope_head_dim,Runtime block_size,Runtime cache_mode,Runtime quant_mode,"
    "Runtime weight_format,Runtime enable_inner_out,Runtime weight_quantized,Runtime metadata_completeness,"
    "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Duration(us)\n";

static int setup_db(void **s) {
    (void)s;
    snprintf(g_dir, sizeof g_dir, "/tmp/opdb_test_query_comm_%d", (int)getpid());
    mkdir(g_dir, 0755);
    put("op_mapping.yaml", k_mapping);
    put("hcom_allReduce_.csv", k_allreduce);
    put("hcom_reduceScatter_.csv", k_reducescatter);
    put("hcom_raw_.csv", "Input Shapes,Duration(us)\n\"4,4\",3\n");
    put("MatMulV2.csv", k_matmul);
    put("DispatchFFNCombine.csv", k_dfc);
    put("hcom_alltoall_.csv", k_alltoall);
    char rows[4][2048], all[9000];
    mlapre_row(rows[0], sizeof rows[0], 2, 999, "legacy"); /* legacy rows never answer */
    mlapre_row(rows[1], sizeof rows[1], 4, 40, "complete");
    mlapre_row(rows[2], sizeof rows[2], 12, 80, "complete");
    mlapre_row(rows[3], sizeof rows[3], 12, 500, "complete"); /* a later duplicate: the first one counts */
    snprintf(all, sizeof all, "%s%s%s%s%s", k_mlapre_head, rows[0], rows[1], rows[2], rows[3]);
    put("mla_preprocess_0_mix_aic.csv", all);
    put("hcom_nabytes_.csv", "message_bytes,num_devices,Duration(us)\n1024,4,10\n,4,50\n4096,4,20\n");
    put("hcom_textbytes_.csv", "message_bytes,num_devices,Duration(us)\n1024,4,10\nabc,4,50\n4096,4,20\n");
    return 0;
}

static int teardown_db(void **s) {
    (void)s;
    const char *f[] = {"op_mapping.yaml", "hcom_allReduce_.csv", "hcom_reduceScatter_.csv", "hcom_raw_.csv",
                       "MatMulV2.csv", "DispatchFFNCombine.csv", "hcom_alltoall_.csv",
                       "hcom_nabytes_.csv", "hcom_textbytes_.csv", "mla_preprocess_0_mix_aic.csv"};
    char p[512];
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", g_dir, f[i]);
        unlink(p);
    }
    rmdir(g_dir);
    return 0;
}

typedef struct run_opts {
    bool quirks, sp, grid;
    int tp, ep;
} run_opts;

static opdb_qdb *open_db(run_opts ro) {
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    static const int grid[2] = {4, 2};
    if (ro.grid) o.grid = grid, o.grid_n = 2;
    o.reference_quirks = ro.quirks;
    o.sequence_parallel = ro.sp;
    o.tp_size = ro.tp;
    o.ep_size = ro.ep;
    o.interpolation = false;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_qdb *db = opdb_qdb_open(g_dir, &o, &err);
    assert_non_null(db);
    return db;
}

typedef struct ans {
    opdb_qsource src;
    double lat, conf;
    char rule[64], kernel[128], miss[256];
    size_t n_sub;
    double sub[4];
} ans;

static ans ask(opdb_qdb *db, const char *line) {
    opdb_qresult r;
    assert_int_equal(opdb_query_json(db, line, strlen(line), false, &r), 0);
    ans a;
    memset(&a, 0, sizeof a);
    a.src = r.source;
    a.lat = r.latency_us;
    a.conf = r.confidence;
    if (r.shape_match_rule) snprintf(a.rule, sizeof a.rule, "%s", r.shape_match_rule);
    if (r.kernel_type) snprintf(a.kernel, sizeof a.kernel, "%s", r.kernel_type);
    if (r.miss_reason) snprintf(a.miss, sizeof a.miss, "%s", r.miss_reason);
    a.n_sub = r.has_sub ? r.n_sub : 0;
    for (size_t i = 0; i < a.n_sub && i < 4; i++) a.sub[i] = r.sub[i].latency_us;
    opdb_qresult_free(&r);
    return a;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b) + 1e-12; }

/* all_reduce of a bf16 tensor of `elems` elements over `group` */
static ans allreduce(opdb_qdb *db, const char *op, long elems, const char *group) {
    char line[512];
    snprintf(line, sizeof line, "{\"op\": \"%s\", \"args\": [{\"shape\": [%ld], \"dtype\": \"bfloat16\"}, %s]}", op,
             elems, group);
    return ask(db, line);
}

static void test_comm_exact_and_tier(void **s) {
    (void)s;
    opdb_qdb *db = open_db((run_opts){.quirks = true, .grid = true});
    /* 2048 bf16 = 4096 B; ranks 0..3 of a 4x2 grid: coordinates (0,0) (0,1) (1,0) (1,1): tier 0 */
    ans a = allreduce(db, "tensor_cast.all_reduce.default", 2048, "[0, 1, 2, 3]");
    /* tier 0 has 1024 and 16384 only: alpha-beta over those two = the straight line, 30 + 30*3072/15360 */
    assert_int_equal(a.src, OPDB_SRC_INTERPOLATED);
    assert_true(near(a.lat, 30 + 30.0 * 3072 / 15360));
    assert_true(near(a.conf, 0.8));
    assert_string_equal(a.rule, "comm");
    assert_string_equal(a.kernel, "hcom_allReduce_");
    /* ranks 0,2,4,6: (0,0) (1,0) (2,0) (3,0) differ in dim 0 -> tier 0 as well; 0,1,... pairs: use 2 ranks 0,1 */
    a = allreduce(db, "tensor_cast.all_reduce.default", 2048, "[0, 1]");
    assert_int_equal(a.src, OPDB_SRC_MISS); /* 2 devices, tier 1: no 4096 B bracket below 8192 */
    assert_string_equal(a.miss, "shape_mismatch");
    opdb_qdb_close(db);
    /* without a grid every tier counts: 4096 B on 4 devices hits the first 4096 row exactly */
    db = open_db((run_opts){.quirks = true});
    a = allreduce(db, "tensor_cast.all_reduce.default", 2048, "[0, 1, 2, 3]");
    assert_int_equal(a.src, OPDB_SRC_MEASURED);
    assert_true(near(a.lat, 16));
    assert_true(near(a.conf, 0.9));
    opdb_qdb_close(db);
}

static void test_comm_alpha_beta_and_clamp(void **s) {
    (void)s;
    opdb_qdb *db = open_db((run_opts){.quirks = true});
    /* 4 devices, all tiers: candidates (1024,10) (4096,16) (4096,99) (16384,22) (1024,30) (16384,60).
     * 8192 B: bracket 4096..16384, y_lo 16 (first 4096 row), y_hi 22.
     * fit: xbar = (1024*2 + 4096*2 + 16384*2)/6 = 7168, ybar = 237/6 = 39.5;
     * Sxx = 2*(6144^2 + 3072^2 + 9216^2), Sxy = -6144*(10-39.5) - 6144*(30-39.5)
     *   - 3072*(16-39.5) - 3072*(99-39.5) + 9216*(22-39.5) + 9216*(60-39.5)
     * y(8192) = 39.5 + beta*1024 > 22: clamped to max(16, 22) = 22 */
    double sxx = 2.0 * (6144.0 * 6144 + 3072.0 * 3072 + 9216.0 * 9216);
    double sxy = -6144.0 * (10 - 39.5) - 6144.0 * (30 - 39.5) - 3072.0 * (16 - 39.5) - 3072.0 * (99 - 39.5) +
                 9216.0 * (22 - 39.5) + 9216.0 * (60 - 39.5);
    double y = 39.5 + sxy / sxx * 1024;
    assert_true(y > 22);
    ans a = allreduce(db, "tensor_cast.all_reduce.default", 4096, "[0, 1, 2, 3]");
    assert_int_equal(a.src, OPDB_SRC_INTERPOLATED);
    assert_true(near(a.lat, 22));
    /* below and above the measured sizes: no extrapolation */
    a = allreduce(db, "tensor_cast.all_reduce.default", 256, "[0, 1, 2, 3]");
    assert_int_equal(a.src, OPDB_SRC_MISS);
    assert_string_equal(a.miss, "shape_mismatch");
    a = allreduce(db, "tensor_cast.all_reduce.default", 16384, "[0, 1, 2, 3]");
    assert_int_equal(a.src, OPDB_SRC_MISS);
    /* 32 devices: none measured */
    a = allreduce(db, "tensor_cast.all_reduce.default", 2048, "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,"
                                                            "20,21,22,23,24,25,26,27,28,29,30,31]");
    assert_string_equal(a.miss, "shape_mismatch");
    /* a CSV without message_bytes / num_devices */
    a = allreduce(db, "tensor_cast.raw.default", 8, "[0, 1]");
    assert_string_equal(a.miss, "csv_format_raw");
    opdb_qdb_close(db);
}

static void test_comm_reduce_scatter_divides(void **s) {
    (void)s;
    opdb_qdb *db = open_db((run_opts){.quirks = true});
    /* 4096 bf16 = 8192 B over 4 ranks -> 2048 B: the row (2048, 4) = 100 exactly */
    ans a = allreduce(db, "tensor_cast.reduce_scatter.default", 4096, "[0, 1, 2, 3]");
    assert_int_equal(a.src, OPDB_SRC_MEASURED);
    assert_true(near(a.lat, 100));
    opdb_qdb_close(db);
}

static void test_comm_kernel_level_bracket(void **s) {
    (void)s;
    opdb_qdb *db = open_db((run_opts){.quirks = true});
    /* bracket_linear at 3072 B between (2048,100) and (4096,20): 100 + 0.5*(20-100) = 60 */
    ans a = ask(db, "{\"kernel\": \"hcom_reduceScatter_\", \"comm\": {\"message_bytes\": 3072, \"num_devices\": 4, "
                    "\"method\": \"bracket_linear\"}}");
    assert_int_equal(a.src, OPDB_SRC_INTERPOLATED);
    assert_true(near(a.lat, 60));
    /* tier filter from the query: tier 0 of the all-reduce rows, bracket 1024..16384 at 4096 */
    a = ask(db, "{\"kernel\": \"hcom_allReduce_\", \"comm\": {\"message_bytes\": 4096, \"num_devices\": 4, "
                "\"topology_tier\": 0, \"method\": \"bracket_linear\"}}");
    assert_true(near(a.lat, 30 + 30.0 * 3072 / 15360));
    opdb_qdb_close(db);
}

static void test_comm_args_by_mode(void **s) {
    (void)s;
    opdb_qdb *db = open_db((run_opts){.quirks = true, .grid = true});
    ans a = ask(db, "{\"op\": \"tensor_cast.all_reduce.default\", \"args\": [{\"shape\": [4]}]}");
    assert_int_equal(a.src, OPDB_SRC_ERROR);
    assert_string_equal(a.miss, "error:insufficient_args");
    a = ask(db, "{\"op\": \"tensor_cast.all_reduce.default\", \"args\": [[{\"shape\": [4]}], [0, 1]]}");
    assert_string_equal(a.miss, "invalid_args");
    a = ask(db, "{\"op\": \"tensor_cast.all_reduce.default\", \"args\": [{\"shape\": [4]}, 3]}");
    assert_string_equal(a.miss, "invalid_args");
    /* an empty group with a grid: the reference fails */
    a = ask(db, "{\"op\": \"tensor_cast.all_reduce.default\", \"args\": [{\"shape\": [4]}, []]}");
    assert_string_equal(a.miss, "error:invalid_rank_group");
    a = ask(db, "{\"op\": \"tensor_cast.all_reduce.default\", \"args\": [{\"shape\": [4]}, [0, 1.5]]}");
    assert_string_equal(a.miss, "error:bad_query");
    opdb_qdb_close(db);
    db = open_db((run_opts){.grid = true});
    a = ask(db, "{\"op\": \"tensor_cast.all_reduce.default\", \"args\": [{\"shape\": [4]}]}");
    assert_int_equal(a.src, OPDB_SRC_MISS);
    assert_string_equal(a.miss, "insufficient_args");
    /* default mode: an empty group has no tier, and 0 devices match nothing */
    a = ask(db, "{\"op\": \"tensor_cast.all_reduce.default\", \"args\": [{\"shape\": [4]}, []]}");
    assert_int_equal(a.src, OPDB_SRC_MISS);
    assert_string_equal(a.miss, "shape_mismatch");
    opdb_qdb_close(db);
}

static void quiet(void *ctx, const char *line) {
    (void)line;
    ++*(int *)ctx;
}

static void test_comm_bad_bytes_by_mode(void **s) {
    (void)s;
    const char *na_ab = "{\"kernel\": \"hcom_nabytes_\", \"comm\": {\"message_bytes\": 2048, \"num_devices\": 4}}";
    const char *na_br = "{\"kernel\": \"hcom_nabytes_\", \"comm\": {\"message_bytes\": 2048, \"num_devices\": 4, "
                        "\"method\": \"bracket_linear\"}}";
    const char *tx = "{\"kernel\": \"hcom_textbytes_\", \"comm\": {\"message_bytes\": 1024, \"num_devices\": 4}}";
    opdb_qdb *db = open_db((run_opts){.quirks = true});
    /* an empty message_bytes among the candidates fails the reference's fit, not its bracket */
    ans a = ask(db, na_ab);
    assert_string_equal(a.miss, "error:bad_cell");
    a = ask(db, na_br);
    assert_int_equal(a.src, OPDB_SRC_INTERPOLATED);
    assert_true(near(a.lat, 10 + 1024.0 / 3072 * 10));
    /* a text cell makes the whole column text: nothing equals 1024, and comparing sizes fails */
    a = ask(db, tx);
    assert_string_equal(a.miss, "error:bad_cell");
    opdb_qdb_close(db);
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    o.interpolation = false;
    int warnings = 0;
    o.warn = quiet;
    o.warn_ctx = &warnings;
    opdb_err err;
    opdb_err_clear(&err);
    db = opdb_qdb_open(g_dir, &o, &err);
    assert_non_null(db);
    /* default mode: those rows are skipped, counted and warned about once per file and column */
    a = ask(db, na_ab);
    assert_int_equal(a.src, OPDB_SRC_INTERPOLATED);
    assert_true(near(a.lat, 10 + 1024.0 / 3072 * 10));
    a = ask(db, tx);
    assert_int_equal(a.src, OPDB_SRC_MISS);
    assert_string_equal(a.miss, "shape_mismatch");
    a = ask(db, tx);
    assert_int_equal(warnings, 2);
    size_t rows, files;
    opdb_qdb_skipped(db, &rows, &files);
    assert_int_equal(rows, 4);
    assert_int_equal(files, 2);
    opdb_qdb_close(db);
}

/* ---- MC2 composites -------------------------------------------------------- */

static void test_mc2_bytes(void **s) {
    (void)s;
    opdb_qdb *db = open_db((run_opts){.quirks = true});
    /* x (16,128) bf16, w (128,256): B = 16*256*2 = 8192 on 2 devices: exact row 5; compute 7.5 */
    ans a = ask(db, "{\"op\": \"tensor_cast.matmul_all_reduce.default\", \"args\": [{\"shape\": [16, 128]}, "
                    "{\"shape\": [128, 256]}, [0, 1]]}");
    assert_int_equal(a.src, OPDB_SRC_MEASURED);
    assert_true(near(a.lat, 12.5));
    assert_true(near(a.conf, 0.9));
    assert_string_equal(a.rule, "");
    assert_string_equal(a.kernel, "MatMulV2");
    assert_int_equal(a.n_sub, 2);
    assert_true(near(a.sub[0], 7.5));
    assert_true(near(a.sub[1], 5));
    /* int8 input: 2 bytes per element all the same (8192 B), compute row INT8 3.25 */
    a = ask(db, "{\"op\": \"tensor_cast.matmul_all_reduce.default\", \"args\": [{\"shape\": [16, 128], \"dtype\": "
                "\"int8\"}, {\"shape\": [128, 256], \"dtype\": \"int8\"}, [0, 1]]}");
    assert_true(near(a.lat, 8.25));
    /* x with 24 rows (16 pads only to 32/64): the compute part misses first */
    a = ask(db, "{\"op\": \"tensor_cast.matmul_all_reduce.default\", \"args\": [{\"shape\": [24, 128]}, "
                "{\"shape\": [128, 256]}, [0, 1]]}");
    assert_int_equal(a.src, OPDB_SRC_MISS);
    /* comm part out of range: 4 devices at 8192 B bracket 4096..16384 exists; 8 devices: none */
    a = ask(db, "{\"op\": \"tensor_cast.matmul_all_reduce.default\", \"args\": [{\"shape\": [16, 128]}, "
                "{\"shape\": [128, 256]}, [0, 1, 2, 3, 4, 5, 6, 7]]}");
    assert_string_equal(a.miss, "comm_sub_kernel_miss");
    opdb_qdb_close(db);
}

static void test_mc2_sequence_parallel(void **s) {
    (void)s;
    /* under sp the all-reduce becomes a reduce-scatter of the per-rank output on the tp group:
     * 8192 B / 4 = 2048 -> the (2048, 4) row = 100; compute 7.5 */
    opdb_qdb *db = open_db((run_opts){.quirks = true, .sp = true, .tp = 4});
    const char *q = "{\"op\": \"tensor_cast.matmul_all_reduce.default\", \"args\": [{\"shape\": [16, 128]}, "
                    "{\"shape\": [128, 256]}, [0, 1, 2, 3]]}";
    ans a = ask(db, q);
    assert_int_equal(a.src, OPDB_SRC_MEASURED);
    assert_true(near(a.lat, 107.5));
    /* a group that is not the tp group: the variant does not apply and the part misses */
    a = ask(db, "{\"op\": \"tensor_cast.matmul_all_reduce.default\", \"args\": [{\"shape\": [16, 128]}, "
                "{\"shape\": [128, 256]}, [0, 1]]}");
    assert_string_equal(a.miss, "comm_sub_kernel_miss");
    a = ask(db, "{\"op\": \"tensor_cast.bad_variant.default\", \"args\": [{\"shape\": [16, 128]}, "
                "{\"shape\": [128, 256]}, [0, 1]]}");
    assert_string_equal(a.miss, "invalid_runtime_comm_variant");
    opdb_qdb_close(db);
    /* the variant applies only with sp on: 8192 B on 4 devices is then the all-reduce, alpha-beta 22 (clamped) */
    db = open_db((run_opts){.quirks = true, .tp = 4});
    a = ask(db, q);
    assert_true(near(a.lat, 7.5 + 22));
    assert_int_equal(a.src, OPDB_SRC_INTERPOLATED);
    opdb_qdb_close(db);
}

/* ---- moe_fused ------------------------------------------------------------- */

/* x (16,64), expert ids (16,2), 4 experts with w1 (64,32) each and w2 (16,64) each */
static const char k_moe_args[] =
    "[{\"shape\": [16, 64]}, {\"shape\": [16, 2], \"dtype\": \"int32\"}, "
    "[{\"shape\": [64, 32]}, {\"shape\": [64, 32]}, {\"shape\": [64, 32]}, {\"shape\": [64, 32]}], null, "
    "[{\"shape\": [16, 64]}, {\"shape\": [16, 64]}, {\"shape\": [16, 64]}, {\"shape\": [16, 64]}], null, null, ";

static void test_moe_projection_ep_and_comm(void **s) {
    (void)s;
    char q[1024];
    /* projected: (16,64), (4,64,32), (4,16,64) [w2 (16,64): q = H -> (E,p,q)], (16,2) int32,
     * (4*32,) = (128,) int64, (4*64,) = (256,) int64, (16,2) float32 */
    snprintf(q, sizeof q, "{\"op\": \"tensor_cast.dispatch_ffn_combine.default\", \"args\": %s[0,1,2,3,4,5,6,7]]}",
             k_moe_args);
    opdb_qdb *db = open_db((run_opts){.quirks = true, .ep = 8});
    ans a = ask(db, q);
    /* EP 8 row = 200; all-to-all of 16*64*2*topk(2) = 4096 B on 8 devices: bracket 2048..8192 alpha-beta over 2
     * points = the line: 11 + 6*2048/6144 = 13 */
    assert_int_equal(a.src, OPDB_SRC_INTERPOLATED);
    assert_true(near(a.lat, 213));
    assert_true(near(a.conf, 0.8));
    assert_string_equal(a.rule, "projected_full_shape");
    assert_string_equal(a.kernel, "DispatchFFNCombine");
    assert_int_equal(a.n_sub, 2);
    assert_true(near(a.sub[0], 200));
    assert_true(near(a.sub[1], 13));
    opdb_qdb_close(db);
    /* EP 16 row = 400; a group of 16 is not measured for the all-to-all: the communication is dropped */
    snprintf(q, sizeof q,
             "{\"op\": \"tensor_cast.dispatch_ffn_combine.default\", \"args\": %s[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,"
             "15]]}",
             k_moe_args);
    db = open_db((run_opts){.quirks = true, .ep = 16});
    a = ask(db, q);
    assert_int_equal(a.src, OPDB_SRC_MEASURED);
    assert_true(near(a.lat, 400));
    assert_true(near(a.conf, 1.0));
    assert_int_equal(a.n_sub, 1);
    /* the group is not the EP group */
    snprintf(q, sizeof q, "{\"op\": \"tensor_cast.dispatch_ffn_combine.default\", \"args\": %s[0,1]]}", k_moe_args);
    a = ask(db, q);
    assert_string_equal(a.miss, "moe_embedded_communication_context_mismatch");
    opdb_qdb_close(db);
    /* no EP size configured while the CSV has one */
    db = open_db((run_opts){.quirks = true});
    a = ask(db, q);
    assert_string_equal(a.miss, "ep_size_not_configured");
    opdb_qdb_close(db);
    /* EP 4: no row */
    db = open_db((run_opts){.quirks = true, .ep = 4});
    a = ask(db, q);
    assert_string_equal(a.miss, "shape_mismatch");
    opdb_qdb_close(db);
}

/* a result owns its strings: kernel names (the row's, the mapping's, the
 * sub-kernels') stay readable after the handle that answered is closed */
static void test_result_outlives_handle(void **s) {
    (void)s;
    char q[1024];
    snprintf(q, sizeof q, "{\"op\": \"tensor_cast.dispatch_ffn_combine.default\", \"args\": %s[0,1,2,3,4,5,6,7]]}",
             k_moe_args);
    opdb_qdb *db = open_db((run_opts){.quirks = true, .ep = 8});
    opdb_qresult r, c;
    assert_int_equal(opdb_query_json(db, q, strlen(q), false, &r), 0);
    static const char comm[] = "{\"op\": \"tensor_cast.all_reduce.default\", \"args\": [{\"shape\": [2048], "
                               "\"dtype\": \"bfloat16\"}, [0, 1, 2, 3]]}";
    assert_int_equal(opdb_query_json(db, comm, strlen(comm), false, &c), 0);
    opdb_qdb_close(db);
    /* overwrite what the handle freed, so a dangling pointer reads garbage */
    for (int i = 0; i < 64; i++) {
        char *junk = malloc(4096);
        assert_non_null(junk);
        memset(junk, 'x', 4096);
        free(junk);
    }
    assert_true(r.hit);
    assert_string_equal(r.kernel_type, "DispatchFFNCombine");
    assert_string_equal(r.shape_match_rule, "projected_full_shape");
    assert_int_equal(r.n_sub, 2);
    assert_string_equal(r.sub[0].kernel, "DispatchFFNCombine");
    assert_string_equal(r.id_json, "null");
    assert_true(c.hit);
    assert_string_equal(c.kernel_type, "hcom_allReduce_");
    assert_string_equal(c.shape_match_rule, "comm");
    opdb_qresult_free(&r);
    opdb_qresult_free(&c);
}

/* ---- the opaque MLAPO kernel (mla_preprocess) ------------------------------- */

static ans mlapo_quant(opdb_qdb *db, int T, const char *hdt) {
    char q[2048];
    snprintf(q, sizeof q,
             "{\"op\": \"tensor_cast.mlapo_quant.default\", \"args\": [{\"shape\": [%d, 64], \"dtype\": \"%s\"}, "
             "null, null, {\"shape\": [32, 64], \"dtype\": \"int8\"}, {\"shape\": [32]}, {\"shape\": [64, 32], "
             "\"dtype\": \"int8\"}, {\"shape\": [24, 64], \"dtype\": \"int8\"}, {\"shape\": [16]}, 2, 16, 8, 8, 16, "
             "32, null, null, null, null, null, null]}",
             T, hdt);
    return ask(db, q);
}

static void test_mla_preprocess(void **s) {
    (void)s;
    opdb_qdb *db = open_db((run_opts){.quirks = true});
    ans a = mlapo_quant(db, 4, "bfloat16");
    assert_int_equal(a.src, OPDB_SRC_MEASURED);
    assert_true(near(a.lat, 40));
    assert_true(near(a.conf, 0.8));
    assert_string_equal(a.kernel, "mla_preprocess_0_mix_aic");
    /* 8 tokens: between the 4- and 12-token rows */
    a = mlapo_quant(db, 8, "bfloat16");
    assert_int_equal(a.src, OPDB_SRC_INTERPOLATED);
    assert_true(near(a.lat, 60));
    assert_true(near(a.conf, 0.75));
    a = mlapo_quant(db, 16, "bfloat16");
    assert_string_equal(a.miss, "sub_kernel_miss:mla_preprocess_0_mix_aic");
    a = mlapo_quant(db, 2048, "bfloat16");
    assert_int_equal(a.src, OPDB_SRC_MISS);
    a = mlapo_quant(db, 4, "float32");
    assert_int_equal(a.src, OPDB_SRC_MISS);
    opdb_qdb_close(db);
}

/* ---- odd arguments: an answer (hit, miss or error line), never a crash ------------------- */

static void test_odd_args(void **s) {
    (void)s;
    static const char *const ops[] = {
        "tensor_cast.multihead_latent_attention.default", "tensor_cast.multihead_latent_attention_quant.default",
        "tensor_cast.mlapo.default", "tensor_cast.mlapo_quant.default", "tensor_cast.dispatch_ffn_combine.default",
        "tensor_cast.dispatch_ffn_combine_quant.default", "tensor_cast.matmul_all_reduce.default",
        "tensor_cast.all_reduce.default", "tensor_cast.reduce_scatter.default"};
    static const char *const vals[] = {"null", "3", "true", "\"s\"", "[]", "[0, 1]", "[-3, 9]",
                                       "{\"shape\": []}", "{\"shape\": [0]}", "{\"shape\": [4]}",
                                       "{\"shape\": [4], \"values\": [1, 2, 3, 4]}",
                                       "{\"shape\": [2], \"dtype\": \"int32\", \"values\": [5, 1000]}",
                                       "{\"shape\": [16, 128]}", "{\"shape\": [4, 16, 192]}",
                                       "{\"shape\": [1, 2, 3, 4], \"dtype\": \"int8\"}",
                                       "[{\"shape\": [64, 32]}, {\"shape\": [64, 32]}]", "[[{\"shape\": [3, 3]}]]",
                                       "{\"dtype_value\": \"int8\"}"};
    const size_t nv = sizeof vals / sizeof vals[0];
    run_opts modes[3] = {{.quirks = true, .grid = true, .tp = 2, .ep = 2},
                         {.grid = true, .sp = true, .tp = 2, .ep = 2},
                         {.quirks = true}};
    uint64_t x = 88172645463325252ull;
    size_t seen[6] = {0};
    for (int m = 0; m < 3; m++) {
        opdb_qdb *db = open_db(modes[m]);
        for (int i = 0; i < 1500; i++) {
            char q[4096];
            size_t o = 0;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const char *op = ops[x % (sizeof ops / sizeof ops[0])];
            size_t na = (x >> 8) % 22;
            o += (size_t)snprintf(q + o, sizeof q - o, "{\"op\": \"%s\", \"args\": [", op);
            for (size_t k = 0; k < na; k++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                o += (size_t)snprintf(q + o, sizeof q - o, "%s%s", k ? ", " : "", vals[x % nv]);
            }
            snprintf(q + o, sizeof q - o, "], \"kwargs\": {\"is_decode_values\": [true]}}");
            ans a = ask(db, q);
            assert_true(a.src == OPDB_SRC_MEASURED || a.src == OPDB_SRC_INTERPOLATED || a.src == OPDB_SRC_PARTIAL ||
                        a.src == OPDB_SRC_MISS || a.src == OPDB_SRC_ERROR);
            seen[a.src]++;
        }
        opdb_qdb_close(db);
    }
    /* the walk reaches answers of every kind, not only argument errors */
    print_message("odd args: %zu measured, %zu interpolated, %zu partial, %zu miss, %zu error\n",
                  seen[OPDB_SRC_MEASURED], seen[OPDB_SRC_INTERPOLATED], seen[OPDB_SRC_PARTIAL], seen[OPDB_SRC_MISS],
                  seen[OPDB_SRC_ERROR]);
    assert_true(seen[OPDB_SRC_MISS] > 100);
    assert_true(seen[OPDB_SRC_ERROR] > 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tier_examples),
        cmocka_unit_test(test_tier_wraps_and_floors),
        cmocka_unit_test(test_fit_exact_line),
        cmocka_unit_test(test_fit_least_squares),
        cmocka_unit_test(test_round2),
        cmocka_unit_test(test_comm_exact_and_tier),
        cmocka_unit_test(test_comm_alpha_beta_and_clamp),
        cmocka_unit_test(test_comm_reduce_scatter_divides),
        cmocka_unit_test(test_comm_kernel_level_bracket),
        cmocka_unit_test(test_comm_args_by_mode),
        cmocka_unit_test(test_comm_bad_bytes_by_mode),
        cmocka_unit_test(test_mc2_bytes),
        cmocka_unit_test(test_mc2_sequence_parallel),
        cmocka_unit_test(test_moe_projection_ep_and_comm),
        cmocka_unit_test(test_mla_preprocess),
        cmocka_unit_test(test_result_outlives_handle),
        cmocka_unit_test(test_odd_args),
    };
    return cmocka_run_group_tests(tests, setup_db, teardown_db);
}
