/* One database table (`<KernelType>.csv`) loaded once, with the cell typing
 * the performance model's reader gives it (pandas read_csv defaults): NA
 * cells, whole-column int / float / bool / text typing, duplicate header
 * names renamed `X.1`, `X.2`, ... Rows keep the 1-based line where their
 * record starts, so every answer can name its source.
 *
 * The table keeps the file's bytes as one buffer (mapped where the file
 * system allows). Loading only finds where each record starts; where each
 * cell starts is found on the table's first use, and a column is typed into
 * one flat array (8 bytes a cell: the number, or where its text lies) the
 * first time it is read, once, even when many threads share the table.
 *
 * A mapped file that another program shrinks while the table lives raises
 * SIGBUS on the next read past its new end (see opdb_file_view in
 * opdb/fs.h); opdb's own writers replace files by renaming, which leaves a
 * mapped file whole. */
#ifndef OPDB_DB_TABLE_H
#define OPDB_DB_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/open_check.h"
#include "opdb/core.h"
#include "opdb/fs.h"

typedef enum db_cell_kind { DBC_NA, DBC_INT, DBC_UINT, DBC_FLOAT, DBC_BOOL, DBC_TEXT } db_cell_kind;

/* A cell as read: a view made on demand (the table holds no db_cell). */
typedef struct db_cell {
    union {
        int64_t i;
        uint64_t u;                /* DBC_UINT: an integer above INT64_MAX */
        double f;
        bool b;
        const char *s;             /* DBC_TEXT: the decoded text (not NUL-terminated) */
    } v;
    uint32_t n;                   /* DBC_TEXT: the text's length */
    uint8_t kind;                 /* db_cell_kind */
} db_cell;

/* A column typed on first use. v per row: DBC_INT / DBC_UINT the integer's
 * bits, DBC_FLOAT the double (NaN only for NA: no float literal reads as NaN),
 * DBC_BOOL 0 / 1 (DB_V_NA for NA), DBC_TEXT a text reference (DB_V_NA for NA). */
typedef struct db_col {
    uint8_t kind;                 /* db_cell_kind of the non-NA cells (DBC_NA: all NA) */
    uint64_t *v;                  /* nrows values (NULL for an all-NA column) */
    uint8_t *uint_rows;           /* DBC_INT only, when some cell needs uint64: 1 per such row */
    char *dec;                    /* quoted cells whose text differs from their bytes, decoded */
    size_t *big;                  /* (offset, length) pairs of texts too long for a reference */
} db_col;

#define DB_V_NA UINT64_MAX

typedef struct db_table {
    char *path;                   /* as given to db_table_load */
    size_t ncols;
    char **cols;                  /* header names after renaming duplicates */
    size_t nrows;
    uint32_t *line;               /* per row: 1-based line where its record starts */
    opdb_arena arena;             /* free for the table's users (parsed rows); allocates nothing until used */
    opdb_arena names;             /* the header names (one block the header's size) */
    /* private: the file and where its cells start */
    char *mem;                    /* the file's bytes (data points past a BOM) */
    opdb_file_view view;          /* when mem is a mapping of the file */
    const char *data;
    size_t n;
    uint32_t *rec32;              /* per row: offset of its record, in a file under 4 GiB */
    size_t *rec;                  /* the same in a bigger file (rec32 NULL) */
    uint16_t *at;                 /* nrows x ncols: a cell's offset in its record (DB_AT_*); NULL
                                     until the first column is typed, unless the exact scan found them,
                                     and again after db_table_trim */
    bool fast;                    /* the records were found by the block scan (table_scan.h) */
    bool trimmed;                 /* db_table_trim ran: a column typed later keeps no view of the file */
    _Atomic uint32_t late_typed;  /* columns typed after the trim (tests: readers that went back to the text) */
    uint8_t way;                  /* db_scan_way the table is read with */
    db_col *colv;                 /* per column, valid once ready[c] */
    _Atomic uint8_t *ready;
    pthread_mutex_t mu;           /* typing a column */
    bool mu_init;
} db_table;

#define DB_AT_ABSENT 0xfffe       /* a short record: the cell is NA */
#define DB_AT_FAR 0xffff          /* the cell starts too far into its record: found by walking it */

/* How records and cells are found: the block scan where the file allows it
 * (the default), or, for the tests that compare them, only the exact scan or
 * the block scan with its portable masks. */
typedef enum db_scan_way { DB_SCAN_BEST, DB_SCAN_EXACT, DB_SCAN_PORTABLE } db_scan_way;

