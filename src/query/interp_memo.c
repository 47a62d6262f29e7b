/* Kept filter results of the interpolation's point sets. Filtering a set
 * for one axis group keeps the points whose other axes equal the target's;
 * for a fixed set and axis group that is a lookup by the target's values on
 * the other axes, so each (set, axis group) gets a map from those values to
 * its passing points (in set order), built on first use under the index's
 * memo lock and published atomically. A point without a value on some axis,
 * or without a usable latency, never passes, so it is in no list. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/interp_internal.h"

typedef struct fentry {
    double key[IP_MAXAX];
    uint32_t *pts;
    uint32_t n, cap;
} fentry;

struct ip_fmap {
    int nax;
    fentry *e;
    size_t ne, cape;
    opdb_hindex ix;
};

struct ip_fmaps {
    ip_fmap *_Atomic m[3][IP_MAXAXG];
};

/* -0.0 and 0.0 are equal, so they share bits in a key */
static double norm0(double v) { return v == 0 ? 0.0 : v; }

static uint64_t key_hash(const double *k, int nk) { return opdb_hash_bytes(k, (size_t)nk * sizeof *k, 3); }

static const uint32_t *set_pts(const ip_set *s, size_t *n) {
    if (s->lab < 0) {
        *n = ip_gn(s->ix, s->group);
        return ip_gpts(s->ix, s->group);
    }
    uint32_t m;
    const uint32_t *p = ip_glab(s->ix, s->group, s->lab, &m);
    *n = m;
    return p;
}

static fentry *find(const ip_fmap *m, uint64_t h, const double *k, int nk) {
    uint32_t idx;
    for (opdb_hprobe p = opdb_hindex_probe(&m->ix, h); opdb_hprobe_next(&p, &idx);)
        if (memcmp(m->e[idx].key, k, (size_t)nk * sizeof *k) == 0) return &m->e[idx];
    return NULL;
}

/* the other axes' values of a point (false when one is missing) */
static int other_axes(const double *ax, const bool *inA, int nax, double *k) {
    int nk = 0;
    for (int a = 0; a < nax; a++) {
        if (inA[a]) continue;
        if (isnan(ax[a])) return -1;
        k[nk++] = norm0(ax[a]);
    }
    return nk;
}

static ip_fmap *build(const ip_set *set, const uint8_t *A, int cnt, int nax) {
    ip_fmap *m = opdb_xcalloc(1, sizeof *m);
    m->nax = nax;
    bool inA[IP_MAXAX] = {false};
    for (int k = 0; k < cnt; k++) inA[A[k]] = true;
    size_t n;
    const uint32_t *pts = set_pts(set, &n);
    const ip_index *ix = set->ix;
    for (size_t i = 0; i < n; i++) {
        double lat = ip_lat(ix, pts[i]), ax[IP_MAXAX];
        bool ok = isfinite(lat) && lat > 0;
        ip_point_axes(ix, pts[i], ax);
        for (int k = 0; ok && k < cnt; k++) ok = !isnan(ax[A[k]]);
        if (!ok) continue;
        double key[IP_MAXAX];
        int nk = other_axes(ax, inA, nax, key);
        if (nk < 0) continue;
        for (int k = nk; k < IP_MAXAX; k++) key[k] = 0;
        uint64_t h = key_hash(key, nk);
        fentry *e = find(m, h, key, nk);
        if (!e) {
            OPDB_ALLOC_GROW(m->e, m->ne + 1, m->cape);
            e = &m->e[m->ne];
            memset(e, 0, sizeof *e);
            memcpy(e->key, key, sizeof key);
            opdb_hindex_add(&m->ix, h, (uint32_t)m->ne++);
        }
        OPDB_ALLOC_GROW(e->pts, e->n + 1, e->cap);
        e->pts[e->n++] = pts[i];
    }
    return m;
}

