/* See aie.h and docs/AIE.md.  The default mode differs from the
 * reference where it loses data (docs/COMPATIBILITY.md): both event
 * spellings, pairing that re-synchronises after a stray event, the median
 * always a float, the aggregate over the cores that have data, safe unique
 * file names, efficiency against peak. */
#include "opdb/aie.h"
#include "core/call.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "opdb/db.h"
#include "opdb/fs.h"
#include "opdb/limits.h"
#include "opdb/json_writer.h"
#include "opdb/pystr.h"

#define DUP_GAP_FRACTION 0.25

typedef struct i64vec {
    long long *v;
    size_t n, cap;
} i64vec;

static void iv_push(i64vec *a, long long x) {
    OPDB_ALLOC_GROW(a->v, a->n + 1, a->cap);
    a->v[a->n++] = x;
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

typedef struct pair {
    long long start, end, dur;
} pair;

typedef struct pairs {
    pair *v;
    size_t n, cap;
} pairs;

static void pr_push(pairs *p, long long s, long long e) {
    OPDB_ALLOC_GROW(p->v, p->n + 1, p->cap);
    p->v[p->n++] = (pair){s, e, e - s};
}

/* statistics.median of ints: an int for an odd count, a float for an even one. */
typedef struct median_t {
    bool is_int;
    long long i;
    double f;
} median_t;

static double med_value(median_t m) { return m.is_int ? (double)m.i : m.f; }

static median_t median_of(const pairs *p) {
    long long *d = opdb_xmalloc((p->n + 1) * sizeof *d);
    for (size_t i = 0; i < p->n; i++) d[i] = p->v[i].dur;
    qsort(d, p->n, sizeof *d, cmp_ll);
    median_t m = {true, 0, 0};
    if (p->n % 2) {
        m.i = d[p->n / 2];
    } else {
        m.is_int = false;
        /* (a + b) / 2 on Python ints: the exact quotient, rounded once */
        long long a = d[p->n / 2 - 1], b = d[p->n / 2];
        m.f = ((double)a + (double)b) / 2.0;
        if (llabs(a) < (1LL << 52) && llabs(b) < (1LL << 52)) m.f = (double)(a + b) / 2.0;
    }
    free(d);
    return m;
}

/* int(x) of a median: truncation toward zero. */
static long long med_trunc(median_t m) { return m.is_int ? m.i : (long long)m.f; }

/* ---- trace reading */

typedef struct proc {
    yajl_val pid;          /* the first value seen, for output */
    yajl_val name;         /* args.name of the last process_name event, or NULL */
    i64vec starts, ends, sb, se;
} proc;

typedef struct trace {
    proc *p;
    size_t n, cap;
    yajl_val root;
} trace;

static bool same_pid(yajl_val a, yajl_val b) {
    if (!a || YAJL_IS_NULL(a)) return !b || YAJL_IS_NULL(b);
    if (!b || YAJL_IS_NULL(b)) return false;
    if (YAJL_IS_NUMBER(a) && YAJL_IS_NUMBER(b)) {
        if (YAJL_IS_INTEGER(a) && YAJL_IS_INTEGER(b)) return YAJL_GET_INTEGER(a) == YAJL_GET_INTEGER(b);
        return YAJL_GET_DOUBLE(a) == YAJL_GET_DOUBLE(b);
    }
    if (YAJL_IS_STRING(a) && YAJL_IS_STRING(b)) return strcmp(a->u.string, b->u.string) == 0;
    if (YAJL_IS_TRUE(a) || YAJL_IS_FALSE(a)) return (YAJL_IS_TRUE(a) && YAJL_IS_TRUE(b)) || (YAJL_IS_FALSE(a) && YAJL_IS_FALSE(b));
    return false;
}

static proc *proc_of(trace *t, yajl_val pid) {
    for (size_t i = 0; i < t->n; i++)
        if (same_pid(t->p[i].pid, pid)) return &t->p[i];
    OPDB_ALLOC_GROW(t->p, t->n + 1, t->cap);
    proc *p = &t->p[t->n++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

static yajl_val field(yajl_val obj, const char *key) {
    yajl_val found = NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0) found = obj->u.object.values[i];
    return found;
}

static bool is_str(yajl_val v, const char *s) { return v && YAJL_IS_STRING(v) && strcmp(v->u.string, s) == 0; }

/* Python int(ts). */
static int ts_int(yajl_val ts, long long *out) {
    if (!ts) return -1;
    if (YAJL_IS_INTEGER(ts)) {
        *out = YAJL_GET_INTEGER(ts);
        return 0;
    }
    if (YAJL_IS_NUMBER(ts)) {
        double d = YAJL_GET_DOUBLE(ts);
        if (!isfinite(d) || fabs(d) > 9.2e18) return -1;
        *out = (long long)d;
        return 0;
    }
    if (YAJL_IS_STRING(ts)) return opdb_py_int(ts->u.string, strlen(ts->u.string), out) ? 0 : -1;
    if (YAJL_IS_TRUE(ts) || YAJL_IS_FALSE(ts)) {
        *out = YAJL_IS_TRUE(ts);
        return 0;
    }
    return -1;
}

static int read_trace(const char *path, bool quirks, trace *t, opdb_err *err) {
    opdb_strbuf text;
    opdb_sb_init(&text);
    if (opdb_read_file(path, &text, err)) {
        opdb_sb_free(&text);
        return -1;
    }
    if (opdb_json_limits_check(text.p, text.n, path, 1, err)) { /* size, depth, string length */
        opdb_sb_free(&text);
        return -1;
    }
    char ebuf[512] = "";
    t->root = yajl_tree_parse(text.p, ebuf, sizeof ebuf);
    opdb_sb_free(&text);
    if (!t->root) {
        for (char *c = ebuf; *c; c++)
            if (*c == '\n') *c = ' ';
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: not valid JSON: %s", path, ebuf);
    }
    if (!YAJL_IS_ARRAY(t->root))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: expected a JSON array of trace events at the top level", path);
    for (size_t i = 0; i < t->root->u.array.len; i++) {
        yajl_val ev = t->root->u.array.values[i];
        if (!YAJL_IS_OBJECT(ev)) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: event %zu is not a JSON object", path, i);
        yajl_val pid = field(ev, "pid"), nm = field(ev, "name"), ph = field(ev, "ph");
        if (pid && (YAJL_IS_ARRAY(pid) || YAJL_IS_OBJECT(pid)))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: event %zu has an unusable pid", path, i);
        if (is_str(nm, "process_name") && is_str(ph, "M")) {
            yajl_val args = field(ev, "args");
            if (args && !YAJL_IS_OBJECT(args))
                return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: event %zu: process_name args is not an object", path, i);
            proc_of(t, pid)->name = args ? field(args, "name") : NULL;
        }
        int kind = -1; /* 0 start, 1 end, 2 stall begin, 3 stall end */
        bool B = is_str(ph, "B"), E = is_str(ph, "E");
        if ((is_str(nm, "INSTR_EVENT_0") || (!quirks && is_str(nm, "Event0"))) && B) kind = 0;
        else if ((is_str(nm, "INSTR_EVENT_1") || (!quirks && is_str(nm, "Event1"))) && E) kind = 1;
        else if ((is_str(nm, "LOCK_STALL") || (!quirks && is_str(nm, "LockStall"))) && B) kind = 2;
        else if ((is_str(nm, "LOCK_STALL") || (!quirks && is_str(nm, "LockStall"))) && E) kind = 3;
        if (kind < 0) continue;
        long long ts;
        if (ts_int(field(ev, "ts"), &ts))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: event %zu (%s) has a missing or non-integer ts", path, i,
                             nm->u.string);
        proc *p = proc_of(t, pid);
        iv_push(kind == 0 ? &p->starts : kind == 1 ? &p->ends : kind == 2 ? &p->sb : &p->se, ts);
    }
    for (size_t i = 0; i < t->n; i++) {
        proc *p = &t->p[i];
        i64vec *l[4] = {&p->starts, &p->ends, &p->sb, &p->se};
        for (int k2 = 0; k2 < 4; k2++)
            if (l[k2]->n > 1) qsort(l[k2]->v, l[k2]->n, sizeof *l[k2]->v, cmp_ll);
    }
    return 0;
}

static void trace_free(trace *t) {
    for (size_t i = 0; i < t->n; i++) {
        free(t->p[i].starts.v), free(t->p[i].ends.v), free(t->p[i].sb.v), free(t->p[i].se.v);
    }
    free(t->p);
    yajl_tree_free(t->root);
}

/* ---- pairing */

static void greedy(const i64vec *s, const i64vec *e, pairs *out) {
    size_t i = 0, j = 0;
    while (i < s->n && j < e->n) {
        if (e->v[j] <= s->v[i]) {
            j++;
            continue;
        }
        pr_push(out, s->v[i], e->v[j]);
        i++, j++;
    }
}

static void dedup_by_gap(const i64vec *in, long long gap, i64vec *out) {
    for (size_t i = 0; i < in->n; i++) {
        long long t = in->v[i];
        if (out->n == 0 || (t > out->v[out->n - 1] && t - out->v[out->n - 1] >= gap)) iv_push(out, t);
    }
}

typedef struct core_result {
    pairs kept;
    long long unmatched_starts, unmatched_ends;
} core_result;

/* Walks both lists merged in time order (an end before a start at equal
 * times); a start still pending when the next start comes, or an end with no
 * start pending, is counted and skipped, so one stray event costs one pair. */
static void resync_pairs(const i64vec *s, const i64vec *e, pairs *out, long long *ustart, long long *uend) {
    size_t i = 0, j = 0;
    bool pending = false;
    long long ps = 0;
    while (i < s->n || j < e->n) {
        bool take_end = j < e->n && (i >= s->n || e->v[j] <= s->v[i]);
        if (take_end) {
            if (pending) {
                pr_push(out, ps, e->v[j]);
                pending = false;
            } else {
                (*uend)++;
            }
            j++;
        } else {
            if (pending) (*ustart)++;
            pending = true;
            ps = s->v[i++];
        }
    }
    if (pending) (*ustart)++;
}

static void robust_pairs(const i64vec *s, const i64vec *e, bool quirks, core_result *r) {
    /* The preliminary median sets the de-dup gap; by default it comes from the
     * re-synchronising pairing so stray events cannot inflate it. */
    pairs prelim = {0};
    long long ignore_s = 0, ignore_e = 0;
    if (quirks) greedy(s, e, &prelim);
    else resync_pairs(s, e, &prelim, &ignore_s, &ignore_e);
    long long md = 1;
    if (prelim.n) {
        long long t = med_trunc(median_of(&prelim));
        md = t > 1 ? t : 1;
    }
    free(prelim.v);
    long long gap = (long long)(DUP_GAP_FRACTION * (double)md);
    if (gap < 1) gap = 1;
    i64vec sc = {0}, ec = {0};
    dedup_by_gap(s, gap, &sc);
    dedup_by_gap(e, gap, &ec);
    pairs all = {0};
    if (quirks) {
        size_t i = 0, j = 0;
        long long last_end = -1;
        while (i < sc.n && j < ec.n) {
            if (sc.v[i] <= last_end) {
                i++;
                continue;
            }
            while (j < ec.n && ec.v[j] <= sc.v[i]) j++;
            if (j >= ec.n) break;
            if (ec.v[j] > sc.v[i]) {
                pr_push(&all, sc.v[i], ec.v[j]);
                last_end = ec.v[j];
            }
            i++, j++;
        }
    } else {
        resync_pairs(&sc, &ec, &all, &r->unmatched_starts, &r->unmatched_ends);
    }
    free(sc.v);
    free(ec.v);
    if (!all.n) {
        r->kept = all;
        return;
    }
    double med = med_value(median_of(&all));
    long long lo = (long long)((1.0 / 3.0) * med);
    if (lo < 1) lo = 1;
    long long hi = (long long)(3.0 * med);
    if (hi < lo + 1) hi = lo + 1;
    pairs kept = {0};
    for (size_t i = 0; i < all.n; i++)
        if (all.v[i].dur >= lo && all.v[i].dur <= hi) pr_push(&kept, all.v[i].start, all.v[i].end);
    if (kept.n) {
        free(all.v);
        r->kept = kept;
    } else {
        free(kept.v);
        r->kept = all;
    }
}

/* ---- iterations and per-core summaries */

typedef struct iter_sum {
    long long n, min, max, span, first, last;
    double avg, gmacs;
} iter_sum;

typedef struct core {
    yajl_val pid;
    char *tile;
    bool has_pairs;
    median_t med;
    long long boundaries, unmatched_starts, unmatched_ends;
    iter_sum *it;
    size_t nit;
    long long perf_start, perf_end, expected;
    char note[256];
    char *path;        /* file written */
} core;

static void summarize(const pair *p, size_t n, double macs_per_core, double clock, iter_sum *s) {
    memset(s, 0, sizeof *s);
    s->n = (long long)n;
    if (!n) return;
    long long sum = 0;
    s->min = s->max = p[0].dur;
    for (size_t i = 0; i < n; i++) {
        sum += p[i].dur;
        if (p[i].dur < s->min) s->min = p[i].dur;
        if (p[i].dur > s->max) s->max = p[i].dur;
    }
    s->avg = (double)sum / (double)n;
    s->first = p[0].start;
    s->last = p[n - 1].end;
    s->span = s->last - s->first;
    s->gmacs = s->span > 0 ? macs_per_core * clock / (double)s->span : 0.0;
}

/* A tile cannot do more than peak MACs per cycle: a faster figure means the
 * kernels in the trace are not the whole of the tile's share of the GEMM
 * (or the sizes, array or clock given do not match the run). One warning per
 * core, for its fastest iteration. */
static void warn_above_tile_peak(const opdb_aie_opts *o, const core *c) {
    double peak = o->peak_macs_per_cycle * o->clock_ghz, best = 0;
    long long at = -1;
    for (size_t k = 0; k < c->nit; k++)
        if (c->it[k].gmacs > best) best = c->it[k].gmacs, at = (long long)k;
    if (at < 0 || !(peak > 0) || best <= peak) return;
    opdb_warn("core %s: iteration %lld reaches %.1f GMAC/s, above the tile's peak of %.1f GMAC/s (%g MACs per cycle at "
              "%g GHz): the figure cannot be right; the trace may not hold all of the tile's kernels, or --M/--K/--N, "
              "--row/--col or --clock-ghz do not match the run",
              c->tile, at, best, peak, o->peak_macs_per_cycle, o->clock_ghz);
}

static void process_core(const opdb_aie_opts *o, const proc *p, const char *name, core *c) {
    memset(c, 0, sizeof *c);
    c->pid = p->pid;
    const char *f = NULL;
    for (const char *q = strstr(name, " for "); q; q = strstr(q + 1, " for ")) f = q;
    c->tile = opdb_xstrdup(f ? f + 5 : name);
    c->expected = o->warmup + o->iterations;
    core_result r = {{0}, 0, 0};
    robust_pairs(&p->starts, &p->ends, o->quirks, &r);
    c->unmatched_starts = r.unmatched_starts;
    c->unmatched_ends = r.unmatched_ends;
    if (!r.kept.n) {
        snprintf(c->note, sizeof c->note, "No valid kernel pairs detected after robust filtering.");
        free(r.kept.v);
        return;
    }
    c->has_pairs = true;
    c->med = median_of(&r.kept);
    if (!o->quirks) { /* always a float */
        c->med.f = med_value(c->med);
        c->med.is_int = false;
    }
    /* stall spans, boundaries = distinct ends of long stalls */
    pairs stalls = {0};
    greedy(&p->sb, &p->se, &stalls);
    i64vec bounds = {0};
    double mv = med_value(c->med);
    if (stalls.n && mv > 0) {
        double thr = o->lock_stall_factor * mv;
        for (size_t i = 0; i < stalls.n; i++)
            if ((double)stalls.v[i].dur >= thr) iv_push(&bounds, stalls.v[i].end);
        if (bounds.n > 1) qsort(bounds.v, bounds.n, sizeof *bounds.v, cmp_ll);
        size_t u = 0;
        for (size_t i = 0; i < bounds.n; i++)
            if (!u || bounds.v[i] != bounds.v[u - 1]) bounds.v[u++] = bounds.v[i];
        bounds.n = u;
    }
    c->boundaries = (long long)bounds.n;
    double macs = (double)o->M * (double)o->K * (double)o->N / (double)(o->rows * o->cols > 1 ? o->rows * o->cols : 1);
    /* split: close the current iteration at each boundary a kernel starts after */
    size_t cap = bounds.n + 1, b = 0, first = 0;
    c->it = opdb_xcalloc(cap + 1, sizeof *c->it);
    for (size_t i = 0; i < r.kept.n; i++) {
        while (b < bounds.n && r.kept.v[i].start > bounds.v[b]) {
            summarize(r.kept.v + first, i - first, macs, o->clock_ghz, &c->it[c->nit++]);
            first = i;
            b++;
        }
    }
    summarize(r.kept.v + first, r.kept.n - first, macs, o->clock_ghz, &c->it[c->nit++]);
    long long det = (long long)c->nit;
    if (det < c->expected)
        snprintf(c->note, sizeof c->note,
                 "Detected %lld iterations but expected %lld. Proceeding with available iterations.", det, c->expected);
    else if (det > c->expected)
        snprintf(c->note, sizeof c->note,
                 "Detected %lld iterations but expected %lld. Truncating to first %lld iterations for phase labeling.", det,
                 c->expected, c->expected);
    if (!o->quirks && det != c->expected) opdb_warn_nothing("core %s: %s", c->tile, c->note);
    c->perf_start = o->warmup < det ? o->warmup : det;
    c->perf_end = c->perf_start + o->iterations < det ? c->perf_start + o->iterations : det;
    if (!o->quirks) warn_above_tile_peak(o, c);
    free(bounds.v);
    free(stalls.v);
    free(r.kept.v);
}

/* ---- outputs */

static void json_pid(opdb_json *j, yajl_val pid) {
    if (!pid || YAJL_IS_NULL(pid)) opdb_json_null(j);
    else if (YAJL_IS_INTEGER(pid)) opdb_json_int(j, YAJL_GET_INTEGER(pid));
    else if (YAJL_IS_NUMBER(pid)) opdb_json_float(j, YAJL_GET_DOUBLE(pid));
    else if (YAJL_IS_STRING(pid)) opdb_json_string(j, pid->u.string);
    else opdb_json_bool(j, YAJL_IS_TRUE(pid));
}

static void unmatched_json(opdb_json *j, const core *c) {
    opdb_json_key(j, "unmatched_starts");
    opdb_json_int(j, c->unmatched_starts);
    opdb_json_key(j, "unmatched_ends");
    opdb_json_int(j, c->unmatched_ends);
}

static void core_json(const opdb_aie_opts *o, const core *c, opdb_strbuf *out) {
    opdb_json j;
    opdb_json_init(&j, out);
    j.python_nan = o->quirks;
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "pid");
    json_pid(&j, c->pid);
    opdb_json_key(&j, "tile_name");
    opdb_json_string(&j, c->tile);
    if (!c->has_pairs) {
        if (!o->quirks) unmatched_json(&j, c);
        opdb_json_key(&j, "detected_total_iterations");
        opdb_json_int(&j, 0);
        opdb_json_key(&j, "expected_total_iterations");
        opdb_json_int(&j, c->expected);
        opdb_json_key(&j, "mismatch_note");
        opdb_json_string(&j, c->note);
        opdb_json_key(&j, "iterations");
        opdb_json_begin_array(&j);
        opdb_json_end_array(&j);
        opdb_json_key(&j, "performance_window");
        opdb_json_begin_array(&j);
        opdb_json_end_array(&j);
        opdb_json_end_object(&j);
        return;
    }
    opdb_json_key(&j, "median_kernel_duration_cycles");
    if (c->med.is_int) opdb_json_int(&j, c->med.i);
    else opdb_json_float(&j, c->med.f);
    opdb_json_key(&j, "lock_stall_boundary_count");
    opdb_json_int(&j, c->boundaries);
    if (!o->quirks) unmatched_json(&j, c);
    opdb_json_key(&j, "detected_total_iterations");
    opdb_json_int(&j, (long long)c->nit);
    opdb_json_key(&j, "expected_total_iterations");
    opdb_json_int(&j, c->expected);
    opdb_json_key(&j, "mismatch_note");
    if (c->note[0]) opdb_json_string(&j, c->note);
    else opdb_json_null(&j);
    opdb_json_key(&j, "iterations");
    opdb_json_begin_array(&j);
    for (size_t i = 0; i < c->nit; i++) {
        const iter_sum *s = &c->it[i];
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "num_kernels");
        opdb_json_int(&j, s->n);
        opdb_json_key(&j, "avg_duration_cycles");
        opdb_json_float(&j, s->avg);
        opdb_json_key(&j, "min_duration_cycles");
        opdb_json_int(&j, s->min);
        opdb_json_key(&j, "max_duration_cycles");
        opdb_json_int(&j, s->max);
        opdb_json_key(&j, "total_span_cycles");
        opdb_json_int(&j, s->span);
        opdb_json_key(&j, "first_start");
        if (s->n) opdb_json_int(&j, s->first);
        else opdb_json_null(&j);
        opdb_json_key(&j, "last_end");
        if (s->n) opdb_json_int(&j, s->last);
        else opdb_json_null(&j);
        opdb_json_key(&j, "gmacs_per_second");
        opdb_json_float(&j, s->gmacs);
        opdb_json_key(&j, "iteration_index");
        opdb_json_int(&j, (long long)i);
        opdb_json_key(&j, "phase");
        long long ii = (long long)i;
        opdb_json_string(&j, ii >= c->perf_start && ii < c->perf_end ? "perf" : ii < c->perf_start ? "warmup" : "extra");
        opdb_json_end_object(&j);
    }
    opdb_json_end_array(&j);
    opdb_json_key(&j, "performance_window");
    opdb_json_begin_array(&j);
    for (long long i = c->perf_start; i < c->perf_end; i++) opdb_json_int(&j, i);
    opdb_json_end_array(&j);
    opdb_json_end_object(&j);
}

