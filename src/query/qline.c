/* One JSONL query line -> values (yajl's event parser building the tree in
 * the query's arena), then the query's fields: tensors, dtypes and dicts in
 * args/out/kwargs, and the kernel-level object kept as JSON values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "opdb/pystr.h"
#include "query/qline_fast.h"
#include "query/query_internal.h"

#define Q_MAX_DEPTH 64

typedef struct jb {
    opdb_arena *a;
    qv *stack[Q_MAX_DEPTH + 1];
    int depth;
    qv *root;
    qv *pending_key;   /* the key of the next dict item */
    bool too_deep;
} jb;

static qv *nv(jb *b, qv_kind k) { return qv_new(b->a, k); }

static void grow(opdb_arena *a, qv *c, bool keys) {
    if (c->n < c->cap) return;
    size_t nc = c->cap ? c->cap * 2 : 4;
    qv **it = opdb_arena_alloc(a, nc * sizeof *it);
    if (c->n) memcpy(it, c->items, c->n * sizeof *it);
    c->items = it;
    if (keys) {
        qv **ks = opdb_arena_alloc(a, nc * sizeof *ks);
        if (c->n) memcpy(ks, c->keys, c->n * sizeof *ks);
        c->keys = ks;
    }
    c->cap = nc;
}

/* places v in the current container (or as the root) */
static int put(jb *b, qv *v) {
    if (b->depth == 0) {
        b->root = v;
        return 1;
    }
    qv *c = b->stack[b->depth - 1];
    if (c->kind == QV_LIST) {
        grow(b->a, c, false);
        c->items[c->n++] = v;
        return 1;
    }
    /* Python json: a later duplicate key replaces the earlier value in place */
    qv *k = b->pending_key;
    for (size_t i = 0; i < c->n; i++)
        if (c->keys[i]->n == k->n && memcmp(c->keys[i]->s, k->s, k->n) == 0) {
            c->items[i] = v;
            return 1;
        }
    grow(b->a, c, true);
    c->keys[c->n] = k;
    c->items[c->n++] = v;
    return 1;
}

static int cb_null(void *ctx) { return put(ctx, nv(ctx, QV_NULL)); }
static int cb_bool(void *ctx, int x) {
    qv *v = nv(ctx, QV_BOOL);
    v->b = x != 0;
    return put(ctx, v);
}

static int cb_number(void *ctx, const char *s, size_t n) {
    jb *b = ctx;
    return put(b, q_json_number(b->a, s, n));
}
static int cb_string(void *ctx, const unsigned char *s, size_t n) {
    jb *b = ctx;
    qv *v = nv(b, QV_STR);
    v->s = opdb_arena_strndup(b->a, (const char *)s, n);
    v->n = n;
    return put(b, v);
}
static int open_c(jb *b, qv_kind k) {
    if (b->depth >= Q_MAX_DEPTH) {
        b->too_deep = true;
        return 0;
    }
    qv *v = nv(b, k);
    put(b, v);
    b->stack[b->depth++] = v;
    return 1;
}
static int cb_start_map(void *ctx) { return open_c(ctx, QV_DICT); }
static int cb_start_array(void *ctx) { return open_c(ctx, QV_LIST); }
static int cb_end(void *ctx) {
    ((jb *)ctx)->depth--;
    return 1;
}
/* The keys every query line repeats, shared by all trees: key values are never changed. */
static qv k_keys[] = {
    {.kind = QV_STR, .s = "op", .n = 2, .dtype = -1},       {.kind = QV_STR, .s = "id", .n = 2, .dtype = -1},
    {.kind = QV_STR, .s = "args", .n = 4, .dtype = -1},     {.kind = QV_STR, .s = "out", .n = 3, .dtype = -1},
    {.kind = QV_STR, .s = "shape", .n = 5, .dtype = -1},    {.kind = QV_STR, .s = "dtype", .n = 5, .dtype = -1},
    {.kind = QV_STR, .s = "kwargs", .n = 6, .dtype = -1},
};

static int cb_key(void *ctx, const unsigned char *s, size_t n) {
    jb *b = ctx;
    for (size_t i = 0; i < sizeof k_keys / sizeof k_keys[0]; i++)
        if (k_keys[i].n == n && memcmp(k_keys[i].s, s, n) == 0) {
            b->pending_key = &k_keys[i];
            return 1;
        }
    qv *k = nv(b, QV_STR);
    k->s = opdb_arena_strndup(b->a, (const char *)s, n);
    k->n = n;
    b->pending_key = k;
    return 1;
}

