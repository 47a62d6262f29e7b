/* A row index of a database table: row signature -> the rows holding it, in
 * first-seen order (the first row is the match target; more only for
 * duplicates).  Rows may be filed a few rows late (db_row_index_add_soon) so
 * the slot each probes is asked for from memory first. */
#ifndef OPDB_DB_ROW_INDEX_H
#define OPDB_DB_ROW_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opdb/core.h"

typedef struct db_row_entry {
    const char *sig;     /* in the index's arena */
    size_t len;
    uint64_t hash;
    size_t row0;         /* the first row; more only for duplicates */
    size_t *more;
    size_t n, cap;       /* rows in all; room in more */
} db_row_entry;

/* Rows indexed as a file is read wait this many rows in a queue, so that
 * the index slot each will probe is asked for from memory first. */
#define DB_ROW_INDEX_AHEAD 8

typedef struct db_row_pending {
    uint64_t hash;
    const char *sig;  /* in the index's arena */
    size_t len, row;
} db_row_pending;

typedef struct db_row_index {
    db_row_entry *e;   /* first-seen order */
    size_t n, cap;
    opdb_hindex ix;
    opdb_arena arena;
    db_row_pending pend[DB_ROW_INDEX_AHEAD]; /* db_row_index_add_soon's queue, oldest at phead */
    int phead, npend;
} db_row_index;

/* The k-th row (0: the first) filed under e. */
static inline size_t db_row_entry_row(const db_row_entry *e, size_t k) { return k == 0 ? e->row0 : e->more[k - 1]; }
static inline uint64_t db_row_index_hash(const char *sig, size_t n) { return opdb_hash_bytes(sig, n, 5); }

/* The entry of sig (hash h = db_row_index_hash(sig)), or NULL. */
db_row_entry *db_row_index_find(db_row_index *ri, const char *sig, size_t len, uint64_t h);
/* Files row under sig now (after the queued rows). */
void db_row_index_add(db_row_index *ri, const opdb_strbuf *sig, size_t row);
/* db_row_index_add a few rows later (db_row_index_flush files what is left). */
void db_row_index_add_soon(db_row_index *ri, const opdb_strbuf *sig, size_t row);
void db_row_index_flush(db_row_index *ri);
/* Room for n signatures. */
void db_row_index_reserve(db_row_index *ri, size_t n);
void db_row_index_free(db_row_index *ri);

#endif
