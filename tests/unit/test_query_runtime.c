/* Runtime-vector attention targets: list cells, the even and rank-zero
 * splits of the request lengths, the params repr, and the row checks of a
 * sparse attention table through a whole query. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "query/attn_runtime.h"
#include "query/interp_internal.h"
#include "query_fixture.h"

static void expect_vec(const q_ivec *v, const int64_t *want, size_t n) {
    assert_true(v->set);
    assert_int_equal(v->n, n);
    for (size_t i = 0; i < n; i++) assert_int_equal(v->v[i], want[i]);
}

static void test_list_parse(void **state) {
    (void)state;
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    q_ivec v;
    const char *ok1 = "1;2;3";
    assert_true(q_rt_list_parse(&a, ok1, strlen(ok1), &v));
    expect_vec(&v, (const int64_t[]){1, 2, 3}, 3);
    const char *ok2 = " 10, 20 ;30 ";
    assert_true(q_rt_list_parse(&a, ok2, strlen(ok2), &v));
    expect_vec(&v, (const int64_t[]){10, 20, 30}, 3);
    const char *one = "7";
    assert_true(q_rt_list_parse(&a, one, 1, &v));
    expect_vec(&v, (const int64_t[]){7}, 1);
    const char *bad[] = {"", "1;x", "1;;2", "4.0", "1,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(q_rt_list_parse(&a, bad[i], strlen(bad[i]), &v));
        assert_false(v.set);
    }
    opdb_arena_free(&a);
}

static void test_evensplit(void **state) {
    (void)state;
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    q_ivec v;
    assert_true(q_rt_evensplit(&a, 10, 4, &v));
    expect_vec(&v, (const int64_t[]){3, 6, 8, 10}, 4);
    assert_true(q_rt_evensplit(&a, 4, 4, &v));
    expect_vec(&v, (const int64_t[]){1, 2, 3, 4}, 4);
    assert_false(q_rt_evensplit(&a, 3, 4, &v));
    assert_false(q_rt_evensplit(&a, 0, 1, &v));
    assert_false(q_rt_evensplit(&a, 5, 0, &v));
    opdb_arena_free(&a);
}

static qv tensor(opdb_arena *a, const double *vals, size_t n) {
    qv t;
    memset(&t, 0, sizeof t);
    t.kind = QV_TENSOR;
    int64_t *d = opdb_arena_alloc(a, sizeof *d);
    d[0] = (int64_t)n;
    t.shape.d = d;
    t.shape.rank = 1;
    t.values = vals;
    t.nvalues = n;
    return t;
}

static void test_rankzero(void **state) {
    (void)state;
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    q_ivec cum, kv;
    const double s64[] = {64, 64, 64, 64}, q16[] = {16, 16, 16, 16}, q10[] = {10, 10, 10, 10};
    qv seq = tensor(&a, s64, 4), ql = tensor(&a, q16, 4), bad = tensor(&a, q10, 4);
    /* consistent query lengths: rank zero holds the first 32 of 64 tokens */
    assert_true(q_rt_rankzero(&a, &seq, 64, 32, &ql, false, &cum, &kv));
    expect_vec(&cum, (const int64_t[]){16, 32, 32, 32}, 4);
    expect_vec(&kv, (const int64_t[]){64, 64, 0, 0}, 4);
    /* inconsistent ones (sum 40, not 64): an even split of the 64 tokens */
    assert_true(q_rt_rankzero(&a, &seq, 64, 32, &bad, false, &cum, &kv));
    expect_vec(&cum, (const int64_t[]){16, 32, 32, 32}, 4);
    /* strict refuses to guess for more than one request */
    assert_false(q_rt_rankzero(&a, &seq, 64, 32, &bad, true, &cum, &kv));
    /* a request cut by the rank boundary keeps the KV it has seen */
    const double s3[] = {10, 7};
    qv seq2 = tensor(&a, s3, 2);
    assert_true(q_rt_rankzero(&a, &seq2, 17, 9, NULL, false, &cum, &kv));
    expect_vec(&cum, (const int64_t[]){9, 9}, 2);
    expect_vec(&kv, (const int64_t[]){9, 0}, 2);
    /* the rank's share never reached: None */
    assert_false(q_rt_rankzero(&a, &seq, 64, 80, &ql, false, &cum, &kv));
    /* no values: None */
    qv meta = tensor(&a, NULL, 0);
    assert_false(q_rt_rankzero(&a, &meta, 64, 32, NULL, false, &cum, &kv));
    opdb_arena_free(&a);
}

