/* moe_fused (DispatchFFNCombine): the op's arguments projected onto the
 * kernel's 7 physical inputs (tokens, stacked expert weights, routing
 * tensors), the row matched on them and on the run's EP size, then the
 * embedded compute (a residual norm, a routing-weight cast) and the embedded
 * all-to-all of the routed tokens added on top. */
#include <string.h>

#include "query/comm.h"

/* stack(W, axis): the expert weights of list W as one (E, p, q) shape */
static bool stack(q_ctx *c, const qv *W, int axis, int64_t H, q_shape *out, int *dtype) {
    if (!W || W->kind != QV_LIST || W->n == 0) return false;
    const qv *w = qv_first_tensor(W->items[0]);
    if (!w || w->shape.rank != 2) return false;
    int64_t p = w->shape.d[0], q = w->shape.d[1], E = (int64_t)W->n;
    int64_t d[3] = {E, p, q};
    if (axis == 0 ? (p != H && q == H) : (q != H && p == H)) d[1] = q, d[2] = p;
    int64_t *v = opdb_arena_alloc(c->a, 3 * sizeof *v);
    memcpy(v, d, sizeof d);
    out->d = v;
    out->rank = 3;
    *dtype = w->dtype;
    return true;
}

bool q_moe_project(q_ctx *c, q_tins *X) {
    const qv *A = c->q->args;
    if (!A || A->n < 8) return false;
    const qv *x = A->items[0], *e = A->items[1];
    if (x->kind != QV_TENSOR || e->kind != QV_TENSOR || e->shape.rank < 1) return false;
    int64_t r, H;
    if (x->shape.rank == 2) r = x->shape.d[0], H = x->shape.d[1];
    else if (x->shape.rank == 3) r = x->shape.d[0] * x->shape.d[1], H = x->shape.d[2];
    else return false;
    const char *op = c->q->op;
    const qv *W1 = A->items[2], *W2;
    if (strcmp(op, "tensor_cast.dispatch_ffn_combine.default") == 0) W2 = A->items[4];
    else if (strcmp(op, "tensor_cast.dispatch_ffn_combine_quant.default") == 0 ||
             strcmp(op, "tensor_cast.dispatch_ffn_combine_quant_int4.default") == 0 ||
             strcmp(op, "tensor_cast.dispatch_ffn_combine_fp8.default") == 0 ||
             strcmp(op, "tensor_cast.dispatch_ffn_combine_mxfp4.default") == 0)
        W2 = A->items[7];
    else return false;
    q_shape g1, g2;
    int dt1, dt2;
    if (!stack(c, W1, 0, H, &g1, &dt1) || !stack(c, W2, 1, H, &g2, &dt2)) return false;
    int64_t E = g1.d[0];
    int64_t *d = opdb_arena_alloc(c->a, 4 * sizeof *d);
    d[0] = r, d[1] = H, d[2] = E * g1.d[2], d[3] = E * H;
    q_tin *v = opdb_arena_alloc(c->a, 7 * sizeof *v);
    memset(v, 0, 7 * sizeof *v);
    v[0].s = (q_shape){d, 2}, v[0].dtype = x->dtype;
    v[1].s = g1, v[1].dtype = dt1;
    v[2].s = g2, v[2].dtype = dt2;
    v[3].s = e->shape, v[3].dtype = QDT_I32;
    v[4].s = (q_shape){d + 2, 1}, v[4].dtype = QDT_I64;
    v[5].s = (q_shape){d + 3, 1}, v[5].dtype = QDT_I64;
    v[6].s = e->shape, v[6].dtype = QDT_F32;
    X->v = v;
    X->n = 7;
    return true;
}

typedef struct mmctx {
    const q_tins *X;
    int64_t N;
    bool has_n, projected;
    int c_ep;
} mmctx;

