/* Communication lookups: the rank group's topology tier, then the kernel's
 * CSV by message bytes and device count: the exact row, else the rows that
 * bracket the size, answered by a straight line between them or by a least
 * squares fit over every row of that device count, clamped to the bracket.
 *
 * Each CSV gets an index once: per (devices, tier or any tier), the rows
 * with a latency sorted by message bytes (file order among equal bytes, so
 * the first one is the bracket's row) and the fit, which does not depend on
 * the query. A lookup is one binary search. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/json_writer.h"
#include "opdb/pyround.h"
#include "opdb/pystr.h"
#include "query/comm.h"

double q_round2(double x) { return opdb_py_roundn(x, 2); }

/* ------------------------------------------------------------------ tiers */

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

int q_comm_tier_of(const int64_t *r, size_t n, const int *d, size_t m) {
    if (m == 0) return -1;
    size_t tier = m - 1;
    int64_t c0[64];
    size_t mm = m < 64 ? m : 64;
    for (size_t i = 0; i < n; i++) {
        int64_t x = r[i];
        /* coordinates from the innermost dimension out; ranks beyond the grid wrap */
        int64_t c[64];
        for (size_t jj = m; jj-- > 0;) {
            int64_t dj = d[jj] > 0 ? d[jj] : 1;
            int64_t q = floor_div(x, dj);
            if (jj < mm) c[jj] = x - q * dj;
            x = q;
        }
        if (i == 0) {
            memcpy(c0, c, mm * sizeof *c0);
            continue;
        }
        for (size_t j = 0; j < mm && j < tier; j++)
            if (c[j] != c0[j]) {
                tier = j;
                break;
            }
    }
    return (int)tier;
}

int q_comm_tier(q_ctx *c, const qv *g, int *tier) {
    *tier = -1;
    if (c->cfg->grid_n == 0) return 0;
    if (g->n == 0) {
        if (c->cfg->quirks) {
            q_error(c, "invalid_rank_group", "the rank group is empty (the reference fails on it with a grid)");
            return -1;
        }
        return 0;
    }
    int64_t *r = opdb_arena_alloc(c->a, g->n * sizeof *r);
    for (size_t i = 0; i < g->n; i++)
        if (!qv_as_int(g->items[i], &r[i])) {
            q_error(c, "bad_query", "rank group member %zu is not an integer", i);
            return -1;
        }
    *tier = q_comm_tier_of(r, g->n, c->cfg->grid, c->cfg->grid_n);
    return 0;
}

/* ------------------------------------------------------------------ the fit */

bool q_comm_fit(const double *x, const double *y, size_t n, double *alpha, double *beta) {
    if (n < 2) return false;
    double sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++) sx += x[i], sy += y[i];
    double xb = sx / (double)n, yb = sy / (double)n, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - xb;
        sxx += dx * dx;
        sxy += dx * (y[i] - yb);
    }
    if (!(sxx > 0)) return false;
    *beta = sxy / sxx;
    *alpha = yb - *beta * xb;
    return true;
}

/* ------------------------------------------------------------------ the index */

typedef struct centry {
    double mb, lat;
    uint32_t row;
} centry;

typedef struct cgroup {
    double nd, tier;
    bool any_tier;               /* every tier (no filter) */
    centry *e;                   /* rows with numeric bytes, by (bytes, row) */
    size_t n, cap;
    uint32_t *bad;               /* rows with a latency whose bytes are NA or text, file order */
    size_t nbad, capbad;
    bool has_text, has_na;       /* among bad: the first of each kind */
    uint32_t first_text, first_na;
    bool fit_ok;
    double xbar, ybar, alpha, beta;
} cgroup;

typedef struct cindex {
    bool raw;                    /* no message_bytes or num_devices column */
    bool has_tier;
    cgroup *g;
    size_t ng, capg;
} cindex;

