/* The eager table loader kept for the tests (table_eager.c): the same
 * reading as src/db/table.c, every cell typed into a db_cell at load. */
#ifndef OPDB_TEST_TABLE_EAGER_H
#define OPDB_TEST_TABLE_EAGER_H

#include "db/table.h"

typedef struct eager_table {
    char *path;
    size_t ncols;
    char **cols;
    uint8_t *col_kind;
    size_t nrows;
    db_cell *cells;               /* nrows x ncols, row-major */
    uint32_t *line;
    opdb_arena arena;
} eager_table;

int eager_table_load_mem(eager_table *t, const char *name, const char *data, size_t n, opdb_err *err);
void eager_table_free(eager_table *t);

#endif