/* os.path.join(a, b) without normalising. */
static char *py_join(const char *a, const char *b) {
    size_t na = strlen(a);
    bool slash = na && a[na - 1] != '/';
    char *r = opdb_xmalloc(na + strlen(b) + 2);
    sprintf(r, "%s%s%s", a, slash ? "/" : "", b);
    return r;
}

static int write_file(const opdb_aie_opts *o, const char *path, const opdb_strbuf *sb, opdb_err *err) {
    if (opdb_atomic_write(path, sb->p ? sb->p : "", sb->n, err)) return -1;
    fprintf(o->out, "[write] %s\n", path);
    return 0;
}

/* Default mode: [A-Za-z0-9._-] only, and unique within the run. */
static char *core_file_name(const opdb_aie_opts *o, const char *tile, char **used, size_t nused, opdb_err *err) {
    if (o->quirks) {
        char *n = opdb_xmalloc(strlen(tile) + 6);
        sprintf(n, "%s.json", tile);
        if (strchr(tile, '/') || strcmp(tile, ".") == 0 || strcmp(tile, "..") == 0 || !*tile)
            opdb_fail(err, OPDB_ERR_RUNTIME, "tile name '%s' would write outside the output folder", tile);
        if (err->code || opdb_check_file_name(n, err)) {
            free(n);
            return NULL;
        }
        return n;
    }
    size_t len = strlen(tile), nb = 0;
    char *base = opdb_xmalloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)tile[i];
        if ((c & 0xc0) == 0x80) continue; /* one '_' per code point */
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        base[nb++] = ok ? (char)c : '_';
    }
    base[nb] = '\0';
    char *safe = opdb_safe_stem(base, nb); /* the path policy: no leading dot, bounded length */
    free(base);
    base = safe;
    nb = strlen(base);
    char *n = opdb_xmalloc(nb + 32);
    sprintf(n, "%s.json", base);
    for (int k = 2;; k++) {
        /* the run's own index.json and aggregate_perf.json are never a core's */
        bool taken = strcmp(n, "index.json") == 0 || strcmp(n, "aggregate_perf.json") == 0;
        for (size_t i = 0; i < nused && !taken; i++) taken = strcmp(used[i], n) == 0;
        if (!taken) break;
        sprintf(n, "%s-%d.json", base, k);
    }
    free(base);
    return n;
}

