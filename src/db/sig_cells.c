/* See sig_cells.h. */
#include "db/sig_cells.h"

int db_sig_cols_from_header(db_sig_cols *m, const opdb_span *names, size_t n) {
    int found = 0;
    for (int k = 0; k < OPDB_NSIG_CELLS; k++) {
        m->col[k] = -1;
        for (size_t i = 0; i < n; i++)
            if (opdb_span_eq_cstr(names[i], opdb_sig_cell_cols[k])) m->col[k] = (int)i;
        found += m->col[k] >= 0;
    }
    return found;
}

opdb_sig_cells db_sig_cells_from_row(const db_sig_cols *m, const opdb_span *cells, size_t n) {
    opdb_span c[OPDB_NSIG_CELLS];
    for (int k = 0; k < OPDB_NSIG_CELLS; k++)
        c[k] = m->col[k] >= 0 && (size_t)m->col[k] < n ? cells[m->col[k]] : opdb_span_make("", 0);
    return (opdb_sig_cells){c[0], c[1], c[2], c[3], c[4], c[5]};
}
