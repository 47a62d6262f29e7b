/* See row_index.h. */
#include "db/row_index.h"

#include <stdlib.h>
#include <string.h>

db_row_entry *db_row_index_find(db_row_index *ri, const char *sig, size_t len, uint64_t h) {
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&ri->ix, h); opdb_hprobe_next(&p, &i);) {
        const db_row_entry *e = &ri->e[i];
        if (e->hash == h && e->len == len && (len == 0 || memcmp(e->sig, sig, len) == 0)) return &ri->e[i];
    }
    return NULL;
}

/* Files row under its signature; sig_in_arena: sig is a copy the index
 * keeps (else it is copied when new). */
static void insert(db_row_index *ri, const char *sig, size_t len, uint64_t h, size_t row, bool sig_in_arena) {
    db_row_entry *e = db_row_index_find(ri, sig, len, h);
    if (!e) {
        OPDB_ALLOC_GROW(ri->e, ri->n + 1, ri->cap);
        e = &ri->e[ri->n];
        memset(e, 0, sizeof *e);
        e->sig = sig_in_arena ? sig : opdb_arena_strndup(&ri->arena, sig, len);
        e->len = len;
        e->hash = h;
        e->row0 = row;
        e->n = 1;
        opdb_hindex_add(&ri->ix, h, (uint32_t)ri->n++);
        return;
    }
    OPDB_ALLOC_GROW(e->more, e->n, e->cap);
    e->more[e->n++ - 1] = row;
}

/* Files the oldest queued row. */
static void file_oldest(db_row_index *ri) {
    const db_row_pending *q = &ri->pend[ri->phead];
    insert(ri, q->sig, q->len, q->hash, q->row, true);
    ri->phead = (ri->phead + 1) % DB_ROW_INDEX_AHEAD;
    ri->npend--;
}

/* Files the queued rows, oldest first (first-seen order is kept). */
void db_row_index_flush(db_row_index *ri) {
    while (ri->npend > 0) file_oldest(ri);
}

void db_row_index_add(db_row_index *ri, const opdb_strbuf *sig, size_t row) {
    if (!ri->arena.chunk_size) opdb_arena_init(&ri->arena, 1 << 20);
    db_row_index_flush(ri);
    insert(ri, sig->p, sig->n, db_row_index_hash(sig->p, sig->n), row, false);
}

/* db_row_index_add a few rows later: the row's slot is asked for now
 * (db_row_index_flush files what is left). */
void db_row_index_add_soon(db_row_index *ri, const opdb_strbuf *sig, size_t row) {
    if (!ri->arena.chunk_size) opdb_arena_init(&ri->arena, 1 << 20);
    uint64_t h = db_row_index_hash(sig->p, sig->n);
    if (ri->ix.nslots) __builtin_prefetch(&ri->ix.slot[h & (ri->ix.nslots - 1)]);
    if (ri->npend == DB_ROW_INDEX_AHEAD) file_oldest(ri);
    db_row_pending *q = &ri->pend[(ri->phead + ri->npend++) % DB_ROW_INDEX_AHEAD];
    *q = (db_row_pending){h, opdb_arena_strndup(&ri->arena, sig->p, sig->n), sig->n, row};
}

/* Room for n signatures (a file's rows, estimated from its first): no
 * growing copies of the entries and the index as the file is read. */
void db_row_index_reserve(db_row_index *ri, size_t n) {
    if (n <= ri->cap) return;
    ri->e = opdb_xrealloc(ri->e, n * sizeof *ri->e);
    ri->cap = n;
    opdb_hindex_reserve(&ri->ix, n);
}

void db_row_index_free(db_row_index *ri) {
    for (size_t i = 0; i < ri->n; i++) free(ri->e[i].more);
    free(ri->e);
    opdb_hindex_free(&ri->ix);
    if (ri->arena.chunk_size) opdb_arena_free(&ri->arena);
}
