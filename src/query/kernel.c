/* Kernel-level queries: a kernel type and its input tensors as the profiler
 * wrote them, matched with the same row rules, no mapping entry involved. */
#include <stdio.h>
#include <string.h>

#include "opdb/json_writer.h"
#include "opdb/pystr.h"
#include "query/query_internal.h"

/* list of {"shape", "dtype", "format"?} -> tensors with profiler dtypes; -1 with error set */
static int tensors(q_ctx *c, const qv *list, const char *what, q_tins *out) {
    out->v = NULL;
    out->n = 0;
    if (!list || list->kind == QV_NULL) return 0;
    if (list->kind != QV_LIST) {
        q_error(c, "bad_query", "\"%s\" is not a list", what);
        return -1;
    }
    out->v = opdb_arena_alloc(c->a, (list->n ? list->n : 1) * sizeof *out->v);
    for (size_t i = 0; i < list->n; i++) {
        const qv *t = list->items[i], *sh = qv_get(t, "shape"), *dt = qv_get(t, "dtype"), *fm = qv_get(t, "format");
        if (t->kind != QV_DICT || !sh || sh->kind != QV_LIST || !dt || dt->kind != QV_STR ||
            (fm && fm->kind != QV_NULL && fm->kind != QV_STR)) {
            q_error(c, "bad_query", "\"%s\"[%zu] needs \"shape\" (a list) and \"dtype\" (a string)", what, i);
            return -1;
        }
        int64_t *d = opdb_arena_alloc(c->a, (sh->n ? sh->n : 1) * sizeof *d);
        for (size_t k = 0; k < sh->n; k++) {
            if (sh->items[k]->kind != QV_INT || sh->items[k]->i < 0) {
                q_error(c, "bad_query", "\"%s\"[%zu].shape has a dimension that is not a non-negative integer", what, i);
                return -1;
            }
            d[k] = sh->items[k]->i;
        }
        q_tin *x = &out->v[out->n++];
        x->s.d = d;
        x->s.rank = (uint32_t)sh->n;
        /* a framework dtype name is mapped to its profiler spelling; anything else is used verbatim */
        int fw = q_dtype_parse(dt->s, dt->n);
        x->dtype = fw;
        x->prof = fw >= 0 ? q_dtype_prof(fw) : dt->s;
        if (!x->prof) x->prof = ""; /* unmapped: matches no row */
        if (fm && fm->kind == QV_STR && strcmp(fm->s, "FRACTAL_NZ") == 0) x->s = q_nz(c, x->s);
    }
    return 0;
}

/* One tensor of a request: the shape as given (CSV notation: NZ shapes
 * unrestored), the profiler dtype the row needs, the format. */
static void request_tensors(opdb_strbuf *sb, const qv *list, const q_tins *t) {
    opdb_sb_addc(sb, '[');
    for (size_t i = 0; list && list->kind == QV_LIST && i < list->n && i < t->n; i++) {
        const qv *sh = qv_get(list->items[i], "shape"), *fm = qv_get(list->items[i], "format");
        opdb_sb_adds(sb, i ? ", {\"shape\": [" : "{\"shape\": [");
        for (size_t k = 0; k < sh->n; k++) opdb_sb_addf(sb, k ? ", %lld" : "%lld", (long long)sh->items[k]->i);
        opdb_sb_adds(sb, "], \"dtype\": ");
        opdb_json_quote(sb, t->v[i].prof);
        opdb_sb_adds(sb, ", \"format\": ");
        opdb_json_quote(sb, fm && fm->kind == QV_STR ? fm->s : "ND");
        opdb_sb_addc(sb, '}');
    }
    opdb_sb_addc(sb, ']');
}

/* The integer and string fields of the query's attention or comm object,
 * as the row's runtime or message columns need them. */
static void request_fields(opdb_strbuf *sb, const char *name, const qv *d) {
    if (!d || d->kind != QV_DICT) return;
    opdb_sb_addf(sb, ", \"%s\": {", name);
    bool first = true;
    for (size_t i = 0; i < d->n; i++) {
        const qv *k = d->keys[i], *v = d->items[i];
        if (k->kind != QV_STR || (v->kind != QV_INT && v->kind != QV_STR)) continue;
        if (!first) opdb_sb_adds(sb, ", ");
        first = false;
        opdb_json_quote(sb, k->s);
        opdb_sb_adds(sb, ": ");
        if (v->kind == QV_INT) opdb_sb_addf(sb, "%lld", (long long)v->i);
        else opdb_json_quote(sb, v->s);
    }
    opdb_sb_addc(sb, '}');
}

