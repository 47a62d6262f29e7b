/* The exact-hit map: the outcome of a row scan (the row it picked, its
 * candidate and tie count, or why nothing matched), keyed by everything the
 * scan reads from the query: the checker, the scan mode, the kernel list and
 * the checker's own key (shapes, dtypes and formats as given). Everything
 * else a scan reads is fixed for the handle's lifetime (configuration,
 * tables, mapping), so a stored outcome is the one the scan would compute:
 * a repeated key costs one probe, and the matcher runs only on a map miss.
 *
 * A probe starts at its key's hash, or for a query's first scan at the hash
 * of the query line without its id: that slot is fetched while the line is
 * dispatched, and equal lines meet at it. Either way the key is compared in
 * full, so the answer is exact; a key reached from two starts is kept twice.
 *
 * Readers take no lock: slots hold published pointers to entries that never
 * change, tagged with 16 bits of their probe hash (q_tslot: an entry of
 * another tag is never read); a writer claims an empty slot with a
 * compare-and-swap. The map
 * stops taking entries when it holds its maximum (no eviction), so a probe
 * always ends at an empty slot or a match. A map opened with a doorkeeper
 * takes a key, once it is half full, only on its second sight, so that its
 * other half goes to keys that repeat rather than to the many met once. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "query/query_internal.h"

/* An entry is one unaligned block:
 *   4  the hash's high half (a probe reads no key whose hash differs)
 *   2  the key's length, then the key
 *   1  flags: found, and how lat, conf and dist are kept (2 bits each, q_dbl_code)
 *   6  ids of the table, its kernel name and the rule (the map's q_ptrs)
 *      varints: kernel index, row, ties
 *      the doubles kept, 8 bytes each
 *      the reason, NUL-terminated ("" when none) */
enum { HE_HEAD = 6, HE_FOUND = 1 };

/* What every probe reads comes first, what puts write a cache line apart
 * (else each put by one thread would evict the other's copy of the slots'
 * address), and the answers' count last, striped. */
struct q_hitmap {
    _Atomic q_tslot *slot;       /* tagged entry addresses (q_tslot) */
    size_t mask, max;
    size_t max_bytes;            /* the entries' blocks are bounded as their count is */
    q_door door;                 /* keys seen once, past half full (no door: every key is taken) */
    uint64_t hmask;              /* tests: hashes cut to these bits, so that keys collide (else all bits) */
    q_ptrs ptrs;                 /* (its ids change rarely) */
    char apart[Q_LINE];
    _Atomic size_t n;
    _Atomic size_t bytes;
    pthread_mutex_t mu;          /* taking a block and ids */
    q_bump_region r;
    opdb_arena a;
    q_stripes hits;              /* answered from the map (tests read it) */
};

q_hitmap *q_hitmap_new_door(size_t entries, size_t door_slots) {
    if (!entries) return NULL;
    q_hitmap *m = opdb_xcalloc(1, sizeof *m);
    size_t cap = 16;
    while (cap < entries * 2) cap <<= 1; /* at most half full: probes stay short */
    m->slot = opdb_xcalloc(cap, sizeof *m->slot);
    m->mask = cap - 1;
    m->max = entries;
    m->hmask = UINT64_MAX;
    m->max_bytes = entries > SIZE_MAX / Q_HITMAP_ENTRY_BYTES ? SIZE_MAX : entries * Q_HITMAP_ENTRY_BYTES;
    if (door_slots) q_door_init(&m->door, door_slots);
    opdb_mutex_init_brief(&m->mu);
    opdb_arena_init(&m->a, Q_BUMP_CHUNK);
    return m;
}

q_hitmap *q_hitmap_new(size_t entries) { return q_hitmap_new_door(entries, entries * Q_DOOR_PER_ENTRY); }

void q_hitmap_free(q_hitmap *m) {
    if (!m) return;
    free(m->slot);
    q_door_free(&m->door);
    q_ptrs_free(&m->ptrs);
    pthread_mutex_destroy(&m->mu);
    opdb_arena_free(&m->a);
    free(m);
}

void q_hitmap_prefetch(const q_hitmap *m, uint64_t h) {
    if (m) __builtin_prefetch(&m->slot[h & m->mask]);
}

