/* libFuzzer target: grid's reader of an existing database table
 * (grid_table_load), in opdb's default mode and as the reference reads it
 * (--reference-quirks), whole and as grid's pre-check reads it (header and
 * first row).  Every row has a cell per header column; a refusal is one
 * line naming the file. */
#include "fuzz_tmp.h"
#include "grid/grid_table.h"

static char g_path[128];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(g_path, sizeof g_path, "%s/Add.csv", fuzz_root_make("grid_table"));
    return 0;
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
    return 0;
}
