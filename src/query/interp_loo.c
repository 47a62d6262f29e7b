/* Leave-one-out over the interpolation indexes (loo.h). A row is hidden by
 * telling the interpolation to skip it, never by copying its table: the
 * target is the row's own axes and regime key, the groups are those a
 * kernel-level query of the row's cells would match, in the query's order. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/comm.h"
#include "query/interp_internal.h"
#include "query/loo.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* the kernel tables of the folder: stems of its *.csv files, by name */
static char **list_tables(const char *dir, size_t *n, bool *ok) {
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    DIR *d = opendir(dir);
    if (!(*ok = d != NULL)) return NULL;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l <= 4 || e->d_name[0] == '.' || strcmp(e->d_name + l - 4, ".csv") != 0) continue;
        OPDB_ALLOC_GROW(v, *n + 1, cap);
        v[*n] = opdb_xmalloc(l - 3);
        memcpy(v[*n], e->d_name, l - 4);
        v[(*n)++][l - 4] = 0;
    }
    closedir(d);
    if (*n) qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

static bool lists(const qv *l, const char *kt) {
    if (!l || l->kind != QV_LIST) return false;
    for (size_t i = 0; i < l->n; i++)
        if (qv_is_str(l->items[i], kt)) return true;
    return false;
}

/* the path the mapping sends kt's rows through; *covered: leave-one-out
 * asks for its rows on that path (the caller checks the table can be read
 * on it) */
static const char *path_of(const opdb_qdb *db, const char *kt, bool *covered) {
    static const char *const other[] = {"attention_special", "attention_lightning_indexer", "moe_fused",
                                        "scatter_nd_update_mla", NULL};
    *covered = true;
    if (strncmp(kt, "hcom_", 5) == 0) return "communication";
    bool elem = false, scale = false, quant = false;
    const qv *ops = db->map.ops;
    for (size_t i = 0; ops && ops->kind == QV_DICT && i < ops->n; i++) {
        const qv *e = ops->items[i];
        if (!qv_is_str(qv_get(e, "kernel_type"), kt) && !lists(qv_get(e, "alternate_kernel_types"), kt)) continue;
        if (qv_is_str(qv_get(e, "category"), "communication")) return "communication";
        const qv *m = qv_get(e, "query_mode");
        for (const char *const *o = other; *o; o++)
            if (qv_is_str(m, *o)) {
                *covered = strcmp(*o, "attention_lightning_indexer") != 0;
                return *o;
            }
        elem |= qv_is_str(m, "elementwise");
        scale |= qv_is_str(qv_get(e, "compute_subcategory"), "compute_scale");
        quant |= qv_is_str(qv_get(e, "compute_subcategory"), "quantized_matmul");
    }
    if (elem) return "elementwise";
    if (scale) return "compute_scale";
    /* the query asks quantized matmuls with their outputs in the regime key */
    if (quant && ip_in_matmul_plus(kt)) return "quantized_matmul";
    return ip_in_matmul_plus(kt) ? "matmul" : "generic";
}

/* why a table on path is not checked, in one phrase */
static const char *why_not(const char *path) {
    if (strcmp(path, "attention_lightning_indexer") == 0)
        return "interpolated only inside a decomposed op, on runtime vectors no row holds";
    if (strcmp(path, "communication") == 0) return "no message_bytes and num_devices columns: exact rows only";
    if (strcmp(path, "attention_special") == 0) return "no sequence-length column: the attention path cannot read it";
    return "not covered";
}

/* do the points of gi (but the hidden row) bracket t on every axis of A,
 * among those equal to t off A? */
