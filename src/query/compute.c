/* Compute lookups: the kernel list of a mapping entry (alternates, the
 * degenerate-BMM kernel, the per-rank list), the TP linear projection, the
 * nearest-row scan, mtp_projection, and find_compute for composite paths. */
#include <stdio.h>
#include <string.h>

#include "query/query_internal.h"

typedef struct klist {
    const char **v;
    size_t n, cap;
} klist;

static void kl_add(q_ctx *c, klist *k, const char *s) {
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->v[i], s) == 0) return;
    if (k->n == k->cap) {
        size_t nc = k->cap ? k->cap * 2 : 8;
        const char **n = opdb_arena_alloc(c->a, nc * sizeof *n);
        if (k->n) memcpy(n, k->v, k->n * sizeof *n);
        k->v = n;
        k->cap = nc;
    }
    k->v[k->n++] = s;
}

int q_entry_kernels(q_ctx *c, const q_entry *e, bool with_alternates, const char ***out, size_t *n) {
    if (e->p && e->p->kernels_ok) {
        *out = e->p->k;
        *n = with_alternates ? e->p->nk : e->p->nk0;
        return 0;
    }
    klist k = {0};
    const qv *kt = qv_get(e->v, "kernel_type");
    if (qv_truthy(kt) && kt->kind != QV_STR) {
        q_error(c, "bad_mapping", "operator_mappings.%s.kernel_type is not a string", e->name);
        return -1;
    }
    if (qv_truthy(kt)) kl_add(c, &k, kt->s);
    if (with_alternates) {
        const qv *alt = qv_get(e->v, "alternate_kernel_types");
        if (alt && alt->kind != QV_NULL) {
            if (alt->kind != QV_LIST) {
                q_error(c, "bad_mapping", "operator_mappings.%s.alternate_kernel_types is not a list", e->name);
                return -1;
            }
            for (size_t i = 0; i < alt->n; i++) {
                if (alt->items[i]->kind != QV_STR) {
                    q_error(c, "bad_mapping", "operator_mappings.%s.alternate_kernel_types holds a non-string", e->name);
                    return -1;
                }
                kl_add(c, &k, alt->items[i]->s);
            }
        }
    }
    *out = k.v;
    *n = k.n;
    return 0;
}

/* tc_input_count: 0 none, 1 set, -1 bad_mapping (error set) */
static int tc_count(q_ctx *c, const q_entry *e, int64_t *N) {
    const qv *v = qv_get(e->v, "tc_input_count");
    if (!v || v->kind == QV_NULL) return 0;
    if (!qv_as_int(v, N)) {
        q_error(c, "bad_mapping", "operator_mappings.%s.tc_input_count is not an integer", e->name);
        return -1;
    }
    return 1;
}

typedef struct mctx {
    const q_tins *X;
    int64_t N;
    bool has_n, normalise;
} mctx;

static int chk_compute(q_ctx *c, void *arg, q_ktable *t, size_t kidx, size_t row, q_cand *out) {
    (void)kidx;
    mctx *m = arg;
    q_match mt;
    int rc = q_match_row(c, m->X, t, row, m->N, m->has_n, m->normalise, &mt);
    if (rc <= 0) return rc;
    out->rule = mt.rule;
    if (c->cfg->quirks) out->dist = strstr(mt.rule, "padding") ? 1 : 0;
    else out->dist = mt.padded_any ? 1 : 0;
    if (c->explain) {
        const char **ir = opdb_arena_alloc(c->a, (mt.n ? mt.n : 1) * sizeof *ir);
        memcpy(ir, mt.input_rules, mt.n * sizeof *ir);
        out->input_rules = ir;
        out->n_rules = mt.n;
    }
    return 1;
}


static const uint32_t *sel_compute(q_ctx *c, void *arg, q_ktable *t, size_t *n, bool *usable) {
    mctx *m = arg;
    return q_index_rows(c, t, m->X, m->N, m->has_n, m->normalise, n, usable);
}

