/* The per-kernel-type accumulator table shared by both sides of `compare`. */
#include <stdlib.h>
#include <string.h>

#include "opdb/compare.h"

opdb_cmp_stat *opdb_cmp_stats_find(const opdb_cmp_stats *s, const char *kt, size_t n) {
    uint64_t h = opdb_hash_bytes(kt, n, 0);
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&s->ix, h); opdb_hprobe_next(&p, &i);)
        if (s->v[i].ktlen == n && memcmp(s->v[i].kt, kt, n) == 0) return &s->v[i];
    return NULL;
}

opdb_cmp_stat *opdb_cmp_stats_get(opdb_cmp_stats *s, const char *kt, size_t n) {
    opdb_cmp_stat *st = opdb_cmp_stats_find(s, kt, n);
    if (st) return st;
    OPDB_ALLOC_GROW(s->v, s->n + 1, s->cap);
    st = &s->v[s->n];
    memset(st, 0, sizeof *st);
    st->kt = opdb_xmalloc(n + 1);
    memcpy(st->kt, kt, n);
    st->kt[n] = '\0';
    st->ktlen = n;
    opdb_hindex_add(&s->ix, opdb_hash_bytes(kt, n, 0), (uint32_t)s->n);
    s->n++;
    return st;
}

void opdb_cmp_stat_add_func(opdb_cmp_stat *st, const char *fn, size_t n) {
    if (st->nfuncs == 3) return;
    for (int k = 0; k < st->nfuncs; k++)
        if (strlen(st->funcs[k]) == n && memcmp(st->funcs[k], fn, n) == 0) return;
    char *c = opdb_xmalloc(n + 1);
    memcpy(c, fn, n);
    c[n] = '\0';
    st->funcs[st->nfuncs++] = c;
}

void opdb_cmp_stats_free(opdb_cmp_stats *s) {
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].kt);
        for (int k = 0; k < s->v[i].nfuncs; k++) free(s->v[i].funcs[k]);
    }
    free(s->v);
    opdb_hindex_free(&s->ix);
    memset(s, 0, sizeof *s);
}