static const yajl_callbacks k_cb = {cb_null, cb_bool, NULL, NULL, cb_number, cb_string, cb_start_map,
                                    cb_key,  cb_end,  cb_start_array, cb_end};

static const char *k_bad_json = "bad_json", *k_bad_query = "bad_query";

/* Parses JSON text into a value tree: the fast reader first, yajl for
 * anything it leaves (mode Q_JSON_YAJL: yajl only; Q_JSON_FAST: the fast
 * reader only, NULL where it would hand over). */
qv *q_parse_json(opdb_arena *a, const char *text, size_t n, int mode, char *msg, size_t cap) {
    jb b;
    memset(&b, 0, sizeof b);
    b.a = a;
    if (mode != Q_JSON_YAJL) {
        if (q_json_fast(&k_cb, &b, text, n)) return b.root;
        if (mode == Q_JSON_FAST) return NULL;
        memset(&b, 0, sizeof b); /* what the fast reader built stays unused in the arena */
        b.a = a;
    }
    yajl_handle h = yajl_alloc(&k_cb, NULL, &b);
    yajl_status st = yajl_parse(h, (const unsigned char *)text, n);
    if (st == yajl_status_ok) st = yajl_complete_parse(h);
    if (st != yajl_status_ok) {
        if (b.too_deep) {
            snprintf(msg, cap, "JSON nested deeper than %d levels", Q_MAX_DEPTH);
        } else {
            unsigned char *e = yajl_get_error(h, 0, (const unsigned char *)text, n);
            snprintf(msg, cap, "not valid JSON: %s", (const char *)e);
            yajl_free_error(h, e);
            size_t l = strlen(msg);
            while (l && (msg[l - 1] == '\n' || msg[l - 1] == ' ')) msg[--l] = 0;
        }
        yajl_free(h);
        return NULL;
    }
    yajl_free(h);
    return b.root;
}

/* Tensors {"shape", "dtype"?, "values"?} and dtypes {"dtype_value"} inside
 * args/out/kwargs; 0 or -1 with msg. */
static int convert(opdb_arena *a, qv *v, int depth, char *msg, size_t cap) {
    if (depth > Q_MAX_DEPTH) return snprintf(msg, cap, "value nested too deeply"), -1;
    if (v->kind == QV_LIST) {
        for (size_t i = 0; i < v->n; i++)
            if (convert(a, v->items[i], depth + 1, msg, cap)) return -1;
        return 0;
    }
    if (v->kind != QV_DICT) return 0;
    const qv *shape = qv_get(v, "shape");
    if (shape) {
        if (shape->kind != QV_LIST) return snprintf(msg, cap, "tensor shape is not a list"), -1;
        int64_t *d = opdb_arena_alloc(a, (shape->n ? shape->n : 1) * sizeof *d);
        for (size_t i = 0; i < shape->n; i++) {
            const qv *x = shape->items[i];
            if (x->kind != QV_INT || x->i < 0)
                return snprintf(msg, cap, "tensor shape has a dimension that is not a non-negative integer"), -1;
            d[i] = x->i;
        }
        const qv *dt = qv_get(v, "dtype");
        int dtype = QDT_BF16;
        if (dt && dt->kind != QV_NULL) {
            if (dt->kind != QV_STR) return snprintf(msg, cap, "tensor dtype is not a string"), -1;
            dtype = q_dtype_parse(dt->s, dt->n);
            if (dtype < 0) return snprintf(msg, cap, "unknown dtype \"%.64s\"", dt->s), -1;
        }
        const qv *vals = qv_get(v, "values");
        v->kind = QV_TENSOR;
        v->shape.d = d;
        v->shape.rank = (uint32_t)shape->n;
        v->dtype = dtype;
        if (vals && vals->kind != QV_NULL) {
            if (vals->kind != QV_LIST) return snprintf(msg, cap, "tensor values is not a list"), -1;
            int64_t numel = q_numel(v->shape);
            if ((int64_t)vals->n != numel)
                return snprintf(msg, cap, "tensor has %zu values for %lld elements", vals->n, (long long)numel), -1;
            double *x = opdb_arena_alloc(a, (vals->n ? vals->n : 1) * sizeof *x);
            for (size_t i = 0; i < vals->n; i++) {
                const qv *e = vals->items[i];
                if (e->kind == QV_INT) x[i] = (double)e->i;
                else if (e->kind == QV_FLOAT) x[i] = e->f;
                else if (e->kind == QV_BOOL) x[i] = e->b;
                else return snprintf(msg, cap, "tensor values holds a non-number"), -1;
            }
            v->values = x;
            v->nvalues = vals->n;
        }
        v->n = 0;
        return 0;
    }
    const qv *dv = qv_get(v, "dtype_value");
    if (dv) {
        if (dv->kind != QV_STR) return snprintf(msg, cap, "dtype_value is not a string"), -1;
        int dtype = q_dtype_parse(dv->s, dv->n);
        if (dtype < 0) return snprintf(msg, cap, "unknown dtype \"%.64s\"", dv->s), -1;
        v->kind = QV_DTYPE;
        v->dtype = dtype;
        v->n = 0;
        return 0;
    }
    for (size_t i = 0; i < v->n; i++)
        if (convert(a, v->items[i], depth + 1, msg, cap)) return -1;
    return 0;
}

