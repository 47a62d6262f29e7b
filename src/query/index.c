/* The exact-compute row index. A row is filed under a key that every rule
 * of the row matcher preserves: the slot count (after truncation), each
 * slot's dtype class, and each slot's dims coarsened to ceil(d / 64) with
 * the 1-blocks (dims 1..64) dropped and the rest sorted. Block padding never
 * leaves a 64-block, a batch strip only drops a leading 1, transposes only
 * reorder dims, so a matching row always carries the query's key. 3-D
 * flattening and merging change the dims: for those kernels the query also
 * probes the flattened and merged keys of each 3-D slot. The key is a
 * superset filter: every row found still goes through the full matcher in
 * file order, so ties and ambiguity see exactly the rows a full scan would. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "query/query_internal.h"

enum { KEY_CAP = 1024, MAX_COMBOS = 32 };

/* A bucket is filed by its key's hash alone: keys whose hashes collide share
 * one bucket, which only adds rows for the matcher to reject (the index is a
 * superset filter), so no key is kept and a probe compares no bytes. */
typedef struct bucket {
    uint64_t h;
    uint32_t off, n;             /* its rows: rows[off, off + n), in file order; n == 0: an empty slot */
} bucket;

typedef struct cindex {
    int64_t N;
    bool has_n;
    bool full;                   /* a row's key was too long to file: scan every row */
    bucket *b;                   /* open addressing, at most half full (NULL: no rows) */
    size_t mask;
    uint32_t *rows;
    size_t nidx;                 /* rows' length */
    /* each row's exact key hash (below), by row number, made on first use;
     * none (fh NULL) for flattening kernels or a key too long; sh: the same
     * hashes in rows' order, so that a bucket's scan reads them in one run */
    bool fbuilt;
    uint32_t *fh, *sh;
    struct cindex *next;
} cindex;

typedef struct kbuf {
    uint8_t p[KEY_CAP];
    size_t n;
    bool over;
} kbuf;

static void kb_add(kbuf *k, const void *p, size_t n) {
    if (k->over || k->n + n > KEY_CAP) {
        k->over = true;
        return;
    }
    memcpy(k->p + k->n, p, n);
    k->n += n;
}

/* The exact key of a slot's dims: the dims without the 1s, sorted. A match
 * without padding (identity, batch strip, the transposes) only drops 1s and
 * reorders dims, so such a row carries the query's exact key (besides the
 * coarse one); 3-D flattening and merging do not (no exact keys for their
 * kernels). */
static void key_exact_dims(kbuf *k, const int64_t *d, uint32_t rank) {
    int64_t v[64];
    uint32_t n = 0;
    for (uint32_t i = 0; i < rank; i++) {
        if (d[i] == 1) continue;
        if (n == 64) {
            k->over = true;
            return;
        }
        uint32_t j = n++;
        for (; j > 0 && v[j - 1] > d[i]; j--) v[j] = v[j - 1];
        v[j] = d[i];
    }
    kb_add(k, &n, sizeof n);
    kb_add(k, v, n * sizeof *v);
}

static uint32_t exact_hash(const kbuf *k) { return (uint32_t)opdb_hash_bytes(k->p, k->n, 11); }

/* the 64-block of a dim, rounding up (floor semantics for negative dims) */
static int64_t block64(int64_t d) { return d >= 0 ? d / 64 + (d % 64 != 0) : -((-d) / 64); }

/* the dtype class: DT_BF16 and FLOAT are one for relaxed kernels */
static void key_dtype(kbuf *k, const char *s, size_t n, bool relaxed) {
    if (relaxed && ((n == 7 && memcmp(s, "DT_BF16", 7) == 0) || (n == 5 && memcmp(s, "FLOAT", 5) == 0))) {
        s = "\x01";
        n = 1;
    }
    uint32_t len = (uint32_t)n;
    kb_add(k, &len, sizeof len);
    kb_add(k, s, n);
}

