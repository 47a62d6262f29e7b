/* See dict_row.h. Rows are sized to the key space's capacity, fixed per file. */
#include "update/dict_row.h"

#include <stdlib.h>
#include <string.h>

void ks_init(keyspace *ks, int cap) {
    ks->n = 0;
    ks->cap = cap;
    ks->sig_n = -1;
    ks->name = opdb_xcalloc((size_t)cap, sizeof *ks->name);
    opdb_arena_init(&ks->arena, 1 << 20);
}

void ks_free(keyspace *ks) {
    free(ks->name);
    ks->name = NULL;
    ks->n = 0;
    opdb_arena_free(&ks->arena);
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
    ks->name[ks->n] = opdb_arena_strndup(&ks->arena, name, strlen(name));
    return ks->n++;
}

drow drow_new(keyspace *ks) {
    drow r = {opdb_arena_alloc(&ks->arena, (size_t)ks->cap * sizeof(char *))};
    memset(r.v, 0, (size_t)ks->cap * sizeof(char *));
    return r;
}

const char *drow_get(const drow *r, const keyspace *ks, const char *key) { return drow_at(r, ks_find(ks, key)); }

bool drow_has(const drow *r, const keyspace *ks, const char *key) {
    int i = ks_find(ks, key);
    return i >= 0 && r->v[i] != NULL;
}

void drow_set_n(drow *r, keyspace *ks, int id, const char *value, size_t n) {
    if (id < 0) return;
    r->v[id] = opdb_arena_strndup(&ks->arena, value ? value : "", value ? n : 0);
}

void drow_set(drow *r, keyspace *ks, const char *key, const char *value) {
    drow_set_n(r, ks, ks_add(ks, key), value, value ? strlen(value) : 0);
}
