/* A database table read as text: the header names and every record's cells
 * exactly as written (no typing), kept in one arena with the line each
 * record starts on.  The rooms that copy, join or merge tables (grid, bench,
 * parse --merge, fia-fill, validate) open every table through db_csv_open,
 * so a table that cannot be one is refused the same way everywhere (the
 * checks themselves are open_check.h's, shared with the other readers). */
#ifndef OPDB_DB_TEXT_TABLE_H
#define OPDB_DB_TEXT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/open_check.h"
#include "opdb/csv.h"

/* Cells past this many in one record are dropped. */
#define DB_TEXT_MAX_FIELDS 4096

/* Opens path and reads its header record into c->f / c->nf (c->nf == 0: no
 * header, allowed by o), for the caller to read the rows with
 * opdb_csv_file_next and close with opdb_csv_file_close.  -1 with err set to
 * one line naming the file, and *p (when not NULL) telling what and where;
 * c is then closed.  The file is streamed, so o->utf8 does not apply (o->sniff
 * judges its start). */
int db_csv_open(opdb_csv_file *c, const char *path, const db_open_opts *o, db_open_problem *p, opdb_err *err);

typedef struct db_text_opts {
    db_open_opts open;
    bool ragged;           /* a row keeps its own cells; else it is padded with "" or cut to the header */
    bool last_name_wins;   /* a column whose name repeats reads the last such column's cell, as a
                            * DictReader row written back does (not with ragged) */
    bool refuse_open_quote; /* a quote that never closes is an error; else the rest of the file is one cell */
    size_t max_rows;       /* > 0: stop after that many rows */
} db_text_opts;

typedef struct db_text_table {
    opdb_span *names;   /* ncols header names (NUL-terminated); NULL: the file has no header */
    size_t ncols;
    opdb_span **rows;   /* nrows records: ncols cells each, or ncells[r] when ragged (NUL-terminated) */
    uint32_t *ncells;   /* ragged only */
    uint64_t *line;     /* 1-based line where each record starts */
    size_t nrows, cap;
    opdb_arena arena;   /* names, rows and cells */
} db_text_table;

/* Loads path (see db_csv_open for the errors; also an unterminated quote with
 * o->refuse_open_quote, and a failed read). */
int db_text_load(db_text_table *t, const char *path, const db_text_opts *o, db_open_problem *p, opdb_err *err);
/* The same from memory (o->open.sniff does not apply); name is used in messages. */
int db_text_load_mem(db_text_table *t, const char *name, const char *data, size_t n, const db_text_opts *o,
                     db_open_problem *p, opdb_err *err);
void db_text_free(db_text_table *t);

/* The first column named name, or -1. */
int db_text_col(const db_text_table *t, const char *name);
/* Cell c of row r; "" when the column is absent (c < 0) or the row shorter. */
static inline opdb_span db_text_cell(const db_text_table *t, size_t r, int c) {
    size_t n = t->ncells ? t->ncells[r] : t->ncols;
    return c >= 0 && (size_t)c < n ? t->rows[r][c] : opdb_span_make("", 0);
}

#endif
