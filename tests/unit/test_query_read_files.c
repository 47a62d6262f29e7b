/* opdb_qdb_opts.read_files: a handle whose tables were read into memory
 * keeps answering from them after another program truncates a table file
 * in place (a mapped table would fault on its lost pages). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "opdb/core.h"
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

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_truncated_after_open)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
