/* The sequential half of `opdb parse`: runs on the caller's thread in file
 * order, so sums are accumulated exactly in the reference's order. */
#include "ingest/kd_aggregate.h"

#include <stdlib.h>
#include <string.h>

void kd_agg_init(kd_agg *a) {
    memset(a, 0, sizeof *a);
    opdb_arena_init(&a->arena, 256 * 1024);
    a->nslots = 1024;
    a->slots = opdb_xcalloc(a->nslots, sizeof *a->slots);
}

void kd_agg_free(kd_agg *a) {
    for (size_t i = 0; i < a->n; i++) free(a->g[i].durs);
    free(a->g);
    free(a->slots);
    opdb_arena_free(&a->arena);
    memset(a, 0, sizeof *a);
}

static opdb_span keep(kd_agg *a, opdb_span s) {
    return opdb_span_make(opdb_arena_strndup(&a->arena, s.p, s.n), s.n);
}

static void grow_table(kd_agg *a) {
    size_t n = a->nslots * 2;
    uint32_t *s = opdb_xcalloc(n, sizeof *s);
    for (size_t i = 0; i < a->n; i++) {
        size_t j = a->g[i].hash & (n - 1);
        while (s[j]) j = (j + 1) & (n - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(a->slots);
    a->slots = s;
    a->nslots = n;
}

static kd_group *find_or_add(kd_agg *a, const kd_row *r) {
    size_t mask = a->nslots - 1;
    size_t j = r->hash & mask;
    for (;;) {
        uint32_t s = a->slots[j];
        if (!s) break;
        kd_group *g = &a->g[s - 1];
        if (g->hash == r->hash && opdb_span_eq(g->type, r->type) && opdb_span_eq(g->in, r->in) &&
            opdb_span_eq(g->out, r->out))
            return g;
        j = (j + 1) & mask;
    }
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        a->g = opdb_xrealloc(a->g, a->cap * sizeof *a->g);
    }
    kd_group *g = &a->g[a->n];
    memset(g, 0, sizeof *g);
    g->type = keep(a, r->type);
    g->in = keep(a, r->in);
    g->out = keep(a, r->out);
    for (int i = 0; i < KD_NDESC; i++) g->desc[i] = opdb_span_make("", 0);
    g->hash = r->hash;
    a->slots[j] = (uint32_t)++a->n;
    if (a->n * 2 > a->nslots) grow_table(a);
    return &a->g[a->n - 1];
}

void kd_agg_add(kd_agg *a, const kd_row *r, uint32_t metrics_present) {
    kd_group *g = find_or_add(a, r);
    double d = r->duration;
    g->sum += d;
    g->sumsq += d * d;
    if (g->ndurs == g->capdurs) {
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
