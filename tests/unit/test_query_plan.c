/* Mapping entry plans against reading every entry per query: random
 * op_mapping.yaml entries (every field dispatch and the compute target read,
 * each sometimes of the wrong type, sometimes repeating another's kernel;
 * entries that are not dicts) and random queries must give byte-identical
 * result lines, explain included, on a handle that uses the plans and on one
 * that reads the entries (no_plan), in both modes, with and without
 * interpolation, at several TP sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "query/query_internal.h"
#include "query_fixture.h"

static uint64_t g_rng = 0x2545f4914f6cdd1dull;
static unsigned rnd(unsigned n) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((g_rng >> 33) % n);
}

static const int k_dims[] = {1, 2, 32, 64, 128, 256, 512};
#define NDIMS (sizeof k_dims / sizeof k_dims[0])

static const char *pick(const char *const *v, size_t n) { return v[rnd((unsigned)n)]; }
#define PICK(a) pick(a, sizeof a / sizeof a[0])

static void write_table(const char *dir, const char *kt, int rows) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_adds(&sb, "Input Shapes,Input Data Types,Input Formats,Average Duration(us),Output Shapes,Output Data Types\n");
    for (int r = 0; r < rows; r++) {
        int slots = 1 + rnd(3);
        opdb_strbuf sh, dt, fm;
        opdb_sb_init(&sh), opdb_sb_init(&dt), opdb_sb_init(&fm);
        for (int s = 0; s < slots; s++) {
            if (s) opdb_sb_addc(&sh, ';'), opdb_sb_addc(&dt, ';'), opdb_sb_addc(&fm, ';');
            int rank = 2 + rnd(2);
            for (int d = 0; d < rank; d++) opdb_sb_addf(&sh, d ? ",%d" : "%d", k_dims[rnd(NDIMS)]);
            opdb_sb_adds(&dt, rnd(4) ? "DT_BF16" : "FLOAT");
            opdb_sb_adds(&fm, "ND");
        }
        opdb_sb_addc(&sh, 0), opdb_sb_addc(&dt, 0), opdb_sb_addc(&fm, 0);
        opdb_sb_addf(&sb, "\"%s\",%s,%s,%u.5,\"%d,%d\",DT_BF16\n", sh.p, dt.p, fm.p, 1 + rnd(9), k_dims[rnd(NDIMS)],
                     k_dims[rnd(NDIMS)]);
        opdb_sb_free(&sh), opdb_sb_free(&dt), opdb_sb_free(&fm);
    }
    opdb_sb_addc(&sb, 0);
    char name[64];
    snprintf(name, sizeof name, "%s.csv", kt);
    qf_write(dir, name, sb.p);
    opdb_sb_free(&sb);
}

/* one field of an entry, written `, key: value` (or nothing) */
static void field(opdb_strbuf *sb, const char *key, const char *const *vals, size_t n, unsigned absent_in) {
    if (rnd(absent_in) != 0) return;
    opdb_sb_addf(sb, ", %s: %s", key, pick(vals, n));
}
#define FIELD(sb, key, vals, absent_in) field(sb, key, vals, sizeof vals / sizeof vals[0], absent_in)