void q_comm_index_free(void *p) {
    cindex *ix = p;
    if (!ix) return;
    for (size_t i = 0; i < ix->ng; i++) {
        free(ix->g[i].e);
        free(ix->g[i].bad);
    }
    free(ix->g);
    free(ix);
}

/* a cell's number when it is one (NA and text are not: they never compare equal) */
static bool cell_number(const db_cell *c, double *v) {
    switch (c->kind) {
    case DBC_INT: *v = (double)c->v.i; return true;
    case DBC_UINT: *v = (double)c->v.u; return true;
    case DBC_FLOAT: *v = c->v.f; return true;
    case DBC_BOOL: *v = c->v.b ? 1.0 : 0.0; return true;
    default: return false;
    }
}

/* the row latency in the exact path's column order, without the core envelope */
bool q_plain_row_latency(const q_ktable *t, size_t r, double *lat) {
    int order[4] = {t->c_pref, t->c_lat[0], t->c_lat[1], t->c_lat[2]}, col;
    int known = q_row_lat_known(t, r, order, 4, lat, &col);
    if (known >= 0) return known;
    for (int k = 0; k < 4; k++) {
        int col = order[k];
        if (col < 0) continue;
        bool dup = false;
        for (int j = 0; j < k; j++) dup |= order[j] == col;
        if (dup) continue;
        double v;
        if (!db_cell_num(db_table_cell(&t->t, r, col), &v)) continue;
        if (isfinite(v) && v > 0) {
            *lat = v;
            return true;
        }
    }
    return false;
}

static cgroup *group_of(cindex *ix, double nd, bool any, double tier) {
    for (size_t i = 0; i < ix->ng; i++) {
        cgroup *g = &ix->g[i];
        if (g->nd == nd && g->any_tier == any && (any || g->tier == tier)) return g;
    }
    OPDB_ALLOC_GROW(ix->g, ix->ng + 1, ix->capg);
    cgroup *g = &ix->g[ix->ng++];
    memset(g, 0, sizeof *g);
    g->nd = nd;
    g->any_tier = any;
    g->tier = tier;
    return g;
}

static void group_add(cgroup *g, int mbk, double mb, double lat, uint32_t row) {
    if (mbk == 0) {
        OPDB_ALLOC_GROW(g->e, g->n + 1, g->cap);
        g->e[g->n].mb = mb;
        g->e[g->n].lat = lat;
        g->e[g->n++].row = row;
        return;
    }
    OPDB_ALLOC_GROW(g->bad, g->nbad + 1, g->capbad);
    g->bad[g->nbad++] = row;
    if (mbk == 1 && !g->has_na) g->has_na = true, g->first_na = row;
    if (mbk == 2 && !g->has_text) g->has_text = true, g->first_text = row;
}

