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
 * change; a writer claims an empty slot with a compare-and-swap. The map
 * stops taking entries when it holds its maximum (no eviction), so a probe
 * always ends at an empty slot or a match. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_internal.h"

/* One block from the map's arena: the entry, its key, its reason (NUL-terminated; "" when none), its kernel when found. */
typedef struct hentry {
    uint64_t h;
    q_ktable *tab;
    const char *rule;            /* a matcher's rule name (static text) */
    const char *kernel;          /* found: tab's kernel, after the reason (read with the entry, not from the table) */
    double lat, conf, dist;
    uint32_t row, ties;
    uint16_t klen;
    uint8_t kidx;
    bool found;
    uint8_t key[];
} hentry;

struct q_hitmap {
    _Atomic(hentry *) *slot;
    size_t mask, max;
    _Atomic size_t n;
    _Atomic size_t bytes;        /* the entries' blocks ... */
    size_t max_bytes;            /* ... bounded as their count is */
    _Atomic size_t hits;         /* answered from the map (tests read it) */
    pthread_mutex_t mu;          /* taking a block */
    opdb_arena a;
};

q_hitmap *q_hitmap_new(size_t entries) {
    if (!entries) return NULL;
    q_hitmap *m = opdb_xcalloc(1, sizeof *m);
    size_t cap = 16;
    while (cap < entries * 2) cap <<= 1; /* at most half full: probes stay short */
    m->slot = opdb_xcalloc(cap, sizeof *m->slot);
    m->mask = cap - 1;
    m->max = entries;
    m->max_bytes = entries > SIZE_MAX / Q_HITMAP_ENTRY_BYTES ? SIZE_MAX : entries * Q_HITMAP_ENTRY_BYTES;
    pthread_mutex_init(&m->mu, NULL);
    opdb_arena_init(&m->a, 1 << 16);
    return m;
}

void q_hitmap_free(q_hitmap *m) {
    if (!m) return;
    free(m->slot);
    pthread_mutex_destroy(&m->mu);
    opdb_arena_free(&m->a);
    free(m);
}

void q_hitmap_prefetch(const q_hitmap *m, uint64_t h) {
    if (m) __builtin_prefetch(&m->slot[h & m->mask]);
}

void q_hitmap_prefetch_entry(const q_hitmap *m, uint64_t h) {
    if (!m) return;
    const hentry *e = atomic_load_explicit(&m->slot[h & m->mask], memory_order_relaxed);
    if (!e) return;
    /* its header and a usual key (reading its length would wait for it); prefetches past its end are harmless */
    const char *p = (const char *)e;
    for (size_t off = 0; off < 256; off += 64) __builtin_prefetch(p + off);
}

size_t q_hitmap_hits(const q_hitmap *m) { return m ? atomic_load(&((q_hitmap *)m)->hits) : 0; }

bool q_hitmap_get(const q_hitmap *m, const uint8_t *key, size_t n, uint64_t h, q_ctx *c, q_scan *s) {
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        const hentry *e = atomic_load_explicit(&m->slot[i], memory_order_acquire);
        if (!e) return false;
        if (e->h != h || e->klen != n || memcmp(e->key, key, n) != 0) continue;
        /* every member set (a memset of the whole costs more than these stores) */
        _Static_assert(sizeof(void *) != 8 || sizeof(q_scan) == 112, "set every member of q_scan here");
        s->found = e->found;
        s->kidx = e->kidx;
        s->row = e->row;
        s->tab = e->tab;
        s->kernel = e->kernel;
        s->ties = e->ties;
        s->best.lat = e->lat;
        s->best.conf = e->conf;
        s->best.dist = e->dist;
        s->best.rule = e->rule;
        s->best.input_rules = NULL;
        s->best.n_rules = 0;
        s->failed = false;
        /* a result may outlive the handle: its reason lives in the query's arena */
        const char *reason = (const char *)e->key + e->klen;
        s->reason = reason[0] ? q_strdup(c, reason) : "";
        atomic_fetch_add_explicit(&((q_hitmap *)m)->hits, 1, memory_order_relaxed);
        return true;
    }
}

void q_hitmap_put(q_hitmap *m, const uint8_t *key, size_t n, uint64_t h, const q_scan *s) {
    if (atomic_load_explicit(&m->n, memory_order_relaxed) >= m->max ||
        atomic_load_explicit(&m->bytes, memory_order_relaxed) >= m->max_bytes)
        return;
    /* an outcome the compact entry cannot hold is not kept (the scan runs again) */
    if (n > UINT16_MAX || s->kidx > UINT8_MAX || s->row > UINT32_MAX || s->ties > UINT32_MAX) return;
    size_t rl = s->reason ? strlen(s->reason) : 0, kl = s->found && s->kernel ? strlen(s->kernel) + 1 : 0;
    size_t bytes = offsetof(hentry, key) + n + rl + 1 + kl;
    opdb_call_lock(&m->mu);
    hentry *e = opdb_arena_alloc(&m->a, bytes);
    opdb_call_unlock(&m->mu);
    atomic_fetch_add_explicit(&m->bytes, bytes, memory_order_relaxed);
    e->h = h;
    e->klen = (uint16_t)n;
    e->found = s->found;
    e->kidx = (uint8_t)s->kidx;
    e->row = (uint32_t)s->row;
    e->tab = s->tab;
    e->ties = (uint32_t)s->ties;
    e->lat = s->best.lat;
    e->conf = s->best.conf;
    e->dist = s->best.dist;
    e->rule = s->best.rule;
    memcpy(e->key, key, n);
    char *r = (char *)e->key + n;
    if (rl) memcpy(r, s->reason, rl);
    r[rl] = 0;
    char *k = r + rl + 1;
    if (kl) memcpy(k, s->kernel, kl);
    e->kernel = kl ? k : NULL;
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        hentry *cur = atomic_load_explicit(&m->slot[i], memory_order_acquire);
        if (!cur) {
            if (atomic_fetch_add_explicit(&m->n, 1, memory_order_relaxed) >= m->max) return; /* full: not taken */
            hentry *expect = NULL;
            if (atomic_compare_exchange_strong_explicit(&m->slot[i], &expect, e, memory_order_release,
                                                        memory_order_acquire))
                return;
            atomic_fetch_sub_explicit(&m->n, 1, memory_order_relaxed);
            cur = expect; /* another writer took the slot first: compare with its entry */
        }
        if (cur->h == h && cur->klen == n && memcmp(cur->key, key, n) == 0) return; /* already there */
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