static bool brackets(const ip_index *ix, const uint32_t *gi, size_t ng, const ip_task *tk, const uint8_t *A) {
    int cnt = A[0];
    bool inA[IP_MAXAX] = {false}, lo[3] = {false}, hi[3] = {false};
    for (int k = 0; k < cnt; k++) inA[A[1 + k]] = true;
    size_t nf = 0;
    for (size_t g = 0; g < ng; g++) {
        const uint32_t *pts = ip_gpts(ix, gi[g]);
        for (uint32_t i = 0, n = ip_gn(ix, gi[g]); i < n; i++) {
            uint32_t p = pts[i];
            if (ip_prow(ix, p) + 1 == tk->skip1) continue;
            bool ok = true;
            for (int a = 0; ok && a < tk->nax; a++) {
                if (inA[a]) ok = !isnan(ip_ax(ix, p, a));
                else if (!isnan(tk->t[a])) ok = ip_ax(ix, p, a) == tk->t[a];
            }
            if (!ok) continue;
            nf++;
            for (int k = 0; k < cnt; k++) {
                double v = ip_ax(ix, p, A[1 + k]), t = tk->t[A[1 + k]];
                lo[k] |= v <= t;
                hi[k] |= v >= t;
            }
        }
    }
    bool in = nf >= 2;
    for (int k = 0; k < cnt; k++) in &= lo[k] && hi[k];
    return in;
}

typedef struct loo_path {
    const uint8_t (*groups)[4];
    size_t ngroups;
    int nax;
    const char *const *axes;
    bool mm;
    int match; /* groups a row's key matches: 0 its own, 1 the matmul rule, 2 the plain rule, 3 attention's,
                  4 the quantized matmul rule */
} loo_path;


/* ------------------------------------------------------------ 1-D fast path
 * A 1-D answer depends only on the points of the target's line (equal off
 * the axis) at the nearest coordinate below, at, and above the target's. The
 * interpolation is handed just those points (all of them at each of the three
 * coordinates, so bounds, merged medians and the candidate count come out as
 * over the whole line): the same answer, without a pass over every point of
 * the group per held-out row. Points of (group, label) sorted by their
 * off-axis coordinates, then the axis, are built once per table. */
typedef struct loo_sorted {
    uint32_t *v;  /* point indexes */
    size_t n;
    bool built;
} loo_sorted;

typedef struct loo_lines {
    const ip_index *ix;
    int nax;
    loo_sorted *s;   /* [group][label][axis] */
    uint32_t **gi;   /* per group: the groups its key matches, in the query's order (built on first use) */
    size_t *ngi;
    uint32_t *sub, *near; /* scratch, np each */
} loo_lines;

/* qsort's key, per thread: two queries may sort at once */
static _Thread_local const ip_index *g_sort_ix;
static _Thread_local int g_sort_axis, g_sort_nax;

/* the order of points: off-axis coordinates in axis order, then the axis (point p of ix against y) */
static int cmp_line(int a, int nax, const ip_index *ix, uint32_t p, const double *y) {
    for (int k = 0; k < nax; k++) {
        if (k == a) continue;
        double x = ip_ax(ix, p, k);
        if (x != y[k]) return x < y[k] ? -1 : 1;
    }
    double x = ip_ax(ix, p, a);
    return x < y[a] ? -1 : x > y[a];
}

static int cmp_pt(const void *p, const void *q) {
    double y[IP_MAXAX];
    ip_point_axes(g_sort_ix, *(const uint32_t *)q, y);
    int c = cmp_line(g_sort_axis, g_sort_nax, g_sort_ix, *(const uint32_t *)p, y);
    if (c) return c;
    return *(const uint32_t *)p < *(const uint32_t *)q ? -1 : 1; /* file order among equals */
}

static const loo_sorted *sorted_of(loo_lines *L, uint32_t g, int lab, int a) {
    loo_sorted *s = &L->s[((size_t)g * 2 + (size_t)lab) * (size_t)L->nax + (size_t)a];
    if (s->built) return s;
    const uint32_t *pts = ip_gpts(L->ix, g);
    uint32_t gn = ip_gn(L->ix, g);
    s->v = opdb_xmalloc((gn ? gn : 1) * sizeof *s->v);
    for (uint32_t i = 0; i < gn; i++)
        if (ip_palt(L->ix, pts[i]) == lab) s->v[s->n++] = pts[i];
    g_sort_ix = L->ix, g_sort_axis = a, g_sort_nax = L->nax;
    qsort(s->v, s->n, sizeof *s->v, cmp_pt);
    s->built = true;
    return s;
}