/* The request a MISS carries in default mode, so that the rows to measure
 * can be made from results alone (opdb grid --from-misses). */
static void set_request(q_ctx *c, const qv *kq, const q_tins *in, const q_tins *out) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_adds(&sb, "{\"kernel\": ");
    opdb_json_quote(&sb, c->q->kernel);
    opdb_sb_adds(&sb, ", \"inputs\": ");
    request_tensors(&sb, qv_get(kq, "inputs"), in);
    opdb_sb_adds(&sb, ", \"outputs\": ");
    request_tensors(&sb, qv_get(kq, "outputs"), out);
    request_fields(&sb, "attention", qv_get(kq, "attention"));
    request_fields(&sb, "comm", qv_get(kq, "comm"));
    opdb_sb_addc(&sb, '}');
    c->r->request = opdb_arena_strndup(c->a, sb.p, sb.n);
    opdb_sb_free(&sb);
}

typedef struct kmctx {
    const q_tins *X;
} kmctx;

static int chk_kernel(q_ctx *c, void *arg, q_ktable *t, size_t kidx, size_t row, q_cand *out) {
    (void)kidx;
    kmctx *m = arg;
    q_match mt;
    int rc = q_match_row(c, m->X, t, row, (int64_t)m->X->n, true, false, &mt);
    if (rc <= 0) return rc;
    out->rule = mt.rule;
    out->dist = c->cfg->quirks ? (strstr(mt.rule, "padding") ? 1 : 0) : (mt.padded_any ? 1 : 0);
    if (c->explain) {
        const char **ir = opdb_arena_alloc(c->a, (mt.n ? mt.n : 1) * sizeof *ir);
        memcpy(ir, mt.input_rules, mt.n * sizeof *ir);
        out->input_rules = ir;
        out->n_rules = mt.n;
    }
    return 1;
}

static const uint32_t *sel_kernel(q_ctx *c, void *arg, q_ktable *t, size_t *n, bool *usable) {
    kmctx *m = arg;
    return q_index_rows(c, t, m->X, (int64_t)m->X->n, true, false, n, usable);
}
static size_t key_kernel(void *arg, uint8_t *buf, size_t cap) {
    const kmctx *m = arg;
    return q_key_tins(m->X, (int64_t)m->X->n, true, false, buf, cap);
}
static const q_rowsel k_sel = {sel_kernel, key_kernel, 'K', NULL};

static bool opt_int(q_ctx *c, const qv *d, const char *key, bool *has, int64_t *v) {
    const qv *x = qv_get(d, key);
    *has = false;
    if (!x || x->kind == QV_NULL) return true;
    if (!qv_as_int(x, v)) {
        q_error(c, "bad_query", "\"%s\" is not an integer", key);
        return false;
    }
    *has = true;
    return true;
}

static void attention(q_ctx *c, const char *const *K, size_t nk, const q_tins *in, const qv *att) {
    c->r->path = "kernel";
    if (att->kind != QV_DICT || in->n == 0) {
        q_error(c, "bad_query", "an attention query needs an \"attention\" object and the query tensor as inputs[0]");
        return;
    }
    q_attn_target tg;
    memset(&tg, 0, sizeof tg);
    bool has_avg;
    if (!opt_int(c, att, "avg_seq_len", &has_avg, &tg.avg)) return;
    if (!has_avg) {
        q_error(c, "bad_query", "\"attention\" needs \"avg_seq_len\"");
        return;
    }
    if (!opt_int(c, att, "sparse_mode", &tg.has_sparse, &tg.sparse)) return;
    if (!opt_int(c, att, "num_kv_heads", &tg.has_kv, &tg.kv)) return;
    const qv *lay = qv_get(att, "input_layout");
    if (lay && lay->kind == QV_STR) tg.layout = lay->s;
    tg.prof = in->v[0].prof;
    if (!q_norm3(in->v[0].s, 0, tg.q3)) {
        q_miss(c, "q_shape_normalize_failed");
        return;
    }
    q_set_kernels(c, K, nk);
    q_scan s;
    const char *reason;
    if (!q_attention_scan(c, K, nk, &tg, &s, &reason)) {
        if (!s.failed) q_miss(c, reason);
        return;
    }
    q_explain_scan(c, &s);
    q_hit(c, QS_MEASURED, s.best.lat, 0.9, "attention", s.tab->kernel);
}

