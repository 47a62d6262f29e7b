/* op_mapping.yaml read the way the performance model reads it (PyYAML's
 * safe_load: YAML 1.1 implicit types, typed mapping keys, merge keys, a later
 * duplicate key wins), into the same value tree as queries. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "opdb/limits.h"
#include "query/query_internal.h"

#define Q_YAML_MAX_DEPTH 64

/* PyYAML's implicit resolvers for int and float */
static const char *k_re_int =
    "^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$";
static const char *k_re_float =
    "^([-+]?([0-9][0-9_]*)\\.[0-9_]*([eE][-+][0-9]+)?|\\.[0-9][0-9_]*([eE][-+][0-9]+)?"
    "|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$";

typedef struct yctx {
    opdb_arena *a;
    yaml_document_t *doc;
    regex_t re_int, re_float;
    char err[256];
} yctx;

static bool one_of(const char *s, const char *const *w) {
    for (; *w; w++)
        if (strcmp(s, *w) == 0) return true;
    return false;
}

static qv *nv(yctx *y, qv_kind k) { return qv_new(y->a, k); }

/* digits without '_' */
static char *clean(const char *s) {
    size_t n = strlen(s);
    char *o = opdb_xmalloc(n + 1), *p = o;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '_') *p++ = s[i];
    *p = 0;
    return o;
}

/* sexagesimal a:b:c -> value */
static double sexa(const char *s) {
    double v = 0;
    const char *p = s;
    while (*p) {
        char *e;
        double part = strtod(p, &e);
        v = v * 60 + part;
        p = *e == ':' ? e + 1 : e;
        if (e == p && *e != ':') break;
    }
    return v;
}

static qv *scalar(yctx *y, yaml_node_t *n) {
    const char *s = (const char *)n->data.scalar.value;
    qv *v;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) goto str;
    static const char *const nulls[] = {"~", "null", "Null", "NULL", "", NULL};
    static const char *const trues[] = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
    static const char *const falses[] = {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL};
    if (one_of(s, nulls)) return nv(y, QV_NULL);
    if (one_of(s, trues) || one_of(s, falses)) {
        v = nv(y, QV_BOOL);
        v->b = one_of(s, trues);
        return v;
    }
    if (regexec(&y->re_int, s, 0, NULL, 0) == 0) {
        char *c = clean(s);
        const char *p = c;
        int sign = 1;
        if (*p == '-' || *p == '+') sign = *p++ == '-' ? -1 : 1;
        long long iv = 0;
        bool ok = true;
        errno = 0;
        if (strchr(p, ':')) {
            double d = sexa(p);
            ok = d < 9.2e18;
            iv = (long long)d;
        } else if (p[0] == '0' && p[1] == 'b') {
            iv = strtoll(p + 2, NULL, 2);
        } else if (p[0] == '0' && p[1] == 'x') {
            iv = strtoll(p + 2, NULL, 16);
        } else if (p[0] == '0' && p[1]) {
            iv = strtoll(p + 1, NULL, 8);
        } else {
            iv = strtoll(p, NULL, 10);
        }
        if (errno == ERANGE) ok = false;
        free(c);
        if (ok) {
            v = nv(y, QV_INT);
            v->i = sign * iv;
            return v;
        }
        /* an int beyond int64: kept as the nearest float (no mapping field is that large) */
        v = nv(y, QV_FLOAT);
        v->f = sign * strtod(s + (s[0] == '-' || s[0] == '+'), NULL);
        return v;
    }
    if (regexec(&y->re_float, s, 0, NULL, 0) == 0) {
        char *c = clean(s);
        v = nv(y, QV_FLOAT);
        const char *p = c;
        int sign = 1;
        if (*p == '-' || *p == '+') sign = *p++ == '-' ? -1 : 1;
        if (strpbrk(p, "nN") && p[0] == '.' && (p[1] == 'n' || p[1] == 'N')) v->f = NAN;
        else if (p[0] == '.' && (p[1] == 'i' || p[1] == 'I')) v->f = sign * INFINITY;
        else if (strchr(p, ':')) v->f = sign * sexa(p);
        else v->f = sign * strtod(p, NULL);
        free(c);
        return v;
    }
str:
    v = nv(y, QV_STR);
    v->n = n->data.scalar.length;
    v->s = opdb_arena_strndup(y->a, s, v->n);
    return v;
}

