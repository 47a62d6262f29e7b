/* The result cache: answers keyed by the query's canonical form (its parsed
 * values without the id), so a repeated query costs a parse and a probe.
 * An answer depends only on the query and the handle (configuration and
 * tables are fixed after open), so a cached answer is the computed one.
 * Sharded, one mutex per shard; a full shard stops taking entries (no
 * eviction: a trace repeats a bounded set of queries). */
#include <stdlib.h>
#include <string.h>

#include "query/query_internal.h"

enum { SHARDS = 16 };

typedef struct centry {
    uint64_t h;
    const uint8_t *key;
    size_t klen;
    q_result r;                  /* strings in the shard's arena; no explain data */
} centry;

typedef struct cshard {
    pthread_mutex_t mu;
    centry *e;
    size_t n, cap, max;
    opdb_hindex ix;
    opdb_arena a;
} cshard;

struct q_cache {
    cshard s[SHARDS];
};

q_cache *q_cache_new(size_t entries) {
    if (!entries) return NULL;
    q_cache *c = opdb_xcalloc(1, sizeof *c);
    for (int i = 0; i < SHARDS; i++) {
        pthread_mutex_init(&c->s[i].mu, NULL);
        c->s[i].max = entries / SHARDS + 1;
        opdb_arena_init(&c->s[i].a, 1 << 14);
    }
    return c;
}

void q_cache_free(q_cache *c) {
    if (!c) return;
    for (int i = 0; i < SHARDS; i++) {
        pthread_mutex_destroy(&c->s[i].mu);
        free(c->s[i].e);
        opdb_hindex_free(&c->s[i].ix);
        opdb_arena_free(&c->s[i].a);
    }
    free(c);
}

/* ---- the canonical form: a kind byte and the payload of every value */
typedef struct kw {
    uint8_t *p;
    size_t n, cap;
    bool over;
} kw;

static void put(kw *k, const void *p, size_t n) {
    if (k->over || k->n + n > k->cap) {
        k->over = true;
        return;
    }
    memcpy(k->p + k->n, p, n);
    k->n += n;
}

static void put_u64(kw *k, uint64_t v) { put(k, &v, sizeof v); }

static void canon(kw *k, const qv *v, bool skip_id) {
    uint8_t kind = v ? (uint8_t)v->kind : 0xff;
    put(k, &kind, 1);
    if (!v) return;
    switch (v->kind) {
    case QV_NULL: break;
    case QV_BOOL: put(k, &v->b, 1); break;
    case QV_INT: put_u64(k, (uint64_t)v->i); break;
    case QV_FLOAT: put(k, &v->f, sizeof v->f); break;
    case QV_STR:
        put_u64(k, v->n);
        put(k, v->s, v->n);
        break;
    case QV_TENSOR:
        put_u64(k, v->shape.rank);
        put(k, v->shape.d, v->shape.rank * sizeof *v->shape.d);
        put_u64(k, (uint64_t)(int64_t)v->dtype);
        put_u64(k, v->values ? v->nvalues : (uint64_t)-1);
        if (v->values) put(k, v->values, v->nvalues * sizeof *v->values);
        break;
    case QV_DTYPE: put_u64(k, (uint64_t)(int64_t)v->dtype); break;
    case QV_LIST:
        put_u64(k, v->n);
        for (size_t i = 0; i < v->n; i++) canon(k, v->items[i], false);
        break;
    case QV_DICT:
        put_u64(k, v->n);
        for (size_t i = 0; i < v->n; i++) {
            if (skip_id && qv_is_str(v->keys[i], "id")) continue;
            canon(k, v->keys[i], false);
            canon(k, v->items[i], false);
        }
        break;
    }
}

/* the key of q into buf; 0 when it does not fit (not cached) */
size_t q_cache_key(const q_query *q, uint8_t *buf, size_t cap) {
    kw k = {buf, 0, cap, false};
    if (q->kernel) {
        uint8_t tag = 'K';
        put(&k, &tag, 1);
        canon(&k, q->kq, true);
    } else {
        uint8_t tag = 'O';
        put(&k, &tag, 1);
        size_t n = q->op ? strlen(q->op) : 0;
        put_u64(&k, n);
        put(&k, q->op, n);
        canon(&k, q->args, false);
        canon(&k, q->out, false);
        canon(&k, q->kwargs, false);
    }
    return k.over ? 0 : k.n;
}

static const char *dup(opdb_arena *a, const char *s) { return s ? opdb_arena_strndup(a, s, strlen(s)) : NULL; }

/* the answer fields of r with every string in a */
static void copy_answer(opdb_arena *a, const q_result *from, q_result *to) {
    memset(to, 0, sizeof *to);
    to->src = from->src;
    to->lat = from->lat;
    to->conf = from->conf;
    to->rule = dup(a, from->rule);
    to->kernel = dup(a, from->kernel);
    to->miss = dup(a, from->miss);
    to->error_msg = dup(a, from->error_msg);
    to->request = dup(a, from->request);
    to->has_iv = from->has_iv;
    to->iv_at = from->iv_at;
    memcpy(to->iv90, from->iv90, sizeof to->iv90);
    memcpy(to->iv80, from->iv80, sizeof to->iv80);
    to->iv_med = from->iv_med;
    to->has_sub = from->has_sub;
    to->n_sub = to->cap_sub = from->n_sub;
    if (from->n_sub) {
        to->sub = opdb_arena_alloc(a, from->n_sub * sizeof *to->sub);
        for (size_t i = 0; i < from->n_sub; i++) {
            to->sub[i].kernel = dup(a, from->sub[i].kernel);
            to->sub[i].us = from->sub[i].us;
        }
    }
}

static cshard *shard(q_cache *c, uint64_t h) { return &c->s[(h >> 60) % SHARDS]; }

static centry *find(cshard *s, uint64_t h, const uint8_t *key, size_t n) {
    uint32_t idx;
    for (opdb_hprobe p = opdb_hindex_probe(&s->ix, h); opdb_hprobe_next(&p, &idx);)
        if (s->e[idx].klen == n && memcmp(s->e[idx].key, key, n) == 0) return &s->e[idx];
    return NULL;
}

bool q_cache_get(q_cache *c, const uint8_t *key, size_t n, opdb_arena *a, q_result *out) {
    uint64_t h = opdb_hash_bytes(key, n, 11);
    cshard *s = shard(c, h);
    opdb_call_lock(&s->mu);
    const centry *e = find(s, h, key, n);
    if (e) copy_answer(a, &e->r, out);
    opdb_call_unlock(&s->mu);
    return e != NULL;
}

void q_cache_put(q_cache *c, const uint8_t *key, size_t n, const q_result *r) {
    uint64_t h = opdb_hash_bytes(key, n, 11);
    cshard *s = shard(c, h);
    opdb_call_lock(&s->mu);
    if (s->n < s->max && !find(s, h, key, n)) {
        OPDB_ALLOC_GROW(s->e, s->n + 1, s->cap);
        centry *e = &s->e[s->n];
        e->h = h;
        uint8_t *k = opdb_arena_alloc(&s->a, n ? n : 1);
        memcpy(k, key, n);
        e->key = k;
        e->klen = n;
        copy_answer(&s->a, r, &e->r);
        opdb_hindex_add(&s->ix, h, (uint32_t)s->n++);
    }
    opdb_call_unlock(&s->mu);
}