/* the coarse dims of a shape: blocks other than 1, sorted */
static void key_dims(kbuf *k, const int64_t *d, uint32_t rank) {
    int64_t v[64];
    uint32_t n = 0;
    for (uint32_t i = 0; i < rank; i++) {
        int64_t b = block64(d[i]);
        if (b == 1) continue;
        if (n == 64) {
            k->over = true;
            return;
        }
        uint32_t j = n++;
        for (; j > 0 && v[j - 1] > b; j--) v[j] = v[j - 1];
        v[j] = b;
    }
    kb_add(k, &n, sizeof n);
    kb_add(k, v, n * sizeof *v);
}

static bool table_indexable(const q_ktable *t) {
    if (t->lat_ov_bad) return false;
    for (size_t r = 0; r < t->t.nrows; r++)
        if (t->rows[r].latcol != QLAT_NONE && !q_row_shapes_ok(&t->rows[r])) return false;
    return true;
}

static const bucket *find(const cindex *ci, uint64_t h) {
    if (!ci->b) return NULL;
    for (size_t j = h & ci->mask; ci->b[j].n; j = (j + 1) & ci->mask)
        if (ci->b[j].h == h) return &ci->b[j];
    return NULL;
}

/* starts fetching a bucket's rows and their exact hashes: the scan reads them
 * once the query's exact key is made */
static void fetch_run(const cindex *ci, const bucket *b) {
    __builtin_prefetch(ci->rows + b->off);
    if (__atomic_load_n(&ci->fbuilt, __ATOMIC_ACQUIRE) && ci->sh) __builtin_prefetch(ci->sh + b->off);
}

/* rows by their keys' hashes while an index is built */
typedef struct hrow {
    uint64_t h;
    uint32_t r;
} hrow;

typedef struct hrows {
    hrow *v;
    size_t n, cap;
} hrows;

static void hrows_add(hrows *hr, const uint8_t *key, size_t n, uint32_t r) {
    OPDB_ALLOC_GROW(hr->v, hr->n + 1, hr->cap);
    hr->v[hr->n].h = opdb_hash_bytes(key, n, 7);
    hr->v[hr->n++].r = r;
}

/* files the rows into ci: one bucket per hash, its rows in file order (consumes hr). The rows
 * are grouped by a counting pass over a scratch table of their hashes (no sort): buckets take
 * their rows' block in the order their first rows come. */
static void file_rows(cindex *ci, hrows *hr) {
    if (!hr->n) {
        free(hr->v);
        return;
    }
    size_t tcap = 16;
    while (tcap < 2 * hr->n) tcap <<= 1;
    /* scratch: hash -> bucket number + 1; per bucket its hash, count and fill; per row its bucket */
    uint32_t *tslot = opdb_xzeroed(tcap, sizeof *tslot);
    uint32_t *cnt = opdb_xmalloc(hr->n * sizeof *cnt), *of = opdb_xmalloc(hr->n * sizeof *of);
    uint64_t *bh = opdb_xmalloc(hr->n * sizeof *bh);
    size_t nb = 0;
    for (size_t i = 0; i < hr->n; i++) {
        uint64_t h = hr->v[i].h;
        size_t j = h & (tcap - 1);
        while (tslot[j] && bh[tslot[j] - 1] != h) j = (j + 1) & (tcap - 1);
        if (!tslot[j]) {
            bh[nb] = h;
            cnt[nb] = 0;
            tslot[j] = (uint32_t)++nb;
        }
        of[i] = tslot[j] - 1;
        cnt[of[i]]++;
    }
    free(tslot);
    size_t cap = 16;
    while (cap < 2 * nb) cap <<= 1;
    ci->b = opdb_xzeroed(cap, sizeof *ci->b);
    ci->mask = cap - 1;
    ci->rows = opdb_xmalloc(hr->n * sizeof *ci->rows);
    ci->nidx = hr->n;
    /* each bucket's block (cnt becomes its fill position) */
    uint32_t off = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t j = bh[b] & ci->mask;
        while (ci->b[j].n) j = (j + 1) & ci->mask;
        ci->b[j].h = bh[b];
        ci->b[j].off = off;
        ci->b[j].n = cnt[b];
        off += cnt[b];
        cnt[b] = ci->b[j].off;
    }
    for (size_t i = 0; i < hr->n; i++) ci->rows[cnt[of[i]]++] = hr->v[i].r;
    free(cnt);
    free(of);
    free(bh);
    free(hr->v);
}

