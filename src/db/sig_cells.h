/* A row's signature cells (opdb_sig_cells) found by column name: the
 * columns are resolved once per table from its header, then each row's
 * cells are picked out by that map. */
#ifndef OPDB_DB_SIG_CELLS_H
#define OPDB_DB_SIG_CELLS_H

#include <stddef.h>

#include "opdb/schema.h"
#include "opdb/signature.h"

typedef struct db_sig_cols {
    int col[OPDB_NSIG_CELLS]; /* by opdb_sig_cell_cols; -1: the header lacks it */
} db_sig_cols;

/* Resolves each of opdb_sig_cell_cols among names[0..n) (the last of equal
 * names, as a DictReader row reads them); returns how many were found. */
int db_sig_cols_from_header(db_sig_cols *m, const opdb_span *names, size_t n);
/* The signature cells of a row of n cells; "" where the column is absent
 * or the row is shorter. */
opdb_sig_cells db_sig_cells_from_row(const db_sig_cols *m, const opdb_span *cells, size_t n);

#endif
