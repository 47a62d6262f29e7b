/* An append-only open-addressing table of key pointers that one thread
 * fills while others look keys up without locks: a key is published with a
 * release store into an empty slot, readers load slots with acquire, so a
 * reader that sees the pointer sees the whole key.  Growing builds a bigger
 * table and publishes it; the old one stays valid (readers may still hold
 * it) on a `retired` chain freed at the end.  Keys are the callers' own
 * types; the callers compare them. */
#ifndef OPDB_CORE_PUB_SLOTS_H
#define OPDB_CORE_PUB_SLOTS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "opdb/core.h"

typedef struct opdb_pub_slots {
    size_t nslots;                    /* a power of two */
    struct opdb_pub_slots *retired;   /* older tables, freed by opdb_pub_slots_free */
    _Atomic(const void *) slot[];
} opdb_pub_slots;

static inline opdb_pub_slots *opdb_pub_slots_new(size_t nslots) {
    /* zero-filled memory: every slot starts NULL (all bits zero, as on every
     * platform opdb builds for), without writing the pages of a big table
     * here: they are faulted in when keys land in them, or ahead of that by
     * the prefault thread (opdb_big_alloc) */
    opdb_pub_slots *t = opdb_big_alloc(sizeof *t + nslots * sizeof t->slot[0]);
    t->nslots = nslots;
    t->retired = NULL;
    return t;
}

/* Frees t and every table it retired. */
static inline void opdb_pub_slots_free(opdb_pub_slots *t) {
    while (t) {
        opdb_pub_slots *next = t->retired;
        opdb_big_free(t, sizeof *t + t->nslots * sizeof t->slot[0]);
        t = next;
    }
}

/* Filling thread: publishes key k (hash h) in the first empty slot. */
static inline void opdb_pub_slots_place(opdb_pub_slots *t, const void *k, uint64_t h) {
    size_t mask = t->nslots - 1;
    size_t j = h & mask;
    while (atomic_load_explicit(&t->slot[j], memory_order_relaxed)) j = (j + 1) & mask;
    atomic_store_explicit(&t->slot[j], k, memory_order_release);
}

/* Any thread: the key in slot j (NULL ends a probe). */
static inline const void *opdb_pub_slots_at(const opdb_pub_slots *t, size_t j) {
    return atomic_load_explicit(&((opdb_pub_slots *)t)->slot[j], memory_order_acquire);
}

#endif