/* the row's keys as the matcher sees the row (truncation, FRACTAL_NZ restored), in one pass: the
 * coarse key into k when k, the exact key into e when e; false: row never matches */
static bool row_keys(const q_ktable *t, const q_row *rw, int64_t N, bool has_n, kbuf *k, kbuf *e) {
    uint32_t ns = q_row_nin(t, rw), nd = q_row_in_dt(t, rw)->n, nf = q_row_in_fmt(t, rw)->n;
    if (has_n) {
        ns = (uint32_t)q_slice_n(ns, N);
        nd = (uint32_t)q_slice_n(nd, N);
        nf = (uint32_t)q_slice_n(nf, N);
    }
    if (nd < ns) return false; /* a slot without a dtype never matches */
    bool relaxed = t->kflags & QK_RELAXED;
    const q_list *dt = q_row_in_dt(t, rw), *fm = q_row_in_fmt(t, rw);
    if (k) kb_add(k, &ns, sizeof ns);
    if (e) kb_add(e, &ns, sizeof ns);
    for (uint32_t i = 0; i < ns; i++) {
        if (k) key_dtype(k, dt->s[i], dt->len[i], relaxed);
        if (e) key_dtype(e, dt->s[i], dt->len[i], relaxed);
        q_shape cs = q_row_in(t, rw, i);
        int64_t nz[64];
        if (i < nf && fm->len[i] == 10 && memcmp(fm->s[i], "FRACTAL_NZ", 10) == 0 && cs.rank >= 4 && cs.rank <= 64) {
            uint32_t r = cs.rank;
            for (uint32_t j = 0; j + 4 < r; j++) nz[j] = cs.d[j];
            nz[r - 4] = (int64_t)((uint64_t)cs.d[r - 4] * (uint64_t)cs.d[r - 1]);
            nz[r - 3] = (int64_t)((uint64_t)cs.d[r - 3] * (uint64_t)cs.d[r - 2]);
            cs = (q_shape){nz, r - 2};
        }
        if (k) key_dims(k, cs.d, cs.rank);
        if (e) key_exact_dims(e, cs.d, cs.rank);
    }
    return true;
}

/* marks ci's exact hashes made (fh, when any, set before: readers without the lock see both) */
static void publish_exact(cindex *ci, uint32_t *fh);

/* the index of t for (N, has_n). The rows' exact key hashes come in the same pass (a scan asks
 * for them right after its subset), except for flattening kernels (none) and in the tests'
 * reference mode (build_exact, on first use). */
static cindex *build(const q_ktable *t, int64_t N, bool has_n, bool lazy_exact) {
    cindex *ci = opdb_xcalloc(1, sizeof *ci);
    ci->N = N;
    ci->has_n = has_n;
    bool ex = !lazy_exact && !(t->kflags & (QK_FLATTEN | QK_MERGE));
    uint32_t *fh = ex ? opdb_xcalloc(t->t.nrows ? t->t.nrows : 1, sizeof *fh) : NULL;
    hrows hr = {0};
    for (size_t r = 0; r < t->t.nrows; r++) {
        const q_row *rw = &t->rows[r];
        if (rw->latcol == QLAT_NONE) continue;
        kbuf k, e;
        k.n = e.n = 0;
        k.over = e.over = false;
        if (!row_keys(t, rw, N, has_n, &k, fh ? &e : NULL)) continue;
        if (k.over) {
            free(hr.v);
            free(fh);
            ci->full = true;
            return ci;
        }
        hrows_add(&hr, k.p, k.n, (uint32_t)r);
        if (!fh) continue;
        if (e.over) { /* a key too long: no exact keys for this index */
            free(fh);
            fh = NULL;
            continue;
        }
        fh[r] = exact_hash(&e);
    }
    file_rows(ci, &hr);
    if (!lazy_exact) publish_exact(ci, fh);
    return ci;
}

