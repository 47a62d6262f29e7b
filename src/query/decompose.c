/* Decomposed composites: the registry of ops rebuilt from their arguments,
 * the exact query of one sub-kernel spec by its mode, and the runner that
 * sums the hits (all hit: MEASURED; some: PARTIAL unless the mapping
 * requires them all). */
#include <stdio.h>
#include <string.h>

#include "opdb/json_writer.h"
#include "opdb/pystr.h"
#include "query/attn_runtime.h"
#include "query/comm.h"
#include "query/decompose.h"


int q_decompose(q_ctx *c, const q_entry *e, q_specs *out) {
    memset(out, 0, sizeof *out);
    switch (q_decomposer_kind(e->name)) {
    case DK_MLA: return q_decompose_mla(c, e, "BatchMatMulV2", out);
    case DK_MLA_QUANT: return q_decompose_mla(c, e, "QuantBatchMatmulV3", out);
    case DK_MLAPO: return q_decompose_mlapo(c, e, false, out);
    case DK_MLAPO_QUANT: return q_decompose_mlapo(c, e, true, out);
    case DK_SPARSE: return q_decompose_sparse_mla(c, e, "BatchMatMulV2", out);
    case DK_SPARSE_QUANT: return q_decompose_sparse_mla(c, e, "QuantBatchMatmulV3", out);
    case DK_DSA: return q_decompose_dsa(c, e, out);
    default: return 0;
    }
}

/* ------------------------------------------------------------ repr helpers */

static void repr_shape(opdb_strbuf *sb, q_shape s) {
    opdb_sb_addc(sb, '(');
    for (uint32_t i = 0; i < s.rank; i++) opdb_sb_addf(sb, i ? ", %lld" : "%lld", (long long)s.d[i]);
    opdb_sb_adds(sb, s.rank == 1 ? ",)" : ")");
}

static char *sb_take(q_ctx *c, opdb_strbuf *sb) {
    char *o = opdb_arena_strndup(c->a, sb->p ? sb->p : "", sb->n);
    opdb_sb_free(sb);
    return o;
}

char *q_spec_params_repr(q_ctx *c, const q_spec *s) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    if (s->mode == QSPEC_ATTENTION && s->att.rt) {
        q_rt_repr(&sb, &s->att);
    } else if (s->mode == QSPEC_ATTENTION) {
        q_shape q3 = {s->att.q3, 3};
        opdb_sb_adds(&sb, "{'q_shape_3d': ");
        repr_shape(&sb, q3);
        opdb_sb_addf(&sb, ", 'avg_seq_len': %lld", (long long)s->att.avg);
        if (s->att.has_sparse) opdb_sb_addf(&sb, ", 'sparse_mode': %lld", (long long)s->att.sparse);
        if (s->att.has_kv) opdb_sb_addf(&sb, ", 'num_kv_heads': %lld", (long long)s->att.kv);
        opdb_sb_addc(&sb, '}');
    } else {
        opdb_sb_addc(&sb, '[');
        for (size_t i = 0; i < s->nshapes; i++) {
            if (i) opdb_sb_adds(&sb, ", ");
            repr_shape(&sb, s->shapes[i]);
        }
        opdb_sb_addc(&sb, ']');
    }
    return sb_take(c, &sb);
}

static char *dtypes_repr(q_ctx *c, const q_spec *s) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_addc(&sb, '[');
    size_t n = s->ndtypes ? s->ndtypes : s->nshapes;
    for (size_t i = 0; i < n; i++) opdb_sb_addf(&sb, "%s'%s'", i ? ", " : "", s->ndtypes ? s->dtypes[i] : s->dtype);
    opdb_sb_addc(&sb, ']');
    return sb_take(c, &sb);
}

/* ------------------------------------------------------- cache_postprocess */

typedef struct cpctx {
    q_shape prefix[5];
    const char *dt;
    int64_t bs, rope, L;
} cpctx;

static bool span_is(const char *s, uint32_t n, const char *w) { return strlen(w) == n && memcmp(s, w, n) == 0; }

static int chk_cache(q_ctx *c, void *arg, q_ktable *t, size_t kidx, size_t row, q_cand *out) {
    (void)kidx;
    const cpctx *p = arg;
    const q_row *r = &t->rows[row];
    if (!q_row_shapes_ok(r)) return q_cell_fault(c, t, row, "Input Shapes", "cannot parse the shapes") < 0 ? -1 : 0;
    const q_list *dt = q_row_in_dt(t, r), *fmt = q_row_in_fmt(t, r);
    if (q_row_nin(t, r) < 7 || dt->n < 7 || fmt->n < 7) return 0;
    for (int i = 0; i < 5; i++)
        if (!q_shape_eq(q_row_in(t, r, i), p->prefix[i])) return 0;
    const q_shape s5 = q_row_in(t, r, 5), s6 = q_row_in(t, r, 6);
    if (s5.rank != 4 || s6.rank != 4) return 0;
    if (s5.d[1] != p->bs || s5.d[2] != 1 || s5.d[3] != p->rope) return 0;
    if (s6.d[1] != p->bs || s6.d[2] != 1 || s6.d[3] != p->L) return 0;
    for (int i = 0; i < 7; i++) {
        const char *want = i == 4 ? "INT64" : p->dt;
        if (!span_is(dt->s[i], dt->len[i], want)) return 0;
        if (!span_is(fmt->s[i], fmt->len[i], "ND")) return 0;
    }
    out->rule = "cache_pool_dim0_agnostic";
    return 1;
}

