/* See dict_row.h. Rows are sized to the key space's capacity, fixed per file. */
#include "db/dict_row.h"

#include <stdlib.h>
#include <string.h>

void db_ks_init(db_keyspace *ks, int cap) {
    ks->n = 0;
    ks->cap = cap;
    ks->name = opdb_xcalloc((size_t)cap, sizeof *ks->name);
    ks->is_col = opdb_xcalloc((size_t)cap, sizeof *ks->is_col);
    opdb_arena_init(&ks->arena, 1 << 20);
}

void db_ks_free(db_keyspace *ks) {
    free(ks->name);
    free(ks->is_col);
    ks->name = NULL;
    ks->is_col = NULL;
    ks->n = 0;
    opdb_arena_free(&ks->arena);
}

int db_ks_find(const db_keyspace *ks, const char *name) {
    for (int i = 0; i < ks->n; i++)
        if (strcmp(ks->name[i], name) == 0) return i;
    return -1;
}

int db_ks_add(db_keyspace *ks, const char *name) {
    int i = db_ks_find(ks, name);
    if (i >= 0) return i;
    if (ks->n == ks->cap) return -1;
    ks->name[ks->n] = opdb_arena_strndup(&ks->arena, name, strlen(name));
    return ks->n++;
}

db_drow db_drow_new(db_keyspace *ks) {
    db_drow r = {opdb_arena_alloc(&ks->arena, (size_t)(ks->n ? ks->n : 1) * sizeof(opdb_span)),
                 ks->n, false, false, false, 0, 0, 0};
    memset(r.v, 0, (size_t)(ks->n ? ks->n : 1) * sizeof(opdb_span));
    return r;
}

/* The key came after the row: widen it to every key known now. */
static void widen(db_drow *r, db_keyspace *ks) {
    opdb_span *v = opdb_arena_alloc(&ks->arena, (size_t)ks->n * sizeof *v);
    memcpy(v, r->v, (size_t)r->nv * sizeof *v);
    memset(v + r->nv, 0, (size_t)(ks->n - r->nv) * sizeof *v);
    r->v = v;
    r->nv = ks->n;
}

void db_drow_link(db_drow *r, db_keyspace *ks, int id, opdb_span value) {
    if (id < 0) return;
    if (id >= r->nv) widen(r, ks);
    r->v[id] = value;
}

void db_drow_set(db_drow *r, db_keyspace *ks, int id, opdb_span value) {
    if (id < 0) return;
    if (id >= r->nv) widen(r, ks);
    if (ks->is_col[id] && !opdb_span_eq(db_drow_at(r, id), value)) r->dirty = true;
    r->v[id] = opdb_span_make(opdb_arena_strndup(&ks->arena, value.p, value.n), value.n);
}