static void write_mapping(const char *dir, int n_ops) {
    static const char *const kt[] = {"MatMulV2", "BatchMatMulV2", "Add", "Absent", "\"\"", "3", "null", "0"};
    static const char *const alt[] = {"[BatchMatMulV2, MatMulV2]", "[Add]", "[]", "Add", "[1]", "null",
                                      "[MatMulV2, MatMulV2, Absent]"};
    static const char *const tc[] = {"1", "2", "-1", "true", "\"2\"", "null", "0"};
    static const char *const deg[] = {"BatchMatMulV2", "Add", "5", "null"};
    static const char *const byrank[] = {"{3: [BatchMatMulV2]}", "{\"2\": [Add, MatMulV2]}", "[1]", "null",
                                         "{2: Add}"};
    static const char *const tp[] = {
        "{shard_axis: input, logical_global_dims: [128, 256]}",
        "{shard_axis: output, logical_global_dims: [256, 512]}",
        "{shard_axis: output, logical_global_dims: [64]}",
        "{shard_axis: input, logical_global_dims: [128], otherwise: null}",
        "{shard_axis: input, logical_global_dims: [128], otherwise: physical_local}",
        "{shard_axis: output, logical_global_dims: [256], otherwise: other}",
        "{shard_axis: input, logical_global_dims: []}",
        "{shard_axis: input, logical_global_dims: [0]}",
        "{shard_axis: input, logical_global_dims: [a]}",
        "{shard_axis: input, logical_global_dims: [true]}",
        "{shard_axis: both, logical_global_dims: [128]}",
        "{shard_axis: input, logical_global_dims: 128}",
        "5",
        "null",
    };
    static const char *const flag[] = {"true", "false", "1", "0", "\"\"", "yes"};
    static const char *const mode[] = {"elementwise", "mtp_projection", "other", "null", "attention_special"};
    static const char *const category[] = {"communication", "compute", "null"};
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_adds(&sb, "operator_mappings:\n");
    for (int i = 0; i < n_ops; i++) {
        unsigned shape = rnd(20);
        if (shape == 0) {
            opdb_sb_addf(&sb, "  op%d: %s\n", i, PICK(((const char *const[]){"5", "null", "[1]", "\"x\""})));
            continue;
        }
        opdb_strbuf e;
        opdb_sb_init(&e);
        FIELD(&e, "kernel_type", kt, 1 + (shape == 1 ? 3 : 0));
        FIELD(&e, "alternate_kernel_types", alt, 3);
        FIELD(&e, "tc_input_count", tc, 3);
        FIELD(&e, "degenerate_bmm_kernel_type", deg, 3);
        FIELD(&e, "kernel_types_by_input_rank", byrank, 6);
        FIELD(&e, "tp_linear_projection", tp, 2);
        FIELD(&e, "zero_cost", flag, 10);
        FIELD(&e, "accepted_miss", flag, 12);
        FIELD(&e, "query_mode", mode, 10);
        FIELD(&e, "category", category, 12);
        if (rnd(12) == 0) opdb_sb_adds(&e, ", mtp_projection_kernel_type: MatMulV2");
        opdb_sb_addc(&e, 0);
        /* the entry without its leading ", " */
        opdb_sb_addf(&sb, "  op%d: {%s}\n", i, e.n > 1 ? e.p + 2 : "");
        opdb_sb_free(&e);
    }
    opdb_sb_addc(&sb, 0);
    qf_write(dir, "op_mapping.yaml", sb.p);
    opdb_sb_free(&sb);
}

static void tensor(opdb_strbuf *q, int rank) {
    opdb_sb_adds(q, "{\"shape\": [");
    for (int d = 0; d < rank; d++) opdb_sb_addf(q, d ? ", %d" : "%d", k_dims[rnd(NDIMS)]);
    opdb_sb_addf(q, "], \"dtype\": \"%s\"}", rnd(4) ? "bfloat16" : "float32");
}

static void query(opdb_strbuf *q, int n_ops) {
    opdb_sb_clear(q);
    opdb_sb_addf(q, "{\"id\": 7, \"op\": \"op%d\", \"args\": [", (int)rnd((unsigned)n_ops + 1));
    unsigned form = rnd(8);
    if (form == 0) {
        /* the degenerate-BMM shapes */
        opdb_sb_addf(q, "{\"shape\": [1, 32, 1], \"dtype\": \"bfloat16\"}, {\"shape\": [1, 1, %d], \"dtype\": "
                        "\"bfloat16\"}", k_dims[rnd(NDIMS)]);
    } else if (form == 1) {
        /* a matmul pair: the projection rules read the shared dim */
        int m = k_dims[rnd(NDIMS)], k = k_dims[rnd(NDIMS)], n = k_dims[rnd(NDIMS)];
        opdb_sb_addf(q, "{\"shape\": [%d, %d], \"dtype\": \"bfloat16\"}, {\"shape\": [%d, %d], \"dtype\": \"bfloat16\"}",
                     m, k, k, n);
    } else if (form == 2) {
        opdb_sb_adds(q, "[");
        tensor(q, 2);
        opdb_sb_adds(q, ", ");
        tensor(q, 2);
        opdb_sb_adds(q, "], 3");
    } else {
        int slots = (int)rnd(4);
        for (int s = 0; s < slots; s++) {
            if (s) opdb_sb_adds(q, ", ");
            tensor(q, 1 + (int)rnd(3));
        }
    }
    opdb_sb_adds(q, "]");
    if (rnd(2)) {
        opdb_sb_adds(q, ", \"out\": ");
        tensor(q, 2);
    }
    opdb_sb_adds(q, "}");
    opdb_sb_addc(q, 0);
}

