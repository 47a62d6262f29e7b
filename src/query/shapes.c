/* Shapes: the CSV cell notation, the views of a query's tensors (batch
 * strip, FRACTAL_NZ restore) and block padding. */
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"
#include "core/alloc.h"
#include "query/query_internal.h"

int64_t q_numel(q_shape s) {
    int64_t n = 1;
    for (uint32_t i = 0; i < s.rank; i++) {
        if (s.d[i] == 0) return 0;
        n = q_mul_sat(n, s.d[i]);
    }
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

int q_parse_shapes(opdb_arena *a, const char *s, size_t n, q_shape **out, uint32_t *nout) {
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
        int64_t *d = opdb_arena_alloc(a, dims * sizeof *d);
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
        v[k].d = d;
        v[k++].rank = r;
    }
    *out = v;
    *nout = k;
    return 0;
}

/* ---- the database's shapes: ids by content */

struct q_sslot {
    uint32_t h;                  /* the shape's hash (low half) */
    uint32_t id1;                /* its id + 1; 0 = empty */
};

void q_shape_store_init(q_shape_store *st) {
    memset(st, 0, sizeof *st);
    opdb_mutex_init_brief(&st->mu);
    opdb_arena_init(&st->dims, 1 << 16);
}

void q_shape_store_free(q_shape_store *st) {
    for (size_t k = 0; k < sizeof st->seg / sizeof st->seg[0]; k++) free(st->seg[k]);
    free(st->slot);
    opdb_arena_free(&st->dims);
    pthread_mutex_destroy(&st->mu);
}

void q_shape_buf_free(q_shape_buf *b) {
    free(b->d);
    free(b->s);
    memset(b, 0, sizeof *b);
}

/* The common cell, only digits, ',' and ';' with every dim 1 to 18 digits
 * (no int64 overflow), read in one pass; false, b as it was, for anything
 * else (the general reading then decides). */
static bool parse_plain(q_shape_buf *b, const char *s, size_t n) {
    /* at most n / 2 + 1 dims and shapes: the room is made once */
    size_t most = n / 2 + 1;
    if (b->nd + most > UINT32_MAX) return false;
    OPDB_ALLOC_GROW(b->d, b->nd + most, b->capd);
    OPDB_ALLOC_GROW(b->s, b->n + most, b->cap);
    size_t nd = b->nd, ns = b->n, i = 0;
    int64_t *d = b->d;
    while (i < n) {
        if (s[i] == ';') { /* an empty piece */
            i++;
            continue;
        }
        uint32_t at = (uint32_t)nd;
        for (;;) {
            size_t j = i;
            uint64_t v = 0; /* wraps past 20 digits, which are refused below */
            for (unsigned c; j < n && (c = (unsigned)(s[j] - '0')) < 10; j++) v = v * 10 + c;
            if (j == i || j - i > 18) return false;
            d[nd++] = (int64_t)v;
            i = j + 1;
            if (j == n || s[j] == ';') break;
            if (s[j] != ',' || i == n || s[i] == ';' || s[i] == ',') return false; /* an empty dim: py_int refuses it */
        }
        b->s[ns].at = at;
        b->s[ns++].rank = (uint32_t)(nd - at);
    }
    b->nd = nd;
    b->n = ns;
    return true;
}