static int write_details(const opdb_aie_opts *o, const char *dir, core *c, size_t n, char **path, opdb_err *err) {
    *path = NULL;
    size_t rows = 0;
    for (size_t i = 0; i < n; i++) rows += c[i].nit;
    if (!rows) return 0;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_addf(&sb, "<details><summary><strong>[%s] M=%lld K=%lld N=%lld</strong></summary>\n\n", o->hwid, o->M, o->K, o->N);
    opdb_sb_adds(&sb, "| Tile | Iter | Phase | Kernels | Avg cycles | Min | Max | Total span | GMAC/s |\n");
    opdb_sb_adds(&sb, "|------|------|-------|---------|------------|-----|-----|------------|--------|\n");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < c[i].nit; k++) {
            const iter_sum *s = &c[i].it[k];
            long long ii = (long long)k;
            char avg[64], gm[400];
            opdb_py_fmt_fixed(avg, sizeof avg, s->avg, 3);
            opdb_py_fmt_fixed(gm, sizeof gm, s->gmacs, 3);
            opdb_sb_addf(&sb, "| %s | %zu | %s | %lld | %s | %lld | %lld | %lld | %s |\n", c[i].tile, k,
                         ii >= c[i].perf_start && ii < c[i].perf_end ? "perf" : ii < c[i].perf_start ? "warmup" : "extra",
                         s->n, avg, s->min, s->max, s->span, gm);
        }
    opdb_sb_adds(&sb, "\n</details>\n");
    *path = py_join(dir, "details.md");
    int rc = write_file(o, *path, &sb, err);
    opdb_sb_free(&sb);
    return rc;
}