static void grow(opdb_arena *a, qv *c) {
    if (c->n < c->cap) return;
    size_t nc = c->cap ? c->cap * 2 : 8;
    qv **it = opdb_arena_alloc(a, nc * sizeof *it), **ks = opdb_arena_alloc(a, nc * sizeof *ks);
    if (c->n) {
        memcpy(it, c->items, c->n * sizeof *it);
        if (c->keys) memcpy(ks, c->keys, c->n * sizeof *ks);
    }
    c->items = it;
    c->keys = ks;
    c->cap = nc;
}

static bool key_eq(const qv *a, const qv *b) {
    double x, z;
    bool an = a->kind == QV_INT || a->kind == QV_BOOL || a->kind == QV_FLOAT;
    bool bn = b->kind == QV_INT || b->kind == QV_BOOL || b->kind == QV_FLOAT;
    if (an && bn) {
        x = a->kind == QV_INT ? (double)a->i : a->kind == QV_BOOL ? a->b : a->f;
        z = b->kind == QV_INT ? (double)b->i : b->kind == QV_BOOL ? b->b : b->f;
        if (a->kind == QV_INT && b->kind == QV_INT) return a->i == b->i;
        return x == z;
    }
    if (a->kind != b->kind) return false;
    if (a->kind == QV_NULL) return true;
    if (a->kind == QV_STR) return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
    return false;
}

static void dict_set(opdb_arena *a, qv *d, qv *k, qv *v) {
    for (size_t i = 0; i < d->n; i++)
        if (key_eq(d->keys[i], k)) {
            d->items[i] = v;
            return;
        }
    grow(a, d);
    d->keys[d->n] = k;
    d->items[d->n++] = v;
}

static qv *node(yctx *y, yaml_node_t *n, int depth);

static int merge_into(yctx *y, qv *d, qv *src) {
    if (src->kind == QV_DICT) {
        for (size_t i = 0; i < src->n; i++) {
            bool have = false;
            for (size_t j = 0; j < d->n && !have; j++) have = key_eq(d->keys[j], src->keys[i]);
            if (!have) dict_set(y->a, d, src->keys[i], src->items[i]);
        }
        return 0;
    }
    if (src->kind == QV_LIST) {
        for (size_t i = 0; i < src->n; i++)
            if (src->items[i]->kind != QV_DICT || merge_into(y, d, src->items[i])) return -1;
        return 0;
    }
    return -1;
}

static qv *node(yctx *y, yaml_node_t *n, int depth) {
    if (!n) return nv(y, QV_NULL);
    if (depth > Q_YAML_MAX_DEPTH) {
        snprintf(y->err, sizeof y->err, "YAML nested deeper than %d levels", Q_YAML_MAX_DEPTH);
        return NULL;
    }
    if (n->type == YAML_SCALAR_NODE) return scalar(y, n);
    if (n->type == YAML_SEQUENCE_NODE) {
        qv *v = nv(y, QV_LIST);
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            qv *x = node(y, yaml_document_get_node(y->doc, *it), depth + 1);
            if (!x) return NULL;
            grow(y->a, v);
            v->items[v->n++] = x;
        }
        return v;
    }
    if (n->type == YAML_MAPPING_NODE) {
        qv *v = nv(y, QV_DICT);
        /* merge keys first (PyYAML flattens them ahead of the node's own keys) */
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *kn = yaml_document_get_node(y->doc, p->key);
            if (kn && kn->type == YAML_SCALAR_NODE && kn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                strcmp((const char *)kn->data.scalar.value, "<<") == 0) {
                qv *src = node(y, yaml_document_get_node(y->doc, p->value), depth + 1);
                if (!src) return NULL;
                qv tmp;
                memset(&tmp, 0, sizeof tmp);
                tmp.kind = QV_DICT;
                if (merge_into(y, &tmp, src)) {
                    snprintf(y->err, sizeof y->err, "a merge key (<<) needs a mapping or a list of mappings");
                    return NULL;
                }
                for (size_t i = 0; i < tmp.n; i++) dict_set(y->a, v, tmp.keys[i], tmp.items[i]);
            }
        }
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *kn = yaml_document_get_node(y->doc, p->key);
            if (kn && kn->type == YAML_SCALAR_NODE && kn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                strcmp((const char *)kn->data.scalar.value, "<<") == 0)
                continue;
            if (kn && kn->type != YAML_SCALAR_NODE) {
                snprintf(y->err, sizeof y->err, "line %lu: a mapping key that is a list or mapping",
                         (unsigned long)kn->start_mark.line + 1);
                return NULL;
            }
            qv *k = node(y, kn, depth + 1), *x = node(y, yaml_document_get_node(y->doc, p->value), depth + 1);
            if (!k || !x) return NULL;
            dict_set(y->a, v, k, x);
        }
        return v;
    }
    return nv(y, QV_NULL);
}

