/* The row scan every exact path shares: kernels in order, rows in file
 * order, rows without a latency invisible; `first` takes the first
 * candidate, `nearest` the smallest (distance, kernel index, latency
 * priority), and kernels that must be unambiguous refuse ties between
 * different latencies. */
#include <stdio.h>
#include <string.h>

#include "query/query_internal.h"

static int cmp_score(double d1, size_t k1, int p1, double d2, size_t k2, int p2) {
    if (d1 != d2) return d1 < d2 ? -1 : 1;
    if (k1 != k2) return k1 < k2 ? -1 : 1;
    if (p1 != p2) return p1 < p2 ? -1 : 1;
    return 0;
}

void q_scan_run(q_ctx *c, const char *const *k, size_t nk, q_scan_mode mode, q_checker chk, void *arg, q_scan *s) {
    q_scan_run_sel(c, k, nk, mode, chk, arg, NULL, s);
}

static void scan(q_ctx *c, const char *const *k, size_t nk, q_scan_mode mode, q_checker chk, void *arg,
                 const q_rowsel *sel, q_scan *s);

/* The scan's key for the exact-hit map: checker tag, mode, kernel list, then
 * the checker's own key; 0 when it does not fit. */
static size_t scan_key(const q_rowsel *sel, q_scan_mode mode, const char *const *k, size_t nk, void *arg,
                       uint8_t *buf, size_t cap) {
    q_kbuf b = {buf, 0, cap, false};
    uint8_t head[2] = {(uint8_t)sel->tag, (uint8_t)mode};
    q_kput(&b, head, 2);
    q_kput_var(&b, nk);
    for (size_t i = 0; i < nk; i++) {
        size_t l = strlen(k[i]);
        q_kput_var(&b, l);
        q_kput(&b, k[i], l);
    }
    if (b.over) return 0;
    size_t m = sel->key(arg, buf + b.n, cap - b.n);
    return m ? b.n + m : 0;
}

void q_scan_run_sel(q_ctx *c, const char *const *k, size_t nk, q_scan_mode mode, q_checker chk, void *arg,
                    const q_rowsel *sel, q_scan *s) {
    /* explain names every row and rule it weighed: always scanned; no_index is the plain reference */
    q_hitmap *hm = c->db->hitmap;
    if (!hm || !sel || !sel->key || c->explain || c->db->no_index) {
        scan(c, k, nk, mode, chk, arg, sel, s);
        return;
    }
    uint8_t key[768];
    size_t kn = scan_key(sel, mode, k, nk, arg, key, sizeof key);
    if (!kn) {
        scan(c, k, nk, mode, chk, arg, sel, s);
        return;
    }
    /* the query's first probe starts where its line hashes (fetched since the line was read) */
    uint64_t h = c->probe_hash ? c->probe_hash : opdb_hash_bytes(key, kn, 0x68697473);
    c->probe_hash = 0;
    if (q_hitmap_get(hm, key, kn, h, c, s)) return;
    scan(c, k, nk, mode, chk, arg, sel, s);
    /* an error result belongs to this query's state (a bad table, a bad cell in quirks mode): never stored */
    if (!s->failed) q_hitmap_put(hm, key, kn, h, s);
}

/* s takes the candidate row r of kernel kidx as its best */
static void take(q_scan *s, q_ktable *t, size_t kidx, size_t r, const q_cand *cd) {
    s->found = true;
    s->kidx = kidx;
    s->row = r;
    s->tab = t;
    s->kernel = t->kernel;
    s->best = *cd;
    s->ties = 1;
}

/* a nearest scan weighs candidate row r against its best so far, keeping the tie list's extreme latencies */
static void weigh(q_scan *s, q_ktable *t, size_t kidx, size_t r, const q_cand *cd, double *tie_lo, double *tie_hi) {
    int cmp = s->found ? cmp_score(cd->dist, kidx, t->rows[r].prio, s->best.dist, s->kidx, s->tab->rows[s->row].prio)
                       : -1;
    if (cmp < 0) {
        take(s, t, kidx, r, cd);
        *tie_lo = *tie_hi = cd->lat;
    } else if (cmp == 0) {
        s->ties++;
        if (cd->lat < *tie_lo) *tie_lo = cd->lat;
        if (cd->lat > *tie_hi) *tie_hi = cd->lat;
    }
}