static void per_iter_json(opdb_json *j, long long idx, long long runtime, double gmacs) {
    opdb_json_begin_object(j);
    opdb_json_key(j, "iteration_index");
    opdb_json_int(j, idx);
    opdb_json_key(j, "runtime_cycles");
    opdb_json_int(j, runtime);
    opdb_json_key(j, "gmacs_per_second");
    opdb_json_float(j, gmacs);
    opdb_json_end_object(j);
}

static void left_out_json(opdb_json *j, core *c, const bool *out, size_t n) {
    opdb_json_key(j, "cores_left_out");
    opdb_json_begin_array(j);
    for (size_t i = 0; i < n; i++)
        if (out[i]) opdb_json_string(j, c[i].tile);
    opdb_json_end_array(j);
}

/* The system view over the iterations in every (default: every data-bearing)
 * core's performance window: the slowest core sets each iteration's runtime. */
/* Why a core has no perf iteration: no kernel pairs, or every iteration is warm-up. */
static void why_no_window(const opdb_aie_opts *o, const core *d, char *why, size_t cap) {
    if (!d->has_pairs) snprintf(why, cap, "core %s has no valid kernel start/end pairs", d->tile);
    else if ((long long)d->nit <= o->warmup)
        snprintf(why, cap, "core %s: all %zu iteration(s) found fall in the --warmup %lld", d->tile, d->nit, o->warmup);
    else snprintf(why, cap, "core %s: --iterations %lld leaves no perf iteration", d->tile, o->iterations);
}

