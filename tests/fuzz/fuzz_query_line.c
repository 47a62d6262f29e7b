/* libFuzzer target: the input is one `opdb query` line (op or kernel level),
 * answered against a small database in both modes, with and without explain.
 * Must never crash or leak; every line gets exactly one result line, a JSON
 * object that starts with its "id"; the fast line reader builds what yajl
 * alone builds (or the same error message), and the query read in the direct
 * form is the one read through yajl's tree. */
#include "fuzz_tmp.h"
#include "opdb/query.h"
#include "query/query_internal.h"

static opdb_qdb *g_db[2];

static const char k_mapping[] =
    "operator_mappings:\n"
    "  aten.mm.default: {kernel_type: MatMulV2, alternate_kernel_types: [MatMulV3]}\n"
    "  aten.add.Tensor: {kernel_type: Add, query_mode: elementwise}\n"
    "  tensor_cast.attention.default: {kernel_type: FusedInferAttentionScore, query_mode: attention_special}\n"
    "  aten.zero.default: {zero_cost: true}\n"
    "  aten.lin.default:\n"
    "    kernel_type: MatMulV2\n"
    "    tp_linear_projection: {shard_axis: input, logical_global_dims: [256]}\n"
    "    kernel_types_by_input_rank: {3: [BatchMatMulV2]}\n"
    "query_selection_policy: {kernel_overrides: {FusedInferAttentionScore: {require_semantic_unique: true}}}\n";
static const char k_mm[] =
    "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Average Duration(us)\n"
    "\"\"\"16,128;256,128\"\"\",DT_BF16;DT_BF16,ND;ND,\"16,256\",DT_BF16,5.5\n"
    "\"1,128;256,128\",DT_BF16;DT_BF16,ND;ND,\"1,256\",DT_BF16,4.0\n"
    "N/A,DT_BF16,ND,,,3.0\n"
    "\"8,2,16,16\",DT_BF16,FRACTAL_NZ,\"8,32\",FLOAT,2.0\n";
static const char k_add[] =
    "Input Shapes,Input Data Types,Output Shapes,Output Data Types,Duration(us)\n"
    "\"16,128;16,128\",DT_BF16;DT_BF16,\"16,128\",DT_BF16,1.5\n"
    "\"4,128\",FLOAT,\"4,128\",FLOAT,1.0\n";
static const char k_fia[] =
    "Input Shapes,Input Data Types,Runtime avg_seq_len,Runtime sparse_mode,Runtime num_key_value_heads,"
    "Runtime input_layout,Profiling Average Duration(us)\n"
    "\"4,8,128;100,1,128\",DT_BF16,100,3,1,TND,9.0\n"
    "\"16,8,128;100,1,128\",DT_BF16,100,3,1,TND,9.5\n"
    "\"16,8,128\",DT_BF16,abc,3,1,,9.5\n";

static void quiet(void *ctx, const char *line) {
    (void)ctx, (void)line;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *root = fuzz_root_make("query");
    char p[256];
    snprintf(p, sizeof p, "%s/op_mapping.yaml", root);
    fuzz_write_file(p, k_mapping, sizeof k_mapping - 1);
    snprintf(p, sizeof p, "%s/MatMulV2.csv", root);
    fuzz_write_file(p, k_mm, sizeof k_mm - 1);
    snprintf(p, sizeof p, "%s/Add.csv", root);
    fuzz_write_file(p, k_add, sizeof k_add - 1);
    snprintf(p, sizeof p, "%s/FusedInferAttentionScore.csv", root);
    fuzz_write_file(p, k_fia, sizeof k_fia - 1);
    for (int m = 0; m < 2; m++) {
        opdb_qdb_opts o;
        opdb_qdb_opts_init(&o);
        o.reference_quirks = m == 1;
        o.tp_size = 2;
        o.warn = quiet;
        opdb_err err;
        opdb_err_clear(&err);
        g_db[m] = opdb_qdb_open(root, &o, &err);
        if (!g_db[m]) abort();
    }
    return 0;
}

/* a parsed query as bytes: its error, or its id, op and canonical values */
static void query_print(opdb_arena *a, const uint8_t *data, size_t size, int mode, opdb_strbuf *o) {
    q_query q;
    const char *code = NULL;
    char msg[512];
    msg[0] = 0;
    if (q_parse_line_mode(a, (const char *)data, size, mode, &q, &code, msg, sizeof msg)) {
        opdb_sb_addf(o, "error %s: %s", code, msg);
        return;
    }
    q_render_value(q.id, o);
    opdb_sb_addf(o, " %s %s %d ", q.op ? q.op : "-", q.kernel ? q.kernel : "-", q.out != NULL);
    static uint8_t key[1 << 16];
    size_t kn = q_cache_key(&q, key, sizeof key);
    opdb_sb_add(o, (const char *)key, kn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (int m = 0; m < 2; m++) {
        opdb_qresult r;
        if (opdb_query_json(g_db[m], (const char *)data, size, m == 0, &r) != 0) abort();
        char *line;
        size_t n;
        if (opdb_qresult_json(&r, &line, &n) != 0) abort();
        if (n < 8 || memcmp(line, "{\"id\": ", 7) != 0 || line[n - 1] != '}' || memchr(line, '\n', n)) abort();
        if (r.hit != (r.miss_reason == NULL)) abort();
        free(line);
        opdb_qresult_free(&r);
    }
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    char m1[512] = "", m2[512] = "";
    qv *v1 = q_parse_json(&a, (const char *)data, size, Q_JSON_AUTO, m1, sizeof m1);
    qv *v2 = q_parse_json(&a, (const char *)data, size, Q_JSON_YAJL, m2, sizeof m2);
    if ((v1 == NULL) != (v2 == NULL) || strcmp(m1, m2) != 0) abort();
    if (v1) {
        opdb_strbuf s1, s2;
        opdb_sb_init(&s1);
        opdb_sb_init(&s2);
        q_render_value(v1, &s1);
        q_render_value(v2, &s2);
        if (s1.n != s2.n || memcmp(s1.p, s2.p, s1.n) != 0) abort();
        opdb_sb_free(&s1);
        opdb_sb_free(&s2);
    }
    opdb_strbuf p1, p2;
    opdb_sb_init(&p1);
    opdb_sb_init(&p2);
    query_print(&a, data, size, Q_JSON_AUTO, &p1);
    query_print(&a, data, size, Q_JSON_YAJL, &p2);
    if (p1.n != p2.n || memcmp(p1.p, p2.p, p1.n) != 0) abort();
    opdb_sb_free(&p1);
    opdb_sb_free(&p2);
    opdb_arena_free(&a);
    return 0;
}