bool ip_memo_filter(const q_ctx *c, const ip_task *tk, const ip_set *set, size_t gi, const uint8_t *A, int cnt,
                    const uint32_t **f, size_t *nf) {
    if (!set || gi >= IP_MAXAXG || tk->nax > IP_MAXAX || c->db->no_index) return false;
    bool inA[IP_MAXAX] = {false};
    for (int k = 0; k < cnt; k++) inA[A[k]] = true;
    /* the map compares every other axis by equality, and needs the target's value on each */
    ip_index *ix = (ip_index *)set->ix; /* the memo lock guards the slots */
    bool other = false;
    for (int a = 0; a < tk->nax; a++)
        if (!inA[a]) {
            if (tk->match[a]) return false;
            other |= !isnan(tk->t[a]);
        }
    /* no other axis to compare: the set's points pass when every point has these axes and a
     * latency (as a kept map would answer, without one) */
    if (!other) {
        bool all = ix->latok;
        for (int k = 0; all && k < cnt; k++) all = (ix->axfull >> A[k]) & 1;
        if (all) {
            *f = set_pts(set, nf);
            return true;
        }
    }
    for (int a = 0; a < tk->nax; a++)
        if (!inA[a] && isnan(tk->t[a])) return false;
    struct ip_fmaps *_Atomic *arr = atomic_load_explicit(&ix->fmaps, memory_order_acquire);
    struct ip_fmaps *fs = arr ? atomic_load_explicit(&arr[set->group], memory_order_acquire) : NULL;
    ip_fmap *m = fs ? atomic_load_explicit(&fs->m[set->lab + 1][gi], memory_order_acquire) : NULL;
    if (!m) {
        opdb_call_lock(&ix->memo_mu);
        arr = atomic_load_explicit(&ix->fmaps, memory_order_relaxed);
        if (!arr) {
            arr = opdb_xmalloc((ix->ng ? ix->ng : 1) * sizeof *arr);
            for (size_t g = 0; g < ix->ng; g++) atomic_init(&arr[g], NULL);
            atomic_store_explicit(&ix->fmaps, arr, memory_order_release);
        }
        fs = atomic_load_explicit(&arr[set->group], memory_order_relaxed);
        if (!fs) {
            fs = opdb_xcalloc(1, sizeof *fs);
            for (int s = 0; s < 3; s++)
                for (int k = 0; k < IP_MAXAXG; k++) atomic_init(&fs->m[s][k], NULL);
            atomic_store_explicit(&arr[set->group], fs, memory_order_release);
        }
        ip_fmap *_Atomic *slot = &fs->m[set->lab + 1][gi];
        m = atomic_load_explicit(slot, memory_order_relaxed);
        if (!m) {
            m = build(set, A, cnt, tk->nax);
            atomic_store_explicit(slot, m, memory_order_release);
        }
        opdb_call_unlock(&ix->memo_mu);
    }
    if (m->nax != tk->nax) return false;
    double key[IP_MAXAX] = {0};
    int nk = other_axes(tk->t, inA, tk->nax, key);
    if (nk < 0) return false;
    const fentry *e = find(m, key_hash(key, nk), key, nk);
    *f = e ? e->pts : NULL;
    *nf = e ? e->n : 0;
    return true;
}

void ip_memo_free(ip_index *ix) {
    struct ip_fmaps *_Atomic *arr = atomic_load_explicit(&ix->fmaps, memory_order_relaxed);
    for (size_t g = 0; arr && g < ix->ng; g++) {
        struct ip_fmaps *fs = atomic_load_explicit(&arr[g], memory_order_relaxed);
        for (int s = 0; fs && s < 3; s++)
            for (int k = 0; k < IP_MAXAXG; k++) {
                ip_fmap *m = atomic_load_explicit(&fs->m[s][k], memory_order_relaxed);
                if (!m) continue;
                for (size_t i = 0; i < m->ne; i++) free(m->e[i].pts);
                free(m->e);
                opdb_hindex_free(&m->ix);
                free(m);
            }
        free(fs);
    }
    free((void *)arr);
}