static int cmp_entry(const void *a, const void *b) {
    const centry *x = a, *y = b;
    if (x->mb != y->mb) return x->mb < y->mb ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static cindex *build(const q_ktable *t) {
    cindex *ix = opdb_xcalloc(1, sizeof *ix);
    int c_mb = db_table_col(&t->t, "message_bytes"), c_nd = db_table_col(&t->t, "num_devices"),
        c_tier = db_table_col(&t->t, "topology_tier");
    if (c_mb < 0 || c_nd < 0) {
        ix->raw = true;
        return ix;
    }
    ix->has_tier = c_tier >= 0;
    for (size_t r = 0; r < t->t.nrows; r++) {
        double lat, nd, tier = 0, mb = 0;
        if (!q_plain_row_latency(t, r, &lat)) continue;
        if (!cell_number(db_table_cell(&t->t, r, c_nd), &nd)) continue;
        const db_cell *mc = db_table_cell(&t->t, r, c_mb);
        int mbk = cell_number(mc, &mb) ? 0 : mc->kind == DBC_NA ? 1 : 2;
        group_add(group_of(ix, nd, true, 0), mbk, mb, lat, (uint32_t)r);
        if (ix->has_tier && cell_number(db_table_cell(&t->t, r, c_tier), &tier))
            group_add(group_of(ix, nd, false, tier), mbk, mb, lat, (uint32_t)r);
    }
    for (size_t i = 0; i < ix->ng; i++) {
        cgroup *g = &ix->g[i];
        /* the fit over every candidate, summed in file order (the order rows were added) */
        double *x = opdb_xmalloc((g->n ? g->n : 1) * sizeof *x), *y = opdb_xmalloc((g->n ? g->n : 1) * sizeof *y);
        for (size_t k = 0; k < g->n; k++) x[k] = g->e[k].mb, y[k] = g->e[k].lat;
        g->fit_ok = q_comm_fit(x, y, g->n, &g->alpha, &g->beta);
        if (g->fit_ok) {
            double sx = 0, sy = 0;
            for (size_t k = 0; k < g->n; k++) sx += x[k], sy += y[k];
            g->xbar = sx / (double)g->n;
            g->ybar = sy / (double)g->n;
        }
        free(x);
        free(y);
        if (g->n > 1) qsort(g->e, g->n, sizeof *g->e, cmp_entry);
    }
    return ix;
}

static const cindex *comm_index(q_ktable *t) {
    opdb_call_lock(&t->ext_mu);
    if (!t->ext[1]) {
        t->ext[1] = build(t);
        t->ext_free[1] = q_comm_index_free;
    }
    const cindex *ix = t->ext[1];
    opdb_call_unlock(&t->ext_mu);
    return ix;
}

/* first entry with mb >= v */
static size_t lower_bound(const cgroup *g, double v) {
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (g->e[m].mb < v) lo = m + 1;
        else hi = m;
    }
    return lo;
}

static void comm_csv(q_ctx *c, const char *kt, int64_t B, int64_t n, int tier, bool alpha_beta, q_comm_res *o) {
    memset(o, 0, sizeof *o);
    o->B = B;
    o->n = n;
    o->tier = tier;
    o->alpha_beta = alpha_beta;
    o->reason = "";
    q_ktable *t = q_table(c->db, kt);
    int st = atomic_load_explicit(&t->state, memory_order_acquire);
    if (st == QT_ABSENT) {
        o->reason = "csv_not_found";
        return;
    }
    if (st == QT_FAILED) {
        q_error(c, "bad_csv", "%s", t->error);
        o->failed = true;
        return;
    }
    o->tab = t;
    const cindex *ix = comm_index(t);
    if (ix->raw) {
        o->reason = "csv_format_raw";
        return;
    }
    bool filter = tier >= 0 && ix->has_tier;
    if (!filter) o->tier = -1;
    const cgroup *g = NULL;
    for (size_t i = 0; i < ix->ng && !g; i++) {
        const cgroup *h = &ix->g[i];
        if (h->nd == (double)n && h->any_tier == !filter && (!filter || h->tier == (double)tier)) g = h;
    }
    o->reason = "shape_mismatch";
    if (!g) return;
    double b = (double)B;
    size_t lb = lower_bound(g, b);
    if (lb < g->n && g->e[lb].mb == b) {
        o->found = true;
        o->exact = true;
        o->lat = g->e[lb].lat;
        o->row_lo = o->row_hi = g->e[lb].row;
        o->lo = o->hi = b;
        return;
    }
    if (g->nbad) {
        /* bytes that are not numbers: the reference fails comparing them; the default mode skips the rows */
        if (c->cfg->quirks && g->has_text) {
            q_cell_fault(c, t, g->first_text, "message_bytes", "not a number");
            o->failed = true;
            return;
        }
        if (!c->cfg->quirks)
            for (size_t k = 0; k < g->nbad; k++) {
                const db_cell *mc = db_table_cell(&t->t, g->bad[k], db_table_col(&t->t, "message_bytes"));
                q_cell_fault(c, t, g->bad[k], "message_bytes", mc->kind == DBC_NA ? "empty" : "not a number");
            }
    }
    if (lb == 0 || lb >= g->n) return;
    size_t ilo = lower_bound(g, g->e[lb - 1].mb);
    const centry *lo = &g->e[ilo], *hi = &g->e[lb];
    o->lo = lo->mb;
    o->hi = hi->mb;
    o->row_lo = lo->row;
    o->row_hi = hi->row;
    double ylo = lo->lat, yhi = hi->lat, y;
    if (lo->mb == hi->mb) {
        o->found = true;
        o->lat = ylo;
        return;
    }
    if (alpha_beta) {
        if (c->cfg->quirks && g->has_na) {
            q_cell_fault(c, t, g->first_na, "message_bytes", "empty cell in the least squares fit");
            o->failed = true;
            return;
        }
        if (!g->fit_ok) return; /* cannot happen: lo < hi are both candidates */
        o->fitted = true;
        o->alpha = g->alpha;
        o->beta = g->beta;
        y = g->ybar + g->beta * (b - g->xbar);
    } else {
        y = ylo + (b - lo->mb) / (hi->mb - lo->mb) * (yhi - ylo);
    }
    double mn = ylo < yhi ? ylo : yhi, mx = ylo < yhi ? yhi : ylo;
    double cl = y < mx ? y : mx;
    cl = mn > cl ? mn : cl;
    o->clamped = cl != y;
    o->found = true;
    o->interp = true;
    o->lat = cl;
}