/* first index in s whose point is not before (t's line, coordinate x) */
static size_t lower(const loo_lines *L, const loo_sorted *s, int a, const double *t, double x) {
    double k[IP_MAXAX];
    memcpy(k, t, sizeof k);
    k[a] = x;
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (cmp_line(a, L->nax, L->ix, s->v[m], k) < 0) lo = m + 1;
        else hi = m;
    }
    return lo;
}

static bool same_line(const loo_lines *L, int a, uint32_t p, const double *t) {
    for (int k = 0; k < L->nax; k++)
        if (k != a && ip_ax(L->ix, p, k) != t[k]) return false;
    return true;
}

/* the points of (g, lab) on t's line at the nearest coordinates below, at and
 * above t[a] (the hidden row left in: the interpolation skips it) */
static size_t near_points(loo_lines *L, uint32_t g, int lab, int a, const double *t, uint32_t skip1, uint32_t *out) {
    const loo_sorted *s = sorted_of(L, g, lab, a);
    const ip_index *ix = L->ix;
    size_t i = lower(L, s, a, t, t[a]), n = 0;
    /* below: the last coordinate < t[a] on the line (skipping the hidden row) */
    size_t j = i;
    double below = NAN;
    while (j > 0 && same_line(L, a, s->v[j - 1], t)) {
        if (ip_prow(ix, s->v[j - 1]) + 1 != skip1) {
            below = ip_ax(ix, s->v[j - 1], a);
            break;
        }
        j--;
    }
    if (!isnan(below))
        for (size_t k = lower(L, s, a, t, below); k < i; k++) out[n++] = s->v[k];
    size_t e = i;
    while (e < s->n && same_line(L, a, s->v[e], t) && ip_ax(ix, s->v[e], a) == t[a]) out[n++] = s->v[e++];
    /* above: the first coordinate > t[a] with a point other than the hidden row */
    double above = NAN;
    for (size_t k = e; k < s->n && same_line(L, a, s->v[k], t); k++)
        if (ip_prow(ix, s->v[k]) + 1 != skip1) {
            above = ip_ax(ix, s->v[k], a);
            break;
        }
    for (size_t k = e; !isnan(above) && k < s->n && same_line(L, a, s->v[k], t) && ip_ax(ix, s->v[k], a) <= above; k++)
        out[n++] = s->v[k];
    return n;
}

/* ip_run_groups for the task's axis groups, 1-D groups on their near points */
static bool run_groups(q_ctx *c, loo_lines *L, const ip_task *tk, const uint32_t *gi, size_t ng, ip_status *last,
                       bool *att, ip_out *out) {
    const ip_index *ix = tk->ix;
    uint32_t *sub = L->sub, *near = L->near;
    for (size_t k = 0; k < ng; k++) {
        const uint32_t *gpts = ip_gpts(ix, gi[k]);
        uint32_t gn = ip_gn(ix, gi[k]);
        for (int lab = 0; lab < 2; lab++) {
            size_t m = 0;
            for (uint32_t i = 0; i < gn && !m; i++) m += ip_palt(ix, gpts[i]) == lab;
            if (!m) continue;
            ip_status st = {.n = 0};
            *att = true;
            for (size_t a = 0; a < tk->ngroups; a++) {
                ip_task one = *tk;
                one.groups = &tk->groups[a];
                one.ngroups = 1;
                const uint32_t *pts;
                size_t n;
                if (tk->groups[a][0] == 1 && tk->groups[a][0] <= tk->maxdim) {
                    n = near_points(L, gi[k], lab, tk->groups[a][1], tk->t, tk->skip1, near);
                    pts = near;
                } else {
                    n = 0;
                    for (uint32_t i = 0; i < gn; i++)
                        if (ip_palt(ix, gpts[i]) == lab) sub[n++] = gpts[i];
                    pts = sub;
                }
                if (ip_interpolate(c, &one, pts, n, &st, out)) {
                    *last = st;
                    return true;
                }
            }
            *last = st;
        }
    }
    return false;
}