/* A nearest scan over the rows that pass the exact-key filters alone: true
 * when its best is at distance 0, and then s is what the whole scan finds
 * (every row the checker accepts at distance 0 passes, met in the same order,
 * and a row at a larger distance can neither win nor tie). False leaves s for
 * the whole scan to redo: a filter unknown, a table that failed, a checker
 * error, nothing at distance 0. */
enum { PRE_MAX = 8, EXACT_MIN = 3, PREFETCH_ROWS = 16 };

/* a kernel's table and whole-scan subset, fetched before the scan */
typedef struct presel {
    q_ktable *t;
    const uint32_t *sub;
    size_t n;
    bool usable;
} presel;

/* every kernel's subset; false when a table failed (the whole scan reports it) */
static bool preselect(q_ctx *c, const char *const *k, size_t nk, void *arg, const q_rowsel *sel, presel *p,
                      size_t *total) {
    for (size_t i = 0; i < nk; i++) {
        q_ktable *t = q_table(c->db, k[i]);
        int st = atomic_load_explicit(&t->state, memory_order_acquire);
        p[i] = (presel){t, NULL, 0, false};
        if (st == QT_ABSENT) continue;
        if (st != QT_OK) return false;
        p[i].sub = sel->rows(c, arg, t, &p[i].n, &p[i].usable);
        *total += p[i].usable ? p[i].n : t->t.nrows;
    }
    return true;
}

static bool scan_exact(q_ctx *c, const presel *pre, size_t nk, q_checker chk, void *arg, const q_rowsel *sel,
                       q_scan *s, double *tie_lo, double *tie_hi) {
    for (size_t i = 0; i < nk; i++) {
        q_ktable *t = pre[i].t;
        int st = atomic_load_explicit(&t->state, memory_order_acquire);
        if (st == QT_ABSENT) continue;
        if (st != QT_OK || t->lat_ov_bad || !pre[i].usable) return false;
        const uint32_t *fh = NULL, *sh = NULL;
        uint32_t qh[2] = {0, 0};
        size_t nq = 0;
        /* the rows the filter may pass, fetched while the query's exact key is made (a short run:
         * a bucket holds about a dozen) */
        for (size_t vi = 0; vi < pre[i].n && vi < PREFETCH_ROWS; vi++) __builtin_prefetch(&t->rows[pre[i].sub[vi]]);
        if (!sel->exact_keys(c, arg, t, pre[i].sub, &fh, &sh, qh, &nq)) return false;
        for (size_t vi = 0; nq && vi < pre[i].n; vi++) {
            /* the subset's own run of hashes when it has one (no load by row number for rows that fail) */
            uint32_t h = sh ? sh[vi] : fh[pre[i].sub[vi]];
            if (h != qh[0] && (nq < 2 || h != qh[1])) continue;
            size_t r = pre[i].sub[vi];
            const q_row *row = &t->rows[r];
            if (row->latcol == QLAT_NONE) continue;
            q_cand cd;
            memset(&cd, 0, sizeof cd);
            cd.lat = row->lat;
            cd.conf = 1.0;
            int rc = chk(c, arg, t, i, r, &cd);
            if (rc < 0) return false;
            if (rc == 0) continue;
            weigh(s, t, i, r, &cd, tie_lo, tie_hi);
        }
    }
    return s->found && s->best.dist == 0;
}