/* The system figures of the aggregate, or why there are none, for the summary. */
typedef struct aie_system {
    bool figures;
    long long count;
    double avg, best, worst, peak;
    char why[768];
} aie_system;

static void aggregate_json(const opdb_aie_opts *o, core *c, size_t n, const size_t *src, size_t nproc, opdb_strbuf *out,
                           aie_system *sys) {
    opdb_json j;
    opdb_json_init(&j, out);
    j.python_nan = o->quirks;
    bool *left = opdb_xcalloc(n + 1, sizeof *left);
    size_t nleft = 0, nused = 0;
    static const core none; /* no iterations, empty window */
    for (size_t i = 0; i < n; i++) {
        const core *d = src[i] == SIZE_MAX ? &none : &c[src[i]];
        if (!o->quirks && d->perf_end <= d->perf_start) {
            left[i] = true;
            nleft++;
        } else {
            nused++;
        }
    }
    /* common = intersection of the perf windows of the cores used */
    long long lo = 0, hi = -1;
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (left[i]) continue;
        const core *d = src[i] == SIZE_MAX ? &none : &c[src[i]];
        long long a = d->perf_start, b = d->perf_end < (long long)d->nit ? d->perf_end : (long long)d->nit;
        if (first) lo = a, hi = b, first = false;
        else lo = a > lo ? a : lo, hi = b < hi ? b : hi;
    }
    opdb_json_begin_object(&j);
    if (n == 0 || (!o->quirks && nused == 0 && n == 0)) {
        opdb_json_key(&j, "note");
        opdb_json_string(&j, "No cores to aggregate.");
        if (nproc == 0)
            snprintf(sys->why, sizeof sys->why, "no core with kernel events to aggregate: the trace names no process "
                                                "(no process_name metadata event)");
        else
            snprintf(sys->why, sizeof sys->why, "no core with kernel events to aggregate: none of the trace's %zu "
                                                "process(es) is a core (a process whose name contains 'core_trace')", nproc);
        if (!o->quirks) opdb_warn_nothing("%s", sys->why);
    } else if (nused == 0 || hi <= lo) {
        opdb_json_key(&j, "note");
        opdb_json_string(&j, "No common perf iterations across all cores.");
        char why[512] = "the cores' perf windows do not overlap";
        for (size_t i = 0; i < n && nused == 0; i++) {
            const core *d = src[i] == SIZE_MAX ? &none : &c[src[i]];
            if (d->tile) {
                why_no_window(o, d, why, sizeof why);
                break;
            }
        }
        snprintf(sys->why, sizeof sys->why, "no perf iteration common to all cores: no system figures (%s)", why);
        if (!o->quirks) opdb_warn_nothing("%s", sys->why);
        if (nleft) left_out_json(&j, c, left, n);
    } else {
        double total = (double)o->M * (double)o->K * (double)o->N;
        size_t cnt = (size_t)(hi - lo);
        long long *rt = opdb_xmalloc(cnt * sizeof *rt);
        double *gm = opdb_xmalloc(cnt * sizeof *gm);
        for (size_t k = 0; k < cnt; k++) {
            long long best = 0;
            bool any = false;
            for (size_t i = 0; i < n; i++) {
                if (left[i]) continue;
                long long span = c[src[i]].it[lo + (long long)k].span; /* src[i] is a real core here */
                if (!any || span > best) best = span;
                any = true;
            }
            rt[k] = best;
            gm[k] = best > 0 ? total * o->clock_ghz / (double)best : 0.0;
        }
        long long rsum = 0;
        double gsum = 0;
        size_t bi = 0, wi = 0;
        for (size_t k = 0; k < cnt; k++) {
            rsum += rt[k];
            gsum += gm[k];
            if (gm[k] > gm[bi]) bi = k;
            if (gm[k] < gm[wi]) wi = k;
        }
        double avg_g = gsum / (double)cnt;
        *sys = (aie_system){true, (long long)cnt, avg_g, gm[bi], gm[wi],
                            o->peak_macs_per_cycle * (double)o->rows * (double)o->cols * o->clock_ghz, ""};
        opdb_json_key(&j, "iterations_considered");
        opdb_json_begin_array(&j);
        for (size_t k = 0; k < cnt; k++) opdb_json_int(&j, lo + (long long)k);
        opdb_json_end_array(&j);
        opdb_json_key(&j, "count");
        opdb_json_int(&j, (long long)cnt);
        opdb_json_key(&j, "average");
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "runtime_cycles");
        opdb_json_float(&j, (double)rsum / (double)cnt);
        opdb_json_key(&j, "gmacs_per_second");
        opdb_json_float(&j, avg_g);
        opdb_json_end_object(&j);
        opdb_json_key(&j, "best");
        per_iter_json(&j, lo + (long long)bi, rt[bi], gm[bi]);
        opdb_json_key(&j, "worst");
        per_iter_json(&j, lo + (long long)wi, rt[wi], gm[wi]);
        opdb_json_key(&j, "per_iteration");
        opdb_json_begin_array(&j);
        for (size_t k = 0; k < cnt; k++) per_iter_json(&j, lo + (long long)k, rt[k], gm[k]);
        opdb_json_end_array(&j);
        opdb_json_key(&j, "note");
        opdb_json_string(&j, "Only iterations present on all cores are considered.");
        if (!o->quirks) {
            double peak = o->peak_macs_per_cycle * (double)o->rows * (double)o->cols * o->clock_ghz;
            opdb_json_key(&j, "efficiency_vs_peak");
            opdb_json_begin_object(&j);
            opdb_json_key(&j, "peak_gmacs_per_second");
            opdb_json_float(&j, peak);
            opdb_json_key(&j, "best");
            if (peak > 0) opdb_json_float(&j, gm[bi] / peak);
            else opdb_json_null(&j);
            opdb_json_key(&j, "average");
            if (peak > 0) opdb_json_float(&j, avg_g / peak);
            else opdb_json_null(&j);
            opdb_json_end_object(&j);
            if (nleft) left_out_json(&j, c, left, n);
            if (peak > 0 && gm[bi] > peak)
                opdb_warn("iteration %lld reaches %.1f GMAC/s, above the array's peak of %.1f GMAC/s (%lld x %lld tiles): "
                          "the figure cannot be right; check --M/--K/--N, --row/--col and --clock-ghz",
                          lo + (long long)bi, gm[bi], peak, o->rows, o->cols);
        }
        free(rt);
        free(gm);
    }
    opdb_json_end_object(&j);
    free(left);
}