/* marks ci's exact hashes made (fh, when any, set before: readers without the lock see both) */
static void publish_exact(cindex *ci, uint32_t *fh) {
    if (fh && ci->rows) {
        ci->sh = opdb_xmalloc(ci->nidx * sizeof *ci->sh);
        for (size_t k = 0; k < ci->nidx; k++) ci->sh[k] = fh[ci->rows[k]];
    }
    ci->fh = fh;
    __atomic_store_n(&ci->fbuilt, true, __ATOMIC_RELEASE);
}

/* the rows' exact key hashes of ci, made on first use (under t->ext_mu) */
static void build_exact(const q_ktable *t, cindex *ci) {
    if (t->kflags & (QK_FLATTEN | QK_MERGE)) {
        publish_exact(ci, NULL);
        return;
    }
    uint32_t *fh = opdb_xcalloc(t->t.nrows ? t->t.nrows : 1, sizeof *fh);
    for (size_t r = 0; r < t->t.nrows; r++) {
        const q_row *rw = &t->rows[r];
        if (rw->latcol == QLAT_NONE) continue;
        kbuf k;
        k.n = 0;
        k.over = false;
        if (!row_keys(t, rw, ci->N, ci->has_n, NULL, &k)) continue;
        if (k.over) {
            free(fh);
            publish_exact(ci, NULL);
            return;
        }
        fh[r] = exact_hash(&k);
    }
    publish_exact(ci, fh);
}

/* the exact hashes aligned with sub when sub is a bucket of ci (NULL otherwise: rows merged from
 * several buckets live elsewhere); addresses compared as integers, sub may point anywhere */
static const uint32_t *sub_hashes(const cindex *ci, const uint32_t *sub) {
    if (!ci->sh || !sub) return NULL;
    uintptr_t at = (uintptr_t)sub - (uintptr_t)ci->rows;
    return at < ci->nidx * sizeof *sub ? ci->sh + at / sizeof *sub : NULL;
}

/* sentinel for "not indexable" */
static cindex k_none;

void q_index_free(void *p) {
    if (p == &k_none) return;
    for (cindex *ci = p; ci;) {
        cindex *nx = ci->next;
        free(ci->b);
        free(ci->rows);
        free(ci->fh);
        free(ci->sh);
        free(ci);
        ci = nx;
    }
}

/* the index of t for (N, has_n), built on first use (exact: its exact key
 * hashes too); NULL when t is not indexable */
static const cindex *index_of(q_ktable *t, int64_t N, bool has_n, bool exact, bool db_lazy) {
    /* indexes are published whole at the list's head (their exact hashes once made): a built
     * one is found without the lock */
    cindex *h0 = __atomic_load_n(&t->ext[0], __ATOMIC_ACQUIRE);
    if (h0 == &k_none) return NULL;
    for (cindex *ci = h0; ci; ci = ci->next)
        if (ci->has_n == has_n && (!has_n || ci->N == N)) {
            if (ci->full) return NULL;
            if (!exact || __atomic_load_n(&ci->fbuilt, __ATOMIC_ACQUIRE)) return ci;
            break;
        }
    opdb_call_lock(&t->ext_mu);
    cindex *head = t->ext[0], *ci = NULL;
    if (head != &k_none) {
        if (!head && !table_indexable(t)) {
            __atomic_store_n(&t->ext[0], (void *)&k_none, __ATOMIC_RELEASE);
        } else {
            for (ci = head; ci; ci = ci->next)
                if (ci->has_n == has_n && (!has_n || ci->N == N)) break;
            if (!ci) {
                ci = build(t, N, has_n, db_lazy);
                ci->next = head;
                __atomic_store_n(&t->ext[0], (void *)ci, __ATOMIC_RELEASE);
            }
            if (exact && !ci->full && !ci->fbuilt) build_exact(t, ci);
        }
    }
    opdb_call_unlock(&t->ext_mu);
    return ci && !ci->full ? ci : NULL;
}

/* one slot's key pieces: up to 3 alternatives (as-is, flattened, merged) */
typedef struct slot_alt {
    uint16_t off[3], len[3];
    uint8_t n;
} slot_alt;

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

