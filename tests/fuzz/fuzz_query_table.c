/* libFuzzer target: the input is a database table (`<KernelType>.csv`) for
 * the query engine's loader. Must never crash or leak; a refused file has a
 * message; a loaded one has every row as wide as the header, line numbers
 * that never go back, and cells of the kind their column was typed. */
#include <stdint.h>
#include <stdlib.h>

#include "db/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    db_table t;
    opdb_err err;
    opdb_err_clear(&err);
    if (db_table_load_mem(&t, "Fuzz.csv", (const char *)data, size, &err) != 0) {
        if (!err.msg[0]) abort();
        db_table_free(&t);
        return 0;
    }
    if (t.ncols == 0) abort();
    for (size_t r = 0; r < t.nrows; r++) {
        if (r && t.line[r] < t.line[r - 1]) abort();
        for (size_t c = 0; c < t.ncols; c++) {
            const db_cell *x = db_table_cell(&t, r, (int)c);
            if (x->kind == DBC_TEXT && !x->v.s) abort();
            if (x->kind != DBC_NA && x->kind != db_table_col_kind(&t, (int)c) &&
                !(x->kind == DBC_UINT && db_table_col_kind(&t, (int)c) == DBC_INT))
                abort();
            char buf[48];
            opdb_span s = db_cell_text(x, buf, sizeof buf);
            if (!s.p) abort();
            double v;
            (void)db_cell_num(x, &v);
            int64_t iv;
            (void)db_cell_pyint(x, &iv);
        }
    }
    if (db_table_col(&t, t.cols[0]) != 0) abort();
    db_table_free(&t);
    return 0;
}