static void test_params_repr(void **state) {
    (void)state;
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    q_ctx c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    const double s[] = {1000, 1004};
    qv seq = tensor(&a, s, 2);
    q_oint avg = {1002, true}, topk = {2048, true}, bs = {128, true};
    q_attn_rt *rt = q_rt_sparse_params(&c, 2, 16, &seq, avg, topk, bs, true, NULL, NULL);
    assert_null(q_rt_target_missing(&c, rt));
    q_attn_target tg;
    memset(&tg, 0, sizeof tg);
    tg.q3[0] = 2, tg.q3[1] = 16, tg.q3[2] = 512;
    tg.sparse = 3, tg.kv = 1;
    tg.rt = rt;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    q_rt_repr(&sb, &tg);
    opdb_sb_addc(&sb, '\0');
    assert_string_equal(sb.p,
                        "{'q_shape_3d': (2, 16, 512), 'avg_seq_len': 1002, 'sparse_mode': 3, 'num_kv_heads': 1, "
                        "'num_heads': 16, 'input_layout': 'TND', 'cache_layout': 'PA_BSND', 'kv_cache_mode': 'paged', "
                        "'topk': 2048, 'block_size': 128, 'batch_size': 2, 'actual_seq_lengths_values': [1, 2], "
                        "'actual_seq_lengths_kv_values': [1000, 1004], 'block_table_valid_blocks': [8, 8], "
                        "'sparse_block_size': 1, 'sparse_indices_pattern': 'uniform', 'sparse_indices_valid_count': "
                        "1004, 'required_context_fields': ['avg_seq_len', 'sparse_mode', 'num_kv_heads', 'num_heads', "
                        "'input_layout', 'cache_layout', 'kv_cache_mode', 'topk', 'block_size', "
                        "'actual_seq_lengths_values', 'actual_seq_lengths_kv_values', 'block_table_valid_blocks', "
                        "'sparse_block_size', 'sparse_indices_pattern', 'sparse_indices_valid_count']}");
    opdb_sb_free(&sb);
    /* no top-k and no sequence values: the missing fields, sorted */
    q_oint none = {0, false};
    qv meta = tensor(&a, s, 2); /* two requests, no readable values */
    meta.values = NULL, meta.nvalues = 0;
    rt = q_rt_sparse_params(&c, 2, 16, &meta, avg, none, bs, true, NULL, NULL);
    assert_string_equal(q_rt_target_missing(&c, rt), "semantic_context_missing:target:actual_seq_lengths_kv_values,"
                                                     "block_table_valid_blocks,topk");
    opdb_arena_free(&a);
}

/* ------------------------------------------------- row checks, end to end */

static const char k_map[] = "operator_mappings:\n  tensor_cast.mla_sparse_attention.default: {composite: true}\n";
#define SFA_HEAD                                                                                                     \
    "Input Shapes,Input Data Types,Runtime avg_seq_len,Runtime sparse_mode,Runtime num_key_value_heads,"             \
    "Runtime input_layout,Runtime topk,Runtime block_size,Runtime actual_seq_lengths_values,"                        \
    "Runtime actual_seq_lengths_kv_values,Runtime block_table_valid_blocks,Runtime num_heads,Runtime cache_layout,"  \
    "Duration(us)\n"
/* each row but the last differs from the target in one runtime field */
static const char k_sfa[] = SFA_HEAD
    "\"4,16,512\",DT_BF16,1000,3,1,TND,1024,128,\"1,2,3,4\",\"1000,1000,1000,1000\",\"8,8,8,8\",16,PA_BSND,1.0\n"
    "\"4,16,512\",DT_BF16,1000,3,1,TND,2048,64,\"1,2,3,4\",\"1000,1000,1000,1000\",\"8,8,8,8\",16,PA_BSND,2.0\n"
    "\"4,16,512\",DT_BF16,1000,3,1,TND,2048,128,\"1,2,3,4\",\"1000;1000;1000;999\",\"8,8,8,8\",16,PA_BSND,3.0\n"
    "\"4,16,512\",DT_BF16,1000,3,1,TND,2048,128,\"1,2,3,4\",\"1000,1000,1000,1000\",\"8,8,8,8\",32,PA_BSND,4.0\n"
    "\"4,16,512\",DT_BF16,1000,3,1,TND,2048,128,\"1,2,3,4\",\"1000,1000,1000,1000\",\"8,8,8,8\",16,BSND,5.0\n"
    /* unreadable list, blank head count and layout: not checked */
    "\"4,16,512\",DT_BF16,1000,3,1,TND,2048,128,\"1;x\",\"1000,1000,1000,1000\",\"8;8;8;8\", ,,6.5\n";
static const char k_sfa_no_topk[] = "Input Shapes,Input Data Types,Runtime avg_seq_len,Runtime sparse_mode,"
                                    "Runtime num_key_value_heads,Runtime input_layout,Runtime block_size,Duration(us)\n"
                                    "\"4,16,512\",DT_BF16,1000,3,1,TND,128,1.0\n";
static const char k_query[] =
    "{\"op\": \"tensor_cast.mla_sparse_attention.default\", \"args\": [{\"shape\": [4, 16, 192]}, "
    "{\"shape\": [100, 128, 576]}, null, null, {\"shape\": [4], \"dtype\": \"int32\", \"values\": [1000, 1000, "
    "1000, 1000]}, null, {\"shape\": [16, 128, 512]}, {\"shape\": [16, 512, 128]}, {\"shape\": [512, 4096]}, null, "
    "2048, null]}";