static char *read_all(const char *path, size_t *n, int *e) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        *e = errno;
        return NULL;
    }
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    char buf[65536];
    size_t r;
    while ((r = fread(buf, 1, sizeof buf, f)) > 0) opdb_sb_add(&sb, buf, r);
    int bad = ferror(f);
    *e = errno;
    fclose(f);
    if (bad) {
        opdb_sb_free(&sb);
        return NULL;
    }
    opdb_sb_addc(&sb, 0);
    *n = sb.n - 1;
    return sb.p;
}

/* DIR/ref with symlinks and .. resolved as far as the path exists. */
static char *resolve_nonstrict(const char *dir, const char *ref, size_t refn) {
    size_t dn = strlen(dir);
    char *joined = opdb_xmalloc(dn + refn + 2);
    if (refn && ref[0] == '/') {
        memcpy(joined, ref, refn);
        joined[refn] = 0;
    } else {
        memcpy(joined, dir, dn);
        joined[dn] = '/';
        memcpy(joined + dn + 1, ref, refn);
        joined[dn + 1 + refn] = 0;
    }
    char *r = realpath(joined, NULL);
    if (r) {
        free(joined);
        return r;
    }
    /* the longest existing prefix resolved, the rest appended as written */
    for (size_t cut = strlen(joined); cut > 0; cut--) {
        if (joined[cut] != '/' && joined[cut] != 0) continue;
        char save = joined[cut];
        joined[cut] = 0;
        char *p = realpath(joined, NULL);
        joined[cut] = save;
        if (p) {
            size_t pn = strlen(p), rn = strlen(joined + cut);
            char *o = opdb_xmalloc(pn + rn + 1);
            memcpy(o, p, pn);
            memcpy(o + pn, joined + cut, rn + 1);
            free(p);
            free(joined);
            return o;
        }
    }
    return joined;
}

static int policy(opdb_qdb *db, const qv *root, const char *key, const qv **ov, opdb_err *err, const char *path) {
    const qv *p = qv_get(root, key);
    *ov = NULL;
    if (!p || p->kind == QV_NULL) return 0;
    if (p->kind != QV_DICT) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s is not a mapping", path, key);
    const qv *k = qv_get(p, "kernel_overrides");
    if (!k || k->kind == QV_NULL) return 0;
    if (k->kind != QV_DICT)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s.kernel_overrides is not a mapping", path, key);
    (void)db;
    *ov = k;
    return 0;
}

