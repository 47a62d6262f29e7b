/* The dedup sets of `opdb grid`'s per-file pipeline (file.c): a set of
 * signature strings (coverage's, and the simple path's) and the main pass's
 * set of signature hashes. Both are cleared, not freed, between files, so
 * that their memory is touched once per run (page faults cost as much as
 * the work here). */
#ifndef OPDB_GRID_DEDUP_SETS_H
#define OPDB_GRID_DEDUP_SETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "opdb/core.h"

/* ---- a set of signature strings */
typedef struct grid_sigset {
    opdb_hindex ix;
    opdb_strbuf bytes; /* the keys back to back */
    size_t *off;
    uint32_t *len;
    size_t n, cap;
} grid_sigset;

void grid_sigset_init(grid_sigset *s);
void grid_sigset_clear(grid_sigset *s);
void grid_sigset_free(grid_sigset *s);
bool grid_sigset_has(const grid_sigset *s, const opdb_strbuf *k);
/* Adds k; false when it was there already. */
bool grid_sigset_add(grid_sigset *s, const opdb_strbuf *k);

/* ---- the dedup set of the main pass: hashes of signatures.  An entry
 * names an existing row (ref < nrows) or a kept candidate (ref - nrows)
 * whose signature is recomputed to compare on a hash match, which only a
 * duplicate (or a collision) gives: no key bytes are stored.  A slot is 8
 * bytes: the hash's top 32 bits (its place in the table is their top bits,
 * so the table can grow without the full hash) and ref + 1 (0: empty).
 * Each file sizes and clears just the slots it needs, at most half full:
 * the probes are cache misses, and a small table takes fewer of them. */
typedef struct grid_hslot {
    uint32_t tag, ref1;
} grid_hslot;

typedef struct grid_hset {
    grid_hslot *s;
    size_t cap;    /* slots allocated */
    size_t nslots; /* slots this file uses: 2^bits */
    int bits;
    size_t n;
} grid_hset;

/* Uses 2^bits slots (<= 2^32), the entries kept. */
void grid_hset_resize(grid_hset *s, int bits);
void grid_hset_clear(grid_hset *s);
void grid_hset_free_slots(grid_hset *s);

/* The probes and insertions of the main pass's loop, inline. */
static inline size_t grid_hset_pos(const grid_hset *s, uint32_t tag) { return tag >> (32 - s->bits); }

static inline void grid_hset_place(grid_hset *s, uint32_t tag, uint32_t ref1) {
    size_t j = grid_hset_pos(s, tag);
    while (s->s[j].ref1) j = (j + 1) & (s->nslots - 1);
    s->s[j].tag = tag, s->s[j].ref1 = ref1;
}

/* Room for n more entries, at most half full. */
static inline void grid_hset_reserve(grid_hset *s, size_t n) {
    if ((s->n + n) * 2 > s->nslots) {
        int bits = s->bits + 1;
        while ((s->n + n) * 2 > (size_t)1 << bits && bits < 32) bits++;
        grid_hset_resize(s, bits);
    }
}

static inline void grid_hset_add(grid_hset *s, uint64_t h, uint32_t ref) {
    grid_hset_reserve(s, 1);
    grid_hset_place(s, (uint32_t)(h >> 32), ref + 1);
    s->n++;
}

#endif
