/* See dict_row.h. Rows are sized to the key space's capacity, fixed per file. */
#include "update/dict_row.h"

#include <stdlib.h>
#include <string.h>

void ks_init(keyspace *ks, int cap) {
    ks->n = 0;
    ks->cap = cap;
    ks->name = opdb_xcalloc((size_t)cap, sizeof *ks->name);
}

void ks_free(keyspace *ks) {
    for (int i = 0; i < ks->n; i++) free(ks->name[i]);
    free(ks->name);
    ks->name = NULL;
    ks->n = 0;
}

int ks_find(const keyspace *ks, const char *name) {
    for (int i = 0; i < ks->n; i++)
        if (strcmp(ks->name[i], name) == 0) return i;
    return -1;
}

int ks_add(keyspace *ks, const char *name) {
    int i = ks_find(ks, name);
    if (i >= 0) return i;
    if (ks->n == ks->cap) return -1;
    ks->name[ks->n] = opdb_xstrdup(name);
    return ks->n++;
}

drow drow_new(const keyspace *ks) {
    drow r = {opdb_xcalloc((size_t)ks->cap, sizeof(char *))};
    return r;
}

void drow_free(drow *r, const keyspace *ks) {
    if (!r->v) return;
    for (int i = 0; i < ks->cap; i++) free(r->v[i]);
    free(r->v);
    r->v = NULL;
}

const char *drow_get(const drow *r, const keyspace *ks, const char *key) {
    int i = ks_find(ks, key);
    return i >= 0 && r->v[i] ? r->v[i] : "";
}

bool drow_has(const drow *r, const keyspace *ks, const char *key) {
    int i = ks_find(ks, key);
    return i >= 0 && r->v[i] != NULL;
}

void drow_set(drow *r, keyspace *ks, const char *key, const char *value) {
    int i = ks_add(ks, key);
    if (i < 0) return;
    free(r->v[i]);
    r->v[i] = opdb_xstrdup(value ? value : "");
}