/* brackets() for one axis a, from the near points of each group and label */
static bool brackets1(loo_lines *L, const uint32_t *gi, size_t ng, const ip_task *tk, int a) {
    size_t nf = 0;
    bool lo = false, hi = false;
    for (size_t k = 0; k < ng; k++)
        for (int lab = 0; lab < 2; lab++) {
            size_t n = near_points(L, gi[k], lab, a, tk->t, tk->skip1, L->near);
            for (size_t i = 0; i < n; i++) {
                uint32_t p = L->near[i];
                if (ip_prow(L->ix, p) + 1 == tk->skip1) continue;
                nf++;
                lo |= ip_ax(L->ix, p, a) <= tk->t[a];
                hi |= ip_ax(L->ix, p, a) >= tk->t[a];
            }
        }
    return nf >= 2 && lo && hi;
}

static void ask(q_ctx *c, loo_lines *L, const q_loo_cb *cb, const q_loo_table *T, const loo_path *lp, const ip_index *ix,
                uint32_t pi, uint32_t gidx, int64_t maxdim) {
    double pax[IP_MAXAX];
    ip_point_axes(ix, pi, pax);
    uint32_t prow = ip_prow(ix, pi);
    if (!L->gi[gidx]) {
        ip_kb key;
        if (lp->match == 1 || lp->match == 2 || lp->match == 4) ip_group_kb(ix, gidx, &key);
        /* every row of a group has its key: match once per group */
        uint32_t *gi, own = gidx;
        size_t ng = 1;
        /* generic and elementwise keys all have the same fields and match exactly:
         * a group's key matches that group alone */
        if (lp->match == 1 || lp->match == 4) ng = ip_mm_matching(c, ix, &key, lp->match == 4, &gi);
        else if (lp->match == 2) ng = ip_groups_matching(c, ix, &key, &gi);
        else if (lp->match == 3) ng = ip_attn_loo_groups(c, ix, gidx, &gi);
        else gi = &own;
        L->gi[gidx] = opdb_xmalloc((ng ? ng : 1) * sizeof *gi);
        memcpy(L->gi[gidx], gi, ng * sizeof *gi);
        L->ngi[gidx] = ng;
    }
    const uint32_t *gi = L->gi[gidx];
    size_t ng = L->ngi[gidx];
    ip_task tk;
    ip_task_init(&tk, ix, pax, lp->nax, lp->groups, lp->ngroups, maxdim);
    tk.skip1 = prow + 1;
    q_loo_case k = {.table = T, .row = prow, .line = ix->tab->t.line[prow], .coords = pax, .actual = ip_lat(ix, pi)};
    bool any_interior = false;
    for (int gr = 0; gr <= (int)lp->ngroups; gr++) {
        /* each axis group alone first, then the query's own order (-1) */
        int g = gr < (int)lp->ngroups ? gr : -1;
        if (g >= 0 && lp->groups[g][0] > maxdim) continue;
        tk.groups = g >= 0 ? &lp->groups[g] : lp->groups;
        tk.ngroups = g >= 0 ? 1 : lp->ngroups;
        ip_status last = {.n = 0};
        bool att = false;
        ip_out o;
        k.group = g;
        if (lp->match == 3) k.recovered = ip_attn_loo(c, ix, pi, gi, ng, tk.groups, tk.ngroups, &last, &att, &o);
        else k.recovered = run_groups(c, L, &tk, gi, ng, &last, &att, &o);
        if (k.recovered) {
            double co[12];
            for (int j = 0; j < o.npts; j++)
                for (int d = 0; d < o.dim; d++) co[j * o.dim + d] = o.coord[j][d];
            k.predicted = o.lat;
            k.dim = o.dim;
            k.spread = q_loo_spread(co, o.npts, o.dim);
            k.status = NULL;
        } else {
            k.predicted = NAN;
            k.dim = 0;
            k.spread = NAN;
            k.status = ip_reason(att ? &last : NULL, "regime_key_unmatched");
        }
        if (g >= 0) {
            /* attention points may lack the batch axis: its lines are not sorted, scan */
            k.interior = lp->groups[g][0] == 1 && lp->match != 3 ? brackets1(L, gi, ng, &tk, lp->groups[g][1])
                                                                 : brackets(ix, gi, ng, &tk, lp->groups[g]);
            any_interior |= k.interior;
        } else {
            k.interior = any_interior;
        }
        cb->row(cb->ctx, &k);
    }
}

