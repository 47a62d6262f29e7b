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
    const ip_group *g = &s->ix->g[s->group];
    if (s->lab < 0) {
        *n = g->n;
        return g->pts;
    }
    *n = g->nlab[s->lab];
    return g->lab[s->lab];
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
    const ip_point *P = set->ix->p;
    for (size_t i = 0; i < n; i++) {
        const ip_point *p = &P[pts[i]];
        bool ok = isfinite(p->lat) && p->lat > 0;
        for (int k = 0; ok && k < cnt; k++) ok = !isnan(p->ax[A[k]]);
        if (!ok) continue;
        double key[IP_MAXAX];
        int nk = other_axes(p->ax, inA, nax, key);
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
    for (int a = 0; a < tk->nax; a++)
        if (!inA[a] && (tk->match[a] || isnan(tk->t[a]))) return false;
    ip_group *g = (ip_group *)&set->ix->g[set->group];
    struct ip_fmaps *fs = atomic_load_explicit(&g->fmaps, memory_order_acquire);
    ip_fmap *m = fs ? atomic_load_explicit(&fs->m[set->lab + 1][gi], memory_order_acquire) : NULL;
    if (!m) {
        ip_index *ix = (ip_index *)set->ix; /* the memo lock guards the slots */
        opdb_call_lock(&ix->memo_mu);
        fs = atomic_load_explicit(&g->fmaps, memory_order_relaxed);
        if (!fs) {
            fs = opdb_xcalloc(1, sizeof *fs);
            for (int s = 0; s < 3; s++)
                for (int k = 0; k < IP_MAXAXG; k++) atomic_init(&fs->m[s][k], NULL);
            atomic_store_explicit(&g->fmaps, fs, memory_order_release);
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

void ip_memo_free(ip_group *g) {
    struct ip_fmaps *fs = atomic_load_explicit(&g->fmaps, memory_order_relaxed);
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
    for (int lab = 0; lab < 2; lab++)
        if (g->lab[lab] != g->pts) free(g->lab[lab]);
}

void ip_memo_labels(ip_index *ix) {
    for (size_t gi = 0; gi < ix->ng; gi++) {
        ip_group *g = &ix->g[gi];
        uint32_t n1 = 0;
        for (uint32_t i = 0; i < g->n; i++) n1 += ix->p[g->pts[i]].alt == 1;
        for (int lab = 0; lab < 2; lab++) {
            uint32_t want = lab ? n1 : g->n - n1;
            g->nlab[lab] = 0;
            if (want == g->n || want == 0) { /* one label only: its list is pts (or empty) */
                g->lab[lab] = g->pts;
                g->nlab[lab] = want;
                continue;
            }
            g->lab[lab] = opdb_xmalloc(want * sizeof *g->lab[lab]);
            for (uint32_t i = 0; i < g->n; i++)
                if (ix->p[g->pts[i]].alt == lab) g->lab[lab][g->nlab[lab]++] = g->pts[i];
        }
        atomic_init(&g->fmaps, NULL);
    }
}
