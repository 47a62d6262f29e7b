/* Results answered into a caller-owned buffer (opdb_query_json_buf): the
 * same lines and fields as opdb_query_json for hits, misses, interpolated
 * answers, bad lines and explain, with one buffer reused across all of them
 * (results bigger than its first chunk included), and opdb_qresult_free on
 * such a result freeing nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "opdb/core.h"
#include "query_fixture.h"

static const char k_map[] = "operator_mappings:\n"
                            "  aten.mm.default: {kernel_type: MatMulV2}\n"
                            "  aten.view.default: {zero_cost: true}\n";

static const char k_mm[] = "Input Shapes,Input Data Types,Input Formats,Average Duration(us),Output Shapes\n"
                           "\"16,64;64,128\",DT_BF16;DT_BF16,ND;ND,3.5,\"16,128\"\n"
                           "\"32,64;64,128\",DT_BF16;DT_BF16,ND;ND,5.5,\"32,128\"\n"
                           "\"64,64;64,128\",DT_BF16;DT_BF16,ND;ND,9.5,\"64,128\"\n";

static char *line_of(const opdb_qresult *r) {
    const char *t;
    size_t n;
    assert_int_equal(opdb_qresult_line(r, &t, &n), 0);
    char *o = malloc(n + 1);
    memcpy(o, t, n);
    o[n] = 0;
    return o;
}

static void test_buf_equals_alloc(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_map);
    qf_write(dir, "MatMulV2.csv", k_mm);
    opdb_qdb *db = qf_open(dir, false, true, 0);
    assert_non_null(db);
    /* a long id makes a result bigger than the buffer's first chunk */
    opdb_strbuf big;
    opdb_sb_init(&big);
    opdb_sb_adds(&big, "{\"id\": \"");
    for (int i = 0; i < 40000; i++) opdb_sb_addc(&big, 'x');
    opdb_sb_adds(&big, "\", \"op\": \"aten.view.default\", \"args\": []}");
    opdb_sb_addc(&big, 0);
    const char *lines[] = {
        "{\"id\": 1, \"op\": \"aten.mm.default\", \"args\": [{\"shape\": [16, 64]}, {\"shape\": [64, 128]}]}",
        "{\"id\": 2, \"op\": \"aten.mm.default\", \"args\": [{\"shape\": [24, 64]}, {\"shape\": [64, 128]}]}",
        "{\"id\": 3, \"op\": \"aten.mm.default\", \"args\": [{\"shape\": [16, 65]}, {\"shape\": [65, 7]}]}",
        "{\"id\": \"v\", \"op\": \"aten.view.default\", \"args\": []}",
        "{\"id\": 5, \"op\": \"aten.unknown\"}",
        "{\"id\": 6, \"op\": ",
        "[1, 2]",
        big.p,
        "{\"id\": 8, \"op\": \"aten.mm.default\", \"args\": [{\"shape\": [16, 64]}, {\"shape\": [64, 128]}]}",
    };
    size_t nl = sizeof lines / sizeof lines[0];
    opdb_qresult_buf *buf = opdb_qresult_buf_new();
    assert_non_null(buf);
    size_t hits = 0;
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < nl; i++)
            for (int explain = 0; explain < 2; explain++) {
                opdb_qresult a, b;
                assert_int_equal(opdb_query_json(db, lines[i], strlen(lines[i]), explain, &a), 0);
                assert_int_equal(opdb_query_json_buf(db, lines[i], strlen(lines[i]), explain, buf, &b), 0);
                char *la = line_of(&a), *lb = line_of(&b);
                if (strcmp(la, lb) != 0) fail_msg("line %zu explain %d\n  alloc: %s\n  buf:   %s", i, explain, la, lb);
                assert_int_equal(a.hit, b.hit);
                assert_int_equal(a.source, b.source);
                assert_true(a.latency_us == b.latency_us);
                assert_string_equal(a.id_json, b.id_json);
                if (a.kernel_type) assert_string_equal(a.kernel_type, b.kernel_type);
                if (a.miss_reason) assert_string_equal(a.miss_reason, b.miss_reason);
                if (a.explain_json) assert_string_equal(a.explain_json, b.explain_json);
                hits += b.hit;
                free(la);
                free(lb);
                opdb_qresult_free(&a);
                opdb_qresult_free(&b); /* frees nothing: the buffer is reused next */
                assert_null(b.priv);
            }
    assert_true(hits > 0);
    opdb_qresult_buf_free(buf);
    opdb_sb_free(&big);
    opdb_qdb_close(db);
    qf_rmdir(dir);
}

/* Integer ids beyond int64 come back as integers, as Python writes them
 * (they were once written as the nearest float), through both line readers
 * (kwargs with members take the general one) and nested in a list or dict. */
static void test_big_int_ids(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_map);
    opdb_qdb *db = qf_open(dir, false, true, 0);
    assert_non_null(db);
    static const char *const ids[][2] = {
        {"99999999999999999999", "99999999999999999999"},
        {"-12345678901234567890123", "-12345678901234567890123"},
        {"9223372036854775807", "9223372036854775807"},
        {"9223372036854775808", "9223372036854775808"},
        {"-9223372036854775809", "-9223372036854775809"},
        {"[99999999999999999999, 1.0, 7]", "[99999999999999999999, 1.0, 7]"},
        {"{\"a\": 18446744073709551616}", "{\"a\": 18446744073709551616}"},
        {"1e20", "1e+20"},
        {"100000000000000000000.0", "1e+20"},
    };
    static const char *const tails[] = {"}", ", \"kwargs\": {\"x\": 1}}"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        for (size_t t = 0; t < 2; t++) {
            char line[256], want[256];
            snprintf(line, sizeof line, "{\"id\": %s, \"op\": \"aten.view.default\", \"args\": []%s", ids[i][0],
                     tails[t]);
            snprintf(want, sizeof want, "{\"id\": %s, \"hit\": true,", ids[i][1]);
            opdb_qresult r;
            assert_int_equal(opdb_query_json(db, line, strlen(line), false, &r), 0);
            char *got = line_of(&r);
            if (strncmp(got, want, strlen(want)) != 0) fail_msg("%s\n gave %s\n want %s", line, got, want);
            free(got);
            opdb_qresult_free(&r);
        }
    opdb_qdb_close(db);
    qf_rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_buf_equals_alloc), cmocka_unit_test(test_big_int_ids)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