static bool kernel_name_ok(const qv *k) {
    if (!k || k->kind != QV_STR || k->n == 0 || k->s[0] == '.') return false;
    for (size_t i = 0; i < k->n; i++)
        if (k->s[i] == '/' || k->s[i] == 0) return false;
    return true;
}

int q_parse_line(opdb_arena *a, const char *line, size_t n, q_query *q, const char **code, char *msg, size_t cap) {
    return q_parse_line_mode(a, line, n, Q_JSON_AUTO, q, code, msg, cap);
}

int q_parse_line_mode(opdb_arena *a, const char *line, size_t n, int mode, q_query *q, const char **code, char *msg,
                      size_t cap) {
    /* the common form read straight into the query; the rest through the value tree */
    if (mode == Q_JSON_AUTO || mode == Q_JSON_DIRECT) {
        if (q_line_direct(a, line, n, q)) return 0;
        if (mode == Q_JSON_DIRECT) return 1;
    }
    memset(q, 0, sizeof *q);
    qv *root = q_parse_json(a, line, n, mode, msg, cap);
    if (!root) {
        *code = k_bad_json;
        return -1;
    }
    if (root->kind != QV_DICT) {
        *code = k_bad_json;
        snprintf(msg, cap, "the line is not a JSON object");
        return -1;
    }
    q->id = qv_get(root, "id");
    *code = k_bad_query;
    const qv *op = qv_get(root, "op"), *kernel = qv_get(root, "kernel");
    if (op && kernel) return snprintf(msg, cap, "a query has either \"op\" or \"kernel\", not both"), -1;
    if (!op && !kernel) return snprintf(msg, cap, "a query needs \"op\" or \"kernel\""), -1;
    if (kernel) {
        if (!kernel_name_ok(kernel))
            return snprintf(msg, cap, "\"kernel\" must be a non-empty string without '/' that does not start with '.'"), -1;
        q->kernel = kernel->s;
        q->kq = root;
        return 0;
    }
    if (op->kind != QV_STR) return snprintf(msg, cap, "\"op\" is not a string"), -1;
    q->op = op->s;
    if (strncmp(q->op, "torch.ops.", 10) == 0) q->op += 10;
    qv *args = (qv *)qv_get(root, "args"), *out = (qv *)qv_get(root, "out"), *kw = (qv *)qv_get(root, "kwargs");
    if (args && args->kind == QV_NULL) args = NULL;
    if (args && args->kind != QV_LIST) return snprintf(msg, cap, "\"args\" is not a list"), -1;
    if (kw && kw->kind == QV_NULL) kw = NULL;
    if (kw && kw->kind != QV_DICT) return snprintf(msg, cap, "\"kwargs\" is not an object"), -1;
    if (args && convert(a, args, 1, msg, cap)) return -1;
    if (out && convert(a, out, 1, msg, cap)) return -1;
    if (kw && convert(a, kw, 1, msg, cap)) return -1;
    static const qv empty_list = {.kind = QV_LIST, .dtype = -1};
    static const qv empty_dict = {.kind = QV_DICT, .dtype = -1};
    q->args = args ? args : &empty_list;
    q->out = out && out->kind != QV_NULL ? out : NULL;
    q->kwargs = kw ? kw : &empty_dict;
    return 0;
}
