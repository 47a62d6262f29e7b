/* Python-dict-like rows for the write-back: a per-file key space (column
 * names) and rows holding one value per key (NULL = key absent). */
#ifndef OPDB_UPDATE_DICT_ROW_H
#define OPDB_UPDATE_DICT_ROW_H

#include <stdbool.h>
#include "opdb/core.h"

typedef struct keyspace {
    char **name;
    int n, cap;
} keyspace;

typedef struct drow {
    char **v;   /* v[key id]; NULL = absent */
} drow;

void ks_init(keyspace *ks, int cap);
void ks_free(keyspace *ks);
int ks_find(const keyspace *ks, const char *name);
int ks_add(keyspace *ks, const char *name);  /* existing id, or a new one */

drow drow_new(const keyspace *ks);
void drow_free(drow *r, const keyspace *ks);
/* row.get(key, "") with None coalesced to "". */
const char *drow_get(const drow *r, const keyspace *ks, const char *key);
bool drow_has(const drow *r, const keyspace *ks, const char *key);
void drow_set(drow *r, keyspace *ks, const char *key, const char *value);

#endif
