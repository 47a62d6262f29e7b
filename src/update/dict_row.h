/* Python-dict-like rows for the write-back: a per-file key space (column
 * names) and rows holding one value per key (NULL = key absent).  All memory
 * of a file's rows comes from the key space's arena and is freed with it. */
#ifndef OPDB_UPDATE_DICT_ROW_H
#define OPDB_UPDATE_DICT_ROW_H

#include <stdbool.h>
#include "opdb/core.h"

typedef struct keyspace {
    char **name;
    int n, cap;
    opdb_arena arena;
    int sig_id[6];      /* cache of the signature columns' ids ... */
    int sig_n;          /* ... valid while n == sig_n */
} keyspace;

typedef struct drow {
    char **v;   /* v[key id]; NULL = absent */
} drow;

void ks_init(keyspace *ks, int cap);
void ks_free(keyspace *ks);
int ks_find(const keyspace *ks, const char *name);
int ks_add(keyspace *ks, const char *name);  /* existing id, or a new one (-1 when full) */

drow drow_new(keyspace *ks);
/* row.get(key, "") with None coalesced to "". */
const char *drow_get(const drow *r, const keyspace *ks, const char *key);
static inline const char *drow_at(const drow *r, int id) { return id >= 0 && r->v[id] ? r->v[id] : ""; }
bool drow_has(const drow *r, const keyspace *ks, const char *key);
void drow_set(drow *r, keyspace *ks, const char *key, const char *value);
void drow_set_n(drow *r, keyspace *ks, int id, const char *value, size_t n);

#endif
