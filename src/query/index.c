/* The exact-compute row index: rows bucketed by what every match needs to
 * hold, the slot count (after truncation) and the dtype class of each slot,
 * so a lookup visits only rows that can match, in file order. The buckets
 * are a superset filter: every row in them still goes through the full row
 * matcher, so ties and ambiguity see exactly the rows a full scan would. */
#include <stdlib.h>
#include <string.h>

#include "query/query_internal.h"

typedef struct bucket {
    uint64_t h;
    uint32_t n_slots;
    const char **dkeys;          /* the slot dtype classes */
    uint32_t *rows, n, cap;
} bucket;

typedef struct cindex {
    int64_t N;
    bool has_n;
    bucket *b;
    size_t nb, capb;
    opdb_hindex ix;
    struct cindex *next;
} cindex;

/* dtype class of a spelling for kernel kt (DT_BF16 and FLOAT are one class for relaxed kernels) */
static const char *dclass(const char *kt, const char *s, size_t n, bool relaxed) {
    (void)kt;
    if (relaxed && ((n == 7 && memcmp(s, "DT_BF16", 7) == 0) || (n == 5 && memcmp(s, "FLOAT", 5) == 0)))
        return "\x01";
    return s;
}

static uint64_t key_hash(uint32_t ns, const char *const *dk, const uint32_t *dn) {
    uint64_t h = opdb_hash_bytes(&ns, sizeof ns, 7);
    for (uint32_t i = 0; i < ns; i++) h = opdb_hash_bytes(dk[i], dn[i], h);
    return h;
}

static bool table_indexable(const q_ktable *t) {
    if (t->lat_ov_bad) return false;
    for (size_t r = 0; r < t->t.nrows; r++)
        if (t->rows[r].latcol != QLAT_NONE && !t->rows[r].shapes_ok) return false;
    return true;
}

static cindex *build(const q_ktable *t, int64_t N, bool has_n) {
    cindex *ci = opdb_xcalloc(1, sizeof *ci);
    ci->N = N;
    ci->has_n = has_n;
    bool relaxed = t->kflags & QK_RELAXED;
    for (size_t r = 0; r < t->t.nrows; r++) {
        const q_row *rw = &t->rows[r];
        if (rw->latcol == QLAT_NONE) continue;
        uint32_t ns = rw->n_in, nd = rw->n_in_dt;
        if (has_n) {
            ns = (uint32_t)q_slice_n(ns, N);
            nd = (uint32_t)q_slice_n(nd, N);
        }
        if (nd < ns) continue; /* a slot without a dtype never matches */
        const char *dk[64];
        uint32_t dn[64];
        if (ns > 64) continue; /* no query has that many tensor inputs in the index's range */
        for (uint32_t i = 0; i < ns; i++) {
            dk[i] = dclass(t->kernel, rw->in_dt[i], rw->in_dt_n[i], relaxed);
            dn[i] = dk[i][0] == 1 ? 1 : rw->in_dt_n[i];
        }
        uint64_t h = key_hash(ns, dk, dn);
        bucket *b = NULL;
        uint32_t idx;
        for (opdb_hprobe p = opdb_hindex_probe(&ci->ix, h); opdb_hprobe_next(&p, &idx);) {
            bucket *c = &ci->b[idx];
            bool same = c->n_slots == ns;
            for (uint32_t i = 0; same && i < ns; i++)
                same = strlen(c->dkeys[i]) == dn[i] && memcmp(c->dkeys[i], dk[i], dn[i]) == 0;
            if (same) {
                b = c;
                break;
            }
        }
        if (!b) {
            OPDB_ALLOC_GROW(ci->b, ci->nb + 1, ci->capb);
            b = &ci->b[ci->nb];
            memset(b, 0, sizeof *b);
            b->h = h;
            b->n_slots = ns;
            b->dkeys = opdb_xcalloc(ns ? ns : 1, sizeof *b->dkeys);
            for (uint32_t i = 0; i < ns; i++) {
                char *s = opdb_xmalloc(dn[i] + 1);
                memcpy(s, dk[i], dn[i]);
                s[dn[i]] = 0;
                b->dkeys[i] = s;
            }
            opdb_hindex_add(&ci->ix, h, (uint32_t)ci->nb++);
        }
        OPDB_ALLOC_GROW(b->rows, b->n + 1, b->cap);
        b->rows[b->n++] = (uint32_t)r;
    }
    return ci;
}

/* sentinel for "not indexable" */
static cindex k_none;

void q_index_free(void *p);
void q_index_free(void *p) {
    if (p == &k_none) return;
    for (cindex *ci = p; ci;) {
        cindex *nx = ci->next;
        for (size_t i = 0; i < ci->nb; i++) {
            for (uint32_t k = 0; k < ci->b[i].n_slots; k++) free((void *)ci->b[i].dkeys[k]);
            free(ci->b[i].dkeys);
            free(ci->b[i].rows);
        }
        free(ci->b);
        opdb_hindex_free(&ci->ix);
        free(ci);
        ci = nx;
    }
}

const uint32_t *q_index_rows(const opdb_qdb *db, q_ktable *t, const q_tins *X, int64_t N, bool has_n, size_t *n,
                             bool *usable) {
    *usable = false;
    *n = 0;
    if (db->no_index) return NULL;
    pthread_mutex_lock(&t->ext_mu);
    cindex *head = t->ext[0], *ci = NULL;
    if (head == &k_none) {
        pthread_mutex_unlock(&t->ext_mu);
        return NULL;
    }
    if (!head && !table_indexable(t)) {
        t->ext[0] = &k_none;
        pthread_mutex_unlock(&t->ext_mu);
        return NULL;
    }
    for (ci = head; ci; ci = ci->next)
        if (ci->has_n == has_n && (!has_n || ci->N == N)) break;
    if (!ci) {
        ci = build(t, N, has_n);
        ci->next = head;
        t->ext[0] = ci;
    }
    pthread_mutex_unlock(&t->ext_mu);
    *usable = true;
    if (X->n > 64) return NULL;
    bool relaxed = t->kflags & QK_RELAXED;
    const char *dk[64];
    uint32_t dn[64];
    for (size_t i = 0; i < X->n; i++) {
        const char *p = X->v[i].prof ? X->v[i].prof : q_dtype_prof(X->v[i].dtype);
        if (!p) return NULL; /* an unmapped dtype matches no row */
        dk[i] = dclass(t->kernel, p, strlen(p), relaxed);
        dn[i] = dk[i][0] == 1 ? 1 : (uint32_t)strlen(p);
    }
    uint64_t h = key_hash((uint32_t)X->n, dk, dn);
    uint32_t idx;
    for (opdb_hprobe p = opdb_hindex_probe(&ci->ix, h); opdb_hprobe_next(&p, &idx);) {
        const bucket *b = &ci->b[idx];
        bool same = b->n_slots == X->n;
        for (uint32_t i = 0; same && i < b->n_slots; i++)
            same = strlen(b->dkeys[i]) == dn[i] && memcmp(b->dkeys[i], dk[i], dn[i]) == 0;
        if (same) {
            *n = b->n;
            return b->rows;
        }
    }
    return NULL;
}