/* the rows of t checked on index ix: those whose point it holds (and, when
 * n >= 0, that have exactly n inputs) */
static void run_index(ip_index *ix, int64_t n, uint32_t *pt_ix, ip_index **pt_of, uint32_t *pt_g) {
    for (size_t g = 0; g < ix->ng; g++)
        for (uint32_t i = 0, gn = ip_gn(ix, g); i < gn; i++) {
            uint32_t pi = ip_gpts(ix, g)[i];
            uint32_t r = ip_prow(ix, pi);
            if (n >= 0 && q_row_nin(ix->tab, &ix->tab->rows[r]) != (uint32_t)n) continue;
            pt_ix[r] = pi;
            pt_of[r] = ix;
            pt_g[r] = (uint32_t)g;
        }
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static loo_lines *lines_of(loo_lines **v, size_t *n, size_t *cap, const ip_index *ix, int nax) {
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].ix == ix) return &(*v)[i];
    OPDB_ALLOC_GROW(*v, *n + 1, *cap);
    loo_lines *L = &(*v)[(*n)++];
    L->ix = ix;
    L->nax = nax;
    L->s = opdb_xcalloc((ix->ng ? ix->ng : 1) * 2 * (size_t)nax, sizeof *L->s);
    L->gi = opdb_xcalloc(ix->ng ? ix->ng : 1, sizeof *L->gi);
    L->ngi = opdb_xcalloc(ix->ng ? ix->ng : 1, sizeof *L->ngi);
    L->sub = opdb_xmalloc((ix->np ? ix->np : 1) * sizeof *L->sub);
    L->near = opdb_xmalloc((ix->np ? ix->np : 1) * sizeof *L->near);
    return L;
}

static const uint8_t k_one[1][4] = {{1, 0}};
static const char *const k_ax0[] = {"axis_0"}, *const k_numel[] = {"output_numel"}, *const k_io[] = {"io_numel"},
                        *const k_tokens[] = {"tokens"}, *const k_sc_axes[] = {"M", "K"};
static const uint8_t k_sc_groups[3][4] = {{1, 0}, {1, 1}, {2, 0, 1}};

/* ------------------------------------------------------------ communication
 * Its own path (query/comm.h): one axis, the message bytes, within a group
 * of (devices, tier); the answer of q_comm_csv over the other rows. */
typedef struct comm_acc {
    q_comm_loo_case *v;
    size_t n, cap;
} comm_acc;

static void on_comm(void *ctx, const q_comm_loo_case *k) {
    comm_acc *a = ctx;
    OPDB_ALLOC_GROW(a->v, a->n + 1, a->cap);
    a->v[a->n++] = *k;
}

static const char *const k_comm_axes[] = {"message_bytes", "num_devices"};