void q_hitmap_prefetch_entry(const q_hitmap *m, uint64_t h) {
    if (!m) return;
    h &= m->hmask;
    q_tslot v = atomic_load_explicit(&m->slot[h & m->mask], memory_order_relaxed);
    if (!v || !q_tslot_tag_is(v, h)) return;
    const uint8_t *e = q_tslot_entry(v);
    /* its head and a usual key and tail (reading its length would wait for it); prefetches past its end are harmless */
    for (size_t off = 0; off < 128; off += 64) __builtin_prefetch(e + off);
}

void q_hitmap_touch(q_hitmap *m) {
    if (m) opdb_touch_pages((void *)m->slot, (m->mask + 1) * sizeof *m->slot);
}

size_t q_hitmap_hits(const q_hitmap *m) { return m ? q_stripes_sum(&m->hits) : 0; }

void q_hitmap_test_hash_mask(q_hitmap *m, uint64_t mask) { m->hmask = mask; }

static inline uint32_t he_hash(uint64_t h) { return (uint32_t)(h >> 32); }

/* the entry e holds key (hash h) */
static inline bool he_is(const uint8_t *e, const uint8_t *key, size_t n, uint64_t h) {
    uint32_t eh;
    uint16_t kl;
    memcpy(&eh, e, 4);
    memcpy(&kl, e + 4, 2);
    return eh == he_hash(h) && kl == n && memcmp(e + HE_HEAD, key, n) == 0;
}

static inline const uint8_t *get_var(const uint8_t *p, uint64_t *v) {
    uint64_t x = 0;
    for (unsigned sh = 0;; sh += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) break;
    }
    *v = x;
    return p;
}

static inline uint8_t *put_var(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static size_t var_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

bool q_hitmap_get(const q_hitmap *m, const uint8_t *key, size_t n, uint64_t h, q_ctx *c, q_scan *s) {
    h &= m->hmask;
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        q_tslot v = atomic_load_explicit(&m->slot[i], memory_order_acquire);
        if (!v) return false;
        if (!q_tslot_tag_is(v, h)) continue;
        const uint8_t *e = q_tslot_entry(v);
        if (!he_is(e, key, n, h)) continue;
        const uint8_t *p = e + HE_HEAD + n;
        unsigned fl = *p++;
        uint16_t id[3];
        memcpy(id, p, sizeof id);
        p += sizeof id;
        uint64_t kidx, row, ties;
        p = get_var(p, &kidx);
        p = get_var(p, &row);
        p = get_var(p, &ties);
        /* every member set (a memset of the whole costs more than these stores) */
        _Static_assert(sizeof(void *) != 8 || sizeof(q_scan) == 112, "set every member of q_scan here");
        s->found = fl & HE_FOUND;
        s->kidx = (size_t)kidx;
        s->row = (size_t)row;
        s->tab = (q_ktable *)q_ptrs_get(&m->ptrs, id[0]);
        s->kernel = q_ptrs_get(&m->ptrs, id[1]);
        s->ties = (size_t)ties;
        p = q_dbl_get(p, (fl >> 1) & 3, &s->best.lat);
        p = q_dbl_get(p, (fl >> 3) & 3, &s->best.conf);
        p = q_dbl_get(p, (fl >> 5) & 3, &s->best.dist);
        s->best.rule = q_ptrs_get(&m->ptrs, id[2]);
        s->best.input_rules = NULL;
        s->best.n_rules = 0;
        s->failed = false;
        /* a result may outlive the handle: its reason lives in the query's arena */
        const char *reason = (const char *)p;
        s->reason = reason[0] ? q_strdup(c, reason) : "";
        q_stripes_add(&((q_hitmap *)m)->hits, c->a);
        return true;
    }
}