static char *run(const char *sfa) {
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_map);
    qf_write(dir, "SparseFlashAttention.csv", sfa);
    opdb_qdb *db = qf_open(dir, false, false, 1);
    assert_non_null(db);
    char *line = qf_line(db, k_query, false);
    opdb_qdb_close(db);
    qf_rmdir(dir);
    return line;
}

static void test_row_checks(void **state) {
    (void)state;
    char *line = run(k_sfa);
    assert_non_null(strstr(line, "\"source\": \"PARTIAL\""));
    assert_non_null(strstr(line, "[[\"SparseFlashAttention\", 6.5]]"));
    free(line);
}

static void test_missing_column(void **state) {
    (void)state;
    char *line = run(k_sfa_no_topk);
    assert_non_null(strstr(line, "attention_sub_kernel_miss:SparseFlashAttention:semantic_context_missing:csv:"
                                 "Runtime topk;semantic_key="));
    free(line);
}

/* ------------------------------------- runtime attention interpolation */

#define SFA_FULL_HEAD                                                                                                \
    "Input Shapes,Input Data Types,Runtime avg_seq_len,Runtime sparse_mode,Runtime num_key_value_heads,"             \
    "Runtime input_layout,Runtime metadata_completeness,Runtime topk,Runtime block_size,"                            \
    "Runtime actual_seq_lengths_values,Runtime actual_seq_lengths_kv_values,Runtime block_table_valid_blocks,"       \
    "Runtime num_heads,Runtime cache_layout,Runtime kv_cache_mode,Runtime sparse_block_size,"                        \
    "Runtime sparse_indices_pattern,Runtime sparse_indices_valid_count,Duration(us)\n"
/* decode rows at KV 3000 and 5000 (a legacy row between them is not a point) */
static const char k_sfa_interp[] = SFA_FULL_HEAD
    "\"4,16,512\",DT_BF16,3000,3,1,TND,complete,2048,128,\"1,2,3,4\",\"3000,3000,3000,3000\",\"24,24,24,24\",16,"
    "PA_BSND,paged,1,uniform,2048,8.0\n"
    "\"4,16,512\",DT_BF16,4000,3,1,TND,legacy,2048,128,\"1,2,3,4\",\"4000,4000,4000,4000\",\"32,32,32,32\",16,"
    "PA_BSND,paged,1,uniform,2048,99.0\n"
    "\"4,16,512\",DT_BF16,5000,3,1,TND,complete,2048,128,\"1,2,3,4\",\"5000,5000,5000,5000\",\"40,40,40,40\",16,"
    "PA_BSND,paged,1,uniform,2048,12.0\n";

static bool interp_at(const opdb_qdb *db, double kvlen, double *lat, const char **reason) {
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    q_result r;
    memset(&r, 0, sizeof r);
    q_ctx c;
    memset(&c, 0, sizeof c);
    c.db = db, c.cfg = &db->cfg, c.a = &a, c.r = &r;
    const double s[] = {kvlen, kvlen, kvlen, kvlen};
    qv seq = tensor(&a, s, 4);
    q_oint avg = {(int64_t)kvlen, true}, topk = {2048, true}, bs = {128, true};
    q_attn_target tg;
    memset(&tg, 0, sizeof tg);
    tg.q3[0] = 4, tg.q3[1] = 16, tg.q3[2] = 512;
    tg.has_sparse = tg.has_kv = true;
    tg.sparse = 3, tg.kv = 1;
    tg.rt = q_rt_sparse_params(&c, 4, 16, &seq, avg, topk, bs, true, NULL, NULL);
    bool ok = ip_runtime_attention(&c, "SparseFlashAttention", &tg, "DT_BF16", lat, reason);
    if (*reason) *reason = strcmp(*reason, "outside_axis_boundary") == 0 ? "outside_axis_boundary" : "other";
    opdb_arena_free(&a);
    return ok;
}

static void test_runtime_interp(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_map);
    qf_write(dir, "SparseFlashAttention.csv", k_sfa_interp);
    opdb_qdb *db = qf_open(dir, false, true, 1);
    assert_non_null(db);
    double lat = 0;
    const char *reason = NULL;
    /* KV 4000 in every request: halfway on the effective KV length */
    assert_true(interp_at(db, 4000, &lat, &reason));
    assert_true(lat > 9.999999 && lat < 10.000001);
    reason = NULL;
    assert_false(interp_at(db, 6000, &lat, &reason));
    assert_non_null(reason);
    opdb_qdb_close(db);
    qf_rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_parse),   cmocka_unit_test(test_evensplit),
        cmocka_unit_test(test_rankzero),     cmocka_unit_test(test_params_repr),
        cmocka_unit_test(test_row_checks),   cmocka_unit_test(test_missing_column),
        cmocka_unit_test(test_runtime_interp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