static size_t key_compute(void *arg, uint8_t *buf, size_t cap) {
    const mctx *m = arg;
    return q_key_tins(m->X, m->N, m->has_n, m->normalise, buf, cap);
}

static bool exact_compute(q_ctx *c, void *arg, q_ktable *t, const uint32_t *sub, const uint32_t **fh,
                          const uint32_t **sh, uint32_t *qh, size_t *nq) {
    mctx *m = arg;
    return q_index_exact_keys(c, t, m->X, m->N, m->has_n, m->normalise, sub, fh, sh, qh, nq);
}

const q_rowsel q_sel_compute = {sel_compute, key_compute, 'C', exact_compute};

/* The TP linear projection of X; 0 ok (X maybe replaced), -1 miss/error set. */
static int tp_project(q_ctx *c, const q_entry *e, q_tins *X) {
    const int64_t *dims = NULL;
    size_t ndims = 0;
    uint8_t rule;
    if (e->p && e->p->target_ok) rule = e->p->tp, dims = e->p->tp_dims, ndims = e->p->tp_n;
    else rule = q_tp_read(c->a, e->v, &dims, &ndims);
    if (rule == Q_TP_NONE) return 0;
    bool input = rule == Q_TP_INPUT, output = rule == Q_TP_OUTPUT;
    bool valid = rule != Q_TP_INVALID && X->n >= 2 && X->v[0].s.rank == 2 && X->v[1].s.rank == 2;
    if (!valid) {
        q_miss(c, "invalid_tp_linear_projection_rule");
        return -1;
    }
    q_shape a = X->v[0].s, w = X->v[1].s;
    int64_t v = input ? a.d[1] : w.d[1];
    bool listed = false;
    for (size_t i = 0; i < ndims; i++) listed |= dims[i] == v;
    int tp = c->cfg->tp;
    if (!listed || tp == 1) return 0;
    int64_t k = a.d[1];
    bool ok = tp > 1 && k == w.d[0];
    if (ok && input) ok = k >= 1 && k % tp == 0;
    if (ok && output) ok = w.d[1] >= 1 && w.d[1] % tp == 0;
    if (!ok) {
        char tps[24];
        if (tp) snprintf(tps, sizeof tps, "%d", tp);
        else snprintf(tps, sizeof tps, "None");
        q_missf(c, "tp_projection_invalid:logical_dim=%lld;shard_axis=%s;tp_size=%s", (long long)v,
                input ? "input" : "output", tps);
        return -1;
    }
    q_tin *nv = opdb_arena_alloc(c->a, X->n * sizeof *nv);
    memcpy(nv, X->v, X->n * sizeof *nv);
    int64_t *d = opdb_arena_alloc(c->a, 4 * sizeof *d);
    if (input) {
        d[0] = a.d[0], d[1] = k / tp, d[2] = k / tp, d[3] = w.d[1];
        nv[0].s.d = d;
        nv[1].s.d = d + 2;
    } else {
        d[2] = w.d[0], d[3] = w.d[1] / tp;
        nv[1].s.d = d + 2;
    }
    X->v = nv;
    return 0;
}

/* the degenerate-BMM shapes: a [1, 32, 1] query against a [1, 1, n] weight */
static bool degenerate(const q_tins *X) {
    if (X->n < 2) return false;
    q_shape a = X->v[0].s, b = X->v[1].s;
    return a.rank == 3 && a.d[0] == 1 && a.d[1] == 32 && a.d[2] == 1 && b.rank == 3 && b.d[0] == 1 && b.d[1] == 1 &&
           b.d[2] > 0;
}

