/* A database CSV in memory for `opdb grid`. */
#ifndef OPDB_GRID_TABLE_H
#define OPDB_GRID_TABLE_H

#include "opdb/csv.h"
#include "db/text_table.h"
#include "grid/grid_internal.h"

#define GRID_TABLE_EXTRA_COLS 16 /* room for the FIA grid columns */

typedef struct grid_table {
    db_text_table src; /* owns the memory */
    char **header;     /* NULL: the file has no header */
    size_t ncols;
    opdb_span **rows;  /* nrows x ncols, by header position */
    size_t nrows;
} grid_table;

/* fixed (opdb's default mode): drop a leading UTF-8 BOM (the reference keeps
 * it) and refuse a quote that never closes (the reference reads the rest of
 * the file as one cell).  max_rows > 0: stop after that many data rows. */
int grid_table_load(const char *path, bool fixed, size_t max_rows, grid_table *t, opdb_err *err);
int grid_table_col(const grid_table *t, const char *name);
/* Appends a column (at most GRID_TABLE_EXTRA_COLS times) unless present. */
void grid_table_add_col(grid_table *t, const char *name);
void grid_table_free(grid_table *t);

#endif