const uint32_t *q_index_rows(q_ctx *c, q_ktable *t, const q_tins *X, int64_t N, bool has_n, bool normalise, size_t *n,
                             bool *usable) {
    *usable = false;
    *n = 0;
    if (c->db->no_index) return NULL;
    /* kernels whose inputs are rearranged per row (by the row's slot count) are scanned in full */
    if (normalise && (t->kflags & (QK_ROPE | QK_SWIGLU | QK_RAC))) return NULL;
    if (X->n > 64) return NULL;
    const cindex *ci = index_of(t, N, has_n, false, c->db->index_lazy_exact);
    if (!ci) return NULL;
    /* every slot's pieces, then the keys of every combination of alternatives; the slot count
     * first, so that with one alternative a slot the pieces are the key */
    kbuf parts;
    parts.n = 0;
    parts.over = false;
    uint32_t ns0 = (uint32_t)X->n;
    kb_add(&parts, &ns0, sizeof ns0);
    slot_alt alt[64];
    bool relaxed = t->kflags & QK_RELAXED, flat = t->kflags & QK_FLATTEN, merge = t->kflags & QK_MERGE;
    size_t combos = 1;
    for (size_t i = 0; i < X->n; i++) {
        const q_tin *x = &X->v[i];
        const char *p = x->prof ? x->prof : q_dtype_prof(x->dtype);
        if (!p) { /* an unmapped dtype matches no row */
            *usable = true;
            return NULL;
        }
        size_t pn = strlen(p);
        slot_alt *a = &alt[i];
        a->n = 0;
        q_shape s = q_strip(x->s);
        const q_shape *g = s.rank == 3 ? &s : x->s.rank == 3 ? &x->s : NULL;
        int64_t forms[3][2];
        int nform = 1;
        if (flat && g) {
            forms[1][0] = (int64_t)((uint64_t)g->d[0] * (uint64_t)g->d[1]), forms[1][1] = g->d[2];
            nform = 2;
            if (merge) forms[2][0] = g->d[0], forms[2][1] = (int64_t)((uint64_t)g->d[1] * (uint64_t)g->d[2]), nform = 3;
        }
        for (int f = 0; f < nform; f++) {
            size_t at = parts.n;
            key_dtype(&parts, p, pn, relaxed);
            if (f == 0) key_dims(&parts, x->s.d, x->s.rank);
            else key_dims(&parts, forms[f], 2);
            if (parts.over) return NULL;
            bool dup = false;
            for (int j = 0; j < a->n && !dup; j++)
                dup = a->len[j] == parts.n - at && memcmp(parts.p + a->off[j], parts.p + at, parts.n - at) == 0;
            if (dup) {
                parts.n = at;
                continue;
            }
            a->off[a->n] = (uint16_t)at;
            a->len[a->n++] = (uint16_t)(parts.n - at);
        }
        combos *= a->n;
        if (combos > MAX_COMBOS) return NULL;
    }
    *usable = true;
    if (combos == 1) {
        const bucket *b = find(ci, opdb_hash_bytes(parts.p, parts.n, 7));
        if (!b) return NULL;
        fetch_run(ci, b);
        *n = b->n;
        return ci->rows + b->off;
    }
    const bucket *hit[MAX_COMBOS];
    size_t nhit = 0, total = 0;
    uint8_t pick[64] = {0};
    for (size_t ci_ = 0; ci_ < combos; ci_++) {
        kbuf k;
        k.n = 0;
        k.over = false;
        uint32_t ns = (uint32_t)X->n;
        kb_add(&k, &ns, sizeof ns);
        for (size_t i = 0; i < X->n; i++) kb_add(&k, parts.p + alt[i].off[pick[i]], alt[i].len[pick[i]]);
        if (k.over) {
            *usable = false;
            return NULL;
        }
        const bucket *b = find(ci, opdb_hash_bytes(k.p, k.n, 7));
        bool again = false; /* two keys of one hash: one bucket */
        for (size_t j = 0; b && j < nhit; j++) again |= hit[j] == b;
        if (b && !again) {
            hit[nhit++] = b;
            total += b->n;
        }
        /* next combination (odometer) */
        for (size_t i = 0; i < X->n; i++) {
            if (++pick[i] < alt[i].n) break;
            pick[i] = 0;
        }
    }
    if (nhit == 0) return NULL;
    if (nhit == 1) {
        *n = hit[0]->n;
        return ci->rows + hit[0]->off;
    }
    /* rows of several buckets (each row is in one): back into file order */
    uint32_t *rows = opdb_arena_alloc(c->a, total * sizeof *rows);
    size_t k = 0;
    for (size_t i = 0; i < nhit; i++) {
        memcpy(rows + k, ci->rows + hit[i]->off, hit[i]->n * sizeof *rows);
        k += hit[i]->n;
    }
    qsort(rows, total, sizeof *rows, cmp_u32);
    *n = total;
    return rows;
}

