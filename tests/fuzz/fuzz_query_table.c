/* libFuzzer target: the input is a database table (`<KernelType>.csv`) for
 * the query engine's loader. Must never crash or leak; a refused file has a
 * message; a loaded one has every row as wide as the header, line numbers
 * that never go back, and cells of the kind their column was typed. The
 * eager twin (tests/unit/table_eager.c) reads the same bytes to the same
 * outcome, names, lines and cells (a pass's texts too). The exact scan alone (no block scan)
 * finds the same records and cell starts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/table.h"
#include "table_eager.h"

/* the same outcome and cells as the eager loader */
static void same_as_eager(const db_table *t, int rc, const opdb_err *err, const uint8_t *data, size_t size) {
    eager_table e;
    opdb_err e2;
    opdb_err_clear(&e2);
    int rc2 = eager_table_load_mem(&e, "Fuzz.csv", (const char *)data, size, &e2);
    if (rc != rc2 || (rc != 0 && strcmp(err->msg, e2.msg) != 0)) abort();
    if (rc == 0) {
        if (e.ncols != t->ncols || e.nrows != t->nrows) abort();
        /* a pass's str() of each cell, text columns read from their bytes untyped */
        db_pass P;
        db_pass_begin(&P, t);
        for (size_t c = 0; c < t->ncols; c++)
            for (size_t r = 0; r < t->nrows; r++) {
                char b1[48], b2[48];
                bool stable;
                opdb_span s1 = db_pass_str(&P, r, (int)c, b1, sizeof b1, &stable);
                opdb_span s2 = db_cell_text(&e.cells[r * e.ncols + c], b2, sizeof b2);
                if (s1.n != s2.n || memcmp(s1.p, s2.p, s1.n) != 0) abort();
            }
        db_pass_end(&P);
        for (size_t c = 0; c < t->ncols; c++)
            if (strcmp(e.cols[c], t->cols[c]) != 0 || e.col_kind[c] != db_table_col_kind(t, (int)c)) abort();
        for (size_t r = 0; r < t->nrows; r++) {
            if (e.line[r] != t->line[r]) abort();
            for (size_t c = 0; c < t->ncols; c++) {
                const db_cell *x = db_table_cell(t, r, (int)c), *y = &e.cells[r * e.ncols + c];
                char b1[48], b2[48];
                opdb_span s1 = db_cell_text(x, b1, sizeof b1), s2 = db_cell_text(y, b2, sizeof b2);
                if (x->kind != y->kind || s1.n != s2.n || memcmp(s1.p, s2.p, s1.n) != 0) abort();
            }
        }
    }
    eager_table_free(&e);
}

/* the same records and cell starts by the exact scan alone */
static void same_as_exact_scan(db_table *t, const uint8_t *data, size_t size) {
    db_table x;
    opdb_err err;
    opdb_err_clear(&err);
    int rc = db_table_load_mem_way(&x, "Fuzz.csv", (const char *)data, size, DB_SCAN_EXACT, &err);
    if (rc != 0 || x.nrows != t->nrows || x.ncols != t->ncols) abort();
    if (t->nrows) {
        (void)db_table_column(t, 0);
        /* record starts: 32-bit in a file under 4 GiB, else 64-bit; both loads must pick the same */
        if ((x.rec32 != NULL) != (t->rec32 != NULL)) abort();
        if (x.rec32 ? memcmp(x.rec32, t->rec32, t->nrows * sizeof *t->rec32) != 0
                    : memcmp(x.rec, t->rec, t->nrows * sizeof *t->rec) != 0)
            abort();
        if (memcmp(x.line, t->line, t->nrows * sizeof *t->line) != 0 ||
            memcmp(x.at, t->at, t->nrows * t->ncols * sizeof *t->at) != 0)
            abort();
    }
    db_table_free(&x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    db_table t;
    opdb_err err;
    opdb_err_clear(&err);
    int rc = db_table_load_mem(&t, "Fuzz.csv", (const char *)data, size, &err);
    same_as_eager(&t, rc, &err, data, size);
    if (rc != 0) {
        if (!err.msg[0]) abort();
        db_table_free(&t);
        return 0;
    }
    if (t.ncols == 0) abort();
    same_as_exact_scan(&t, data, size);
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
