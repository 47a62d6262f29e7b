/* The result cache: answers keyed by the query's canonical form (its parsed
 * values without the id), so a repeated query costs a parse and a probe.
 * An answer depends only on the query and the handle (configuration and
 * tables are fixed after open), so a cached answer is the computed one.
 * Sharded, one mutex per shard; a full shard stops taking entries (no
 * eviction: a trace repeats a bounded set of queries).
 *
 * Memory: an entry is one block in its shard's arena (the answer's fields
 * and the key, lengths and integers as varints); the answers' strings are
 * kept once per shard (kernel names, rules and miss reasons repeat). A
 * shard stops taking entries at its share of the entry count or of the
 * byte budget (Q_CACHE_ENTRY_BYTES per entry allowed). */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "query/query_internal.h"

enum { SHARDS = 16 };

typedef struct centry {
    uint64_t h;
    uint32_t klen, n_sub;
    uint8_t src;
    bool has_sub;
    double lat, conf;
    const char *rule, *kernel, *miss, *error_msg, *request; /* the shard's kept strings */
    const double *iv;            /* iv_at, iv90[2], iv80[2], iv_med; NULL when the answer has none */
    q_sub *sub;
    uint8_t key[];
} centry;

typedef struct cslot {
    uint64_t h;                  /* the entry's hash: a probe reads no entry of another hash */
    centry *e;                   /* NULL = empty */
} cslot;

typedef struct cshard {
    pthread_mutex_t mu;
    cslot *slot;                 /* open addressing, at most half full */
    size_t nslots, n, max;
    size_t bytes, max_bytes;     /* arena bytes taken by entries and strings */
    const char **str;            /* kept strings: open addressing, at most half full */
    size_t nstr, nstrslots;
    opdb_arena a;
} cshard;

struct q_cache {
    cshard s[SHARDS];
};

q_cache *q_cache_new(size_t entries) {
    if (!entries) return NULL;
    q_cache *c = opdb_xcalloc(1, sizeof *c);
    size_t bytes = entries > SIZE_MAX / Q_CACHE_ENTRY_BYTES ? SIZE_MAX : entries * Q_CACHE_ENTRY_BYTES;
    for (int i = 0; i < SHARDS; i++) {
        pthread_mutex_init(&c->s[i].mu, NULL);
        c->s[i].max = entries / SHARDS + 1;
        c->s[i].max_bytes = bytes / SHARDS + Q_CACHE_ENTRY_BYTES;
        opdb_arena_init(&c->s[i].a, 1 << 14);
    }
    return c;
}

void q_cache_free(q_cache *c) {
    if (!c) return;
    for (int i = 0; i < SHARDS; i++) {
        pthread_mutex_destroy(&c->s[i].mu);
        free(c->s[i].slot);
        free(c->s[i].str);
        opdb_arena_free(&c->s[i].a);
    }
    free(c);
}

/* ---- the canonical form: a kind byte and the payload of every value; counts
 * and integers as varints (each self-delimiting, so distinct values stay
 * distinct keys), doubles as their 8 bytes */