bool q_index_exact_keys(q_ctx *c, q_ktable *t, const q_tins *X, int64_t N, bool has_n, bool normalise,
                        const uint32_t *sub, const uint32_t **fh, const uint32_t **sh, uint32_t *qh, size_t *nq) {
    *nq = 0;
    if (sh) *sh = NULL;
    if (c->db->no_index) return false;
    if (normalise && (t->kflags & (QK_ROPE | QK_SWIGLU | QK_RAC))) return false;
    if (X->n > 64) return false;
    const cindex *ci = index_of(t, N, has_n, true, c->db->index_lazy_exact);
    if (!ci || !ci->fh) return false;
    *fh = ci->fh;
    if (sh) *sh = sub_hashes(ci, sub);
    kbuf k;
    k.n = 0;
    k.over = false;
    bool relaxed = t->kflags & QK_RELAXED;
    uint32_t ns = (uint32_t)X->n;
    kb_add(&k, &ns, sizeof ns);
    for (size_t i = 0; i < X->n; i++) {
        const q_tin *x = &X->v[i];
        const char *p = x->prof ? x->prof : q_dtype_prof(x->dtype);
        if (!p) return true; /* an unmapped dtype matches no row */
        key_dtype(&k, p, strlen(p), relaxed);
        key_exact_dims(&k, x->s.d, x->s.rank);
    }
    if (k.over) return false;
    qh[0] = exact_hash(&k);
    *nq = 1;
    return true;
}

/* ---- the elementwise index: rows by their first output shape's key (the
 * output dtype is not compared: other dtypes are scaled by element size) */
static bool out_indexable(const q_ktable *t) {
    if (t->lat_ov_bad) return false;
    for (size_t r = 0; r < t->t.nrows; r++)
        if (t->rows[r].latcol != QLAT_NONE && !q_row_out_ok(&t->rows[r])) return false;
    return true;
}

static cindex *build_out(const q_ktable *t) {
    cindex *ci = opdb_xcalloc(1, sizeof *ci);
    hrows hr = {0};
    for (size_t r = 0; r < t->t.nrows; r++) {
        const q_row *rw = &t->rows[r];
        if (rw->latcol == QLAT_NONE || q_row_nout(t, rw) == 0) continue;
        kbuf k;
        k.n = 0;
        k.over = false;
        key_dims(&k, q_row_out(t, rw, 0).d, q_row_out(t, rw, 0).rank);
        if (k.over) {
            free(hr.v);
            ci->full = true;
            return ci;
        }
        hrows_add(&hr, k.p, k.n, (uint32_t)r);
    }
    file_rows(ci, &hr);
    return ci;
}

static void build_out_exact(const q_ktable *t, cindex *ci) {
    uint32_t *fh = opdb_xcalloc(t->t.nrows ? t->t.nrows : 1, sizeof *fh);
    for (size_t r = 0; r < t->t.nrows; r++) {
        const q_row *rw = &t->rows[r];
        if (rw->latcol == QLAT_NONE || q_row_nout(t, rw) == 0) continue;
        kbuf k;
        k.n = 0;
        k.over = false;
        q_shape o0 = q_row_out(t, rw, 0);
        key_exact_dims(&k, o0.d, o0.rank);
        if (k.over) {
            free(fh);
            publish_exact(ci, NULL);
            return;
        }
        fh[r] = exact_hash(&k);
    }
    publish_exact(ci, fh);
}

