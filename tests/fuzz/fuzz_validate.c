/* libFuzzer target: the input is a database table that `opdb validate`
 * checks (the first byte picks its operator, so that operator-specific
 * row identities are reached), in text and JSON mode. Must never crash or
 * leak, and the JSON report must parse as JSON (yajl, strict UTF-8). */
#include <yajl/yajl_tree.h>

#include "fuzz_tmp.h"
#include "opdb/validate.h"

static char g_db[128];

static const char *const k_tables[] = {"Add.csv", "MatMulV2.csv", "FusedInferAttentionScore.csv",
                                       "DispatchFFNCombine.csv"};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(g_db, sizeof g_db, "%s/db", fuzz_root_make("validate"));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    fuzz_rm_rf(g_db);
    if (mkdir(g_db, 0777) != 0) abort();
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_db, k_tables[data[0] % 4]);
    fuzz_write_file(path, data + 1, size - 1);
    for (int json = 0; json < 2; json++) {
        char *buf = NULL;
        size_t n = 0;
        FILE *out = open_memstream(&buf, &n);
        if (!out) abort();
        opdb_validate_result res;
        opdb_err err;
        opdb_err_clear(&err);
        opdb_validate_opts vo;
        opdb_validate_opts_init(&vo);
        vo.json = json == 1, vo.out = out;
        int rc = opdb_validate_run(g_db, &vo, &res, &err);
        fclose(out);
        if (rc != 0 && err.msg[0] == '\0') abort();
        if (rc == 0 && res.files != 1) abort();
        if (rc == 0 && json) {
            char ebuf[256];
            yajl_val v = yajl_tree_parse(buf, ebuf, sizeof ebuf);
            if (!v || !YAJL_IS_OBJECT(v)) {
                fprintf(stderr, "validate --json is not JSON: %s\n%s\n", ebuf, buf);
                abort();
            }
            yajl_tree_free(v);
        }
        free(buf);
    }
    return 0;
}
