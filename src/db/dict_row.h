/* Python-dict-like rows for the write-back: a per-file key space (column
 * names) and rows holding one value per key (p == NULL: key absent).  Values
 * point into the file's read buffer or the key space's arena. */
#ifndef OPDB_UPDATE_DICT_ROW_H
#define OPDB_UPDATE_DICT_ROW_H

#include <stdbool.h>
#include "opdb/core.h"

typedef struct keyspace {
    char **name;
    bool *is_col;   /* written on output: only these changes make a row dirty */
    int n, cap;
    opdb_arena arena;
} keyspace;

typedef struct drow {
    opdb_span *v;   /* v[key id] for id < nv; later keys are absent.  For a
                       lazy row: only the cells its file keeps (update_csv.c) */
    int nv;
    bool dirty;     /* a value changed since the change-detection snapshot */
    bool lazy;      /* not tokenized past the kept cells yet */
    bool raw_ok;    /* the writer would reproduce the raw bytes exactly */
    uint8_t nput;   /* measurements applied since the snapshot (saturates at 255) */
    uint32_t raw_len; /* the record's bytes as read (with its line end and */
    size_t raw_off;   /* any blank lines after it); 0: none kept */
} drow;

void ks_init(keyspace *ks, int cap);
void ks_free(keyspace *ks);
int ks_find(const keyspace *ks, const char *name);
int ks_add(keyspace *ks, const char *name);  /* existing id, or a new one (-1 when full) */

/* A row with room for the keys known now (it grows when a later key is set). */
drow drow_new(keyspace *ks);
/* row.get(key, "") with None coalesced to "". */
static inline opdb_span drow_at(const drow *r, int id) {
    return id >= 0 && id < r->nv && r->v[id].p ? r->v[id] : opdb_span_make("", 0);
}
static inline bool drow_has(const drow *r, int id) { return id >= 0 && id < r->nv && r->v[id].p != NULL; }
/* Stores a copy; marks the row dirty when a written column's value changes. */
void drow_set(drow *r, keyspace *ks, int id, opdb_span value);
/* Stores the span itself (no copy, not counted as a change). */
void drow_link(drow *r, keyspace *ks, int id, opdb_span value);
/* Points at bytes that outlive the row (the file buffer); id < r->nv. */
static inline void drow_ref(drow *r, int id, const char *p, size_t n) {
    if (id >= 0 && id < r->nv) r->v[id] = opdb_span_make(p ? p : "", n);
}

#endif
