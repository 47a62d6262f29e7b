/* Shapes: the CSV cell notation, the views of a query's tensors (batch
 * strip, FRACTAL_NZ restore) and block padding. */
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"
#include "query/query_internal.h"

int64_t q_numel(q_shape s) {
    int64_t n = 1;
    for (uint32_t i = 0; i < s.rank; i++) n *= s.d[i];
    return n;
}

bool q_shape_eq(q_shape a, q_shape b) {
    if (a.rank != b.rank) return false;
    for (uint32_t i = 0; i < a.rank; i++)
        if (a.d[i] != b.d[i]) return false;
    return true;
}

q_shape q_strip(q_shape s) {
    if (s.rank > 1 && s.d[0] == 1) {
        s.d++;
        s.rank--;
    }
    return s;
}

q_shape q_nz(q_ctx *c, q_shape s) {
    if (s.rank < 4) return s;
    int64_t *d = opdb_arena_alloc(c->a, (s.rank - 2) * sizeof *d);
    uint32_t r = s.rank;
    for (uint32_t i = 0; i + 4 < r; i++) d[i] = s.d[i];
    int64_t H = s.d[r - 4], W = s.d[r - 3], bh = s.d[r - 2], bw = s.d[r - 1];
    d[r - 4] = H * bw;
    d[r - 3] = W * bh;
    q_shape o = {d, r - 2};
    return o;
}

bool q_padded(int64_t t, int64_t c) {
    if (t <= c) return false;
    static const int64_t b[] = {16, 32, 64};
    for (int k = 0; k < 3; k++) {
        /* ceil(c / b) * b with Python's floor semantics for negative c */
        int64_t q = c >= 0 ? (c + b[k] - 1) / b[k] : -((-c) / b[k]);
        if (t == q * b[k]) return true;
    }
    if (c >= 64 && t == (c + 7) / 8 * 8) return true;
    return false;
}

bool q_padmatch(q_shape a, q_shape b) {
    if (a.rank != b.rank) return false;
    bool any = false;
    for (uint32_t i = 0; i < a.rank; i++) {
        if (a.d[i] == b.d[i]) continue;
        if (!q_padded(a.d[i], b.d[i])) return false;
        any = true;
    }
    return any;
}

size_t q_slice_n(size_t len, int64_t n) {
    if (n >= 0) return (size_t)n < len ? (size_t)n : len;
    uint64_t drop = (uint64_t)(-(n + 1)) + 1;
    return drop >= len ? 0 : len - (size_t)drop;
}

/* Dims arrays kept once: a table repeats the same shapes on many rows. */
struct q_dims_memo {
    struct {
        const int64_t *d;
        uint32_t r;
        uint64_t h;
    } *e;
    size_t cap, n;
};

q_dims_memo *q_dims_memo_new(void) { return opdb_xcalloc(1, sizeof(q_dims_memo)); }

void q_dims_memo_free(q_dims_memo *m) {
    if (!m) return;
    free(m->e);
    free(m);
}

static const int64_t *dims_keep(q_dims_memo *m, opdb_arena *a, const int64_t *d, uint32_t r) {
    if (2 * (m->n + 1) > m->cap) { /* grow: open addressing, at most half full */
        size_t cap = m->cap ? m->cap * 2 : 256;
        q_dims_memo g = {opdb_xcalloc(cap, sizeof *m->e), cap, 0};
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->e[i].d) continue;
            size_t j = m->e[i].h & (cap - 1);
            while (g.e[j].d) j = (j + 1) & (cap - 1);
            g.e[j] = m->e[i];
            g.n++;
        }
        free(m->e);
        *m = g;
    }
    uint64_t h = opdb_hash_bytes(d, r * sizeof *d, 3);
    size_t j = h & (m->cap - 1);
    for (; m->e[j].d; j = (j + 1) & (m->cap - 1))
        if (m->e[j].h == h && m->e[j].r == r && memcmp(m->e[j].d, d, r * sizeof *d) == 0) return m->e[j].d;
    int64_t *k = opdb_arena_alloc(a, r * sizeof *k);
    memcpy(k, d, r * sizeof *k);
    m->e[j].d = k;
    m->e[j].r = r;
    m->e[j].h = h;
    m->n++;
    return k;
}

int q_parse_shapes(opdb_arena *a, const char *s, size_t n, q_shape **out, uint32_t *nout) {
    return q_parse_shapes_memo(a, NULL, s, n, out, nout);
}

int q_parse_shapes_memo(opdb_arena *a, q_dims_memo *m, const char *s, size_t n, q_shape **out, uint32_t *nout) {
    opdb_span t = opdb_py_strip(opdb_span_make(s, n));
    t = opdb_py_strip_chars(t, "\"");
    *out = NULL;
    *nout = 0;
    /* count parts */
    size_t parts = 1;
    for (size_t i = 0; i < t.n; i++) parts += t.p[i] == ';';
    q_shape *v = opdb_arena_alloc(a, parts * sizeof *v);
    uint32_t k = 0;
    size_t i = 0;
    while (i <= t.n) {
        size_t j = i;
        while (j < t.n && t.p[j] != ';') j++;
        opdb_span part = opdb_py_strip(opdb_span_make(t.p + i, j - i));
        i = j + 1;
        if (part.n == 0) continue;
        if (part.n == 2 && part.p[0] == '(' && part.p[1] == ')') {
            v[k].d = NULL;
            v[k++].rank = 0;
            continue;
        }
        size_t dims = 1;
        for (size_t x = 0; x < part.n; x++) dims += part.p[x] == ',';
        int64_t tmp[16];
        int64_t *d = m && dims <= 16 ? tmp : opdb_arena_alloc(a, dims * sizeof *d);
        size_t x = 0;
        uint32_t r = 0;
        while (x <= part.n) {
            size_t y = x;
            while (y < part.n && part.p[y] != ',') y++;
            long long val;
            if (!opdb_py_int(part.p + x, y - x, &val)) return -1;
            d[r++] = val;
            x = y + 1;
        }
        v[k].d = d == tmp ? dims_keep(m, a, tmp, r) : d;
        v[k++].rank = r;
    }
    *out = v;
    *nout = k;
    return 0;
}

q_tins q_tensor_inputs(q_ctx *c, const qv *args) {
    q_tins t = {NULL, 0};
    if (!args || args->kind != QV_LIST) return t;
    size_t cap = 0;
    for (size_t i = 0; i < args->n; i++) {
        const qv *v = args->items[i];
        if (v->kind == QV_TENSOR) {
            if (v->shape.rank >= 1) cap++;
        } else if (v->kind == QV_LIST) {
            for (size_t j = 0; j < v->n; j++)
                if (v->items[j]->kind == QV_TENSOR && v->items[j]->shape.rank >= 1) cap++;
        }
    }
    t.v = opdb_arena_alloc(c->a, (cap ? cap : 1) * sizeof *t.v);
    for (size_t i = 0; i < args->n; i++) {
        const qv *v = args->items[i];
        if (v->kind == QV_TENSOR) {
            if (v->shape.rank >= 1) t.v[t.n].s = v->shape, t.v[t.n].prof = NULL, t.v[t.n++].dtype = v->dtype;
        } else if (v->kind == QV_LIST) {
            for (size_t j = 0; j < v->n; j++) {
                const qv *w = v->items[j];
                if (w->kind == QV_TENSOR && w->shape.rank >= 1) t.v[t.n].s = w->shape, t.v[t.n].prof = NULL, t.v[t.n++].dtype = w->dtype;
            }
        }
    }
    return t;
}
