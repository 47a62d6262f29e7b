/* The DSA (DeepSeek sparse attention) indexer: the key projection and its
 * norm, the weights projection, the query projection (quantized when its
 * weight is int8), the write of the new keys into the paged cache, and the
 * indexer kernel itself on a runtime-vector target. The cache write is
 * matched whatever the pool's capacity. */
#include <string.h>

#include "opdb/pystr.h"
#include "query/attn_runtime.h"
#include "query/decompose.h"

static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 && (a < 0) == (b < 0)); }

static q_spec *add_compute(q_ctx *c, q_specs *out, const char *k, const char *dt, int64_t tc) {
    q_spec *s = q_spec_add(c, out, k, QSPEC_COMPUTE);
    s->dtype = dt;
    s->tc = tc, s->has_tc = true;
    return s;
}

static q_shape shape2(q_ctx *c, int64_t a, int64_t b) {
    int64_t v[2] = {a, b};
    return q_spec_shape(c, 2, v);
}

int q_decompose_dsa(q_ctx *c, const q_entry *e, q_specs *out) {
    const qv *A = c->q->args;
    if (!A || A->n < 16) return 0;
    static const int tens[] = {0, 1, 4, 6, 7, 8, 9, 10, 11};
    for (size_t i = 0; i < sizeof tens / sizeof tens[0]; i++)
        if (A->items[tens[i]]->kind != QV_TENSOR) return 0;
    int64_t heads, hd, topk_v;
    if (!qv_as_int(A->items[12], &heads) || !qv_as_int(A->items[13], &hd) || !qv_as_int(A->items[15], &topk_v))
        return 0;
    const qv *h = A->items[0], *qa = A->items[1], *cache = A->items[4], *seq = A->items[7], *wqb = A->items[8],
             *wk = A->items[9], *wproj = A->items[10], *kn = A->items[11];
    if (h->shape.rank < 2 || h->shape.rank > 3 || qa->shape.rank < 2 || qa->shape.rank > 3) return 0;
    const qv *qlens = qv_get(c->q->kwargs, "query_lens");
    const char *dt = q_dtype_prof(h->dtype);
    if (!dt) return 0;
    int64_t H = h->shape.d[h->shape.rank - 1], qd = qa->shape.d[qa->shape.rank - 1];
    if (H == 0 || wk->shape.rank < 1) {
        q_error(c, "bad_args", "the indexer's hidden states or key weight have no width");
        return 1;
    }
    int64_t T = q_numel(h->shape) / H;
    q_oint eff = {0, false};
    eff.set = q_avgseq(seq, &eff.v);
    q_phase ph = q_batch_phase(c->q->kwargs, seq->shape.rank ? seq->shape.d[0] : 0);
    if (ph == PH_MIXED || ph == PH_INVALID) return 0;
    if (ph == PH_NONE && eff.set) ph = T >= eff.v ? PH_PREFILL : PH_DECODE;
    int64_t it = T;
    q_ivec cum = {0}, kvl = {0};
    int tp = c->cfg->tp;
    if (ph == PH_PREFILL && c->cfg->sp && tp > 1) {
        it = ceil_div(T, tp);
        if (!q_rt_rankzero(c->a, seq, T, it, qlens && qlens->kind == QV_TENSOR ? qlens : NULL, true, &cum, &kvl))
            return 0;
    }
    q_oint bs = {0, false};
    if (cache->shape.rank >= 3) bs.v = cache->shape.d[cache->shape.rank - 2], bs.set = true;
    q_oint act = eff;
    if (cum.set && kvl.n) {
        act.v = kvl.v[0], act.set = true;
        for (size_t i = 1; i < kvl.n; i++)
            if (kvl.v[i] > act.v) act.v = kvl.v[i];
    }
    q_oint blocks = {0, false};
    if (act.set && bs.set && bs.v != 0) blocks.v = ceil_div(act.v, bs.v), blocks.set = true;

    q_spec *s = add_compute(c, out, "MatMulV2", dt, 2);
    s->nshapes = 2, s->shapes[0] = shape2(c, it, H), s->shapes[1] = wk->shape;
    s = add_compute(c, out, "LayerNormV3", dt, 3);
    int64_t w0 = wk->shape.d[0];
    s->nshapes = 3, s->shapes[0] = shape2(c, it, w0), s->shapes[1] = kn->shape, s->shapes[2] = kn->shape;
    s->ndtypes = 3, s->dtypes[0] = s->dtypes[1] = s->dtypes[2] = "FLOAT";
    for (int i = 0; i < 2; i++) {
        s = add_compute(c, out, "Cast", dt, 1);
        s->nshapes = 1, s->shapes[0] = shape2(c, it, hd);
    }
    s = add_compute(c, out, "MatMulV2", dt, 2);
    s->nshapes = 2, s->shapes[0] = shape2(c, it, H), s->shapes[1] = wproj->shape;
    if (wqb->dtype == QDT_I8) {
        s = add_compute(c, out, "AscendQuantV2", dt, 1);
        s->alt[s->nalt++] = "AscendQuantV2Aicore";
        s->nshapes = 1, s->shapes[0] = shape2(c, it, qd);
        s = add_compute(c, out, "QuantBatchMatmulV3", dt, 2);
        s->nshapes = 2, s->shapes[0] = shape2(c, it, qd), s->shapes[1] = wqb->shape;
        s->ndtypes = 2, s->dtypes[0] = s->dtypes[1] = "INT8";
    } else {
        s = add_compute(c, out, "MatMulV2", dt, 2);
        s->nshapes = 2, s->shapes[0] = shape2(c, it, qd), s->shapes[1] = wqb->shape;
    }
    s = q_spec_add(c, out, "ScatterNdUpdate", QSPEC_SCATTER_CACHE_WRITE);
    s->alt[s->nalt++] = "ScatterNdUpdateAiCore";
    s->dtype = dt;
    s->nshapes = 3, s->shapes[0] = cache->shape, s->shapes[1] = shape2(c, T, 1), s->shapes[2] = shape2(c, T, hd);
    s->ndtypes = 3, s->dtypes[0] = dt, s->dtypes[1] = "INT32", s->dtypes[2] = dt;
    s->scatter[0] = T, s->scatter[1] = hd, s->scatter_set[0] = s->scatter_set[1] = true;

    const qv *pk = qv_get(e->v, "primary_kernel_type");
    const char *prim = qv_truthy(pk) && pk->kind == QV_STR ? pk->s : "LightningIndexer";
    q_oint topk = {topk_v, true};
    q_attn_rt *rt = q_rt_sparse_params(c, it, heads, seq, eff, topk, bs, false, &cum, &kvl);
    rt->has_blocks = true;
    rt->active_blocks = blocks;
    s = q_spec_add_sparse_attention(c, out, prim, dt, it, heads, hd, rt);
    const qv *alts = qv_get(e->v, "alternate_kernel_types");
    if (alts && alts->kind == QV_LIST)
        for (size_t i = 0; i < alts->n && s->nalt < 2; i++)
            if (alts->items[i]->kind == QV_STR) s->alt[s->nalt++] = alts->items[i]->s;
    return 0;
}

