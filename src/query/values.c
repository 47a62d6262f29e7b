/* Query values: Python truthiness and lookups, and the public builder that
 * makes them for opdb_query(). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_internal.h"

bool qv_truthy(const qv *v) {
    if (!v) return false;
    switch (v->kind) {
    case QV_NULL: return false;
    case QV_BOOL: return v->b;
    case QV_INT: return v->i != 0;
    case QV_FLOAT: return v->f != 0.0;
    case QV_STR: return v->n != 0;
    case QV_LIST:
    case QV_DICT: return v->n != 0;
    default: return true;
    }
}

const qv *qv_get(const qv *d, const char *key) {
    if (!d || d->kind != QV_DICT) return NULL;
    size_t kn = strlen(key);
    for (size_t k = 0; k < d->n; k++) {
        const qv *kk = d->keys[k];
        if (kk->kind == QV_STR && kk->n == kn && memcmp(kk->s, key, kn) == 0) return d->items[k];
    }
    return NULL;
}

const qv *qv_get_int(const qv *d, int64_t key) {
    if (!d || d->kind != QV_DICT) return NULL;
    for (size_t k = 0; k < d->n; k++) {
        const qv *kk = d->keys[k];
        /* Python: 1 == True == 1.0 as dict keys */
        if ((kk->kind == QV_INT && kk->i == key) || (kk->kind == QV_BOOL && (int64_t)kk->b == key) ||
            (kk->kind == QV_FLOAT && kk->f == (double)key))
            return d->items[k];
    }
    return NULL;
}

bool qv_as_int(const qv *v, int64_t *out) {
    if (!v) return false;
    if (v->kind == QV_INT) {
        *out = v->i;
        return true;
    }
    if (v->kind == QV_BOOL) {
        *out = v->b;
        return true;
    }
    return false;
}

bool qv_is_str(const qv *v, const char *s) {
    return v && v->kind == QV_STR && v->n == strlen(s) && memcmp(v->s, s, v->n) == 0;
}

const qv *qv_first_tensor(const qv *v) {
    if (!v) return NULL;
    if (v->kind == QV_TENSOR) return v;
    if (v->kind == QV_LIST)
        for (size_t k = 0; k < v->n; k++) {
            const qv *t = qv_first_tensor(v->items[k]);
            if (t) return t;
        }
    return NULL;
}

/* ---- the public builder */
struct opdb_qbuilder {
    opdb_arena a;
};

static opdb_qbuilder *opdb_qbuilder_new_call(void) {
    opdb_qbuilder *b = opdb_xcalloc(1, sizeof *b);
    opdb_arena_init(&b->a, 1 << 14);
    return b;
}

void opdb_qbuilder_free(opdb_qbuilder *b) {
    if (!b) return;
    opdb_arena_free(&b->a);
    free(b);
}

static qv *mk(opdb_qbuilder *b, qv_kind k) { return qv_new(&b->a, k); }

static opdb_qvalue *opdb_qv_null_call(opdb_qbuilder *b) { return mk(b, QV_NULL); }
static opdb_qvalue *opdb_qv_bool_call(opdb_qbuilder *b, bool x) {
    qv *v = mk(b, QV_BOOL);
    v->b = x;
    return v;
}
static opdb_qvalue *opdb_qv_int_call(opdb_qbuilder *b, long long x) {
    qv *v = mk(b, QV_INT);
    v->i = x;
    return v;
}
static opdb_qvalue *opdb_qv_float_call(opdb_qbuilder *b, double x) {
    qv *v = mk(b, QV_FLOAT);
    v->f = x;
    return v;
}
static opdb_qvalue *opdb_qv_str_call(opdb_qbuilder *b, const char *s) {
    qv *v = mk(b, QV_STR);
    v->n = strlen(s);
    v->s = opdb_arena_strndup(&b->a, s, v->n);
    return v;
}
static opdb_qvalue *opdb_qv_tensor_call(opdb_qbuilder *b, const int64_t *shape, size_t rank, const char *dtype,
                            const double *values) {
    int dt = dtype ? q_dtype_parse(dtype, strlen(dtype)) : QDT_BF16;
    if (dt < 0) return NULL;
    for (size_t k = 0; k < rank; k++)
        if (shape[k] < 0) return NULL;
    qv *v = mk(b, QV_TENSOR);
    int64_t *d = opdb_arena_alloc(&b->a, (rank ? rank : 1) * sizeof *d);
    if (rank) memcpy(d, shape, rank * sizeof *d);
    v->shape.d = d;
    v->shape.rank = (uint32_t)rank;
    v->dtype = dt;
    if (values) {
        size_t n = (size_t)q_numel(v->shape);
        double *x = opdb_arena_alloc(&b->a, (n ? n : 1) * sizeof *x);
        if (n) memcpy(x, values, n * sizeof *x);
        v->values = x;
        v->nvalues = n;
    }
    return v;
}
static opdb_qvalue *opdb_qv_dtype_call(opdb_qbuilder *b, const char *dtype) {
    int dt = q_dtype_parse(dtype, strlen(dtype));
    if (dt < 0) return NULL;
    qv *v = mk(b, QV_DTYPE);
    v->dtype = dt;
    return v;
}
static opdb_qvalue *opdb_qv_list_call(opdb_qbuilder *b) { return mk(b, QV_LIST); }
static opdb_qvalue *opdb_qv_dict_call(opdb_qbuilder *b) { return mk(b, QV_DICT); }

