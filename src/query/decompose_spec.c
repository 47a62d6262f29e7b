/* Building a decomposed composite's specs (query/decompose.h): apart from
 * the registry and runner in decompose.c, which call the decomposers that
 * use these. */
#include <string.h>

#include "query/decompose.h"

q_spec *q_spec_add(q_ctx *c, q_specs *out, const char *kernel, q_spec_mode mode) {
    if (out->n == out->cap) {
        size_t nc = out->cap ? out->cap * 2 : 8;
        q_spec *n = opdb_arena_alloc(c->a, nc * sizeof *n);
        if (out->n) memcpy(n, out->v, out->n * sizeof *n);
        out->v = n;
        out->cap = nc;
    }
    q_spec *s = &out->v[out->n++];
    memset(s, 0, sizeof *s);
    s->kernel = kernel;
    s->mode = mode;
    return s;
}

q_shape q_spec_shape(q_ctx *c, size_t rank, const int64_t *d) {
    int64_t *v = opdb_arena_alloc(c->a, (rank ? rank : 1) * sizeof *v);
    if (rank) memcpy(v, d, rank * sizeof *v);
    q_shape s = {v, (uint32_t)rank};
    return s;
}
