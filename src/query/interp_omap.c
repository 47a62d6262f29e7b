/* The interpolation outcome map: what the wrapper's compute paths (the
 * matmul family's regime loop, generic compute) answered for a target,
 * keyed by everything they read from the query: the path, its parameters
 * (input count cut, policy kernel, primary kernel), the kernel list, the
 * inputs' shapes, dtypes and profiler spellings as given, and the outputs
 * the path reads. Everything else they read (configuration, tables, mapping,
 * interpolation policy, calibration) is fixed for the handle's lifetime, so
 * a stored outcome is the one the path would compute. A repeated target
 * costs one probe instead of the target key, the regime match, the point
 * filter and the interpolation.
 *
 * An outcome is a hit (its latency, confidence, rule, the kernel that
 * answered, and what the calibrated interval is looked up by: dimension and
 * point spread) or a miss with its reason. Explain (it names points and
 * attempts) and the plain reference (no_index) never use the map, and an
 * error result is never stored.
 *
 * Readers take no lock, as with the exact-hit map: slots hold published
 * pointers to entries that never change, a writer claims an empty slot with a
 * compare-and-swap, and a full map takes nothing more; with a doorkeeper,
 * once half full, it takes a key only on its second sight. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "query/interp_internal.h"

/* An entry is one unaligned block (as the exact-hit map's):
 *   4  the hash's high half
 *   2  the key's length, then the key
 *   1  flags: hit, and how lat, conf and spread are kept (2 bits each, q_dbl_code)
 *   4  ids of the rule and the kernel (the map's q_ptrs)
 *      varints: kernel index, dimension (zigzagged)
 *      the doubles kept, 8 bytes each
 *      the miss reason, NUL-terminated ("" when none) */
enum { OE_HEAD = 6, OE_HIT = 1 };

/* laid out as the exact-hit map: what probes read, then what puts write, then the count */
struct ip_omap {
    _Atomic q_tslot *slot;       /* tagged entry addresses (q_tslot, as the exact-hit map's) */
    size_t mask, max;
    q_door door;                 /* keys seen once, past half full (no door: every key is taken) */
    uint64_t hmask;              /* tests: hashes cut to these bits, so that keys collide (else all bits) */
    q_ptrs ptrs;
    char apart[Q_LINE];
    _Atomic size_t n;
    pthread_mutex_t mu;          /* taking a block and ids */
    q_bump_region r;
    opdb_arena a;
    q_stripes hits;              /* answered from the map (tests read it) */
};

ip_omap *ip_omap_new_door(size_t entries, size_t door_slots) {
    if (!entries) return NULL;
    ip_omap *m = opdb_xcalloc(1, sizeof *m);
    size_t cap = 16;
    while (cap < entries * 2) cap <<= 1; /* at most half full: probes stay short */
    m->slot = opdb_xcalloc(cap, sizeof *m->slot);
    m->mask = cap - 1;
    m->max = entries;
    m->hmask = UINT64_MAX;
    if (door_slots) q_door_init(&m->door, door_slots);
    opdb_mutex_init_brief(&m->mu);
    opdb_arena_init(&m->a, Q_BUMP_CHUNK);
    return m;
}

ip_omap *ip_omap_new(size_t entries) { return ip_omap_new_door(entries, entries * Q_DOOR_PER_ENTRY); }

void ip_omap_free(ip_omap *m) {
    if (!m) return;
    free(m->slot);
    q_door_free(&m->door);
    q_ptrs_free(&m->ptrs);
    pthread_mutex_destroy(&m->mu);
    opdb_arena_free(&m->a);
    free(m);
}

size_t ip_omap_hits(const ip_omap *m) { return m ? q_stripes_sum(&m->hits) : 0; }

void ip_omap_test_hash_mask(ip_omap *m, uint64_t mask) { m->hmask = mask; }

/* ------------------------------------------------------------------ keys */
/* counts, lengths and dims as varints (each self-delimiting, so distinct values stay distinct keys) */
static void okey_var(ip_okey *k, uint64_t v) {
    uint8_t b[10];
    ip_okey_add(k, b, q_varint_put(b, v));
}