static void grow(opdb_qbuilder *b, qv *c, bool keys) {
    if (c->n < c->cap) return;
    size_t nc = c->cap ? c->cap * 2 : 4;
    qv **it = opdb_arena_alloc(&b->a, nc * sizeof *it);
    if (c->n) memcpy(it, c->items, c->n * sizeof *it);
    c->items = it;
    if (keys) {
        qv **ks = opdb_arena_alloc(&b->a, nc * sizeof *ks);
        if (c->n) memcpy(ks, c->keys, c->n * sizeof *ks);
        c->keys = ks;
    }
    c->cap = nc;
}

static int opdb_qv_append_call(opdb_qbuilder *b, opdb_qvalue *list, opdb_qvalue *item) {
    if (!list || list->kind != QV_LIST || !item) return -1;
    grow(b, list, false);
    list->items[list->n++] = item;
    return 0;
}

static int opdb_qv_set_call(opdb_qbuilder *b, opdb_qvalue *dict, const char *key, opdb_qvalue *v) {
    if (!dict || dict->kind != QV_DICT || !v) return -1;
    size_t kn = strlen(key);
    for (size_t k = 0; k < dict->n; k++)
        if (dict->keys[k]->kind == QV_STR && dict->keys[k]->n == kn && memcmp(dict->keys[k]->s, key, kn) == 0) {
            dict->items[k] = v;
            return 0;
        }
    grow(b, dict, true);
    dict->keys[dict->n] = opdb_qv_str_call(b, key);
    dict->items[dict->n++] = v;
    return 0;
}

/* ---- the public builder calls: out of memory returns NULL (-1 for append and set) */
opdb_qbuilder *opdb_qbuilder_new(void) {
    Q_GUARDED(opdb_qbuilder *, NULL, opdb_qbuilder_new_call());
}
opdb_qvalue *opdb_qv_null(opdb_qbuilder *b) {
    Q_GUARDED(opdb_qvalue *, NULL, opdb_qv_null_call(b));
}
opdb_qvalue *opdb_qv_bool(opdb_qbuilder *b, bool x) {
    Q_GUARDED(opdb_qvalue *, NULL, opdb_qv_bool_call(b, x));
}
opdb_qvalue *opdb_qv_int(opdb_qbuilder *b, long long x) {
    Q_GUARDED(opdb_qvalue *, NULL, opdb_qv_int_call(b, x));
}
opdb_qvalue *opdb_qv_float(opdb_qbuilder *b, double x) {
    Q_GUARDED(opdb_qvalue *, NULL, opdb_qv_float_call(b, x));
}
opdb_qvalue *opdb_qv_str(opdb_qbuilder *b, const char *s) {
    Q_GUARDED(opdb_qvalue *, NULL, opdb_qv_str_call(b, s));
}
opdb_qvalue *opdb_qv_tensor(opdb_qbuilder *b, const int64_t *shape, size_t rank, const char *dtype,
                            const double *values) {
    Q_GUARDED(opdb_qvalue *, NULL, opdb_qv_tensor_call(b, shape, rank, dtype, values));
}
opdb_qvalue *opdb_qv_dtype(opdb_qbuilder *b, const char *dtype) {
    Q_GUARDED(opdb_qvalue *, NULL, opdb_qv_dtype_call(b, dtype));
}
opdb_qvalue *opdb_qv_list(opdb_qbuilder *b) {
    Q_GUARDED(opdb_qvalue *, NULL, opdb_qv_list_call(b));
}
opdb_qvalue *opdb_qv_dict(opdb_qbuilder *b) {
    Q_GUARDED(opdb_qvalue *, NULL, opdb_qv_dict_call(b));
}
int opdb_qv_append(opdb_qbuilder *b, opdb_qvalue *list, opdb_qvalue *item) {
    Q_GUARDED(int, -1, opdb_qv_append_call(b, list, item));
}
int opdb_qv_set(opdb_qbuilder *b, opdb_qvalue *dict, const char *key, opdb_qvalue *v) {
    Q_GUARDED(int, -1, opdb_qv_set_call(b, dict, key, v));
}