/* false: the table has no bytes/devices columns (not checked) */
static bool run_comm(const q_loo_cb *cb, q_loo_table *T, q_ktable *t) {
    comm_acc acc = {NULL, 0, 0};
    if (!q_comm_loo(t, true, on_comm, &acc)) {
        T->covered = false;
        return false;
    }
    T->with_latency = 0;
    for (size_t r = 0; r < t->t.nrows; r++) {
        double lat;
        T->with_latency += q_plain_row_latency(t, r, &lat);
    }
    T->indexed = acc.n;
    T->nax = 2;
    T->axis_names = k_comm_axes;
    T->ngroups = 1;
    T->group_names[0] = k_comm_axes[0];
    T->group_dim[0] = 1;
    cb->table(cb->ctx, T);
    for (size_t i = 0; i < acc.n; i++) {
        const q_comm_loo_case *o = &acc.v[i];
        double co[2] = {o->mb, o->nd}, br[2] = {o->lo, o->hi};
        q_loo_case k = {.table = T, .row = o->row, .line = t->t.line[o->row], .coords = co, .actual = o->actual};
        k.recovered = o->found;
        k.predicted = o->found ? o->lat : NAN;
        k.dim = o->found ? 1 : 0;
        k.spread = o->found ? q_loo_spread(br, 2, 1) : NAN;
        k.interior = o->interior;
        k.status = o->found ? NULL : "shape_mismatch";
        k.group = 0;
        cb->row(cb->ctx, &k);
        k.group = -1;
        cb->row(cb->ctx, &k);
    }
    free(acc.v);
    return true;
}

