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
 * compare-and-swap, and a full map takes nothing more. */
#include <stdlib.h>
#include <string.h>

#include "query/interp_internal.h"

typedef struct oentry {
    uint64_t h;
    size_t klen;
    ip_outcome o;
    uint8_t key[];               /* then the miss reason, NUL-terminated */
} oentry;

struct ip_omap {
    _Atomic(oentry *) *slot;
    size_t mask, max;
    _Atomic size_t n;
    _Atomic size_t hits;         /* answered from the map (tests read it) */
};

ip_omap *ip_omap_new(size_t entries) {
    if (!entries) return NULL;
    ip_omap *m = opdb_xcalloc(1, sizeof *m);
    size_t cap = 16;
    while (cap < entries * 2) cap <<= 1; /* at most half full: probes stay short */
    m->slot = opdb_xcalloc(cap, sizeof *m->slot);
    m->mask = cap - 1;
    m->max = entries;
    return m;
}

void ip_omap_free(ip_omap *m) {
    if (!m) return;
    for (size_t i = 0; i <= m->mask; i++) free(atomic_load_explicit(&m->slot[i], memory_order_relaxed));
    free(m->slot);
    free(m);
}

size_t ip_omap_hits(const ip_omap *m) { return m ? atomic_load(&((ip_omap *)m)->hits) : 0; }

/* ------------------------------------------------------------------ keys */
bool ip_okey_init(const q_ctx *c, ip_okey *k, char tag) {
    k->n = 0;
    k->over = false;
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
    uint32_t l = s ? (uint32_t)strlen(s) : UINT32_MAX; /* NULL differs from "" */
    ip_okey_add(k, &l, sizeof l);
    if (s) ip_okey_add(k, s, l);
}

void ip_okey_kernels(ip_okey *k, const char *const *K, size_t nk) {
    uint32_t n = (uint32_t)nk;
    ip_okey_add(k, &n, sizeof n);
    for (size_t i = 0; i < nk; i++) ip_okey_str(k, K[i]);
}

void ip_okey_tins(ip_okey *k, const q_tins *X, int64_t N, bool has_n) {
    if (k->over) return;
    size_t m = q_key_tins(X, N, has_n, false, k->b + k->n, sizeof k->b - k->n);
    if (!m) k->over = true;
    k->n += m;
}

void ip_okey_shape(ip_okey *k, q_shape s) {
    ip_okey_add(k, &s.rank, sizeof s.rank);
    if (s.rank) ip_okey_add(k, s.d, s.rank * sizeof *s.d);
}

/* ------------------------------------------------------------- the map */
bool ip_omap_get(const q_ctx *c, const ip_okey *k, ip_outcome *o) {
    const ip_omap *m = c->db->ipmap;
    if (k->over) return false;
    uint64_t h = opdb_hash_bytes(k->b, k->n, 0x6f75746b);
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        const oentry *e = atomic_load_explicit(&m->slot[i], memory_order_acquire);
        if (!e) return false;
        if (e->h != h || e->klen != k->n || memcmp(e->key, k->b, k->n) != 0) continue;
        *o = e->o;
        /* a result may outlive the handle: its reason lives in the query's arena */
        const char *r = (const char *)e->key + e->klen;
        o->reason = r[0] ? q_strdup((q_ctx *)c, r) : "";
        atomic_fetch_add_explicit(&((ip_omap *)m)->hits, 1, memory_order_relaxed);
        return true;
    }
}

void ip_omap_put(const q_ctx *c, const ip_okey *k, const ip_outcome *o) {
    ip_omap *m = c->db->ipmap;
    if (k->over || atomic_load_explicit(&m->n, memory_order_relaxed) >= m->max) return;
    uint64_t h = opdb_hash_bytes(k->b, k->n, 0x6f75746b);
    size_t rl = o->reason ? strlen(o->reason) : 0;
    oentry *e = opdb_xmalloc(sizeof *e + k->n + rl + 1); /* one block: entry, key, reason */
    e->h = h;
    e->klen = k->n;
    e->o = *o;
    e->o.reason = NULL; /* read from the block */
    memcpy(e->key, k->b, k->n);
    char *r = (char *)e->key + k->n;
    if (rl) memcpy(r, o->reason, rl);
    r[rl] = 0;
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        oentry *cur = atomic_load_explicit(&m->slot[i], memory_order_acquire);
        if (!cur) {
            if (atomic_fetch_add_explicit(&m->n, 1, memory_order_relaxed) >= m->max) break; /* full: not taken */
            oentry *expect = NULL;
            if (atomic_compare_exchange_strong_explicit(&m->slot[i], &expect, e, memory_order_release,
                                                        memory_order_acquire))
                return;
            atomic_fetch_sub_explicit(&m->n, 1, memory_order_relaxed);
            cur = expect; /* another writer took the slot first: compare with its entry */
        }
        if (cur->h == h && cur->klen == k->n && memcmp(cur->key, k->b, k->n) == 0) break; /* already there */
    }
    free(e);
}
