/* libFuzzer target: the input is an op_mapping.yaml, loaded by both of its
 * readers: `opdb compare`'s (PyYAML truthiness, `<<` merges, top level and
 * `operator_mappings:`) with a few look-ups, and `opdb grid`'s operator
 * metadata. Must never crash, leak, hang or fail without an error message. */
#include "fuzz_tmp.h"
#include "grid/grid_opmap.h"
#include "opdb/compare.h"

static char g_dir[128], g_yaml[160];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(g_dir, sizeof g_dir, "%s", fuzz_root_make("opmap"));
    snprintf(g_yaml, sizeof g_yaml, "%s/op_mapping.yaml", g_dir);
    return 0;
}

static const char *const k_ops[] = {"aten.mm.default", "torch.ops.aten.add.Tensor", "aten.view.default", "a", "<<",
                                    "operator_mappings", ""};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_write_file(g_yaml, data, size);
    for (int nested = 0; nested < 2; nested++) {
        opdb_cmp_mapping *m = NULL;
        opdb_err err;
        opdb_err_clear(&err);
        if (opdb_cmp_mapping_load(&m, g_dir, nested == 1, &err) != 0) {
            if (err.msg[0] == '\0' || strchr(err.msg, '\n')) abort();
        } else {
            for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; i++) {
                const char *kt;
                bool zero;
                opdb_cmp_mapping_lookup(m, k_ops[i], &kt, &zero);
                if (kt && strlen(kt) == SIZE_MAX) abort(); /* reads it: ASan checks it is live */
            }
        }
        opdb_cmp_mapping_free(m);
    }
    grid_opmap gm;
    opdb_err err;
    opdb_err_clear(&err);
    if (grid_opmap_load(g_yaml, &gm, &err) != 0) {
        if (err.msg[0] == '\0' || strchr(err.msg, '\n')) abort();
    } else {
        for (size_t i = 0; i < gm.n; i++)
            if (!gm.e[i].kernel_type) abort();
    }
    grid_opmap_free(&gm);
    return 0;
}