static void cache_postprocess(q_ctx *c, const q_spec *s, const char *const *K, size_t nk, q_spec_hit *h) {
    for (int i = 0; i < 5; i++)
        if (!s->cache_set[i]) {
            h->reason = "semantic_context_missing:target:cache_postprocess";
            return;
        }
    for (int i = 0; i < 5; i++)
        if (s->cache[i] <= 0) {
            h->reason = "semantic_key_mismatch:cache_postprocess";
            return;
        }
    int64_t P = s->cache[0], kvp = s->cache[1], L = s->cache[2], rope = s->cache[3];
    cpctx p;
    int64_t d0[4] = {P, 1, 1, kvp}, d1[1] = {L}, d2[4] = {P, 1, 1, rope}, d4[1] = {P};
    p.prefix[0] = q_spec_shape(c, 4, d0);
    p.prefix[1] = q_spec_shape(c, 1, d1);
    p.prefix[2] = q_spec_shape(c, 4, d2);
    p.prefix[3] = p.prefix[2];
    p.prefix[4] = q_spec_shape(c, 1, d4);
    p.dt = s->dtype;
    p.bs = s->cache[4];
    p.rope = rope;
    p.L = L;
    q_scan_run(c, K, nk, QSCAN_NEAREST, chk_cache, &p, &h->scan);
    if (h->scan.failed) {
        h->failed = true;
        return;
    }
    if (!h->scan.found) {
        h->reason = h->scan.reason[0] ? h->scan.reason : "semantic_key_mismatch:cache_postprocess";
        return;
    }
    h->hit = true;
    h->lat = h->scan.best.lat;
    h->kernel = h->scan.tab->kernel;
}

/* ------------------------------------------------------------ spec query */

void q_spec_query(q_ctx *c, const q_spec *s, q_spec_hit *h) {
    memset(h, 0, sizeof *h);
    h->reason = "";
    const char *K[3];
    size_t nk = 0;
    K[nk++] = s->kernel;
    for (size_t i = 0; i < s->nalt; i++) {
        bool dup = false;
        for (size_t k = 0; k < nk; k++) dup |= strcmp(K[k], s->alt[i]) == 0;
        if (!dup) K[nk++] = s->alt[i];
    }
    switch (s->mode) {
    case QSPEC_COMPUTE: {
        q_tins X;
        X.n = s->nshapes;
        X.v = opdb_arena_alloc(c->a, (X.n ? X.n : 1) * sizeof *X.v);
        for (size_t i = 0; i < X.n; i++) {
            const char *d = s->ndtypes ? (i < s->ndtypes ? s->dtypes[i] : NULL) : s->dtype;
            int dt = d ? q_dtype_from_prof(d, strlen(d)) : -1;
            if (dt < 0) return; /* a dtype with no tensor dtype: a miss without a lookup */
            X.v[i].s = s->shapes[i];
            X.v[i].dtype = dt;
            X.v[i].prof = NULL;
        }
        const char *reason = "";
        bool hit = q_find_compute(c, K, nk, &X, s->tc, s->has_tc, true, &h->scan, &reason);
        if (h->scan.failed) {
            h->failed = true;
            return;
        }
        h->reason = reason ? reason : "";
        if (hit) {
            h->hit = true;
            h->lat = h->scan.best.lat;
            h->kernel = h->scan.tab->kernel;
        }
        return;
    }
    case QSPEC_ATTENTION: {
        const char *reason = "";
        if (s->att.rt && (reason = q_rt_target_missing(c, s->att.rt)) != NULL) {
            h->reason = reason;
            return;
        }
        q_attn_target tg = s->att;
        tg.prof = s->dtype;
        bool hit = q_attention_scan(c, K, nk, &tg, &h->scan, &reason);
        if (h->scan.failed) {
            h->failed = true;
            return;
        }
        if (hit) {
            h->hit = true;
            h->lat = h->scan.best.lat;
            h->kernel = h->scan.tab->kernel;
            return;
        }
        h->reason = reason ? reason : "";
        return;
    }
    case QSPEC_CACHE_POSTPROCESS: cache_postprocess(c, s, K, nk, h); return;
    case QSPEC_SCATTER_CACHE_WRITE: q_query_scatter_cache_write(c, s, K, nk, h); return;
    case QSPEC_MLAPO_PREPROCESS: q_query_mlapo_preprocess(c, s, h); return;
    }
}

/* ------------------------------------------------------------ the runner */