void q_hitmap_put(q_hitmap *m, const uint8_t *key, size_t n, uint64_t h, const q_scan *s) {
    h &= m->hmask;
    size_t held = atomic_load_explicit(&m->n, memory_order_relaxed);
    if (held >= m->max || atomic_load_explicit(&m->bytes, memory_order_relaxed) >= m->max_bytes) return;
    /* past half full, a key met for the first time is only noted */
    if (m->door.fp && held >= m->max / 2 && !q_door_pass(&m->door, h)) return;
    /* an outcome the compact entry cannot hold is not kept (the scan runs again) */
    if (n > UINT16_MAX || s->kidx > UINT32_MAX || s->row > UINT32_MAX || s->ties > UINT32_MAX) return;
    unsigned cl = q_dbl_code(s->best.lat), cc = q_dbl_code(s->best.conf), cd = q_dbl_code(s->best.dist);
    size_t rl = s->reason ? strlen(s->reason) : 0;
    size_t bytes = HE_HEAD + n + 1 + 6 + var_len(s->kidx) + var_len(s->row) + var_len(s->ties) +
                   8 * ((cl == 2) + (cc == 2) + (cd == 2)) + rl + 1;
    uint16_t id[3];
    opdb_call_lock(&m->mu);
    bool ok = q_ptrs_id(&m->ptrs, s->tab, &id[0]) && q_ptrs_id(&m->ptrs, s->found ? s->kernel : NULL, &id[1]) &&
              q_ptrs_id(&m->ptrs, s->best.rule, &id[2]);
    uint8_t *e = ok ? q_bump(&m->r, &m->a, bytes) : NULL;
    opdb_call_unlock(&m->mu);
    if (!ok) return; /* ids spent: not kept */
    atomic_fetch_add_explicit(&m->bytes, bytes, memory_order_relaxed);
    uint32_t eh = he_hash(h);
    uint16_t kl = (uint16_t)n;
    memcpy(e, &eh, 4);
    memcpy(e + 4, &kl, 2);
    memcpy(e + HE_HEAD, key, n);
    uint8_t *p = e + HE_HEAD + n;
    *p++ = (uint8_t)((s->found ? HE_FOUND : 0) | cl << 1 | cc << 3 | cd << 5);
    memcpy(p, id, sizeof id);
    p += sizeof id;
    p = put_var(p, s->kidx);
    p = put_var(p, s->row);
    p = put_var(p, s->ties);
    p = q_dbl_put(p, cl, s->best.lat);
    p = q_dbl_put(p, cc, s->best.conf);
    p = q_dbl_put(p, cd, s->best.dist);
    if (rl) memcpy(p, s->reason, rl);
    p[rl] = 0;
    q_tslot mine = q_tslot_make(e, h);
    if (!mine) return; /* an address the tag would hide: not kept */
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        q_tslot cur = atomic_load_explicit(&m->slot[i], memory_order_acquire);
        if (!cur) {
            if (atomic_fetch_add_explicit(&m->n, 1, memory_order_relaxed) >= m->max) return; /* full: not taken */
            q_tslot expect = 0;
            if (atomic_compare_exchange_strong_explicit(&m->slot[i], &expect, mine, memory_order_release,
                                                        memory_order_acquire))
                return;
            atomic_fetch_sub_explicit(&m->n, 1, memory_order_relaxed);
            cur = expect; /* another writer took the slot first: compare with its entry */
        }
        if (q_tslot_tag_is(cur, h) && he_is(q_tslot_entry(cur), key, n, h)) return; /* already there */
    }
    /* a block not taken stays in the arena until close (counted in the bound) */
}

/* ---- keys of the row matchers' arguments */

/* a profiler spelling, or its absence (NULL) */
static void kput_str(q_kbuf *k, const char *s) {
    size_t l = s ? strlen(s) : 0;
    q_kput_var(k, s ? l + 1 : 0);
    if (s) q_kput(k, s, l);
}

static void kput_shape(q_kbuf *k, q_shape s) {
    q_kput_var(k, s.rank);
    for (uint32_t i = 0; i < s.rank; i++) q_kput_svar(k, s.d[i]);
}

size_t q_key_tins(const q_tins *X, int64_t N, bool has_n, bool normalise, uint8_t *buf, size_t cap) {
    q_kbuf k = {buf, 0, cap, false};
    uint8_t flags = (uint8_t)((has_n ? 1 : 0) | (normalise ? 2 : 0));
    q_kput(&k, &flags, 1);
    if (has_n) q_kput_svar(&k, N);
    q_kput_var(&k, X->n);
    for (size_t i = 0; i < X->n; i++) {
        const q_tin *x = &X->v[i];
        kput_shape(&k, x->s);
        q_kput_svar(&k, x->dtype);
        kput_str(&k, x->prof);
    }
    return k.over ? 0 : k.n;
}

size_t q_key_out(q_shape y, const char *prof, uint8_t *buf, size_t cap) {
    q_kbuf k = {buf, 0, cap, false};
    kput_shape(&k, y);
    kput_str(&k, prof);
    return k.over ? 0 : k.n;
}