/* The fastest iteration of a core (all phases, as the tile-peak check): -1 without iterations. */
static double core_best(const core *c) {
    double best = -1;
    for (size_t k = 0; k < c->nit; k++)
        if (c->it[k].gmacs > best) best = c->it[k].gmacs;
    return best;
}

static void key_path(opdb_json *j, const char *k, const char *path) {
    opdb_json_key(j, k);
    if (path) opdb_json_string(j, path);
    else opdb_json_null(j);
}

/* opdb aie --json: what was written, the per-core and system figures and
 * the warnings' findings as fields. */
static void summary_json(const opdb_aie_opts *o, const char *input, const char *dir, const core *c, size_t n,
                         const char *index, const char *details, const char *aggregate, const aie_system *sys,
                         opdb_strbuf *out) {
    opdb_json j;
    opdb_json_init(&j, out);
    double tile_peak = o->peak_macs_per_cycle * o->clock_ghz;
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "command");
    opdb_json_string(&j, "aie");
    key_path(&j, "input", opdb_path_shown(input));
    key_path(&j, "output_dir", dir);
    key_path(&j, "index", index);
    key_path(&j, "details", details);
    key_path(&j, "aggregate", aggregate);
    opdb_json_key(&j, "tile_peak_gmacs_per_second");
    opdb_json_float(&j, tile_peak);
    opdb_json_key(&j, "cores");
    opdb_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
        const core *d = &c[i];
        double best = core_best(d);
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "tile");
        opdb_json_string(&j, d->tile);
        key_path(&j, "file", d->path);
        opdb_json_key(&j, "iterations_detected");
        opdb_json_int(&j, (long long)d->nit);
        opdb_json_key(&j, "iterations_expected");
        opdb_json_int(&j, d->expected);
        opdb_json_key(&j, "performance_window");
        opdb_json_begin_array(&j);
        for (long long k = d->perf_start; k < d->perf_end; k++) opdb_json_int(&j, k);
        opdb_json_end_array(&j);
        opdb_json_key(&j, "best_gmacs_per_second");
        if (best >= 0) opdb_json_float(&j, best);
        else opdb_json_null(&j);
        opdb_json_key(&j, "above_tile_peak");
        opdb_json_bool(&j, tile_peak > 0 && best > tile_peak);
        opdb_json_key(&j, "note");
        if (d->note[0]) opdb_json_string(&j, d->note);
        else opdb_json_null(&j);
        opdb_json_end_object(&j);
    }
    opdb_json_end_array(&j);
    opdb_json_key(&j, "system");
    if (sys->figures) {
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "iterations");
        opdb_json_int(&j, sys->count);
        opdb_json_key(&j, "average_gmacs_per_second");
        opdb_json_float(&j, sys->avg);
        opdb_json_key(&j, "best_gmacs_per_second");
        opdb_json_float(&j, sys->best);
        opdb_json_key(&j, "worst_gmacs_per_second");
        opdb_json_float(&j, sys->worst);
        opdb_json_key(&j, "peak_gmacs_per_second");
        opdb_json_float(&j, sys->peak);
        opdb_json_key(&j, "above_peak");
        opdb_json_bool(&j, sys->peak > 0 && sys->best > sys->peak);
        opdb_json_end_object(&j);
    } else {
        opdb_json_null(&j);
    }
    opdb_json_key(&j, "no_system_figures");
    if (sys->figures) opdb_json_null(&j);
    else opdb_json_string(&j, sys->why);
    opdb_json_end_object(&j);
}