static void explain_sub(q_ctx *c, opdb_strbuf *xs, const q_spec *s, const q_spec_hit *h) {
    char buf[40];
    opdb_sb_adds(xs, xs->n ? ", {\"kernel\": " : "{\"kernel\": ");
    opdb_json_quote(xs, h->hit ? h->kernel : s->kernel);
    opdb_sb_adds(xs, ", \"latency_us\": ");
    if (h->hit) opdb_sb_add(xs, buf, opdb_py_fmt_repr(buf, sizeof buf, h->lat));
    else opdb_sb_adds(xs, "null");
    opdb_sb_adds(xs, h->hit ? ", \"source\": \"MEASURED\"" : ", \"source\": \"MISS\"");
    if (!h->hit) {
        opdb_sb_adds(xs, ", \"explain\": {\"miss\": {\"reason\": ");
        opdb_json_quote(xs, h->reason);
        opdb_sb_adds(xs, "}}");
    }
    opdb_sb_addc(xs, '}');
    (void)c;
}

void q_path_decomposed(q_ctx *c, const q_entry *e) {
    c->r->path = "decomposer";
    q_specs sp;
    if (q_decompose(c, e, &sp)) return;
    if (sp.n == 0) {
        const qv *O = qv_get(e->v, "decomposer_options");
        if (qv_truthy(qv_get(qv_get(O, "visible_kernel_regime"), "requires_sequence_parallel")) && !c->cfg->sp)
            q_miss(c, "structural_mismatch:mlapo_quant:opaque_mla_preprocess:"
                      "visible_kernel_regime_requires_sequence_parallel");
        else q_miss(c, "decompose_failed");
        return;
    }
    if (c->explain) {
        const char **k = opdb_arena_alloc(c->a, sp.n * sizeof *k);
        for (size_t i = 0; i < sp.n; i++) k[i] = sp.v[i].kernel;
        q_set_kernels(c, k, sp.n);
    }
    double total = 0.0;
    size_t hits = 0;
    bool interp = false;
    q_sub *hv = opdb_arena_alloc(c->a, sp.n * sizeof *hv);
    opdb_strbuf missed, xs;
    opdb_sb_init(&missed);
    opdb_sb_init(&xs);
    const char *fail = NULL;
    for (size_t i = 0; i < sp.n && !fail; i++) {
        const q_spec *s = &sp.v[i];
        q_spec_hit h;
        q_spec_query(c, s, &h);
        if (h.failed) {
            opdb_sb_free(&missed);
            opdb_sb_free(&xs);
            return;
        }
        if (c->explain) explain_sub(c, &xs, s, &h);
        if (h.hit) {
            q_explain_scan(c, &h.scan);
            total += h.lat;
            interp |= h.interp;
            hv[hits].kernel = h.kernel;
            hv[hits++].us = h.lat;
            continue;
        }
        if (s->mode == QSPEC_ATTENTION) {
            fail = q_sprintf(c, "attention_sub_kernel_miss:%s:%s;semantic_key=%s;dtype=%s", s->kernel,
                             h.reason[0] ? h.reason : "semantic_key_mismatch", q_spec_params_repr(c, s), s->dtype);
        } else if (s->is_attention) {
            fail = q_sprintf(c, "attention_sub_kernel_miss:%s:%s;shapes=%s;dtype=%s", s->kernel,
                             h.reason[0] ? h.reason : "shape_mismatch", q_spec_params_repr(c, s), dtypes_repr(c, s));
        } else {
            if (missed.n) opdb_sb_addc(&missed, ',');
            opdb_sb_adds(&missed, s->kernel);
        }
    }
    if (c->explain && xs.n) {
        opdb_sb_adds(&c->r->extra, ", \"sub_kernels\": [");
        opdb_sb_add(&c->r->extra, xs.p, xs.n);
        opdb_sb_addc(&c->r->extra, ']');
    }
    opdb_sb_free(&xs);
    if (fail) {
        opdb_sb_free(&missed);
        q_miss(c, fail);
        return;
    }
    if (hits == sp.n) {
        opdb_sb_free(&missed);
        opdb_strbuf kj;
        opdb_sb_init(&kj);
        for (size_t i = 0; i < hits; i++) {
            if (i) opdb_sb_addc(&kj, ',');
            opdb_sb_adds(&kj, hv[i].kernel);
        }
        q_hit(c, interp ? QS_INTERPOLATED : QS_MEASURED, total, interp ? 0.75 : 0.8, NULL, sb_take(c, &kj));
        for (size_t i = 0; i < hits; i++) q_add_sub(c, hv[i].kernel, q_round2(hv[i].us));
        return;
    }
    char *reason = q_sprintf(c, "sub_kernel_miss:%s", missed.p ? missed.p : "");
    opdb_sb_free(&missed);
    if (hits == 0 || qv_truthy(qv_get(e->v, "require_all_sub_kernels"))) {
        q_miss(c, reason);
        return;
    }
    q_hit(c, QS_PARTIAL, total, (double)hits / (double)sp.n, NULL, NULL);
    for (size_t i = 0; i < hits; i++) q_add_sub(c, hv[i].kernel, q_round2(hv[i].us));
    /* the wrapper reads why it is partial */
    c->r->miss = reason;
}