static const cindex *out_index_of(q_ktable *t, bool exact) {
    /* found without the lock once built (as index_of) */
    cindex *c0 = __atomic_load_n(&t->ext[3], __ATOMIC_ACQUIRE);
    if (c0 == &k_none || (c0 && c0->full)) return NULL;
    if (c0 && (!exact || __atomic_load_n(&c0->fbuilt, __ATOMIC_ACQUIRE))) return c0;
    opdb_call_lock(&t->ext_mu);
    cindex *ci = t->ext[3];
    if (!ci) {
        ci = out_indexable(t) ? build_out(t) : &k_none;
        __atomic_store_n(&t->ext[3], (void *)ci, __ATOMIC_RELEASE);
    }
    if (exact && ci != &k_none && !ci->full && !ci->fbuilt) build_out_exact(t, ci);
    opdb_call_unlock(&t->ext_mu);
    return ci == &k_none || ci->full ? NULL : ci;
}

bool q_index_out_exact_keys(q_ctx *c, q_ktable *t, q_shape y, const uint32_t *sub, const uint32_t **fh,
                            const uint32_t **sh, uint32_t *qh, size_t *nq) {
    *nq = 0;
    if (sh) *sh = NULL;
    if (c->db->no_index) return false;
    const cindex *ci = out_index_of(t, true);
    if (!ci || !ci->fh) return false;
    *fh = ci->fh;
    if (sh) *sh = sub_hashes(ci, sub);
    /* the shape as given, and its 3-D flattening */
    kbuf k;
    k.n = 0, k.over = false;
    key_exact_dims(&k, y.d, y.rank);
    if (k.over) return false;
    qh[(*nq)++] = exact_hash(&k);
    if (y.rank == 3) {
        int64_t fd[2] = {(int64_t)((uint64_t)y.d[0] * (uint64_t)y.d[1]), y.d[2]};
        k.n = 0, k.over = false;
        key_exact_dims(&k, fd, 2);
        if (k.over) return false;
        qh[(*nq)++] = exact_hash(&k);
    }
    return true;
}

const uint32_t *q_index_out_rows(q_ctx *c, q_ktable *t, q_shape y, size_t *n, bool *usable) {
    *usable = false;
    *n = 0;
    if (c->db->no_index) return NULL;
    const cindex *ci = out_index_of(t, false);
    if (!ci) return NULL;
    /* the shape as given, and its 3-D flattening */
    kbuf k[2];
    int nk = 1;
    k[0].n = 0, k[0].over = false;
    key_dims(&k[0], y.d, y.rank);
    if (y.rank == 3) {
        int64_t fd[2] = {(int64_t)((uint64_t)y.d[0] * (uint64_t)y.d[1]), y.d[2]};
        k[1].n = 0, k[1].over = false;
        key_dims(&k[1], fd, 2);
        nk = k[1].n == k[0].n && memcmp(k[1].p, k[0].p, k[0].n) == 0 ? 1 : 2;
    }
    if (k[0].over || (nk == 2 && k[1].over)) return NULL;
    *usable = true;
    const bucket *hit[2];
    size_t nhit = 0, total = 0;
    for (int i = 0; i < nk; i++) {
        const bucket *b = find(ci, opdb_hash_bytes(k[i].p, k[i].n, 7));
        if (b && !(nhit && hit[0] == b)) { /* two keys of one hash: one bucket */
            hit[nhit++] = b;
            total += b->n;
        }
    }
    if (nhit == 0) return NULL;
    if (nhit == 1) {
        fetch_run(ci, hit[0]);
        *n = hit[0]->n;
        return ci->rows + hit[0]->off;
    }
    uint32_t *rows = opdb_arena_alloc(c->a, total * sizeof *rows);
    memcpy(rows, ci->rows + hit[0]->off, hit[0]->n * sizeof *rows);
    memcpy(rows + hit[0]->n, ci->rows + hit[1]->off, hit[1]->n * sizeof *rows);
    qsort(rows, total, sizeof *rows, cmp_u32);
    *n = total;
    return rows;
}