static opdb_qdb *open_db(const char *dir, bool quirks, bool interp, int tp, bool plan) {
    opdb_qdb *db = qf_open(dir, quirks, interp, tp);
    assert_non_null(db);
    q_cache_free(db->cache);
    db->cache = NULL;
    db->no_plan = !plan;
    return db;
}

static void test_plan_equals_reading(void **state) {
    (void)state;
    enum { OPS = 40 };
    size_t compared = 0, hits = 0, bad_mapping = 0, tp_invalid = 0, rule_invalid = 0, zero = 0, planned = 0;
    static const int tps[] = {0, 1, 2, 8};
    for (int round = 0; round < 8; round++) {
        char *dir = qf_mkdir();
        write_mapping(dir, OPS);
        write_table(dir, "MatMulV2", 60);
        write_table(dir, "BatchMatMulV2", 40);
        write_table(dir, "Add", 30);
        bool interp = round % 2;
        int tp = tps[(round / 2) % 4];
        for (int quirks = 0; quirks < 2; quirks++) {
            opdb_qdb *fast = open_db(dir, quirks, interp, tp, true), *ref = open_db(dir, quirks, interp, tp, false);
            const qv *ops = fast->map.ops;
            assert_non_null(ops);
            for (size_t j = 0; j < ops->n; j++) planned += fast->map.plans[j].target_ok;
            opdb_strbuf q;
            opdb_sb_init(&q);
            for (int i = 0; i < 600; i++) {
                query(&q, OPS);
                bool explain = rnd(2);
                /* asked twice: the second ask meets the exact-hit map */
                for (int ask = 0; ask < 2; ask++) {
                    char *a = qf_line(fast, q.p, explain), *b = qf_line(ref, q.p, explain);
                    if (strcmp(a, b) != 0) fail_msg("query %s\n  plan:    %s\n  reading: %s", q.p, a, b);
                    if (ask == 0) {
                        compared++;
                        hits += strstr(a, "\"hit\": true") != NULL;
                        bad_mapping += strstr(a, "bad_mapping") != NULL;
                        tp_invalid += strstr(a, "tp_projection_invalid") != NULL;
                        rule_invalid += strstr(a, "invalid_tp_linear_projection_rule") != NULL;
                        zero += strstr(a, "\"zero_cost\"") != NULL;
                    }
                    free(a);
                    free(b);
                }
            }
            opdb_sb_free(&q);
            opdb_qdb_close(fast);
            opdb_qdb_close(ref);
        }
        qf_rmdir(dir);
    }
    /* the random entries and queries must reach every kind of answer, or the comparison says little */
    assert_true(hits > compared / 20);
    assert_true(bad_mapping > 0);
    assert_true(tp_invalid > 0);
    assert_true(rule_invalid > 0);
    assert_true(zero > 0);
    assert_true(planned > 0);
    print_message("%zu queries compared: %zu hits, %zu bad_mapping, %zu tp_projection_invalid, %zu invalid rules, "
                  "%zu zero-cost; %zu planned compute targets\n",
                  compared, hits, bad_mapping, tp_invalid, rule_invalid, zero, planned);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_plan_equals_reading)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
