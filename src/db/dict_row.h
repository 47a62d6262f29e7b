/* Python-dict-like rows of a database table (what update's write-back
 * reads and changes): a per-file key space (column names) and rows holding
 * one value per key (p == NULL: key absent).  Values point into the file's
 * read buffer or the key space's arena. */
#ifndef OPDB_DB_DICT_ROW_H
#define OPDB_DB_DICT_ROW_H

#include <stdbool.h>
#include "opdb/core.h"

typedef struct db_keyspace {
    char **name;
    bool *is_col;   /* written on output: only these changes make a row dirty */
    int n, cap;
    opdb_arena arena;
} db_keyspace;

typedef struct db_drow {
    opdb_span *v;   /* v[key id] for id < nv; later keys are absent.  For a
                       lazy row: only the cells its table keeps (lazy_table.h) */
    int nv;
    bool dirty;     /* a value changed since the change-detection snapshot */
    bool lazy;      /* not tokenized past the kept cells yet */
    bool raw_ok;    /* the writer would reproduce the raw bytes exactly */
    uint8_t nput;   /* measurements applied since the snapshot (saturates at 255) */
    uint32_t raw_len; /* the record's bytes as read (with its line end and */
    size_t raw_off;   /* any blank lines after it); 0: none kept */
} db_drow;

void db_ks_init(db_keyspace *ks, int cap);
void db_ks_free(db_keyspace *ks);
int db_ks_find(const db_keyspace *ks, const char *name);
int db_ks_add(db_keyspace *ks, const char *name);  /* existing id, or a new one (-1 when full) */

/* A row with room for the keys known now (it grows when a later key is set). */
db_drow db_drow_new(db_keyspace *ks);
/* row.get(key, "") with None coalesced to "". */
static inline opdb_span db_drow_at(const db_drow *r, int id) {
    return id >= 0 && id < r->nv && r->v[id].p ? r->v[id] : opdb_span_make("", 0);
}
static inline bool db_drow_has(const db_drow *r, int id) { return id >= 0 && id < r->nv && r->v[id].p != NULL; }
/* Stores a copy; marks the row dirty when a written column's value changes. */
void db_drow_set(db_drow *r, db_keyspace *ks, int id, opdb_span value);
/* Stores the span itself (no copy, not counted as a change). */
void db_drow_link(db_drow *r, db_keyspace *ks, int id, opdb_span value);
/* Points at bytes that outlive the row (the file buffer); id < r->nv. */
static inline void db_drow_ref(db_drow *r, int id, const char *p, size_t n) {
    if (id >= 0 && id < r->nv) r->v[id] = opdb_span_make(p ? p : "", n);
}

#endif