bool q_shape_buf_parse(q_shape_buf *b, const char *s, size_t n) {
    if (parse_plain(b, s, n)) return true;
    opdb_span t = opdb_py_strip(opdb_span_make(s, n));
    t = opdb_py_strip_chars(t, "\"");
    size_t nd0 = b->nd, n0 = b->n;
    size_t i = 0;
    while (i <= t.n) {
        size_t j = i;
        while (j < t.n && t.p[j] != ';') j++;
        opdb_span part = opdb_py_strip(opdb_span_make(t.p + i, j - i));
        i = j + 1;
        if (part.n == 0) continue;
        OPDB_ALLOC_GROW(b->s, b->n + 1, b->cap);
        struct q_sbuf_shape *sh = &b->s[b->n];
        sh->at = (uint32_t)b->nd;
        sh->rank = 0;
        if (!(part.n == 2 && part.p[0] == '(' && part.p[1] == ')')) {
            size_t dims = 1;
            for (size_t x = 0; x < part.n; x++) dims += part.p[x] == ',';
            /* dims offsets are 32-bit: a cell's text is far shorter than 4 Gi commas */
            if (b->nd + dims > UINT32_MAX) opdb_die_oom(SIZE_MAX);
            OPDB_ALLOC_GROW(b->d, b->nd + dims, b->capd);
            size_t x = 0;
            while (x <= part.n) {
                size_t y = x;
                while (y < part.n && part.p[y] != ',') y++;
                long long val;
                if (!opdb_py_int(part.p + x, y - x, &val)) {
                    b->nd = nd0;
                    b->n = n0;
                    return false;
                }
                b->d[b->nd++] = val;
                x = y + 1;
            }
            sh->rank = (uint32_t)(b->nd - sh->at);
        }
        b->n++;
    }
    return true;
}

static uint32_t shape_hash(const int64_t *d, uint32_t r) { return (uint32_t)opdb_hash_bytes(d, r * sizeof *d, 3); }

/* a new shape's entry (under st->mu): its segment made when it is the first there */
static uint32_t store_put(q_shape_store *st, const int64_t *d, uint32_t r) {
    if (st->n >= UINT32_MAX - Q_SSEG0) opdb_die_oom(SIZE_MAX); /* ids are 32-bit */
    uint32_t id = st->n, x = id + Q_SSEG0;
    unsigned k = (unsigned)(31 - __builtin_clz(x)) - Q_SSEG0_LOG;
    if (!st->seg[k]) st->seg[k] = opdb_xmalloc(((size_t)Q_SSEG0 << k) * sizeof *st->seg[k]);
    q_shape *e = &st->seg[k][x - (Q_SSEG0 << k)];
    if (r) {
        int64_t *kd = opdb_arena_alloc(&st->dims, r * sizeof *kd);
        memcpy(kd, d, r * sizeof *kd);
        e->d = kd;
    } else {
        e->d = NULL; /* "()", as q_parse_shapes gives it */
    }
    e->rank = r;
    st->n++;
    return id;
}

void q_shape_store_add(q_shape_store *st, const q_shape_buf *b, uint32_t *ids) {
    if (!b->n) return;
    opdb_call_lock(&st->mu);
    for (size_t i = 0; i < b->n; i++) {
        if (2 * ((size_t)st->n + 1) > st->cap) { /* grow: at most half full */
            size_t cap = st->cap ? st->cap * 2 : 1024;
            struct q_sslot *g = opdb_xzeroed(cap, sizeof *g);
            for (size_t j = 0; j < st->cap; j++) {
                if (!st->slot[j].id1) continue;
                size_t p = st->slot[j].h & (cap - 1);
                while (g[p].id1) p = (p + 1) & (cap - 1);
                g[p] = st->slot[j];
            }
            free(st->slot);
            st->slot = g;
            st->cap = cap;
        }
        const int64_t *d = b->d + b->s[i].at;
        uint32_t r = b->s[i].rank, h = shape_hash(d, r);
        size_t p = h & (st->cap - 1);
        for (; st->slot[p].id1; p = (p + 1) & (st->cap - 1)) {
            if (st->slot[p].h != h) continue;
            q_shape e = q_shape_of(st, st->slot[p].id1 - 1);
            if (e.rank != r) continue;
            uint32_t k = 0; /* ranks are short: compared in place */
            while (k < r && e.d[k] == d[k]) k++;
            if (k == r) break;
        }
        if (!st->slot[p].id1) {
            st->slot[p].id1 = store_put(st, d, r) + 1;
            st->slot[p].h = h;
        }
        ids[i] = st->slot[p].id1 - 1;
    }
    opdb_call_unlock(&st->mu);
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