/* q_compute_target's steps from the entry's plan (no rank list there), before the projection */
static void planned_target(q_ctx *c, const q_plan *p, const char ***K, size_t *nk, q_tins *X, int64_t *N,
                           bool *has_n) {
    *has_n = p->has_n;
    if (p->has_n) *N = p->N;
    *X = q_tensor_inputs(c, c->q->args);
    if (*has_n) X->n = q_slice_n(X->n, *N);
    *K = p->k;
    *nk = p->nk;
    if (p->deg && degenerate(X)) {
        klist k = {0};
        for (size_t i = 0; i < p->nk; i++) kl_add(c, &k, p->k[i]);
        kl_add(c, &k, p->deg);
        *K = k.v;
        *nk = k.n;
    }
}

/* The kernel list and inputs of a compute entry (steps 1-5); 0 ok, 1 answered (miss/error set). */
int q_compute_target(q_ctx *c, const q_entry *e, const char ***K, size_t *nk, q_tins *X, int64_t *N, bool *has_n,
                     bool project);
int q_compute_target(q_ctx *c, const q_entry *e, const char ***K, size_t *nk, q_tins *X, int64_t *N, bool *has_n,
                     bool project) {
    if (e->p && e->p->target_ok) {
        planned_target(c, e->p, K, nk, X, N, has_n);
        return project && tp_project(c, e, X) ? 1 : 0;
    }
    const char **k0;
    size_t n0;
    if (q_entry_kernels(c, e, true, &k0, &n0)) return 1;
    int tc = tc_count(c, e, N);
    if (tc < 0) return 1;
    *has_n = tc == 1;
    *X = q_tensor_inputs(c, c->q->args);
    if (*has_n) X->n = q_slice_n(X->n, *N);
    klist k = {0};
    for (size_t i = 0; i < n0; i++) kl_add(c, &k, k0[i]);
    const qv *deg = qv_get(e->v, "degenerate_bmm_kernel_type");
    if (deg && deg->kind == QV_STR && degenerate(X)) kl_add(c, &k, deg->s);
    const qv *byrank = qv_get(e->v, "kernel_types_by_input_rank");
    if (X->n > 0 && byrank && byrank->kind != QV_NULL) {
        if (byrank->kind != QV_DICT) {
            q_error(c, "bad_mapping", "operator_mappings.%s.kernel_types_by_input_rank is not a mapping", e->name);
            return 1;
        }
        int64_t r = X->v[0].s.rank;
        const qv *L = qv_get_int(byrank, r);
        if (!L) {
            char key[24];
            snprintf(key, sizeof key, "%lld", (long long)r);
            L = qv_get(byrank, key);
        }
        bool strs = L && L->kind == QV_LIST;
        for (size_t i = 0; strs && i < L->n; i++) strs = L->items[i]->kind == QV_STR;
        if (strs) {
            klist k2 = {0};
            for (size_t i = 0; i < L->n; i++) kl_add(c, &k2, L->items[i]->s);
            for (size_t i = 0; i < k.n; i++) kl_add(c, &k2, k.v[i]);
            k = k2;
        }
    }
    *K = k.v;
    *nk = k.n;
    if (project && tp_project(c, e, X)) return 1;
    return 0;
}

void q_path_compute(q_ctx *c, const q_entry *e) {
    c->r->path = "compute";
    if (e->p && e->p->kernels_ok ? !e->p->nk0 : !qv_truthy(qv_get(e->v, "kernel_type"))) {
        q_miss(c, "");
        return;
    }
    const char **K;
    size_t nk;
    q_tins X;
    int64_t N = 0;
    bool has_n = false;
    if (q_compute_target(c, e, &K, &nk, &X, &N, &has_n, true)) return;
    q_set_kernels(c, K, nk);
    mctx m = {&X, N, has_n, true};
    q_scan s;
    q_scan_run_sel(c, K, nk, QSCAN_NEAREST, chk_compute, &m, &q_sel_compute, &s);
    if (s.failed) return;
    if (!s.found) {
        q_miss(c, s.reason[0] ? s.reason : "shape_mismatch");
        return;
    }
    q_explain_scan(c, &s);
    q_hit(c, QS_MEASURED, s.best.lat, 1.0, s.best.rule, s.kernel);
}

