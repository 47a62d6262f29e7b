/* What the exact-hit map and the interpolation outcome map share to keep
 * their entries small and to keep the entries worth keeping: pointers to the
 * handle's fixed texts and tables as 16-bit ids, entries as unaligned byte
 * blocks cut from one arena, doubles stored only when they are not 0 or 1,
 * and the doorkeeper that, once a map is half full, admits a key only on its
 * second sight. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "query/query_internal.h"

/* ---- pointers by id */

void q_ptrs_free(q_ptrs *t) {
    for (size_t b = 0; b < Q_PTRS_BLOCKS; b++) free((void *)t->blk[b]);
    free(t->ix);
    memset(t, 0, sizeof *t);
}

static size_t ptr_hash(const void *p) {
    uint64_t u = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15u;
    return (size_t)(u >> 32);
}

/* the index from pointer to id, twice the ids' count at least (only writers read it) */
static void ix_grow(q_ptrs *t) {
    size_t cap = t->ixcap ? t->ixcap * 2 : 64;
    uint16_t *ix = opdb_xcalloc(cap, sizeof *ix);
    for (size_t id = 1; id <= t->n; id++) {
        size_t i = ptr_hash(q_ptrs_get(t, (uint16_t)id)) & (cap - 1);
        while (ix[i]) i = (i + 1) & (cap - 1);
        ix[i] = (uint16_t)id;
    }
    free(t->ix);
    t->ix = ix;
    t->ixcap = cap;
}

bool q_ptrs_id(q_ptrs *t, const void *p, uint16_t *id) {
    if (!p) {
        *id = 0;
        return true;
    }
    if (t->ixcap) {
        for (size_t i = ptr_hash(p) & (t->ixcap - 1); t->ix[i]; i = (i + 1) & (t->ixcap - 1))
            if (q_ptrs_get(t, t->ix[i]) == p) {
                *id = t->ix[i];
                return true;
            }
    }
    if (t->n + 1 >= (size_t)Q_PTRS_BLOCKS * Q_PTRS_BLOCK) return false; /* ids spent: not stored */
    size_t nid = t->n + 1, b = nid / Q_PTRS_BLOCK;
    if (!t->blk[b]) t->blk[b] = opdb_xcalloc(Q_PTRS_BLOCK, sizeof *t->blk[b]);
    t->blk[b][nid % Q_PTRS_BLOCK] = p;
    t->n = nid;
    if (2 * t->n >= t->ixcap) ix_grow(t);
    else {
        size_t i = ptr_hash(p) & (t->ixcap - 1);
        while (t->ix[i]) i = (i + 1) & (t->ixcap - 1);
        t->ix[i] = (uint16_t)nid;
    }
    *id = (uint16_t)nid;
    return true;
}

/* ---- entry blocks */

uint8_t *q_bump(q_bump_region *r, opdb_arena *a, size_t n) {
    if (r->left < n) {
        size_t c = n > Q_BUMP_CHUNK ? n : Q_BUMP_CHUNK;
        r->cur = opdb_arena_alloc(a, c);
        r->left = c;
    }
    uint8_t *p = r->cur;
    r->cur += n;
    r->left -= n;
    return p;
}

/* ---- doubles: 2 bits say +0.0, 1.0 or stored (bit patterns compared, so -0.0 and NaNs are stored) */

static const double k_one = 1.0;

unsigned q_dbl_code(double v) {
    uint64_t u, one;
    memcpy(&u, &v, sizeof u);
    memcpy(&one, &k_one, sizeof one);
    return u == 0 ? 0 : u == one ? 1 : 2;
}

uint8_t *q_dbl_put(uint8_t *p, unsigned code, double v) {
    if (code == 2) {
        memcpy(p, &v, sizeof v);
        p += sizeof v;
    }
    return p;
}

const uint8_t *q_dbl_get(const uint8_t *p, unsigned code, double *v) {
    if (code == 2) {
        memcpy(v, p, sizeof *v);
        return p + sizeof *v;
    }
    *v = code ? 1.0 : 0.0;
    return p;
}

/* ---- the doorkeeper */

void q_door_init(q_door *d, size_t slots) {
    size_t cap = 16;
    while (cap < slots) cap <<= 1;
    d->fp = opdb_xzeroed(cap, sizeof *d->fp);
    d->mask = cap - 1;
}

void q_door_free(q_door *d) {
    free(d->fp);
    d->fp = NULL;
}

/* The slot is picked by the hash's high half and the fingerprint is its low
 * half (never 0, which marks an empty slot). A fingerprint that meets another
 * key's only admits that key early; a slot taken over forgets a key, which is
 * then admitted on its next sight after that. */
bool q_door_pass(q_door *d, uint64_t h) {
    _Atomic uint32_t *s = &d->fp[(size_t)(h >> 32) & d->mask];
    uint32_t f = (uint32_t)h | 1;
    if (atomic_load_explicit(s, memory_order_relaxed) == f) return true;
    atomic_store_explicit(s, f, memory_order_relaxed);
    return false;
}