/* ------------------------------------------------------ scatter_cache_write */

typedef struct scctx {
    int64_t T, F;
    const char *dt;
} scctx;

static bool span_is(const char *s, uint32_t n, const char *w) { return strlen(w) == n && memcmp(s, w, n) == 0; }

/* the items of a `;` list cell, stripped, empties dropped: exactly one, ND */
static bool only_nd(const db_cell *x) {
    char buf[48];
    opdb_span t = opdb_py_strip_chars(opdb_py_strip(db_cell_text(x, buf, sizeof buf)), "\"");
    size_t n = 0, i0 = 0;
    for (size_t i = 0; i <= t.n; i++)
        if (i == t.n || t.p[i] == ';') {
            opdb_span it = opdb_py_strip(opdb_span_make(t.p + i0, i - i0));
            i0 = i + 1;
            if (!it.n) continue;
            if (++n > 1 || !opdb_span_eq_cstr(it, "ND")) return false;
        }
    return n == 1;
}

static int chk_scatter(q_ctx *c, void *arg, q_ktable *t, size_t kidx, size_t row, q_cand *out) {
    (void)kidx;
    const scctx *p = arg;
    const q_row *r = &t->rows[row];
    if (!q_row_shapes_ok(r)) return q_cell_fault(c, t, row, "Input Shapes", "cannot parse the shapes") < 0 ? -1 : 0;
    if (q_row_nin(t, r) != 3) return 0;
    const q_list *dt = q_row_in_dt(t, r), *fmt = q_row_in_fmt(t, r), *odt = q_row_out_dt(t, r);
    q_shape in0 = q_row_in(t, r, 0), in1 = q_row_in(t, r, 1), in2 = q_row_in(t, r, 2);
    if (in0.rank != 2 || in0.d[1] != p->F) return 0;
    if (in1.rank != 2 || in1.d[0] != p->T || in1.d[1] != 1) return 0;
    if (in2.rank != 2 || in2.d[0] != p->T || in2.d[1] != p->F) return 0;
    static const char *const want_fmt = "ND";
    if (dt->n != 3 || fmt->n != 3) return 0;
    for (int i = 0; i < 3; i++) {
        if (!span_is(dt->s[i], dt->len[i], i == 1 ? "INT32" : p->dt)) return 0;
        if (!span_is(fmt->s[i], fmt->len[i], want_fmt)) return 0;
    }
    if (!q_row_out_ok(r)) return q_cell_fault(c, t, row, "Output Shapes", "cannot parse the shapes") < 0 ? -1 : 0;
    if (q_row_nout(t, r) != 1 || !q_shape_eq(q_row_out(t, r, 0), in0)) return 0;
    if (odt->n != 1 || !span_is(odt->s[0], odt->len[0], p->dt)) return 0;
    int cf = db_table_col(&t->t, "Output Formats");
    if (cf < 0 || !only_nd(db_table_cell(&t->t, row, cf))) return 0;
    out->rule = "scatter_cache_pool_dim0_agnostic";
    return 1;
}

void q_query_scatter_cache_write(q_ctx *c, const q_spec *s, const char *const *K, size_t nk, q_spec_hit *h) {
    if (!s->scatter_set[0] || !s->scatter_set[1] || s->scatter[0] <= 0 || s->scatter[1] <= 0) {
        h->reason = "semantic_context_missing:target:scatter_cache_write";
        return;
    }
    scctx p = {s->scatter[0], s->scatter[1], s->dtype};
    q_scan_run(c, K, nk, QSCAN_NEAREST, chk_scatter, &p, &h->scan);
    if (h->scan.failed) {
        h->failed = true;
        return;
    }
    if (!h->scan.found) {
        h->reason = h->scan.reason[0] ? h->scan.reason : "semantic_key_mismatch:scatter_cache_write";
        return;
    }
    h->hit = true;
    h->lat = h->scan.best.lat;
    h->kernel = h->scan.tab->kernel;
}