static int aie_run(const opdb_aie_opts *o0, opdb_err *err) {
    opdb_aie_opts o = *o0;
    if (o.warmup < 0) o.warmup = 0;
    if (o.iterations < 0) o.iterations = 0;
    char *input = NULL;
    if (o.trace) {
        input = opdb_xstrdup(o.trace);
    } else {
        size_t need = strlen(o.hwid) + 200;
        input = opdb_xmalloc(need);
        snprintf(input, need, "outputs/%s-gemm_%lld_%lld_%lld-%lld_row_%lld_col/traces/trace_mm_%lld_%lld_%lld.json",
                 o.hwid, o.M, o.K, o.N, o.rows, o.cols, o.M, o.K, o.N);
    }
    char *dir;
    if (o.out_dir) {
        dir = opdb_xstrdup(o.out_dir);
    } else { /* os.path.dirname, "." when the trace has no folder part */
        const char *sl = strrchr(input, '/');
        dir = opdb_xstrdup(".");
        if (sl) {
            free(dir);
            size_t k = (size_t)(sl - input);
            while (k > 1 && input[k - 1] == '/') k--;
            dir = opdb_xmalloc(k + 1);
            memcpy(dir, input, k);
            dir[k] = '\0';
        }
    }
    trace t;
    memset(&t, 0, sizeof t);
    int rc = read_trace(input, o.quirks, &t, err);
    core *c = NULL;
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < t.n; i++) {
        yajl_val nm = t.p[i].name;
        const char *name = "";
        if (nm && YAJL_IS_STRING(nm)) name = nm->u.string;
        else if (nm && !YAJL_IS_NULL(nm) && !(YAJL_IS_FALSE(nm)) &&
                 !(YAJL_IS_NUMBER(nm) && YAJL_GET_DOUBLE(nm) == 0))
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: a process_name is not a string", input);
        if (rc || !strstr(name, "core_trace")) continue;
        c = opdb_xrealloc(c, (n + 1) * sizeof *c);
        process_core(&o, &t.p[i], name, &c[n++]);
    }
    if (rc == 0) rc = opdb_mkdirs(*dir ? dir : ".", err);
    /* Every file name is decided before anything is written. */
    size_t *src = opdb_xcalloc(n + 1, sizeof *src);
    char **used = opdb_xcalloc(n + 1, sizeof *used);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        used[i] = core_file_name(&o, c[i].tile, used, i, err);
        char *checked = used[i] ? opdb_path_in_dir(*dir ? dir : ".", used[i], err) : NULL;
        if (!checked) rc = -1;
        else c[i].path = py_join(dir, used[i]);
        free(checked);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        opdb_sb_clear(&sb);
        core_json(&o, &c[i], &sb);
        rc = write_file(&o, c[i].path, &sb, err);
    }
    /* The reference re-reads the files it wrote: a shared file name means the
     * later core's data for both, and a core file named index.json has been
     * replaced by the run index (no performance window) by then. */
    char *index_path = py_join(dir, "index.json");
    for (size_t i = 0; i < n; i++) {
        src[i] = i;
        for (size_t k = i + 1; k < n; k++)
            if (c[i].path && c[k].path && strcmp(c[i].path, c[k].path) == 0) src[i] = k;
        if (c[i].path && strcmp(c[i].path, index_path) == 0) src[i] = SIZE_MAX;
    }
    char *details = NULL;
    if (rc == 0) rc = write_details(&o, dir, c, n, &details, err);
    if (rc == 0) {
        opdb_sb_clear(&sb);
        opdb_json j;
        opdb_json_init(&j, &sb);
        j.python_nan = o.quirks;
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "hwid");
        opdb_json_string(&j, o.hwid);
        const char *keys[8] = {"M", "K", "N", "m", "k", "n", "rows", "cols"};
        long long vals[8] = {o.M, o.K, o.N, o.m, o.k, o.n, o.rows, o.cols};
        for (int i = 0; i < 8; i++) {
            opdb_json_key(&j, keys[i]);
            opdb_json_int(&j, vals[i]);
        }
        opdb_json_key(&j, "input_path");
        opdb_json_string(&j, opdb_path_shown(input)); /* "<stdin>" for --trace - */
        opdb_json_key(&j, "output_dir");
        opdb_json_string(&j, dir);
        opdb_json_key(&j, "warmup");
        opdb_json_int(&j, o.warmup);
        opdb_json_key(&j, "iterations");
        opdb_json_int(&j, o.iterations);
        opdb_json_key(&j, "clock_GHz");
        opdb_json_float(&j, o.clock_ghz);
        opdb_json_key(&j, "notes");
        opdb_json_begin_array(&j);
        for (size_t i = 0; i < n; i++)
            if (c[i].note[0]) opdb_json_string(&j, c[i].note);
        opdb_json_end_array(&j);
        opdb_json_key(&j, "details_md");
        if (details) opdb_json_string(&j, details);
        else opdb_json_null(&j);
        opdb_json_end_object(&j);
        rc = write_file(&o, index_path, &sb, err);
    }
    if (rc == 0) {
        opdb_sb_clear(&sb);
        aie_system sys;
        memset(&sys, 0, sizeof sys);
        aggregate_json(&o, c, n, src, t.n, &sb, &sys);
        if (o.cores) *o.cores = n;
        char *ap = py_join(dir, "aggregate_perf.json");
        rc = write_file(&o, ap, &sb, err);
        if (rc == 0 && o.summary) summary_json(&o, input, dir, c, n, index_path, details, ap, &sys, o.summary);
        free(ap);
    }
    for (size_t i = 0; i < n; i++) {
        free(c[i].tile);
        free(c[i].it);
        free(c[i].path);
        free(used[i]);
    }
    free(c);
    free(used);
    free(src);
    free(details);
    free(index_path);
    opdb_sb_free(&sb);
    trace_free(&t);
    free(input);
    free(dir);
    return rc;
}

static void aie_defaults(opdb_aie_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->clock_ghz = 1.25;
    o->peak_macs_per_cycle = 64.0;
    o->lock_stall_factor = 20.0;
}

OPDB_OPTS_INIT_SIZED(opdb_aie_opts, aie_defaults)

int opdb_aie_run(const opdb_aie_opts *o0, opdb_err *err) {
    if (opdb_opts_check(o0, o0 ? o0->size : 0, sizeof *o0, "opdb_aie_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o0->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o0->modes);
    int rc = aie_run(o0, err);
    opdb_call_leave(&saved);
    return rc;
}