static void canon(q_kbuf *k, const qv *v, bool skip_id) {
    uint8_t kind = v ? (uint8_t)v->kind : 0xff;
    q_kput(k, &kind, 1);
    if (!v) return;
    switch (v->kind) {
    case QV_NULL: break;
    case QV_BOOL: q_kput(k, &v->b, 1); break;
    case QV_INT: q_kput_svar(k, v->i); break;
    case QV_FLOAT: q_kput(k, &v->f, sizeof v->f); break;
    case QV_STR:
        q_kput_var(k, v->n);
        q_kput(k, v->s, v->n);
        break;
    case QV_TENSOR:
        q_kput_var(k, v->shape.rank);
        for (uint32_t i = 0; i < v->shape.rank; i++) q_kput_svar(k, v->shape.d[i]);
        q_kput_svar(k, v->dtype);
        q_kput_var(k, v->values ? v->nvalues + 1 : 0);
        if (v->values) q_kput(k, v->values, v->nvalues * sizeof *v->values);
        break;
    case QV_DTYPE: q_kput_svar(k, v->dtype); break;
    case QV_LIST:
        q_kput_var(k, v->n);
        for (size_t i = 0; i < v->n; i++) canon(k, v->items[i], false);
        break;
    case QV_DICT:
        q_kput_var(k, v->n);
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
    q_kbuf k = {buf, 0, cap, false};
    if (q->kernel) {
        uint8_t tag = 'K';
        q_kput(&k, &tag, 1);
        canon(&k, q->kq, true);
    } else {
        uint8_t tag = 'O';
        q_kput(&k, &tag, 1);
        size_t n = q->op ? strlen(q->op) : 0;
        q_kput_var(&k, n);
        q_kput(&k, q->op, n);
        canon(&k, q->args, false);
        canon(&k, q->out, false);
        canon(&k, q->kwargs, false);
    }
    return k.over ? 0 : k.n;
}

/* ---- entries */
static const char *dup(opdb_arena *a, const char *s) { return s ? opdb_arena_strndup(a, s, strlen(s)) : NULL; }

static void *shard_alloc(cshard *s, size_t n) {
    s->bytes += (n + 7) & ~(size_t)7;
    return opdb_arena_alloc(&s->a, n);
}

/* s kept once in the shard (NULL stays NULL) */
static const char *keep(cshard *s, const char *str) {
    if (!str) return NULL;
    if (!*str) return "";
    if (2 * (s->nstr + 1) > s->nstrslots) {
        size_t ns = s->nstrslots ? s->nstrslots * 2 : 64;
        const char **v = opdb_xcalloc(ns, sizeof *v);
        for (size_t i = 0; i < s->nstrslots; i++) {
            if (!s->str[i]) continue;
            size_t j = opdb_hash_bytes(s->str[i], strlen(s->str[i]), 12) & (ns - 1);
            while (v[j]) j = (j + 1) & (ns - 1);
            v[j] = s->str[i];
        }
        free(s->str);
        s->str = v;
        s->nstrslots = ns;
    }
    size_t n = strlen(str);
    size_t j = opdb_hash_bytes(str, n, 12) & (s->nstrslots - 1);
    for (; s->str[j]; j = (j + 1) & (s->nstrslots - 1))
        if (strcmp(s->str[j], str) == 0) return s->str[j];
    char *k = shard_alloc(s, n + 1);
    memcpy(k, str, n + 1);
    s->str[j] = k;
    s->nstr++;
    return k;
}

static cshard *shard(q_cache *c, uint64_t h) { return &c->s[(h >> 60) % SHARDS]; }

/* the slot of key: its entry, or the empty slot where it would go */
static cslot *find(cshard *s, uint64_t h, const uint8_t *key, size_t n) {
    if (!s->nslots) return NULL;
    for (size_t j = h & (s->nslots - 1);; j = (j + 1) & (s->nslots - 1)) {
        cslot *sl = &s->slot[j];
        if (!sl->e || (sl->h == h && sl->e->klen == n && memcmp(sl->e->key, key, n) == 0)) return sl;
    }
}

bool q_cache_get(q_cache *c, const uint8_t *key, size_t n, opdb_arena *a, q_result *out) {
    uint64_t h = opdb_hash_bytes(key, n, 11);
    cshard *s = shard(c, h);
    opdb_call_lock(&s->mu);
    cslot *sl = find(s, h, key, n);
    const centry *e = sl ? sl->e : NULL;
    if (e) { /* the answer fields with every string in a */
        memset(out, 0, sizeof *out);
        out->src = (q_src)e->src;
        out->lat = e->lat;
        out->conf = e->conf;
        out->rule = dup(a, e->rule);
        out->kernel = dup(a, e->kernel);
        out->miss = dup(a, e->miss);
        out->error_msg = dup(a, e->error_msg);
        out->request = dup(a, e->request);
        if (e->iv) {
            out->has_iv = true;
            out->iv_at = e->iv[0];
            memcpy(out->iv90, e->iv + 1, sizeof out->iv90);
            memcpy(out->iv80, e->iv + 3, sizeof out->iv80);
            out->iv_med = e->iv[5];
        }
        out->has_sub = e->has_sub;
        out->n_sub = out->cap_sub = e->n_sub;
        if (e->n_sub) {
            out->sub = opdb_arena_alloc(a, e->n_sub * sizeof *out->sub);
            for (size_t i = 0; i < e->n_sub; i++) {
                out->sub[i].kernel = dup(a, e->sub[i].kernel);
                out->sub[i].us = e->sub[i].us;
            }
        }
    }
    opdb_call_unlock(&s->mu);
    return e != NULL;
}

void q_cache_put(q_cache *c, const uint8_t *key, size_t n, const q_result *r) {
    uint64_t h = opdb_hash_bytes(key, n, 11);
    cshard *s = shard(c, h);
    opdb_call_lock(&s->mu);
    if (s->n >= s->max || s->bytes >= s->max_bytes || n > UINT32_MAX || r->n_sub > UINT32_MAX) goto out;
    if (2 * (s->n + 1) > s->nslots) { /* grow: every entry placed again */
        size_t ns = s->nslots ? s->nslots * 2 : 64;
        cslot *v = opdb_xzeroed(ns, sizeof *v);
        for (size_t i = 0; i < s->nslots; i++) {
            if (!s->slot[i].e) continue;
            size_t j = s->slot[i].h & (ns - 1);
            while (v[j].e) j = (j + 1) & (ns - 1);
            v[j] = s->slot[i];
        }
        free(s->slot);
        s->slot = v;
        s->nslots = ns;
    }
    cslot *sl = find(s, h, key, n);
    if (sl->e) goto out; /* already there */
    centry *e = shard_alloc(s, sizeof *e + n);
    e->h = h;
    e->klen = (uint32_t)n;
    memcpy(e->key, key, n);
    e->src = (uint8_t)r->src;
    e->lat = r->lat;
    e->conf = r->conf;
    e->rule = keep(s, r->rule);
    e->kernel = keep(s, r->kernel);
    e->miss = keep(s, r->miss);
    e->error_msg = keep(s, r->error_msg);
    e->request = keep(s, r->request);
    e->iv = NULL;
    if (r->has_iv) {
        double *iv = shard_alloc(s, 6 * sizeof *iv);
        iv[0] = r->iv_at;
        memcpy(iv + 1, r->iv90, sizeof r->iv90);
        memcpy(iv + 3, r->iv80, sizeof r->iv80);
        iv[5] = r->iv_med;
        e->iv = iv;
    }
    e->has_sub = r->has_sub;
    e->n_sub = (uint32_t)r->n_sub;
    e->sub = NULL;
    if (r->n_sub) {
        e->sub = shard_alloc(s, r->n_sub * sizeof *e->sub);
        for (size_t i = 0; i < r->n_sub; i++) {
            e->sub[i].kernel = keep(s, r->sub[i].kernel);
            e->sub[i].us = r->sub[i].us;
        }
    }
    sl->h = h;
    sl->e = e;
    s->n++;
out:
    opdb_call_unlock(&s->mu);
}