static void scan(q_ctx *c, const char *const *k, size_t nk, q_scan_mode mode, q_checker chk, void *arg,
                 const q_rowsel *sel, q_scan *s) {
    memset(s, 0, sizeof *s);
    s->reason = "";
    bool loaded = false;
    /* the tie list's extreme latencies: rounding to 12 decimals is monotonic, so two tied
     * latencies render differently iff the smallest and the largest do */
    double tie_lo = 0, tie_hi = 0;
    /* explain lists every kernel's attempt, and the reference mode's distance
     * follows the rule's name: both weigh every candidate */
    presel pre[PRE_MAX];
    bool have_pre = false;
    if (mode == QSCAN_NEAREST && sel && sel->exact_keys && !c->explain && !c->cfg->quirks && !c->db->no_index &&
        nk <= PRE_MAX) {
        /* a few candidates cost less to weigh than the exact subsets to find */
        size_t total = 0;
        have_pre = preselect(c, k, nk, arg, sel, pre, &total);
        if (have_pre && total >= EXACT_MIN) {
            if (scan_exact(c, pre, nk, chk, arg, sel, s, &tie_lo, &tie_hi)) {
                nk = 0; /* the rows are weighed: on to the ties */
            } else {
                memset(s, 0, sizeof *s);
                s->reason = "";
                tie_lo = tie_hi = 0;
            }
        }
    }
    for (size_t i = 0; i < nk; i++) {
        q_ktable *t = have_pre ? pre[i].t : q_table(c->db, k[i]);
        int st = atomic_load_explicit(&t->state, memory_order_acquire);
        if (st == QT_ABSENT) {
            q_attempt(c, k[i], "csv_not_found");
            continue;
        }
        if (st == QT_FAILED) {
            q_error(c, "bad_csv", "%s", t->error);
            s->failed = true;
            return;
        }
        loaded = true;
        size_t nsub = have_pre ? pre[i].n : 0;
        bool usable = have_pre && pre[i].usable;
        const uint32_t *sub = have_pre ? pre[i].sub : sel ? sel->rows(c, arg, t, &nsub, &usable) : NULL;
        size_t nvisit = usable ? nsub : t->t.nrows;
        bool matched = false; /* a candidate came from this kernel */
        for (size_t vi = 0; vi < nvisit; vi++) {
            size_t r = usable ? sub[vi] : vi;
            const q_row *row = &t->rows[r];
            if (row->latcol == QLAT_NONE) continue;
            if (t->lat_ov_bad) {
                q_error(c, "bad_mapping", "latency_policy.kernel_overrides.%s is not a mapping", t->kernel);
                s->failed = true;
                return;
            }
            q_cand cd;
            memset(&cd, 0, sizeof cd);
            cd.lat = row->lat;
            cd.conf = 1.0;
            int rc = chk(c, arg, t, i, r, &cd);
            if (rc < 0) {
                s->failed = true;
                return;
            }
            if (rc == 0) continue;
            matched = true;
            if (mode == QSCAN_FIRST) {
                q_attempt(c, k[i], "matched");
                take(s, t, i, r, &cd);
                return;
            }
            weigh(s, t, i, r, &cd, &tie_lo, &tie_hi);
        }
        q_attempt(c, k[i], matched ? "matched" : "no_match");
    }
    if (s->found && mode == QSCAN_NEAREST) {
        bool bad = false;
        const qv *ov = q_override(c->db->map.ov_sel, s->tab->kernel, &bad);
        if (bad) {
            q_error(c, "bad_mapping", "query_selection_policy.kernel_overrides.%s is not a mapping", s->tab->kernel);
            s->failed = true;
            s->found = false;
            return;
        }
        bool differ = false;
        if (tie_lo != tie_hi) {
            char lo[64], hi[64];
            snprintf(lo, sizeof lo, "%.12f", tie_lo);
            snprintf(hi, sizeof hi, "%.12f", tie_hi);
            differ = strcmp(lo, hi) != 0;
        }
        if (differ && qv_truthy(qv_get(ov, "require_semantic_unique"))) {
            s->found = false;
            s->reason = q_sprintf(c, "ambiguous_semantic_match:%s", s->tab->kernel);
            return;
        }
    }
    if (!s->found && !loaded) s->reason = "csv_not_found";
}

void q_explain_scan(q_ctx *c, const q_scan *s) {
    if (!c->explain || !s->found) return;
    q_result *r = c->r;
    if (r->n_rows == r->cap_rows) {
        size_t nc = r->cap_rows ? r->cap_rows * 2 : 2;
        q_xrow *n = opdb_arena_alloc(c->a, nc * sizeof *n);
        if (r->n_rows) memcpy(n, r->rows, r->n_rows * sizeof *n);
        r->rows = n;
        r->cap_rows = nc;
    }
    q_xrow *x = &r->rows[r->n_rows++];
    memset(x, 0, sizeof *x);
    x->tab = s->tab;
    x->row = s->row;
    x->lat = s->best.lat;
    x->rule = s->best.rule;
    x->input_rules = s->best.input_rules;
    x->n_rules = s->best.n_rules;
    x->dist = s->best.dist;
    x->ties = s->ties;
}
