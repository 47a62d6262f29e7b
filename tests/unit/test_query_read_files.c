/* opdb_qdb_opts.read_files: a handle whose tables were read into memory
 * keeps answering from them after another program truncates a table file
 * in place (a mapped table would fault on its lost pages). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "opdb/core.h"
#include "query/query_internal.h"
#include "query_fixture.h"

static const char k_map[] = "operator_mappings:\n"
                            "  aten.mm.default: {kernel_type: MatMulV2}\n";

static const char k_mm[] = "Input Shapes,Input Data Types,Input Formats,Average Duration(us),Output Shapes\n"
                           "\"16,64;64,128\",DT_BF16;DT_BF16,ND;ND,3.5,\"16,128\"\n"
                           "\"32,64;64,128\",DT_BF16;DT_BF16,ND;ND,5.5,\"32,128\"\n";

static void test_truncated_after_open(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_map);
    qf_write(dir, "MatMulV2.csv", k_mm);
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    o.eager_load = true; /* every table loaded at open, its rows prepared by the first lookup */
    o.read_files = true;
    o.result_cache = 0;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_qdb *db = opdb_qdb_open(dir, &o, &err);
    assert_non_null(db);
    char path[600];
    snprintf(path, sizeof path, "%s/MatMulV2.csv", dir);
    assert_int_equal(truncate(path, 0), 0);
    const char *line =
        "{\"id\": 1, \"op\": \"aten.mm.default\", \"args\": [{\"shape\": [32, 64], \"dtype\": \"torch.bfloat16\"},"
        " {\"shape\": [64, 128], \"dtype\": \"torch.bfloat16\"}]}";
    for (int explain = 0; explain < 2; explain++) {
        opdb_qresult r;
        assert_int_equal(opdb_query_json(db, line, strlen(line), explain, &r), 0);
        assert_true(r.hit);
        assert_true(r.latency_us == 5.5);
        opdb_qresult_free(&r);
    }
    opdb_qdb_close(db);
    qf_rmdir(dir);
}

/* Once a table's rows are prepared, the table keeps no typed column and (its
 * records found by the block scan) no cells' starts, and a mapped file's
 * pages are given back; what reads the table later still answers: explain's
 * file and line, and the interpolation builder, which types the columns it
 * reads again. Mapped and read into memory, the same answers. */
static void test_released_after_prepare(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_map);
    qf_write(dir, "MatMulV2.csv", k_mm);
    const char *exact =
        "{\"id\": 1, \"op\": \"aten.mm.default\", \"args\": [{\"shape\": [32, 64], \"dtype\": \"torch.bfloat16\"},"
        " {\"shape\": [64, 128], \"dtype\": \"torch.bfloat16\"}]}";
    const char *between =
        "{\"id\": 2, \"op\": \"aten.mm.default\", \"args\": [{\"shape\": [24, 64], \"dtype\": \"torch.bfloat16\"},"
        " {\"shape\": [64, 128], \"dtype\": \"torch.bfloat16\"}]}";
    char lines[2][2048];
    for (int rf = 0; rf < 2; rf++) {
        opdb_qdb_opts o;
        opdb_qdb_opts_init(&o);
        o.read_files = rf;
        o.result_cache = 0;
        opdb_err err;
        opdb_err_clear(&err);
        opdb_qdb *db = opdb_qdb_open(dir, &o, &err);
        assert_non_null(db);
        opdb_qresult r;
        assert_int_equal(opdb_query_json(db, exact, strlen(exact), false, &r), 0);
        assert_true(r.hit && r.latency_us == 5.5);
        opdb_qresult_free(&r);
        q_ktable *t = q_table(db, "MatMulV2");
        for (size_t c = 0; c < t->t.ncols; c++) assert_int_equal(atomic_load(&t->t.ready[c]), 0);
        assert_true(t->t.fast && t->t.at == NULL);
        assert_true(rf ? t->t.view.map == NULL : t->t.view.map != NULL);
        assert_int_equal(opdb_query_json(db, exact, strlen(exact), true, &r), 0);
        assert_true(r.hit && r.latency_us == 5.5);
        assert_non_null(strstr(r.explain_json, "MatMulV2.csv"));
        assert_non_null(strstr(r.explain_json, "\"line\": 3"));
        opdb_qresult_free(&r);
        assert_int_equal(opdb_query_json(db, between, strlen(between), true, &r), 0);
        assert_true(r.hit && r.latency_us > 3.5 && r.latency_us < 5.5);
        const char *text;
        size_t n;
        assert_int_equal(opdb_qresult_line(&r, &text, &n), 0);
        snprintf(lines[rf], sizeof lines[rf], "%.*s", (int)n, text);
        opdb_qresult_free(&r);
        opdb_qdb_close(db);
    }
    assert_string_equal(lines[0], lines[1]);
    qf_rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_truncated_after_open),
                                       cmocka_unit_test(test_released_after_prepare)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