static void run_table(const opdb_qdb *db, const q_loo_cb *cb, q_ktable *t) {
    q_loo_table T;
    memset(&T, 0, sizeof T);
    T.kernel = t->kernel;
    T.file = t->shown;
    T.rows = t->t.nrows;
    for (size_t r = 0; r < t->t.nrows; r++) {
        double lat;
        bool alt;
        T.with_latency += ip_row_latency(t, r, &lat, &alt);
    }
    T.path = path_of(db, t->kernel, &T.covered);
    if (strcmp(T.path, "communication") == 0 && run_comm(cb, &T, t)) return;
    opdb_arena a;
    opdb_arena_init(&a, 1 << 16);
    q_ctx c = {.db = db, .cfg = &db->cfg, .a = &a};
    loo_path lp = {k_one, 1, 1, k_ax0, false, 0};
    ip_index *one = NULL; /* the paths with one index per table */
    if (strcmp(T.path, "matmul") == 0) lp = (loo_path){ip_mm_groups, 7, 3, ip_mm_axes, true, 1};
    else if (strcmp(T.path, "quantized_matmul") == 0) lp = (loo_path){ip_mm_groups, 7, 3, ip_mm_axes, true, 4};
    else if (strcmp(T.path, "elementwise") == 0) lp.axes = k_io;
    else if (strcmp(T.path, "moe_fused") == 0) lp.axes = k_tokens, lp.match = 2, one = ip_moe_index(db, t);
    else if (strcmp(T.path, "scatter_nd_update_mla") == 0) lp.axes = k_tokens, lp.match = 2, one = ip_scatter_index(db, t);
    else if (strcmp(T.path, "compute_scale") == 0)
        lp = (loo_path){k_sc_groups, 3, 2, k_sc_axes, false, 2}, one = ip_scale_index(db, t);
    else if (strcmp(T.path, "attention_special") == 0) {
        lp = (loo_path){ip_attn_groups, 14, 5, ip_attn_axes, false, 3};
        T.covered = (one = ip_attn_index(db, t)) != NULL;
    } else if (T.covered && ip_gen_numel(&c, t->kernel)) lp.axes = k_numel;
    if (!T.covered) T.why = why_not(T.path);
    int64_t maxdim = ip_maxdim(&c, t->kernel, NULL);
    T.nax = lp.nax;
    T.axis_names = lp.axes;
    T.ngroups = lp.ngroups;
    for (size_t g = 0; g < lp.ngroups; g++) {
        static const char *const mm_names[7] = {"M", "K", "N", "M,K", "M,N", "K,N", "M,K,N"};
        static const char *const sc_names[3] = {"M", "K", "M,K"};
        static const char *const at_names[14] = {
            "seq",          "batch",          "heads",          "head_dim",           "seq,batch",
            "seq,heads",    "seq,head_dim",   "batch,heads",    "batch,head_dim",     "heads,head_dim",
            "seq,batch,heads", "seq,batch,head_dim", "seq,heads,head_dim", "batch,heads,head_dim"};
        T.group_names[g] = lp.mm ? mm_names[g] : lp.match == 3 ? at_names[g] : lp.nax == 2 ? sc_names[g] : lp.axes[0];
        T.group_dim[g] = lp.groups[g][0];
    }
    uint32_t *pt_ix = NULL, *pt_g = NULL;
    ip_index **pt_of = NULL;
    if (T.covered && t->t.nrows) {
        pt_ix = opdb_xcalloc(t->t.nrows, sizeof *pt_ix);
        pt_g = opdb_xcalloc(t->t.nrows, sizeof *pt_g);
        pt_of = opdb_xcalloc(t->t.nrows, sizeof *pt_of);
        if (one) {
            run_index(one, -1, pt_ix, pt_of, pt_g);
        } else if (strcmp(T.path, "elementwise") == 0) {
            run_index(ip_elem_index(db, t), -1, pt_ix, pt_of, pt_g);
        } else {
            /* one index per input count: a row is asked for with all its inputs */
            int64_t *ns = opdb_xmalloc(t->t.nrows * sizeof *ns);
            size_t nn = 0;
            for (size_t r = 0; r < t->t.nrows; r++)
                if (q_row_shapes_ok(&t->rows[r])) ns[nn++] = q_row_nin(t, &t->rows[r]);
            qsort(ns, nn, sizeof *ns, cmp_i64);
            for (size_t i = 0; i < nn; i++) {
                if (i && ns[i] == ns[i - 1]) continue;
                if (lp.mm && ns[i] < 2) continue;
                ip_index *ix = lp.match == 4 ? ip_mmq_index(db, t, ns[i])
                               : lp.mm       ? ip_mm_index(db, t, ns[i])
                                             : ip_gen_index(db, t, ns[i], lp.axes == k_numel);
                run_index(ix, ns[i], pt_ix, pt_of, pt_g);
            }
            free(ns);
        }
        for (size_t r = 0; r < t->t.nrows; r++) T.indexed += pt_of[r] != NULL;
    }
    cb->table(cb->ctx, &T);
    loo_lines *lines = NULL;
    size_t nlines = 0, caplines = 0, asked = 0;
    for (size_t r = 0; pt_of && r < t->t.nrows; r++) {
        if (!pt_of[r]) continue;
        loo_lines *L = lines_of(&lines, &nlines, &caplines, pt_of[r], lp.nax);
        ask(&c, L, cb, &T, &lp, pt_of[r], pt_ix[r], pt_g[r], maxdim);
        if (++asked % 256 == 0) {
            opdb_arena_free(&a);
            opdb_arena_init(&a, 1 << 16);
        }
    }
    opdb_arena_free(&a);
    for (size_t i = 0; i < nlines; i++) {
        size_t ns = lines[i].ix->ng * 2 * (size_t)lines[i].nax;
        for (size_t k = 0; k < ns; k++) free(lines[i].s[k].v);
        for (size_t k = 0; k < lines[i].ix->ng; k++) free(lines[i].gi[k]);
        free(lines[i].s);
        free(lines[i].gi);
        free(lines[i].ngi);
        free(lines[i].sub);
        free(lines[i].near);
    }
    free(lines);
    free(pt_ix);
    free(pt_g);
    free(pt_of);
}

int q_loo_run(const opdb_qdb *db, const q_loo_cb *cb, opdb_err *err) {
    size_t n;
    bool ok;
    char **names = list_tables(db->dir, &n, &ok);
    if (!ok) return opdb_fail(err, OPDB_ERR_RUNTIME, "cannot list the database folder: %s", db->dir);
    for (size_t i = 0; i < n; i++) {
        q_ktable *t = q_table(db, names[i]);
        int st = atomic_load(&t->state);
        if (st == QT_FAILED) {
            /* one unreadable table does not hide the figures of the others */
            q_warn(db, "%s (not checked)", t->error);
            continue;
        }
        if (st == QT_OK) run_table(db, cb, t);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return 0;
}