static int chk_moe(q_ctx *c, void *arg, q_ktable *t, size_t kidx, size_t row, q_cand *out) {
    (void)kidx;
    const mmctx *m = arg;
    q_match mt;
    int rc = q_match_row(c, m->X, t, row, m->N, m->has_n, true, &mt);
    if (rc <= 0) return rc;
    if (m->c_ep >= 0) {
        const db_cell *ec = db_table_cell(&t->t, row, m->c_ep);
        if (ec->kind == DBC_NA) return 0;
        int64_t ep;
        if (!db_cell_pyint(ec, &ep)) return q_cell_fault(c, t, row, "EP Size", "not an integer") < 0 ? -1 : 0;
        if (ep != c->cfg->ep) return 0;
    }
    out->rule = m->projected && strcmp(mt.rule, "identity") == 0 ? "projected_full_shape" : mt.rule;
    out->dist = c->cfg->quirks ? (strstr(mt.rule, "padding") ? 1 : 0) : (mt.padded_any ? 1 : 0);
    if (c->explain) {
        const char **ir = opdb_arena_alloc(c->a, (mt.n ? mt.n : 1) * sizeof *ir);
        memcpy(ir, mt.input_rules, mt.n * sizeof *ir);
        out->input_rules = ir;
        out->n_rules = mt.n;
    }
    return 1;
}

static const uint32_t *sel_moe(q_ctx *c, void *arg, q_ktable *t, size_t *n, bool *usable) {
    const mmctx *m = arg;
    return q_index_rows(c, t, m->X, m->N, m->has_n, true, n, usable);
}
static const q_rowsel k_sel_moe = {sel_moe, NULL, 0, NULL}; /* no key: its scans stay out of the exact-hit map */

/* ---- embedded compute */

typedef struct castctx {
    q_tins X;
    q_shape out;
    const char *odt;
} castctx;

static int chk_cast(q_ctx *c, void *arg, q_ktable *t, size_t kidx, size_t row, q_cand *out) {
    (void)kidx;
    const castctx *m = arg;
    q_match mt;
    int rc = q_match_row(c, &m->X, t, row, 1, true, true, &mt);
    if (rc <= 0) return rc;
    const q_row *r = &t->rows[row];
    if (!q_row_out_ok(r)) return q_cell_fault(c, t, row, "Output Shapes", "cannot parse the shapes") < 0 ? -1 : 0;
    if (q_row_nout(t, r) != 1 || !q_shape_eq(q_row_out(t, r, 0), m->out)) return 0;
    const q_list *odt = q_row_out_dt(t, r);
    if (odt->n != 1 || strlen(m->odt) != odt->len[0] || memcmp(odt->s[0], m->odt, odt->len[0]) != 0)
        return 0;
    out->rule = mt.rule;
    out->dist = c->cfg->quirks ? (strstr(mt.rule, "padding") ? 1 : 0) : (mt.padded_any ? 1 : 0);
    return 1;
}

/* One embedded compute item: 1 hit (*lat, *kernel), 0 miss, -1 error set. */
static int embedded_one(q_ctx *c, const qv *it, double *lat, const char **kernel) {
    const qv *A = c->q->args, *kt = qv_get(it, "kernel_type"), *proj = qv_get(it, "input_projection");
    if (!kt || kt->kind != QV_STR) return 0;
    q_scan s;
    if (qv_is_str(proj, "residual_norm_from_activation")) {
        if (!A || A->n == 0) return 0;
        const qv *a = qv_first_tensor(A->items[0]);
        if (!a || a->shape.rank < 2) return 0;
        q_shape sh = a->shape;
        if (qv_truthy(qv_get(it, "flatten_leading_dims")) && sh.rank > 2) {
            int64_t *d = opdb_arena_alloc(c->a, 2 * sizeof *d);
            d[0] = 1;
            for (uint32_t i = 0; i + 1 < sh.rank; i++) d[0] *= sh.d[i];
            d[1] = sh.d[sh.rank - 1];
            sh = (q_shape){d, 2};
        }
        if (sh.rank != 2) return 0;
        q_tin v[4];
        memset(v, 0, sizeof v);
        v[0].s = v[1].s = sh;
        v[2].s = v[3].s = (q_shape){sh.d + 1, 1};
        for (int i = 0; i < 4; i++) v[i].dtype = a->dtype;
        q_tins X = {v, 4};
        const char *reason;
        if (!q_find_compute(c, &kt->s, 1, &X, 4, true, false, &s, &reason)) return s.failed ? -1 : 0;
    } else if (qv_is_str(proj, "routing_weight_cast")) {
        const qv *od = qv_get(it, "output_dtype");
        if (!od || od->kind != QV_STR || !A || A->n < 2) return 0;
        const qv *a0 = A->items[0], *a1 = A->items[1];
        if (a0->kind != QV_TENSOR || a1->kind != QV_TENSOR) return 0;
        castctx m;
        q_tin v = {a1->shape, a0->dtype, NULL};
        m.X.v = &v;
        m.X.n = 1;
        m.out = a1->shape;
        m.odt = od->s;
        q_scan_run(c, &kt->s, 1, QSCAN_NEAREST, chk_cast, &m, &s);
        if (s.failed) return -1;
        if (!s.found) return 0;
    } else {
        return 0;
    }
    q_explain_scan(c, &s);
    *lat = s.best.lat;
    *kernel = s.tab->kernel;
    return 1;
}