void q_kernel_query(q_ctx *c) {
    const qv *kq = c->q->kq;
    c->r->path = "kernel";
    /* the kernel list: kernel, then alternates not already in it */
    const qv *alt = qv_get(kq, "alternates");
    size_t na = alt && alt->kind == QV_LIST ? alt->n : 0;
    if (alt && alt->kind != QV_NULL && alt->kind != QV_LIST) {
        q_error(c, "bad_query", "\"alternates\" is not a list");
        return;
    }
    const char **K = opdb_arena_alloc(c->a, (na + 1) * sizeof *K);
    size_t nk = 0;
    K[nk++] = c->q->kernel;
    for (size_t i = 0; i < na; i++) {
        const qv *a = alt->items[i];
        if (a->kind != QV_STR) {
            q_error(c, "bad_query", "\"alternates\" holds a non-string");
            return;
        }
        bool dup = false;
        for (size_t k = 0; k < nk; k++) dup |= strcmp(K[k], a->s) == 0;
        if (!dup) K[nk++] = a->s;
    }
    q_tins in, out;
    if (tensors(c, qv_get(kq, "inputs"), "inputs", &in) || tensors(c, qv_get(kq, "outputs"), "outputs", &out)) return;
    const qv *match = qv_get(kq, "match"), *att = qv_get(kq, "attention"), *comm = qv_get(kq, "comm"),
             *ip = qv_get(kq, "interpolate");
    if (match && match->kind != QV_NULL && !qv_is_str(match, "shape") && !qv_is_str(match, "elementwise")) {
        q_error(c, "bad_query", "\"match\" must be \"shape\" or \"elementwise\"");
        return;
    }
    if (ip && ip->kind != QV_NULL && ip->kind != QV_BOOL) {
        q_error(c, "bad_query", "\"interpolate\" is not a boolean");
        return;
    }
    bool interp = ip && ip->kind == QV_BOOL ? ip->b : c->cfg->interp;
    if (comm && comm->kind != QV_NULL) {
        q_kernel_comm(c, c->q->kernel, comm);
        if (c->r->src == QS_MISS && !c->cfg->quirks) set_request(c, kq, &in, &out);
        return; /* communication is never interpolated */
    }
    if (att && att->kind != QV_NULL) {
        attention(c, K, nk, &in, att);
    } else if (qv_is_str(match, "elementwise")) {
        if (out.n == 0) {
            q_error(c, "bad_query", "an elementwise query needs \"outputs\"");
            return;
        }
        q_elementwise_scan(c, K, nk, q_strip(out.v[0].s), out.v[0].prof[0] ? out.v[0].prof : NULL);
    } else {
        q_set_kernels(c, K, nk);
        kmctx m = {&in};
        q_scan s;
        q_scan_run_sel(c, K, nk, QSCAN_NEAREST, chk_kernel, &m, &k_sel, &s);
        if (s.failed) return;
        if (!s.found) {
            q_miss(c, s.reason[0] ? s.reason : "shape_mismatch");
        } else {
            q_explain_scan(c, &s);
            q_hit(c, QS_MEASURED, s.best.lat, 1.0, s.best.rule, s.tab->kernel);
        }
    }
    c->r->path = "kernel";
    if (interp && c->r->src == QS_MISS)
        q_interpolate_kernel(c, K, nk, &in, &out,
                             att && att->kind != QV_NULL     ? QK_ATTENTION
                             : qv_is_str(match, "elementwise") ? QK_ELEMENTWISE
                                                               : QK_SHAPE);
    if (c->r->src == QS_MISS && !c->cfg->quirks) set_request(c, kq, &in, &out);
}