bool ip_okey_init(const q_ctx *c, ip_okey *k, char tag) {
    k->n = 0;
    k->over = false;
    k->hashed = false;
    if (!c->db->ipmap || c->explain || c->db->no_index) return false;
    k->b[k->n++] = (uint8_t)tag;
    return true;
}

void ip_okey_add(ip_okey *k, const void *p, size_t n) {
    if (k->over || sizeof k->b - k->n < n) {
        k->over = true;
        return;
    }
    memcpy(k->b + k->n, p, n);
    k->n += n;
}

void ip_okey_str(ip_okey *k, const char *s) {
    size_t l = s ? strlen(s) : 0;
    okey_var(k, s ? l + 1 : 0); /* NULL differs from "" */
    if (s) ip_okey_add(k, s, l);
}

void ip_okey_kernels(ip_okey *k, const char *const *K, size_t nk) {
    okey_var(k, nk);
    for (size_t i = 0; i < nk; i++) ip_okey_str(k, K[i]);
}

void ip_okey_tins(ip_okey *k, const q_tins *X, int64_t N, bool has_n) {
    if (k->over) return;
    size_t m = q_key_tins(X, N, has_n, false, k->b + k->n, sizeof k->b - k->n);
    if (!m) k->over = true;
    k->n += m;
}

void ip_okey_shape(ip_okey *k, q_shape s) {
    okey_var(k, s.rank);
    for (uint32_t i = 0; i < s.rank; i++) okey_var(k, ((uint64_t)s.d[i] << 1) ^ (uint64_t)(s.d[i] >> 63));
}

/* ------------------------------------------------------------- the map */
static inline uint32_t oe_hash(uint64_t h) { return (uint32_t)(h >> 32); }

static inline bool oe_is(const uint8_t *e, const ip_okey *k, uint64_t h) {
    uint32_t eh;
    uint16_t kl;
    memcpy(&eh, e, 4);
    memcpy(&kl, e + 4, 2);
    return eh == oe_hash(h) && kl == k->n && memcmp(e + OE_HEAD, k->b, k->n) == 0;
}

/* where k's probes start: the query line's hash when known (as the exact-hit map's first
 * probe), so that the slot can be fetched before the key is built; else the key's hash.
 * Worked out once per key: its store starts where its lookup did. */
static uint64_t okey_hash(const q_ctx *c, const ip_omap *m, ip_okey *k) {
    if (!k->hashed) {
        uint64_t lh = c->q ? c->q->line_hash : 0;
        k->h = lh ? lh : opdb_hash_bytes(k->b, k->n, 0x6f75746b);
        k->hashed = true;
    }
    return k->h & m->hmask;
}

void ip_omap_prefetch(const ip_omap *m, uint64_t h) {
    if (m) __builtin_prefetch(&m->slot[h & m->hmask & m->mask]);
}

void ip_omap_touch(ip_omap *m) {
    if (m) opdb_touch_pages((void *)m->slot, (m->mask + 1) * sizeof *m->slot);
}

void ip_omap_prefetch_entry(const ip_omap *m, uint64_t h) {
    if (!m || !h) return;
    uint64_t hm = h & m->hmask;
    q_tslot v = atomic_load_explicit(&m->slot[hm & m->mask], memory_order_relaxed);
    if (v && q_tslot_tag_is(v, hm)) __builtin_prefetch(q_tslot_entry(v));
}