void q_moe_embedded(q_ctx *c, const q_entry *e, const char *dfc_kernel, double dfc, const char *rule,
                    double interp_conf) {
    const qv *ec = qv_get(e->v, "embedded_compute");
    size_t n = 0;
    const qv *const *items = NULL;
    if (ec && ec->kind == QV_LIST) items = (const qv *const *)ec->items, n = ec->n;
    else if (ec && ec->kind != QV_NULL) items = &ec, n = 1;
    q_sub *hits = opdb_arena_alloc(c->a, (n ? n : 1) * sizeof *hits);
    size_t nh = 0;
    double emb = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i]->kind != QV_DICT) continue;
        double lat;
        const char *k;
        int rc = embedded_one(c, items[i], &lat, &k);
        if (rc < 0) return;
        if (rc == 0) continue;
        emb += lat;
        hits[nh].kernel = k;
        hits[nh++].us = lat;
    }
    double base = dfc + emb;
    bool interp = interp_conf > 0;
    q_src src = interp ? QS_INTERPOLATED : QS_MEASURED;
    double conf = interp ? interp_conf : 1.0;
    const qv *comm = qv_get(e->v, "embedded_communication");
    q_comm_res o;
    memset(&o, 0, sizeof o);
    if (comm && comm->kind == QV_DICT) {
        const qv *kt = qv_get(comm, "kernel_type"), *meth = qv_get(comm, "interpolation_method");
        bool ab = true;
        bool ok = kt && kt->kind == QV_STR && strncmp(kt->s, "hcom_", 5) == 0;
        if (ok && meth) {
            if (qv_is_str(meth, "bracket_linear")) ab = false;
            else ok = qv_is_str(meth, "alpha_beta");
        }
        if (!ok) {
            q_miss(c, "invalid_moe_embedded_communication");
            return;
        }
        const qv *A = c->q->args;
        const qv *x = A && A->n >= 2 ? A->items[0] : NULL, *ex = A && A->n >= 2 ? A->items[1] : NULL,
                 *g = A && A->n >= 2 ? A->items[A->n - 1] : NULL;
        ok = x && x->kind == QV_TENSOR && ex->kind == QV_TENSOR && g->kind == QV_LIST &&
             qv_is_str(qv_get(comm, "message_bytes_mode"), "routed_input");
        int64_t topk = 1, B = 0, ng = 0;
        if (ok) {
            if (ex->shape.rank >= 2) topk = ex->shape.d[ex->shape.rank - 1];
            ok = topk > 0;
            B = q_mul_sat(q_mul_sat(q_numel(x->shape), (int64_t)q_dtype_size(x->dtype)), topk);
            ng = (int64_t)g->n;
            if (qv_is_str(qv_get(comm, "group_type"), "expert_parallel") && (c->cfg->ep == 0 || ng != c->cfg->ep))
                ok = false;
        }
        if (!ok) {
            q_miss(c, "moe_embedded_communication_context_mismatch");
            return;
        }
        int tier;
        if (q_comm_tier(c, g, &tier)) return;
        q_comm_csv(c, kt->s, B, ng, tier, ab, &o);
        if (o.failed) return;
        if (c->explain && o.tab) {
            opdb_sb_adds(&c->r->extra, ", \"comm\": ");
            q_comm_explain(&o, &c->r->extra);
        }
        if (!o.found && strcmp(o.reason, "shape_mismatch") != 0) {
            /* the communication could not be looked up at all: the measured parts alone */
            q_hit(c, QS_PARTIAL, base, 0.5, rule, dfc_kernel);
            q_add_sub(c, dfc_kernel, q_round2(dfc));
            for (size_t i = 0; i < nh; i++) q_add_sub(c, hits[i].kernel, q_round2(hits[i].us));
            return;
        }
        if (o.found) {
            if (!interp) {
                src = o.interp ? QS_INTERPOLATED : QS_MEASURED;
                conf = o.interp ? 0.8 : 0.9;
            }
            q_hit(c, src, base + o.lat, conf, rule, dfc_kernel);
            q_add_sub(c, dfc_kernel, q_round2(dfc));
            for (size_t i = 0; i < nh; i++) q_add_sub(c, hits[i].kernel, q_round2(hits[i].us));
            q_add_sub(c, kt->s, q_round2(o.lat));
            return;
        }
        /* a message size outside the measured range: the communication is dropped */
    }
    q_hit(c, src, base, conf, rule, dfc_kernel);
    q_add_sub(c, dfc_kernel, q_round2(dfc));
    for (size_t i = 0; i < nh; i++) q_add_sub(c, hits[i].kernel, q_round2(hits[i].us));
}

