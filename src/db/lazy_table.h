/* A database table in its lazy form, as `opdb update` reads it (docs/UPDATE.md
 * §2.2): its header as a key space and its rows as dict rows (dict_row.h),
 * read by the fast tokenizer as lazy rows (only the kept cells decoded, the
 * rest left in the mapped file, with the record's byte range) or, for
 * anomalies and the simple path, by the exact tokenizer as full dict
 * rows. */
#ifndef OPDB_DB_LAZY_TABLE_H
#define OPDB_DB_LAZY_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "db/dict_row.h"
#include "db/open_check.h"
#include "db/sig_cells.h"
#include "opdb/csv.h"
#include "opdb/fs.h"

/* The cells a lazy row keeps: what signatures, duplicate checks, pruning
 * and the gap report read.  Every other cell is read only when the row is
 * read in full (db_lazy_row_full).  The names are k_lazy_names
 * (lazy_table.c): the signature cells, Average Duration(us) and Profiling
 * Average Duration(us). */
enum { DB_LAZY_NCELLS = 8 };

/* The readers keep this many cells of a record: a header that fills them
 * may have been cut, and writing it back would lose columns. */
enum { DB_MAX_COLUMNS = 4096 };

/* What a caller keeps per lazy row instead of reading it in full (update:
 * the measurements applied to it).  The caller defines it and allocates
 * db_lazy_table.patch once the table is loaded (db_lazy_table.lazy_rows);
 * db_lazy_free frees it. */
struct db_row_patch;

typedef struct db_lazy_table {
    db_keyspace ks;
    opdb_strvec fields;       /* header as read */
    char *buf;           /* the file's bytes after the header, as read (rows
                            point into it): view.data; NULL after the exact fallback */
    opdb_file_view view;
    int nh, *colkey;     /* header columns and their key ids */
    int header_keys;     /* key ids below this are the header's */
    int lazy_col[DB_LAZY_NCELLS], nlazy_cols; /* header columns of the kept cells */
    signed char *slot_of_key;        /* header key id -> kept cell, or -1 */
    int *col_of_key;     /* header key id -> its column */
    db_sig_cols lazy_sig; /* the signature cells among a lazy row's kept cells */
    opdb_field *scratch; /* DB_MAX_COLUMNS cells */
    bool lazy_rows;      /* the rows read are lazy (the fast path kept them so) */
    struct db_row_patch *patch; /* the caller's, per row read lazily */
    size_t npatch;
    /* called for each lazy row as it is read (its cells still in cache) */
    void (*on_lazy_row)(void *ctx, struct db_lazy_table *f, size_t r);
    void *on_lazy_row_ctx;
    size_t seen_lazy;    /* rows passed to on_lazy_row */
    bool reread;         /* the exact tokenizer read the file again */
    unsigned long long unterminated_line; /* a quote still open at EOF: its record's line (0: none) */
    db_drow *rows;
    size_t n, cap;
} db_lazy_table;

void db_lazy_push_row(db_lazy_table *f, db_drow r);
void db_lazy_free(db_lazy_table *f);
/* row.get(key, "") of a row, lazy or not (of a lazy row: kept cells only). */
opdb_span db_lazy_cell(const db_lazy_table *f, const db_drow *r, int id);
/* The signature cells of a row, lazy or not; sig: the key ids of the
 * signature columns (db_sig_cols over the key space). */
opdb_sig_cells db_lazy_sig_cells(const db_lazy_table *f, const db_drow *r, const db_sig_cols *sig);
/* The row with every cell: a lazy row is tokenized (the caller sets its
 * patches again). */
db_drow *db_lazy_row_full(db_lazy_table *f, size_t i);
/* The opening checks update reads its tables with (open_check.h). */
extern const db_open_opts db_lazy_update_rules;
/* Reads path into f: lazy rows by the fast tokenizer, else (eager, or an
 * anomaly) full dict rows by the exact one; refused by the checks o asks for
 * (p, when not NULL, telling which). */
int db_lazy_load(const char *path, db_lazy_table *f, bool eager, const db_open_opts *o, db_open_problem *p,
                 opdb_err *err);

#endif
