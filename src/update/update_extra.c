/* See update_extra.h. */
#include "update/update_extra.h"

#include <stdlib.h>
#include <string.h>

void extra_index_build(extra_index *x, const opdb_update_opts *o, const char *stem) {
    memset(x, 0, sizeof *x);
    for (size_t i = 0; i < o->nextra; i++) {
        const opdb_update_extra *e = &o->extra[i];
        if (strcmp(e->csv_stem, stem) != 0) continue;
        x->e = opdb_xrealloc(x->e, (x->n + 1) * sizeof *x->e);
        x->e[x->n] = e;
        opdb_hindex_add(&x->ix, opdb_hash_bytes(e->sig, strlen(e->sig), 7), (uint32_t)x->n++);
        x->ndrop += e->drop;
    }
}

const opdb_update_extra *extra_find(const extra_index *x, const char *sig) {
    if (!x->n) return NULL;
    uint32_t i;
    const opdb_update_extra *hit = NULL;
    /* the last entry for a signature wins, like a later measurement */
    for (opdb_hprobe p = opdb_hindex_probe(&x->ix, opdb_hash_bytes(sig, strlen(sig), 7)); opdb_hprobe_next(&p, &i);)
        if (strcmp(x->e[i]->sig, sig) == 0 && (!hit || x->e[i] > hit)) hit = x->e[i];
    return hit;
}

void extra_index_free(extra_index *x) {
    free(x->e);
    opdb_hindex_free(&x->ix);
    memset(x, 0, sizeof *x);
}
