/* A cell a lookup must read and cannot: the reference's error in quirks
 * mode, else the row is skipped, counted once and warned once per file and
 * column. Shared by the row matchers, the scans and the interpolation
 * builders, below all of them. */
#include <stdint.h>

#include "query/query_internal.h"

int q_cell_fault(q_ctx *c, q_ktable *t, size_t row, const char *col, const char *what) {
    unsigned line = t->t.line[row];
    if (c->cfg->quirks) {
        q_error(c, "bad_cell", "%s:%u: %s: %s", t->shown, line, col, what);
        return -1;
    }
    opdb_qdb *db = (opdb_qdb *)c->db; /* counters are atomic */
    if (atomic_exchange(&t->rows[row].skipped, 1) == 0) {
        atomic_fetch_add(&db->skipped_rows, 1);
        if (!atomic_exchange(&t->counted, true)) atomic_fetch_add(&db->skipped_files, 1);
    }
    int ci = db_table_col(&t->t, col);
    uint64_t bit = (uint64_t)1 << (ci < 0 ? 63 : ci > 63 ? 63 : ci);
    if (!(atomic_fetch_or(&t->warned_cols, bit) & bit))
        q_warn(c->db, "%s:%u: %s: %s; rows like it are skipped", t->shown, line, col, what);
    return 0;
}