bool ip_omap_get(const q_ctx *c, ip_okey *k, ip_outcome *o) {
    const ip_omap *m = c->db->ipmap;
    if (k->over) return false;
    uint64_t h = okey_hash(c, m, k);
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        q_tslot v = atomic_load_explicit(&m->slot[i], memory_order_acquire);
        if (!v) return false;
        if (!q_tslot_tag_is(v, h)) continue;
        const uint8_t *e = q_tslot_entry(v);
        if (!oe_is(e, k, h)) continue;
        const uint8_t *p = e + OE_HEAD + k->n;
        unsigned fl = *p++;
        uint16_t id[2];
        memcpy(id, p, sizeof id);
        p += sizeof id;
        uint64_t kidx = 0, dim = 0;
        for (unsigned sh = 0;; sh += 7) {
            uint8_t b = *p++;
            kidx |= (uint64_t)(b & 0x7f) << sh;
            if (!(b & 0x80)) break;
        }
        for (unsigned sh = 0;; sh += 7) {
            uint8_t b = *p++;
            dim |= (uint64_t)(b & 0x7f) << sh;
            if (!(b & 0x80)) break;
        }
        memset(o, 0, sizeof *o);
        o->hit = fl & OE_HIT;
        o->kidx = (uint32_t)kidx;
        o->dim = (int)((int64_t)(dim >> 1) ^ -(int64_t)(dim & 1));
        o->rule = q_ptrs_get(&m->ptrs, id[0]);
        o->kernel = q_ptrs_get(&m->ptrs, id[1]);
        p = q_dbl_get(p, (fl >> 1) & 3, &o->lat);
        p = q_dbl_get(p, (fl >> 3) & 3, &o->conf);
        p = q_dbl_get(p, (fl >> 5) & 3, &o->spread);
        /* a result may outlive the handle: its reason lives in the query's arena */
        const char *r = (const char *)p;
        o->reason = r[0] ? q_strdup((q_ctx *)c, r) : "";
        q_stripes_add(&((ip_omap *)m)->hits, c->a);
        return true;
    }
}

static uint8_t *put_var(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

void ip_omap_put(const q_ctx *c, ip_okey *k, const ip_outcome *o) {
    ip_omap *m = c->db->ipmap;
    size_t held = atomic_load_explicit(&m->n, memory_order_relaxed);
    if (k->over || held >= m->max || k->n > UINT16_MAX) return;
    uint64_t h = okey_hash(c, m, k);
    /* past half full, a key met for the first time is only noted */
    if (m->door.fp && held >= m->max / 2 && !q_door_pass(&m->door, h)) return;
    unsigned cl = q_dbl_code(o->lat), cc = q_dbl_code(o->conf), cs = q_dbl_code(o->spread);
    uint64_t zdim = ((uint64_t)(int64_t)o->dim << 1) ^ (uint64_t)((int64_t)o->dim >> 63);
    uint8_t tail[24];
    uint8_t *t = put_var(put_var(tail, o->kidx), zdim);
    size_t tl = (size_t)(t - tail);
    size_t rl = o->reason ? strlen(o->reason) : 0;
    size_t bytes = OE_HEAD + k->n + 1 + 4 + tl + 8 * ((cl == 2) + (cc == 2) + (cs == 2)) + rl + 1;
    uint16_t id[2];
    opdb_call_lock(&m->mu);
    bool ok = q_ptrs_id(&m->ptrs, o->rule, &id[0]) && q_ptrs_id(&m->ptrs, o->kernel, &id[1]);
    uint8_t *e = ok ? q_bump(&m->r, &m->a, bytes) : NULL;
    opdb_call_unlock(&m->mu);
    if (!ok) return; /* ids spent: not kept */
    uint32_t eh = oe_hash(h);
    uint16_t kl = (uint16_t)k->n;
    memcpy(e, &eh, 4);
    memcpy(e + 4, &kl, 2);
    memcpy(e + OE_HEAD, k->b, k->n);
    uint8_t *p = e + OE_HEAD + k->n;
    *p++ = (uint8_t)((o->hit ? OE_HIT : 0) | cl << 1 | cc << 3 | cs << 5);
    memcpy(p, id, sizeof id);
    p += sizeof id;
    memcpy(p, tail, tl);
    p += tl;
    p = q_dbl_put(p, cl, o->lat);
    p = q_dbl_put(p, cc, o->conf);
    p = q_dbl_put(p, cs, o->spread);
    if (rl) memcpy(p, o->reason, rl);
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
        /* already there (its block stays in the arena until close) */
        if (q_tslot_tag_is(cur, h) && oe_is(q_tslot_entry(cur), k, h)) return;
    }
}