void q_comm_csv(q_ctx *c, const char *kt, int64_t B, int64_t n, int tier, bool alpha_beta, q_comm_res *o) {
    comm_csv(c, kt, B, n, tier, alpha_beta, o);
    if (!o->failed) q_attempt(c, kt, o->found ? "matched" : o->reason);
}

/* ------------------------------------------------------------------ explain */

static void num(opdb_strbuf *sb, double x) {
    char buf[40];
    if (x == (double)(int64_t)x && fabs(x) < 9e15) opdb_sb_addf(sb, "%lld", (long long)x);
    else opdb_sb_add(sb, buf, opdb_py_fmt_repr(buf, sizeof buf, x));
}

static void xrow(opdb_strbuf *sb, const q_ktable *t, uint32_t row, bool first) {
    double lat = 0;
    q_plain_row_latency(t, row, &lat);
    char buf[40];
    if (!first) opdb_sb_adds(sb, ", ");
    opdb_sb_adds(sb, "{\"file\": ");
    opdb_json_quote(sb, t->shown);
    opdb_sb_addf(sb, ", \"line\": %u, \"latency_us\": ", (unsigned)t->t.line[row]);
    opdb_sb_add(sb, buf, opdb_py_fmt_repr(buf, sizeof buf, lat));
    opdb_sb_adds(sb, "}");
}

void q_comm_explain(const q_comm_res *o, opdb_strbuf *sb) {
    char buf[40];
    opdb_sb_addf(sb, "{\"message_bytes\": %lld, \"num_devices\": %lld, \"topology_tier\": ", (long long)o->B,
                 (long long)o->n);
    if (o->tier >= 0) opdb_sb_addf(sb, "%d", o->tier);
    else opdb_sb_adds(sb, "null");
    opdb_sb_adds(sb, o->alpha_beta ? ", \"method\": \"alpha_beta\"" : ", \"method\": \"bracket_linear\"");
    opdb_sb_adds(sb, o->exact ? ", \"exact\": true" : ", \"exact\": false");
    bool br = o->found && !o->exact;
    opdb_sb_adds(sb, ", \"bracket\": ");
    if (br) {
        opdb_sb_addc(sb, '[');
        num(sb, o->lo);
        opdb_sb_adds(sb, ", ");
        num(sb, o->hi);
        opdb_sb_addc(sb, ']');
    } else {
        opdb_sb_adds(sb, "null");
    }
    opdb_sb_adds(sb, ", \"alpha\": ");
    if (o->fitted) opdb_sb_add(sb, buf, opdb_py_fmt_repr(buf, sizeof buf, o->alpha));
    else opdb_sb_adds(sb, "null");
    opdb_sb_adds(sb, ", \"beta\": ");
    if (o->fitted) opdb_sb_add(sb, buf, opdb_py_fmt_repr(buf, sizeof buf, o->beta));
    else opdb_sb_adds(sb, "null");
    opdb_sb_adds(sb, o->clamped ? ", \"clamped\": true" : ", \"clamped\": false");
    opdb_sb_adds(sb, ", \"rows\": [");
    if (o->found && o->tab) {
        xrow(sb, o->tab, o->row_lo, true);
        if (o->row_hi != o->row_lo) xrow(sb, o->tab, o->row_hi, false);
    }
    opdb_sb_adds(sb, "]}");
}