/* Loads path. -1 with err "<path>: <what>" (or "<path>:<line>: <what>") when the
 * file cannot be opened, is not UTF-8, is empty, or has a record longer than
 * its header (the opening checks: db_table_query_rules). */
int db_table_load(db_table *t, const char *path, opdb_err *err);
/* db_table_load reading the file into memory, never mapping it: a file
 * truncated in place while the table is open cannot then fault. */
int db_table_load_read(db_table *t, const char *path, opdb_err *err);
/* Loads from memory (copied; fuzzing, tests); name is used in messages. */
int db_table_load_mem(db_table *t, const char *name, const char *data, size_t n, opdb_err *err);

/* The opening checks (open_check.h) the query reads its tables with. */
extern const db_open_opts db_table_query_rules;
/* The same with the opening checks o asks for (p, when not NULL, telling
 * which refused the file). */
int db_table_load_checked(db_table *t, const char *path, const db_open_opts *o, db_open_problem *p,
                          opdb_err *err);
int db_table_load_mem_checked(db_table *t, const char *name, const char *data, size_t n,
                              const db_open_opts *o, db_open_problem *p, opdb_err *err);
/* db_table_load_mem, the records and cells found the way asked (tests). */
int db_table_load_mem_way(db_table *t, const char *name, const char *data, size_t n, db_scan_way way,
                          opdb_err *err);
void db_table_free(db_table *t);

/* The first column named name, or -1. */
int db_table_col(const db_table *t, const char *name);
/* The column typed (on first use; thread-safe). */
const db_col *db_table_column(const db_table *t, int col);
/* The kind of the column's non-NA cells (DBC_NA: all NA). */
static inline db_cell_kind db_table_col_kind(const db_table *t, int col) {
    return (db_cell_kind)db_table_column(t, col)->kind;
}

/* The cell at (row, col), written into *out; returns out. */
const db_cell *db_table_cell_into(const db_table *t, size_t row, int col, db_cell *out);
/* The same from a column c of t (the table's own, or one of a pass). */
const db_cell *db_col_cell_into(const db_table *t, const db_col *c, size_t row, db_cell *out);

/* One pass over a table's cells whose columns are typed for the pass alone
 * (a column the table has typed already is read from there): a reader that
 * reads each row once, such as the query's row preparation, leaves no typed
 * column behind. Not for sharing between threads; the table may be. */
typedef struct db_pass {
    const db_table *t;
    db_col *colv;                 /* the columns typed for the pass */
    uint8_t *typed;
    uint8_t *way;                 /* per column: how db_pass_str reads it (0: not yet decided) */
    uint16_t *at;                 /* the pass's own cells' starts (nrows x ncols), found on first need */
    opdb_strbuf sb;               /* a quoted cell's decoded text */
} db_pass;
void db_pass_begin(db_pass *p, const db_table *t);
const db_cell *db_pass_cell_into(db_pass *p, size_t row, int col, db_cell *out);
#define db_pass_cell(p, row, col) db_pass_cell_into((p), (row), (col), &(db_cell){.kind = DBC_NA})
/* Python's str() of the cell (row, col): what db_cell_text gives of
 * db_pass_cell (buf: at least 48 bytes). A column that some cell shows to
 * be text is read straight from the cells' bytes, without typing it. *stable:
 * the text lives as long as the pass (else only until the next call). */
opdb_span db_pass_str(db_pass *p, size_t row, int col, char *buf, size_t cap, bool *stable);
void db_pass_end(db_pass *p);

/* Gives back what only typing a column needs: where the cells start (found
 * again from the records when a column is typed later) and, for a mapped
 * file, its resident pages (read again from the file where touched, so the
 * typed columns' texts stay valid). A file read into memory is kept. Safe
 * at any time, also while other threads read the table. From then on a
 * column of a mapped file typed by the table copies its texts (a reader
 * after the trim keeps no page of the file resident) and gives back the
 * cells' starts and the pages its typing read. */
void db_table_trim(db_table *t);
/* A view of the cell that lives until the end of the enclosing block. */
#define db_table_cell(t, row, col) db_table_cell_into((t), (row), (col), &(db_cell){.kind = DBC_NA})

/* Python str() of a cell: "nan" for NA, repr for floats, True/False. Writes
 * into buf (at least 40 bytes) for non-text cells; returns a view. */
opdb_span db_cell_text(const db_cell *c, char *buf, size_t cap);
/* Python float() of a cell; false when it fails (text that is not a float). */
bool db_cell_num(const db_cell *c, double *out);
/* Python int() of a cell; false when it fails (NA, inf, non-integer text). */
bool db_cell_pyint(const db_cell *c, int64_t *out);

#endif
