/* A row's signature cells picked by column name: a table's header (or any
 * fixed column list) is resolved once into a column map, and each row's
 * cells are read through it, so that no reader hard-codes where the
 * signature cells sit in its rows. */
#ifndef OPDB_DB_SIG_CELLS_H
#define OPDB_DB_SIG_CELLS_H

#include <stddef.h>

#include "opdb/core.h"
#include "opdb/csv.h"
#include "opdb/schema.h"
#include "opdb/signature.h"

/* Per signature cell (opdb_sig_cell_cols order): its column, or -1. */
typedef struct db_sig_cols {
    int col[OPDB_NSIG_CELLS];
} db_sig_cols;

/* Which of equal header names a cell is read from: the first (a lookup by
 * name in a list) or the last (a DictReader row, where later keys win). */
typedef enum db_dup_name { DB_NAME_FIRST, DB_NAME_LAST } db_dup_name;

/* Resolves m from a header's n names.  0, or -1 when a signature column is
 * missing (its entry -1: its cell reads ""). */
int db_sig_cols_from_header(db_sig_cols *m, const opdb_span *names, size_t n, db_dup_name dup);
/* The same from NUL-terminated names (a fixed column list; first wins). */
int db_sig_cols_from_names(db_sig_cols *m, const char *const *names, size_t n);
/* The map of rows laid out as opdb_key_cols (the base columns, then EP
 * Size): bench's journal, aggregated op_summary rows. */
const db_sig_cols *db_sig_cols_of_key_cols(void);

/* A row's signature cells through m; the row has n cells.  A missing
 * column, a cell past the row's end and an absent cell (p NULL) read "". */
opdb_sig_cells db_sig_cells_from_row(const db_sig_cols *m, const opdb_span *cells, size_t n);
/* The same over a tokenizer's record of n cells. */
opdb_sig_cells db_sig_cells_from_fields(const db_sig_cols *m, const opdb_field *cells, int n);
/* Puts v in every signature cell of c that m reads from column col (a
 * row's cell replaced before it is signed). */
void db_sig_cells_put(const db_sig_cols *m, opdb_sig_cells *c, int col, opdb_span v);

#endif
