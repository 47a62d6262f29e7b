/* One database table (`<KernelType>.csv`) loaded once, with the cell typing
 * the performance model's reader gives it (pandas read_csv defaults): NA
 * cells, whole-column int / float / bool / text typing, duplicate header
 * names renamed `X.1`, `X.2`, ... Rows keep the 1-based line where their
 * record starts, so every answer can name its source. */
#ifndef OPDB_DB_TABLE_H
#define OPDB_DB_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opdb/core.h"

typedef enum db_cell_kind { DBC_NA, DBC_INT, DBC_UINT, DBC_FLOAT, DBC_BOOL, DBC_TEXT } db_cell_kind;

/* 16 bytes: a text cell's text shares the union with the typed values (a
 * table holds rows x columns of them) */
typedef struct db_cell {
    union {
        int64_t i;
        uint64_t u;                /* DBC_UINT: an integer above INT64_MAX */
        double f;
        bool b;
        const char *s;             /* DBC_TEXT: the decoded text (NUL-terminated) */
    } v;
    uint32_t n;                   /* DBC_TEXT: the text's length */
    uint8_t kind;                 /* db_cell_kind */
} db_cell;

typedef struct db_table {
    char *path;                   /* as given to db_table_load */
    size_t ncols;
    char **cols;                  /* header names after renaming duplicates */
    uint8_t *col_kind;            /* db_cell_kind of the column's non-NA cells (DBC_NA: all NA) */
    size_t nrows;
    db_cell *cells;               /* nrows x ncols, row-major */
    uint32_t *line;               /* per row: 1-based line where its record starts */
    opdb_arena arena;             /* the cells' text */
} db_table;

/* Loads path. -1 with err "<path>: <what>" (or "<path>:<line>: <what>") when the
 * file cannot be opened, is not UTF-8, is empty, or has a record longer than
 * its header. */
int db_table_load(db_table *t, const char *path, opdb_err *err);
/* Loads from memory (fuzzing, tests); name is used in messages. */
int db_table_load_mem(db_table *t, const char *name, const char *data, size_t n, opdb_err *err);
void db_table_free(db_table *t);

/* The first column named name, or -1. */
int db_table_col(const db_table *t, const char *name);
static inline const db_cell *db_table_cell(const db_table *t, size_t row, int col) {
    return &t->cells[row * t->ncols + (size_t)col];
}

/* Python str() of a cell: "nan" for NA, repr for floats, True/False. Writes
 * into buf (at least 40 bytes) for non-text cells; returns a view. */
opdb_span db_cell_text(const db_cell *c, char *buf, size_t cap);
/* Python float() of a cell; false when it fails (text that is not a float). */
bool db_cell_num(const db_cell *c, double *out);
/* Python int() of a cell; false when it fails (NA, inf, non-integer text). */
bool db_cell_pyint(const db_cell *c, int64_t *out);

#endif
