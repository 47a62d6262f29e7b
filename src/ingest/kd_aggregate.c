/* The sequential half of `opdb parse`: kd_agg_add runs on the caller's
 * thread in file order, so sums accumulate exactly in the reference's order. */
#include "ingest/kd_aggregate.h"

#include <stdlib.h>
#include <string.h>
#include "opdb/stats.h"

void kd_agg_init(kd_agg *a) {
    memset(a, 0, sizeof *a);
    opdb_arena_init(&a->arena, 256 * 1024);
    atomic_init(&a->table, opdb_pub_slots_new(1024));
}

void kd_agg_free(kd_agg *a) {
    for (size_t i = 0; i < a->n; i++) free(a->g[i].durs);
    free(a->g);
    opdb_pub_slots_free(atomic_load(&a->table));
    opdb_arena_free(&a->arena);
    memset(a, 0, sizeof *a);
}

static inline bool key_eq(const kd_key *k, const kd_row *r) {
    return k->hash == r->hash && opdb_span_eq(k->type, r->type) && opdb_span_eq(k->in, r->in) &&
           opdb_span_eq(k->out, r->out);
}

uint32_t kd_agg_probe(const kd_agg *a, const kd_row *r) {
    const opdb_pub_slots *t = atomic_load_explicit(&((kd_agg *)a)->table, memory_order_acquire);
    size_t mask = t->nslots - 1;
    for (size_t j = r->hash & mask;; j = (j + 1) & mask) {
        const kd_key *k = opdb_pub_slots_at(t, j);
        if (!k) return 0;
        if (key_eq(k, r)) return k->index + 1;
    }
}

static opdb_span keep(kd_agg *a, opdb_span s) {
    return opdb_span_make(opdb_arena_strndup(&a->arena, s.p, s.n), s.n);
}

static kd_group *find_or_add(kd_agg *a, const kd_row *r) {
    uint32_t hit = kd_agg_probe(a, r);
    if (hit) return &a->g[hit - 1];
    OPDB_ALLOC_GROW(a->g, a->n + 1, a->cap);
    kd_key *k = opdb_arena_alloc(&a->arena, sizeof *k);
    k->type = keep(a, r->type);
    k->in = keep(a, r->in);
    k->out = keep(a, r->out);
    k->hash = r->hash;
    k->index = (uint32_t)a->n;
    kd_group *g = &a->g[a->n++];
    memset(g, 0, sizeof *g);
    g->key = k;
    for (int i = 0; i < KD_NDESC; i++) g->desc[i] = opdb_span_make("", 0);
    opdb_pub_slots *t = atomic_load_explicit(&a->table, memory_order_relaxed);
    if (a->n * 2 > t->nslots) {
        /* Grow: readers may still hold the old table, so keep it until the end. */
        opdb_pub_slots *nt = opdb_pub_slots_new(t->nslots * 2);
        for (size_t i = 0; i < a->n - 1; i++) opdb_pub_slots_place(nt, a->g[i].key, a->g[i].key->hash);
        nt->retired = t;
        atomic_store_explicit(&a->table, nt, memory_order_release);
        t = nt;
    }
    opdb_pub_slots_place(t, k, k->hash);
    return g;
}

void kd_agg_add(kd_agg *a, const kd_row *r, uint32_t metrics_present) {
    kd_group *g = r->group ? &a->g[r->group - 1] : find_or_add(a, r);
    double d = r->duration;
    g->sum += d;
    g->sumsq += d * d;
    if (g->ndurs == g->capdurs) {
        /* 1.5x, not OPDB_ALLOC_GROW: one array per group holds every duration, so it bounds peak memory */
        g->capdurs = g->capdurs ? g->capdurs + g->capdurs / 2 + 8 : 8;
        g->durs = opdb_xrealloc(g->durs, g->capdurs * sizeof *g->durs);
    }
    g->durs[g->ndurs++] = d;
    g->count++;
    for (int m = 0; m < OPDB_NMETRICS; m++) g->msum[m] += r->metric[m];
    g->metrics_seen |= metrics_present;
    for (int i = 0; i < KD_NDESC; i++)
        if (g->desc[i].n == 0 && r->desc[i].n) g->desc[i] = keep(a, r->desc[i]);
}

void kd_agg_finish(kd_agg *a, void (*tick)(void *ctx, size_t done), void *ctx) {
    for (size_t i = 0; i < a->n; i++) {
        kd_group *g = &a->g[i];
        double count = (double)g->count;
        g->mean = g->sum / count;
        /* in row order, before the median sorts them: min()/max() as Python keeps the first of NaN ties */
        g->min = g->max = g->ndurs ? g->durs[0] : 0.0;
        for (size_t k = 1; k < g->ndurs; k++) {
            if (g->durs[k] < g->min) g->min = g->durs[k];
            if (g->durs[k] > g->max) g->max = g->durs[k];
        }
        g->median = opdb_median(g->durs, g->ndurs);
        g->std = opdb_pstd_naive(g->sum, g->sumsq, count);
        free(g->durs);
        g->durs = NULL;
        g->ndurs = g->capdurs = 0;
        if (tick && (i % 256 == 255 || i + 1 == a->n)) tick(ctx, i + 1);
    }
}