void q_path_moe_fused(q_ctx *c, const q_entry *e) {
    c->r->path = "moe_fused";
    const qv *ktv = qv_get(e->v, "kernel_type");
    if (!qv_truthy(ktv)) {
        q_miss(c, "unmapped");
        return;
    }
    if (ktv->kind != QV_STR) {
        q_error(c, "bad_mapping", "operator_mappings.%s.kernel_type is not a string", e->name);
        return;
    }
    const char *kt = ktv->s;
    q_set_kernels(c, &kt, 1);
    q_ktable *t = q_table(c->db, kt);
    int st = atomic_load_explicit(&t->state, memory_order_acquire);
    if (st == QT_ABSENT) {
        q_miss(c, "csv_not_found");
        return;
    }
    if (st == QT_FAILED) {
        q_error(c, "bad_csv", "%s", t->error);
        return;
    }
    mmctx m;
    memset(&m, 0, sizeof m);
    m.c_ep = db_table_col(&t->t, "EP Size");
    if (m.c_ep >= 0 && c->cfg->ep == 0) {
        q_miss(c, "ep_size_not_configured");
        return;
    }
    q_tins X;
    if (qv_truthy(qv_get(e->v, "project_full_shape")) && q_moe_project(c, &X)) {
        m.projected = true;
    } else {
        X = q_tensor_inputs(c, c->q->args);
        const qv *tc = qv_get(e->v, "tc_input_count");
        if (tc && tc->kind != QV_NULL) {
            if (!qv_as_int(tc, &m.N)) {
                q_error(c, "bad_mapping", "operator_mappings.%s.tc_input_count is not an integer", e->name);
                return;
            }
            m.has_n = true;
            X.n = q_slice_n(X.n, m.N);
        }
    }
    m.X = &X;
    q_scan s;
    q_scan_run_sel(c, &kt, 1, c->cfg->quirks ? QSCAN_FIRST : QSCAN_NEAREST, chk_moe, &m, &k_sel_moe, &s);
    if (s.failed) return;
    if (!s.found) {
        q_miss(c, s.reason[0] ? s.reason : "shape_mismatch");
        return;
    }
    q_explain_scan(c, &s);
    q_moe_embedded(c, e, s.tab->kernel, s.best.lat, s.best.rule, 0);
}