int q_mapping_load(opdb_qdb *db, opdb_err *err) {
    size_t dn = strlen(db->dir);
    char *path = opdb_xmalloc(dn + 20);
    snprintf(path, dn + 20, "%s/op_mapping.yaml", db->dir);
    size_t n = 0;
    int e = 0;
    char *text = read_all(path, &n, &e);
    if (!text) {
        int rc = 1;
        if (e == ENOENT) q_warn(db, "%s: no op_mapping.yaml: every op is unmapped", db->dir);
        else rc = opdb_fail(err, OPDB_ERR_RUNTIME, "cannot read op_mapping.yaml: %s: %s", path, strerror(e));
        free(path);
        return rc;
    }
    int rc = -1;
    if (opdb_yaml_depth_check(text, n, Q_YAML_MAX_DEPTH, path, err)) goto out;
    yctx y;
    memset(&y, 0, sizeof y);
    y.a = &db->arena;
    regcomp(&y.re_int, k_re_int, REG_EXTENDED | REG_NOSUB);
    regcomp(&y.re_float, k_re_float, REG_EXTENDED | REG_NOSUB);
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, n);
    if (!yaml_parser_load(&parser, &doc)) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "op_mapping.yaml does not parse (line %lu: %s): %s",
                  (unsigned long)parser.problem_mark.line + 1, parser.problem ? parser.problem : "error", path);
        yaml_parser_delete(&parser);
        goto done_re;
    }
    y.doc = &doc;
    yaml_node_t *top = yaml_document_get_root_node(&doc);
    qv *root = top ? node(&y, top, 0) : NULL;
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (y.err[0]) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "op_mapping.yaml: %s: %s", y.err, path);
        goto done_re;
    }
    if (!root || root->kind == QV_NULL) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "op_mapping.yaml is empty: %s", path);
        goto done_re;
    }
    if (root->kind != QV_DICT) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "op_mapping.yaml is not a mapping at its top level: %s", path);
        goto done_re;
    }
    db->map.root = root;
    if (policy(db, root, "latency_policy", &db->map.ov_lat, err, path) ||
        policy(db, root, "query_selection_policy", &db->map.ov_sel, err, path) ||
        policy(db, root, "interpolation_policy", &db->map.ov_int, err, path))
        goto done_re;
    const qv *ops = qv_get(root, "operator_mappings");
    if (ops && ops->kind != QV_NULL) {
        if (ops->kind == QV_DICT) db->map.ops = ops;
        else db->map.ops_bad = true;
    }
    /* entries by name: every query looks its op up (the first of duplicate keys, as a dict scan finds) */
    if (db->map.ops) {
        opdb_hindex_reserve(&db->map.ops_ix, ops->n);
        for (size_t i = 0; i < ops->n; i++) {
            const qv *k = ops->keys[i];
            if (k->kind != QV_STR) continue;
            uint64_t h = opdb_hash_bytes(k->s, k->n, 0);
            bool seen = false;
            uint32_t j;
            for (opdb_hprobe pr = opdb_hindex_probe(&db->map.ops_ix, h); !seen && opdb_hprobe_next(&pr, &j);)
                seen = ops->keys[j]->n == k->n && memcmp(ops->keys[j]->s, k->s, k->n) == 0;
            if (!seen) opdb_hindex_add(&db->map.ops_ix, h, (uint32_t)i);
        }
        /* each entry's plan: its route and compute target read once, not per query */
        db->map.plans = opdb_arena_alloc(&db->arena, (ops->n ? ops->n : 1) * sizeof *db->map.plans);
        memset(db->map.plans, 0, (ops->n ? ops->n : 1) * sizeof *db->map.plans);
        for (size_t i = 0; i < ops->n; i++)
            if (ops->keys[i]->kind == QV_STR) {
                q_plan_make(&db->arena, ops->keys[i]->s, ops->items[i], &db->map.plans[i]);
                db->map.plans[i].name_n = (uint32_t)ops->keys[i]->n;
            }
    }
    const qv *ref = qv_get(root, "communication_data_ref");
    if (qv_truthy(ref)) {
        if (ref->kind == QV_STR) {
            db->map.comm_dir = resolve_nonstrict(db->dir, ref->s, ref->n);
        } else {
            opdb_fail(err, OPDB_ERR_RUNTIME, "op_mapping.yaml: communication_data_ref is not a string: %s", path);
            goto done_re;
        }
    }
    rc = 0;
done_re:
    regfree(&y.re_int);
    regfree(&y.re_float);
out:
    free(text);
    free(path);
    return rc;
}

const qv *q_override(const qv *ov, const char *kt, bool *bad) {
    *bad = false;
    const qv *e = qv_get(ov, kt);
    if (!e || e->kind == QV_NULL) return NULL;
    if (e->kind != QV_DICT) {
        *bad = true;
        return NULL;
    }
    return e;
}

const qv *q_op_find(const opdb_qdb *db, const char *name, const q_plan **plan) {
    const qv *ops = db->map.ops;
    *plan = NULL;
    if (!ops) return NULL;
    size_t n = strlen(name);
    uint32_t j;
    for (opdb_hprobe pr = opdb_hindex_probe(&db->map.ops_ix, opdb_hash_bytes(name, n, 0)); opdb_hprobe_next(&pr, &j);) {
        const q_plan *p = &db->map.plans[j];
        if (p->name_n == n && memcmp(p->name, name, n) == 0) {
            if (p->dict) *plan = p;
            return p->v;
        }
    }
    return NULL;
}

