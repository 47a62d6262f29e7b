/* libFuzzer target: grid's reader of an existing database table
 * (grid_table_load), in opdb's default mode and as the reference reads it
 * (--reference-quirks), whole and as grid's pre-check reads it (header and
 * first row); then a whole `opdb grid` run over the input as the table of
 * an operator (the first byte picks it), whose template row (shapes, types,
 * formats, slots) the new rows are built from.  Every row has a cell per
 * header column; a refusal is one line naming the file. */
#include "fuzz_tmp.h"
#include "grid/grid_table.h"
#include "opdb/grid.h"

static char g_path[128], g_db[128];

static const char *const k_ops[] = {"Add", "MatMulV2", "FusedInferAttentionScore", "GroupedMatmul",
                                    "DispatchFFNCombine", "ReshapeAndCacheNdKernel", "split_qkv_rmsnorm_rope_kernel",
                                    "PadV3"};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *root = fuzz_root_make("grid_table");
    snprintf(g_path, sizeof g_path, "%s/Add.csv", root);
    snprintf(g_db, sizeof g_db, "%s/db", root);
    return 0;
}

/* `opdb grid --rows 4 --seed 1 --target-models qwen3-32b` over the input. */
static void grid_run(const uint8_t *data, size_t size) {
    fuzz_rm_rf(g_db);
    if (mkdir(g_db, 0700) != 0) abort();
    char path[256];
    snprintf(path, sizeof path, "%s/%s.csv", g_db, k_ops[size ? data[0] % 8 : 0]);
    fuzz_write_file(path, data, size);
    FILE *out = fopen("/dev/null", "w");
    if (!out) abort();
    opdb_grid_opts o;
    opdb_grid_opts_init(&o);
    o.root = g_db;
    o.target_models = "qwen3-32b";
    o.rows = 4;
    o.have_seed = true;
    o.seed = 1;
    o.max_hbm_gb = 1;
    o.quirks = size > 1 && (data[1] & 1);
    o.out = out;
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_grid_run(&o, &err) != 0 && (!err.msg[0] || strchr(err.msg, '\n'))) abort();
    fclose(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_write_file(g_path, data, size);
    for (int mode = 0; mode < 3; mode++) {
        grid_table t;
        opdb_err err;
        opdb_err_clear(&err);
        int rc = grid_table_load(g_path, mode != 1, mode == 2 ? 1 : 0, &t, &err);
        if (rc == 0) {
            if (mode == 2 && t.nrows > 1) abort();
            if (!t.header && t.nrows) abort();
            for (size_t r = 0; r < t.nrows; r++)
                for (size_t c = 0; c < t.ncols; c++)
                    if (!t.rows[r][c].p) abort();
            if (t.header && grid_table_col(&t, "Input Shapes") >= 0) grid_table_add_col(&t, "Runtime attn_state");
        } else if (!err.msg[0] || strchr(err.msg, '\n') || !strstr(err.msg, "Add.csv")) {
            abort();
        }
        grid_table_free(&t);
    }
    grid_run(data, size);
    return 0;
}
