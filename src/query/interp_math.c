/* Interpolating one point set (CandidateGroup.interpolate): per axis group,
 * filter the points that agree with the target off the group's axes, check
 * the target lies inside the points' range on every axis (no
 * extrapolation), merge duplicate coordinates by their median latency, then
 * interpolate linearly (1 axis) or on a Delaunay triangulation (2-3 axes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/json_writer.h"
#include "opdb/pystr.h"
#include "query/interp_internal.h"
#include "query/loo.h"

static void push(ip_status *st, const char *s) {
    if (st->n < IP_MAXSTAT) st->s[st->n++] = s;
}

static double coord(const ip_task *tk, double v, int a) { return a == tk->sqrt_axis ? sqrt(v) : v; }

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *const k_grid_rule[4] = {NULL, NULL, "interpolated_2d_griddata_linear",
                                           "interpolated_3d_griddata_linear"};

/* the median of the m latencies in v (reordered) */
static double median_of(double *v, size_t m) {
    if (m > 2) qsort(v, m, sizeof *v, cmp_d); /* one or two: the median needs no order */
    return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

/* 1-D linear interpolation between the bounds lo and hi around target tv (coordinates on axis
 * A[0]): the answer into out, or false when the latency guard refuses it. The points at each
 * bound (their rows and latencies, file order) are gathered in one pass. */
static bool linear_1d(q_ctx *c, const ip_task *tk, const uint32_t *f, size_t nf, const uint8_t *A, double lo,
                      double hi, double tv, ip_out *out) {
    const ip_index *ix = tk->ix;
    int a = A[0];
    bool two = lo != hi;
    size_t ml = 0, mh = 0, il = 0, ih = 0;
    uint32_t *rl = opdb_arena_alloc(c->a, nf * (two ? 2 : 1) * sizeof *rl), *rh = two ? rl + nf : NULL;
    double small[32], *yl_v = nf <= 16 ? small : opdb_arena_alloc(c->a, nf * 2 * sizeof *yl_v), *yh_v = yl_v + nf;
    for (size_t i = 0; i < nf; i++) {
        double x = coord(tk, ip_ax(ix, f[i], a), a);
        if (x == lo) {
            if (!ml) il = i;
            yl_v[ml] = ip_lat(ix, f[i]);
            rl[ml++] = f[i];
        } else if (two && x == hi) {
            if (!mh) ih = i;
            yh_v[mh] = ip_lat(ix, f[i]);
            rh[mh++] = f[i];
        }
    }
    double yl = median_of(yl_v, ml), yh = yl;
    double y, u = 0;
    if (!two) {
        y = yl;
    } else {
        yh = median_of(yh_v, mh);
        u = (tv - lo) / (hi - lo);
        y = yl + u * (yh - yl);
    }
    if (!(isfinite(y) && y > 0)) return false;
    out->lat = y;
    out->conf = 0.70;
    out->rule = "interpolated_1d_linear";
    out->kix = NULL; /* the caller names the point set (ip_set_answer) */
    out->lab = -1;
    out->dim = 1;
    out->axes = A;
    out->npts = two ? 2 : 1;
    out->coord[0][0] = ip_ax(ix, f[il], a);
    out->w[0] = two ? 1 - u : 1.0;
    out->plat[0] = yl;
    out->rows[0] = rl;
    out->nrows[0] = ml;
    if (two) {
        out->coord[1][0] = ip_ax(ix, f[ih], a);
        out->w[1] = u;
        out->plat[1] = yh;
        out->rows[1] = rh;
        out->nrows[1] = mh;
    }
    return true;
}

static bool interpolate(q_ctx *c, const ip_task *tk, const uint32_t *pts, size_t n, const ip_set *set, ip_status *st,
                        ip_out *out) {
    const ip_index *ix = tk->ix;
    uint32_t *fscan = NULL;
    for (size_t gi = 0; gi < tk->ngroups; gi++) {
        int cnt = tk->groups[gi][0];
        const uint8_t *A = &tk->groups[gi][1];
        if (cnt > tk->maxdim) {
            push(st, "interpolation_dim_disabled");
            continue;
        }
        bool missing = false;
        for (int k = 0; k < cnt; k++) missing |= isnan(tk->t[A[k]]);
        if (missing) {
            push(st, "missing_target_axis");
            continue;
        }
        const uint32_t *f;
        size_t nf = 0;
        /* a held-out row (opdb check) bypasses the shared filter maps */
        if (tk->skip1 || !ip_memo_filter(c, tk, set, gi, A, cnt, &f, &nf)) {
            bool inA[IP_MAXAX] = {false};
            for (int k = 0; k < cnt; k++) inA[A[k]] = true;
            if (!fscan) fscan = opdb_arena_alloc(c->a, (n ? n : 1) * sizeof *fscan);
            for (size_t i = 0; i < n; i++) {
                uint32_t p = pts[i];
                bool ok = ip_prow(ix, p) + 1 != tk->skip1;
                for (int k = 0; ok && k < cnt; k++) ok = !isnan(ip_ax(ix, p, A[k]));
                for (int a = 0; ok && a < tk->nax; a++) {
                    if (inA[a] || isnan(tk->t[a])) continue;
                    double v = ip_ax(ix, p, a);
                    if (isnan(v)) ok = false;
                    else if (tk->match[a]) ok = tk->match[a](tk->t[a], v);
                    else ok = v == tk->t[a];
                }
                double lat = ip_lat(ix, p);
                if (ok && isfinite(lat) && lat > 0) fscan[nf++] = p;
            }
            f = fscan;
        }
        if (nf < 2) {
            push(st, "insufficient_filtered_candidates");
            continue;
        }
        double lo[3], hi[3], tv[3];
        bool inside = true;
        for (int k = 0; k < cnt; k++) {
            int a = A[k];
            tv[k] = coord(tk, tk->t[a], a);
            bool hl = false, hh = false;
            for (size_t i = 0; i < nf; i++) {
                double v = coord(tk, ip_ax(ix, f[i], a), a);
                if (!isfinite(v)) continue;
                if (v <= tv[k] && (!hl || v > lo[k])) lo[k] = v, hl = true;
                if (v >= tv[k] && (!hh || v < hi[k])) hi[k] = v, hh = true;
            }
            inside &= hl && hh;
        }
        if (!inside) {
            push(st, "outside_axis_boundary");
            continue;
        }
        if (cnt == 1 && !c->db->no_index) {
            /* only the merged points at the two bounds take part: gathered in one pass (the
             * plain reference, no_index, merges every coordinate below) */
            if (linear_1d(c, tk, f, nf, A, lo[0], hi[0], tv[0], out)) return true;
            push(st, "latency_guard_rejected");
            continue;
        }
        /* merge equal coordinates, first-seen order: coordinates, the point indexes in each */
        double *mc = opdb_arena_alloc(c->a, nf * 3 * sizeof *mc);
        uint32_t *mfirst = opdb_arena_alloc(c->a, nf * sizeof *mfirst);
        uint32_t *mcount = opdb_arena_alloc(c->a, nf * sizeof *mcount);
        uint32_t *of = opdb_arena_alloc(c->a, nf * sizeof *of);
        double *tmp = opdb_arena_alloc(c->a, nf * sizeof *tmp);
        double *mv = opdb_arena_alloc(c->a, nf * sizeof *mv);
        size_t nm = 0;
        for (size_t i = 0; i < nf; i++) {
            double x[3];
            for (int k = 0; k < cnt; k++) x[k] = coord(tk, ip_ax(ix, f[i], A[k]), A[k]);
            size_t j = 0;
            for (; j < nm; j++) {
                bool eq = true;
                for (int k = 0; eq && k < cnt; k++) eq = mc[j * 3 + k] == x[k];
                if (eq) break;
            }
            if (j == nm) {
                for (int k = 0; k < cnt; k++) mc[nm * 3 + k] = x[k];
                mfirst[nm] = (uint32_t)i;
                mcount[nm++] = 0;
            }
            mcount[j]++;
            of[i] = (uint32_t)j;
        }
        for (size_t j = 0; j < nm; j++) {
            size_t m = 0;
            for (size_t i = mfirst[j]; i < nf; i++)
                if (of[i] == j) tmp[m++] = ip_lat(ix, f[i]);
            if (m > 2) qsort(tmp, m, sizeof *tmp, cmp_d); /* one or two: the median needs no order */
            mv[j] = m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
        }
        int used[4];
        double w[4];
        int nused;
        double y;
        const char *rule;
        double conf;
        if (cnt == 1) {
            size_t jl = 0, jh = 0;
            for (size_t j = 0; j < nm; j++) {
                if (mc[j * 3] == lo[0]) jl = j;
                if (mc[j * 3] == hi[0]) jh = j;
            }
            /* the first merged point at each bound */
            for (size_t j = nm; j-- > 0;) {
                if (mc[j * 3] == lo[0]) jl = j;
                if (mc[j * 3] == hi[0]) jh = j;
            }
            if (lo[0] == hi[0]) {
                y = mv[jl];
                used[0] = (int)jl, w[0] = 1.0, nused = 1;
            } else {
                double u = (tv[0] - lo[0]) / (hi[0] - lo[0]);
                y = mv[jl] + u * (mv[jh] - mv[jl]);
                used[0] = (int)jl, w[0] = 1 - u, used[1] = (int)jh, w[1] = u, nused = 2;
            }
            rule = "interpolated_1d_linear";
            conf = 0.70;
        } else {
            /* grid check: enough merged points and two values on every axis */
            bool grid_ok = nm >= (size_t)cnt + 1;
            for (int k = 0; grid_ok && k < cnt; k++) {
                bool two = false;
                double v0 = coord(tk, ip_ax(ix, f[0], A[k]), A[k]);
                for (size_t i = 1; !two && i < nf; i++) two = coord(tk, ip_ax(ix, f[i], A[k]), A[k]) != v0;
                grid_ok = two;
            }
            if (!grid_ok) {
                push(st, "grid_structure_rejected");
                continue;
            }
            double *Pm = opdb_arena_alloc(c->a, nm * (size_t)cnt * sizeof *Pm);
            for (size_t j = 0; j < nm; j++)
                for (int k = 0; k < cnt; k++) Pm[j * (size_t)cnt + (size_t)k] = mc[j * 3 + k];
            int vid[4];
            const char *why = ip_griddata(Pm, mv, nm, cnt, tv, &y, w, vid);
            if (why) {
                push(st, why);
                continue;
            }
            nused = cnt + 1;
            for (int k = 0; k < nused; k++) used[k] = vid[k];
            rule = k_grid_rule[cnt];
            conf = cnt == 2 ? 0.65 : 0.60;
        }
        if (!(isfinite(y) && y > 0)) {
            push(st, "latency_guard_rejected");
            continue;
        }
        out->lat = y;
        out->conf = conf;
        out->rule = rule;
        out->kix = NULL; /* the caller names the point set (ip_set_answer) */
        out->lab = -1;
        out->dim = cnt;
        out->axes = A;
        out->npts = nused;
        for (int k = 0; k < nused; k++) {
            size_t j = (size_t)used[k];
            for (int d = 0; d < cnt; d++) out->coord[k][d] = ip_ax(ix, f[mfirst[j]], A[d]);
            out->w[k] = w[k];
            out->plat[k] = mv[j];
            out->nrows[k] = 0;
            out->rows[k] = opdb_arena_alloc(c->a, mcount[j] * sizeof(uint32_t));
            for (size_t i = mfirst[j]; i < nf; i++)
                if (of[i] == j) out->rows[k][out->nrows[k]++] = f[i];
        }
        return true;
    }
    return false;
}

bool ip_interpolate(q_ctx *c, const ip_task *tk, const uint32_t *pts, size_t n, ip_status *st, ip_out *out) {
    return interpolate(c, tk, pts, n, NULL, st, out);
}

bool ip_interpolate_set(q_ctx *c, const ip_task *tk, const ip_set *set, ip_status *st, ip_out *out) {
    if (set->lab < 0) return interpolate(c, tk, ip_gpts(set->ix, set->group), ip_gn(set->ix, set->group), set, st, out);
    uint32_t n;
    const uint32_t *p = ip_glab(set->ix, set->group, set->lab, &n);
    return interpolate(c, tk, p, n, set, st, out);
}

/* the statuses of s into d (only the first n are set) */
static void st_copy(ip_status *d, const ip_status *s) {
    d->n = s->n;
    for (size_t i = 0; i < s->n; i++) d->s[i] = s->s[i];
}

bool ip_run_groups(q_ctx *c, const ip_task *tk, const uint32_t *gidx, size_t ng, bool whole, ip_status *last,
                   bool *attempted, ip_out *out) {
    const ip_index *ix = tk->ix;
    for (size_t gi = 0; gi < ng; gi++) {
        if (whole) {
            ip_status st;
            st.n = 0; /* (only the first n texts are read: not cleared) */
            *attempted = true;
            ip_set set = {ix, gidx[gi], -1};
            bool ok = ip_interpolate_set(c, tk, &set, &st, out);
            st_copy(last, &st);
            if (ok) {
                ip_set_answer(out, ix, gidx[gi], -1);
                return true;
            }
            ip_attempt_set(c, ix, gidx[gi], -1, &st);
            continue;
        }
        for (int lab = 0; lab < 2; lab++) {
            uint32_t nl;
            ip_glab(ix, gidx[gi], lab, &nl);
            if (!nl) continue;
            ip_status st;
            st.n = 0;
            *attempted = true;
            ip_set set = {ix, gidx[gi], lab};
            bool ok = ip_interpolate_set(c, tk, &set, &st, out);
            st_copy(last, &st);
            if (ok) {
                ip_set_answer(out, ix, gidx[gi], lab);
                return true;
            }
            ip_attempt_set(c, ix, gidx[gi], lab, &st);
        }
    }
    /* a table none of whose groups has the target's regime */
    if (ng == 0 && c->explain) q_attempt(c, ix->tab->kernel, "no_candidate_group");
    return false;
}

static const char *const k_lab[3] = {"all", "preferred", "alternate"};

void ip_set_answer(ip_out *o, const ip_index *ix, size_t g, int lab) {
    o->kix = ix;
    o->kgroup = (uint32_t)g;
    o->lab = lab;
}

void ip_attempt_set(q_ctx *c, const ip_index *ix, size_t g, int lab, const ip_status *st) {
    if (!c->explain) return;
    opdb_strbuf *sb = q_attempt_open(c);
    opdb_sb_adds(sb, "\"group\": ");
    size_t kn;
    const char *key = ip_group_key(ix, g, c->a, &kn);
    ip_key_json(key, kn, sb);
    opdb_sb_addf(sb, ", \"latency_column_group\": \"%s\", \"status\": ", k_lab[lab + 1]);
    opdb_json_quote(sb, ip_reason(st, "candidate_group_failed"));
    opdb_sb_addc(sb, '}');
}

static void fl(opdb_strbuf *sb, double x) {
    char buf[40];
    opdb_sb_add(sb, buf, opdb_py_fmt_repr(buf, sizeof buf, x));
}

double ip_out_spread(const ip_out *o) {
    double co[12];
    for (int k = 0; k < o->npts; k++)
        for (int d = 0; d < o->dim; d++) co[k * o->dim + d] = o->coord[k][d];
    return q_loo_spread(co, o->npts, o->dim);
}

void ip_hit(q_ctx *c, double lat, double conf, const char *rule, const char *kernel, int dim, double spread) {
    q_hit(c, QS_INTERPOLATED, lat, conf, rule, kernel);
    if (c->db && !c->cfg->quirks) q_calib_apply(c, kernel, dim, spread);
}

/* ip_success with the points' spread sp, when have_sp (else found when needed) */
static void success(q_ctx *c, const ip_task *tk, const ip_out *o, const char *kernel, const char *const *axis_names,
                    bool have_sp, double sp) {
    const char *rule = o->rule;
    if (tk->sqrt_axis >= 0) rule = q_sprintf(c, "%s_sqrt", o->rule);
    if (c->db && !c->cfg->quirks) ip_hit(c, o->lat, o->conf, rule, kernel, o->dim, have_sp ? sp : ip_out_spread(o));
    else q_hit(c, QS_INTERPOLATED, o->lat, o->conf, rule, kernel);
    if (!c->explain) return;
    opdb_strbuf *sb = &c->r->extra;
    opdb_sb_addf(sb, ", \"interpolation\": {\"method\": \"%s\", \"axes\": [", o->dim == 1 ? "linear_1d" : "griddata_linear");
    for (int d = 0; d < o->dim; d++) opdb_sb_addf(sb, d ? ", \"%s\"" : "\"%s\"", axis_names[o->axes[d]]);
    opdb_sb_adds(sb, "], \"target\": [");
    for (int d = 0; d < o->dim; d++) {
        if (d) opdb_sb_adds(sb, ", ");
        fl(sb, tk->t[o->axes[d]]);
    }
    opdb_sb_addf(sb, "], \"transform\": %s, \"regime\": ", tk->sqrt_axis >= 0 ? "\"sqrt(seq)\"" : "null");
    if (o->kix) {
        size_t kn;
        const char *key = ip_group_key(o->kix, o->kgroup, c->a, &kn);
        ip_key_json(key, kn, sb);
    } else {
        opdb_sb_adds(sb, "null");
    }
    opdb_sb_addf(sb, ", \"latency_column_group\": \"%s\", \"points\": [", k_lab[o->lab + 1]);
    const q_ktable *t = tk->ix->tab;
    for (int k = 0; k < o->npts; k++) {
        opdb_sb_adds(sb, k ? ", {\"coords\": [" : "{\"coords\": [");
        for (int d = 0; d < o->dim; d++) {
            if (d) opdb_sb_adds(sb, ", ");
            fl(sb, o->coord[k][d]);
        }
        opdb_sb_adds(sb, "], \"latency_us\": ");
        fl(sb, o->plat[k]);
        opdb_sb_adds(sb, ", \"weight\": ");
        fl(sb, o->w[k]);
        opdb_sb_adds(sb, ", \"rows\": [");
        for (size_t i = 0; i < o->nrows[k]; i++) {
            uint32_t p = o->rows[k][i];
            opdb_sb_adds(sb, i ? ", {\"file\": " : "{\"file\": ");
            opdb_json_quote(sb, t->shown);
            opdb_sb_addf(sb, ", \"line\": %u, \"latency_us\": ", (unsigned)t->t.line[ip_prow(tk->ix, p)]);
            fl(sb, ip_lat(tk->ix, p));
            opdb_sb_adds(sb, "}");
        }
        opdb_sb_adds(sb, "]}");
    }
    opdb_sb_adds(sb, "]}");
}

void ip_success(q_ctx *c, const ip_task *tk, const ip_out *o, const char *kernel, const char *const *axis_names) {
    success(c, tk, o, kernel, axis_names, false, 0);
}

static void outcome_hit(ip_outcome *oc, size_t kidx, const ip_out *o, double sp) {
    memset(oc, 0, sizeof *oc);
    oc->hit = true;
    oc->kidx = (uint32_t)kidx;
    oc->lat = o->lat;
    oc->conf = o->conf;
    oc->rule = o->rule;
    oc->dim = o->dim;
    oc->spread = sp;
}

/* An interpolation hit as the outcome map keeps it. */
void ip_outcome_hit(ip_outcome *oc, size_t kidx, const ip_out *o) { outcome_hit(oc, kidx, o, ip_out_spread(o)); }

void ip_success_outcome(q_ctx *c, const ip_task *tk, const ip_out *o, const char *kernel,
                        const char *const *axis_names, size_t kidx, ip_outcome *oc) {
    double sp = ip_out_spread(o);
    success(c, tk, o, kernel, axis_names, true, sp);
    outcome_hit(oc, kidx, o, sp);
}

/* An outcome of the interpolation outcome map answered again (its calibrated
 * interval looked up anew). */
void ip_outcome_replay(q_ctx *c, const ip_outcome *oc, const char *kernel) {
    if (oc->hit) ip_hit(c, oc->lat, oc->conf, oc->rule, kernel, oc->dim, oc->spread);
    else q_miss(c, oc->reason);
}
