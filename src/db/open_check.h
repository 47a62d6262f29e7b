/* The opening checks of a database table, written once for every reader:
 * the text table (grid, bench, parse --merge, fia-fill, validate, diff),
 * update's lazy table and the query's typed table.  The readers tokenize
 * differently on purpose (the csv module's rules or pandas'), so each hands
 * its own header record to db_open_check_header; which checks apply is the
 * caller's rule (db_open_opts), and the refusal is always worded here, by
 * kind, so the same bad file reads the same through every reader. */
#ifndef OPDB_DB_OPEN_CHECK_H
#define OPDB_DB_OPEN_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opdb/core.h"

/* Why a file cannot be read as a table. */
typedef enum db_open_kind {
    DB_OPEN_OK,
    DB_OPEN_CANNOT_OPEN, /* missing, a folder, no permission */
    DB_OPEN_NOT_TEXT,    /* binary data, UTF-16, gzip, bytes that are not UTF-8 */
    DB_OPEN_NO_HEADER,   /* empty, or no header record */
    DB_OPEN_LFS_POINTER, /* a Git LFS pointer file, not the table it stands for */
} db_open_kind;

typedef struct db_open_problem {
    db_open_kind kind;
    unsigned line;  /* 1 where the file's start is at fault, 0 where the whole file is */
    char why[200];  /* the reason without the file name, e.g. "no header" */
} db_open_problem;

typedef struct db_open_opts {
    bool sniff;       /* refuse a start that cannot be UTF-8 CSV text (opdb_csv_sniff) */
    bool keep_bom;    /* read from byte 0, so a BOM stays in the first name (the reference's
                       * way); else a leading UTF-8 BOM is skipped */
    bool need_header; /* no header record is DB_OPEN_NO_HEADER; else it reads as an empty table */
    bool lfs;         /* refuse a Git LFS pointer */
    bool utf8;        /* refuse any byte that is not UTF-8 (pandas' rule); only for the readers
                       * that hold the whole file (db_open_check_bytes) */
    bool regular;     /* refuse what is not a regular file (a folder, a pipe) */
    const char *no_header_msg; /* the message's reason for DB_OPEN_NO_HEADER; NULL: "CSV has no header" */
} db_open_opts;

/* The length of a leading UTF-8 byte-order mark of data (0 or 3). */
size_t db_open_bom_len(const void *data, size_t n);

/* Opens path for reading (sniffed first with o->sniff): the descriptor, with
 * *body the offset the table's text starts at (past a BOM unless
 * o->keep_bom).  -1 with *p and err set (err: one line naming the file). */
int db_open_file(const char *path, const db_open_opts *o, uint64_t *body, db_open_problem *p, opdb_err *err);
/* The file's bytes (after the BOM), with o->utf8.  0, or -1 as above. */
int db_open_check_bytes(const char *name, const char *data, size_t n, const db_open_opts *o, db_open_problem *p,
                        opdb_err *err);
/* The header record as the caller's tokenizer read it: ncells cells (0: none
 * at all), the first one's text first / nfirst.  0, or -1 as above. */
int db_open_check_header(const char *name, size_t ncells, const char *first, size_t nfirst, const db_open_opts *o,
                         db_open_problem *p, opdb_err *err);

#endif