/* ------------------------------------------------------------------ the paths */

static void answer(q_ctx *c, const char *kt, const q_comm_res *o) {
    if (c->explain && o->tab) {
        opdb_sb_adds(&c->r->extra, ", \"comm\": ");
        q_comm_explain(o, &c->r->extra);
    }
    if (!o->found) {
        q_miss(c, o->reason);
        return;
    }
    q_hit(c, o->interp ? QS_INTERPOLATED : QS_MEASURED, o->lat, o->interp ? 0.8 : 0.9, "comm", kt);
}

void q_path_comm(q_ctx *c, const q_entry *e) {
    c->r->path = "communication";
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
    const qv *args = c->q->args;
    size_t na = args ? args->n : 0;
    if (!c->cfg->quirks && na < 2) {
        q_miss(c, "insufficient_args");
        return;
    }
    if (na == 0) {
        q_error(c, "insufficient_args", "a communication op needs its tensor and its rank group");
        return;
    }
    const qv *x = args->items[0];
    if (x->kind != QV_TENSOR) {
        q_miss(c, "invalid_args");
        return;
    }
    if (na < 2) {
        q_error(c, "insufficient_args", "a communication op needs its tensor and its rank group");
        return;
    }
    const qv *g = args->items[na - 1];
    if (g->kind != QV_LIST) {
        q_miss(c, "invalid_args");
        return;
    }
    int64_t B = q_mul_sat(q_numel(x->shape), (int64_t)q_dtype_size(x->dtype)), n = (int64_t)g->n;
    if (strcmp(c->q->op, "tensor_cast.reduce_scatter.default") == 0 && n > 1) B = floor_div(B, n);
    int tier;
    if (q_comm_tier(c, g, &tier)) return;
    q_set_kernels(c, &kt, 1);
    q_comm_res o;
    q_comm_csv(c, kt, B, n, tier, true, &o);
    if (o.failed) return;
    answer(c, kt, &o);
}

void q_kernel_comm(q_ctx *c, const char *kernel, const qv *comm) {
    c->r->path = "kernel";
    if (comm->kind != QV_DICT) {
        q_error(c, "bad_query", "\"comm\" is not an object");
        return;
    }
    int64_t B, n, tier = -1;
    const qv *tv = qv_get(comm, "topology_tier"), *m = qv_get(comm, "method");
    if (!qv_as_int(qv_get(comm, "message_bytes"), &B) || !qv_as_int(qv_get(comm, "num_devices"), &n)) {
        q_error(c, "bad_query", "\"comm\" needs integer \"message_bytes\" and \"num_devices\"");
        return;
    }
    if (tv && tv->kind != QV_NULL && (!qv_as_int(tv, &tier) || tier < 0 || tier > 1 << 30)) {
        q_error(c, "bad_query", "\"comm\".\"topology_tier\" is not a non-negative integer");
        return;
    }
    bool ab = true;
    if (m && m->kind != QV_NULL) {
        if (qv_is_str(m, "bracket_linear")) ab = false;
        else if (!qv_is_str(m, "alpha_beta")) {
            q_error(c, "bad_query", "\"comm\".\"method\" must be \"alpha_beta\" or \"bracket_linear\"");
            return;
        }
    }
    q_set_kernels(c, &kernel, 1);
    q_comm_res o;
    q_comm_csv(c, kernel, B, n, (int)tier, ab, &o);
    if (o.failed) return;
    answer(c, kernel, &o);
    c->r->path = "kernel";
}