void q_path_mtp_projection(q_ctx *c, const q_entry *e) {
    q_tins X = q_tensor_inputs(c, c->q->args);
    const qv *o = qv_first_tensor(c->q->out);
    const qv *kv = qv_get(e->v, "mtp_projection_kernel_type");
    if (X.n >= 2 && o && X.v[0].s.rank == 2 && X.v[1].s.rank == 2 && o->shape.rank == 2 && kv && kv->kind == QV_STR &&
        kv->n > 0) {
        q_shape a = X.v[0].s, w = X.v[1].s, y = o->shape;
        bool sets = (w.d[0] == a.d[1] || w.d[0] == y.d[1]) && (w.d[1] == a.d[1] || w.d[1] == y.d[1]) &&
                    (a.d[1] == w.d[0] || a.d[1] == w.d[1]) && (y.d[1] == w.d[0] || y.d[1] == w.d[1]);
        if (a.d[0] == y.d[0] && a.d[1] == 2 * y.d[1] && sets) {
            q_tin pv[2] = {{a, o->dtype, NULL}, {w, o->dtype, NULL}};
            q_tins P = {pv, 2};
            const char *K[1] = {kv->s};
            mctx m = {&P, 2, true, true};
            q_scan s;
            q_scan_run_sel(c, K, 1, QSCAN_NEAREST, chk_compute, &m, &q_sel_compute, &s);
            if (s.failed) return;
            if (s.found) {
                c->r->path = "mtp_projection";
                q_set_kernels(c, K, 1);
                q_explain_scan(c, &s);
                q_hit(c, QS_MEASURED, s.best.lat, 1.0, s.best.rule, kv->s);
                return;
            }
        }
    }
    q_path_compute(c, e);
}

/* first data row's shape count of P (latency not required), for the miss diagnosis */
static const char *diagnose(q_ctx *c, const char *P, const q_tins *X, int64_t N, bool has_n) {
    q_ktable *t = q_table(c->db, P);
    if (atomic_load(&t->state) != QT_OK || t->t.nrows == 0) return "csv_not_found";
    size_t r = 0;
    if (!c->cfg->quirks)
        while (r < t->t.nrows && !q_row_shapes_ok(&t->rows[r])) r++;
    if (r >= t->t.nrows) return "shape_mismatch";
    if (!q_row_shapes_ok(&t->rows[r])) {
        if (q_cell_fault(c, t, r, "Input Shapes", "cannot parse the first row's shapes") < 0) return NULL;
        return "shape_mismatch";
    }
    size_t cn = q_row_nin(t, &t->rows[r]), tn = X->n;
    if (has_n) {
        if ((int64_t)cn > N) cn = (size_t)(N < 0 ? 0 : N);
        if ((int64_t)tn > N) tn = (size_t)(N < 0 ? 0 : N);
    }
    if (strcmp(P, "SwiGlu") == 0 && tn == 2 && cn == 1) tn = 1;
    if ((strcmp(P, "ReshapeAndCacheNdKernel") == 0 || strcmp(P, "reshape_and_cache_200000000") == 0) && tn == 4 &&
        cn == 5)
        tn = 5;
    return tn != cn ? "input_count_mismatch" : "shape_mismatch";
}

bool q_find_compute(q_ctx *c, const char *const *k, size_t nk, const q_tins *X, int64_t N, bool has_n, bool autoN,
                    q_scan *s, const char **reason) {
    if (autoN && !has_n && X->n > 0) {
        N = (int64_t)X->n;
        has_n = true;
    }
    mctx m = {X, N, has_n, true};
    q_scan_run_sel(c, k, nk, QSCAN_NEAREST, chk_compute, &m, &q_sel_compute, s);
    *reason = s->reason;
    if (s->failed || s->found) return s->found;
    if (!s->reason[0] && nk > 0) {
        const char *d = diagnose(c, k[0], X, N, has_n);
        if (!d) {
            s->failed = true;
            return false;
        }
        *reason = d;
    }
    return false;
}
