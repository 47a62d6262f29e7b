/* See sig_index.h. */
#include "db/row_index.h"

#include <stdlib.h>
#include <string.h>

sig_entry *si_find_h(sig_index *si, const char *sig, size_t len, uint64_t h) {
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&si->ix, h); opdb_hprobe_next(&p, &i);) {
        const sig_entry *e = &si->e[i];
        if (e->hash == h && e->len == len && memcmp(e->sig, sig, len) == 0) return &si->e[i];
    }
    return NULL;
}

/* Files row under its signature; sig_in_arena: sig is a copy the index
 * keeps (else it is copied when new). */
static void si_insert(sig_index *si, const char *sig, size_t len, uint64_t h, size_t row, bool sig_in_arena) {
    sig_entry *e = si_find_h(si, sig, len, h);
    if (!e) {
        OPDB_ALLOC_GROW(si->e, si->n + 1, si->cap);
        e = &si->e[si->n];
        memset(e, 0, sizeof *e);
        e->sig = sig_in_arena ? sig : opdb_arena_strndup(&si->arena, sig, len);
        e->len = len;
        e->hash = h;
        e->row0 = row;
        e->n = 1;
        opdb_hindex_add(&si->ix, h, (uint32_t)si->n++);
        return;
    }
    OPDB_ALLOC_GROW(e->more, e->n, e->cap);
    e->more[e->n++ - 1] = row;
}

/* Files the oldest queued row. */
static void si_file_oldest(sig_index *si) {
    const si_pending *q = &si->pend[si->phead];
    si_insert(si, q->sig, q->len, q->hash, q->row, true);
    si->phead = (si->phead + 1) % SI_AHEAD;
    si->npend--;
}

/* Files the queued rows, oldest first (first-seen order is kept). */
void si_flush(sig_index *si) {
    while (si->npend > 0) si_file_oldest(si);
}

void si_add(sig_index *si, const opdb_strbuf *sig, size_t row) {
    if (!si->arena.chunk_size) opdb_arena_init(&si->arena, 1 << 20);
    si_flush(si);
    si_insert(si, sig->p, sig->n, si_hash(sig->p, sig->n), row, false);
}

/* si_add a few rows later: the row's slot is asked for now (si_flush files
 * what is left). */
void si_add_soon(sig_index *si, const opdb_strbuf *sig, size_t row) {
    if (!si->arena.chunk_size) opdb_arena_init(&si->arena, 1 << 20);
    uint64_t h = si_hash(sig->p, sig->n);
    if (si->ix.nslots) __builtin_prefetch(&si->ix.slot[h & (si->ix.nslots - 1)]);
    if (si->npend == SI_AHEAD) si_file_oldest(si);
    si_pending *q = &si->pend[(si->phead + si->npend++) % SI_AHEAD];
    *q = (si_pending){h, opdb_arena_strndup(&si->arena, sig->p, sig->n), sig->n, row};
}

/* Room for n signatures (a file's rows, estimated from its first): no
 * growing copies of the entries and the index as the file is read. */
void si_reserve(sig_index *si, size_t n) {
    if (n <= si->cap) return;
    si->e = opdb_xrealloc(si->e, n * sizeof *si->e);
    si->cap = n;
    opdb_hindex_reserve(&si->ix, n);
}

void si_free(sig_index *si) {
    for (size_t i = 0; i < si->n; i++) free(si->e[i].more);
    free(si->e);
    opdb_hindex_free(&si->ix);
    if (si->arena.chunk_size) opdb_arena_free(&si->arena);
}