/* ------------------------------------------------------------ leave-one-out */

static int cmp_row(const void *a, const void *b) {
    const centry *x = a, *y = b;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* entry k of g (by bytes) hidden: the answer q_comm_csv gives without it */
static void loo_one(const cgroup *g, const centry *byrow, size_t k, bool alpha_beta, double *x, double *y,
                    q_comm_loo_case *o) {
    const centry *h = &g->e[k];
    double b = h->mb;
    o->found = false;
    /* a repeat of the bytes answers exactly: the first other row at b */
    size_t lb = lower_bound(g, b);
    for (size_t i = lb; i < g->n && g->e[i].mb == b; i++)
        if (i != k) {
            o->found = true, o->lat = g->e[i].lat, o->lo = o->hi = b;
            return;
        }
    size_t ub = lb;
    while (ub < g->n && g->e[ub].mb == b) ub++;
    if (lb == 0 || ub >= g->n) return;
    const centry *lo = &g->e[lower_bound(g, g->e[lb - 1].mb)], *hi = &g->e[ub];
    o->lo = lo->mb, o->hi = hi->mb;
    double ylo = lo->lat, yhi = hi->lat, v;
    if (alpha_beta) {
        size_t n = 0;
        for (size_t i = 0; i < g->n; i++)
            if (byrow[i].row != h->row) x[n] = byrow[i].mb, y[n++] = byrow[i].lat;
        double al, be;
        if (!q_comm_fit(x, y, n, &al, &be)) return;
        double sx = 0, sy = 0;
        for (size_t i = 0; i < n; i++) sx += x[i], sy += y[i];
        v = sy / (double)n + be * (b - sx / (double)n);
    } else {
        v = ylo + (b - lo->mb) / (hi->mb - lo->mb) * (yhi - ylo);
    }
    double mn = ylo < yhi ? ylo : yhi, mx = ylo < yhi ? yhi : ylo;
    double cl = v < mx ? v : mx;
    o->found = true;
    o->lat = mn > cl ? mn : cl;
}

bool q_comm_loo(q_ktable *t, bool alpha_beta, void (*fn)(void *ctx, const q_comm_loo_case *k), void *ctx) {
    const cindex *ix = comm_index(t);
    if (ix->raw) return false;
    int c_tier = db_table_col(&t->t, "topology_tier");
    for (size_t gi = 0; gi < ix->ng; gi++) {
        const cgroup *g = &ix->g[gi];
        centry *byrow = opdb_xmalloc((g->n ? g->n : 1) * sizeof *byrow);
        double *x = opdb_xmalloc((g->n ? g->n : 1) * sizeof *x), *y = opdb_xmalloc((g->n ? g->n : 1) * sizeof *y);
        memcpy(byrow, g->e, g->n * sizeof *byrow);
        qsort(byrow, g->n, sizeof *byrow, cmp_row);
        for (size_t k = 0; k < g->n; k++) {
            double tier;
            /* a row with a tier is asked for with it, in its tier's group */
            bool tiered = ix->has_tier && cell_number(db_table_cell(&t->t, g->e[k].row, c_tier), &tier);
            if (g->any_tier == tiered) continue;
            q_comm_loo_case o = {.row = g->e[k].row, .mb = g->e[k].mb, .nd = g->nd, .actual = g->e[k].lat};
            loo_one(g, byrow, k, alpha_beta, x, y, &o);
            size_t below = 0, above = 0;
            for (size_t i = 0; i < g->n; i++) {
                if (i == k) continue;
                below += g->e[i].mb <= o.mb;
                above += g->e[i].mb >= o.mb;
            }
            o.interior = g->n >= 3 && below && above;
            fn(ctx, &o);
        }
        free(byrow);
        free(x);
        free(y);
    }
    return true;
}
