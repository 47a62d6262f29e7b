/* opdb diff: pair the two sides' row identities, judge each pair, summarise
 * per kernel type and weigh by a model trace's query results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "core/call.h"
#include "analysis/diff_internal.h"
#include "opdb/limits.h"
#include "opdb/pystr.h"
#include "opdb/stats.h"

static void diff_defaults(opdb_diff_options *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->threshold = 0.05;
    o->alpha = 0.05;
    o->offset_factor = 1.15;
    o->format = OPDB_DIFF_MARKDOWN;
}

OPDB_OPTS_INIT_SIZED(opdb_diff_options, diff_defaults)

static void judge(dchange *c, const opdb_diff_options *o) {
    const dgroup *a = c->old, *b = c->new_;
    c->ratio = c->p = NAN;
    if (!a) {
        c->v = OPDB_DIFF_ADDED;
        return;
    }
    if (!b) {
        c->v = OPDB_DIFF_REMOVED;
        return;
    }
    if (a->status != b->status) {
        c->v = OPDB_DIFF_STATUS_CHANGE;
        return;
    }
    if (a->status == DS_CONFLICT) { /* which row the consumer reads is a ranking detail */
        c->v = OPDB_DIFF_UNKNOWN;
        return;
    }
    if (a->status != DS_VISIBLE) {
        c->v = OPDB_DIFF_SAME;
        return;
    }
    c->ratio = b->lat / a->lat;
    if (a->has_stats && b->has_stats) c->p = opdb_welch_p(a->n, a->mean, a->var, b->n, b->mean, b->var, NULL, NULL);
    if (!(fabs(b->lat - a->lat) > o->threshold * a->lat)) c->v = OPDB_DIFF_SAME;
    else if (isnan(c->p)) c->v = OPDB_DIFF_UNKNOWN;
    else if (c->p < o->alpha) c->v = b->lat > a->lat ? OPDB_DIFF_REGRESSION : OPDB_DIFF_GAIN;
    else c->v = OPDB_DIFF_DRIFT;
}

static yajl_val jget(yajl_val obj, const char *key) {
    yajl_val found = NULL;
    for (size_t i = 0; YAJL_IS_OBJECT(obj) && i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0) found = obj->u.object.values[i];
    return found;
}

/* Adds each hit's latency to its kernel type's weight (multi-kernel answers
 * count in the total only). */
static int by_table_name(const void *key, const void *t) {
    return strcmp((const char *)key, ((const dtable *)t)->kernel_type);
}

/* Adds x to the identity whose row starts at line ln of the table named by
 * file (its last path component, <KernelType>.csv) in OLD. */
static void add_row_us(const dside *old, const char *f, long long ln, double x) {
    const char *base = strrchr(f, '/');
    base = base ? base + 1 : f;
    size_t n = strlen(base);
    if (n <= 4 || strcmp(base + n - 4, ".csv") != 0) return;
    char kt[256];
    snprintf(kt, sizeof kt, "%.*s", (int)(n - 4), base);
    const dtable *t = bsearch(kt, old->t, old->n, sizeof *old->t, by_table_name);
    if (t && ln > 0 && (unsigned long long)ln < t->nby_line && t->by_line[ln] && isfinite(x) && x > 0)
        t->g[t->by_line[ln] - 1].explain_us += x;
}

static bool jnum(yajl_val v, double *x) {
    if (!YAJL_IS_NUMBER(v)) return false;
    *x = YAJL_IS_INTEGER(v) ? (double)YAJL_GET_INTEGER(v) : YAJL_GET_DOUBLE(v);
    return true;
}

/* A list of {file, line, latency_us} rows: each adds share when share is a
 * number (>= 0), else its own latency_us. */
static void add_row_list(yajl_val rows, const dside *old, double share) {
    for (size_t i = 0; YAJL_IS_ARRAY(rows) && i < rows->u.array.len; i++) {
        yajl_val e = rows->u.array.values[i], file = jget(e, "file"), line = jget(e, "line");
        double x;
        if (!YAJL_IS_STRING(file) || !YAJL_IS_INTEGER(line) || !jnum(jget(e, "latency_us"), &x)) continue;
        add_row_us(old, YAJL_GET_STRING(file), YAJL_GET_INTEGER(line), share >= 0 ? share : x);
    }
}

/* An explanation of an answer of lat us (docs/DIFF.md §4): its rows, its
 * communication rows, its interpolation points' rows and, recursively, its
 * sub-kernels' explanations, each row getting its part of lat. */
static void add_explain(yajl_val explain, double lat, const dside *old, int depth) {
    if (!YAJL_IS_OBJECT(explain) || depth > 16) return;
    add_row_list(jget(explain, "rows"), old, -1);
    yajl_val comm = jget(explain, "comm"), crows = jget(comm, "rows");
    if (YAJL_IS_ARRAY(crows) && crows->u.array.len) { /* a fit or bracket: the answer shared by its rows */
        bool exact = YAJL_IS_TRUE(jget(comm, "exact"));
        add_row_list(crows, old, exact ? -1 : lat / (double)crows->u.array.len);
    }
    yajl_val pts = jget(jget(explain, "interpolation"), "points");
    for (size_t i = 0; YAJL_IS_ARRAY(pts) && i < pts->u.array.len; i++) {
        yajl_val pt = pts->u.array.values[i], prow = jget(pt, "rows");
        double w, pl;
        if (!jnum(jget(pt, "weight"), &w) || !jnum(jget(pt, "latency_us"), &pl) || !YAJL_IS_ARRAY(prow) ||
            !prow->u.array.len || !(w * pl >= 0))
            continue;
        add_row_list(prow, old, w * pl / (double)prow->u.array.len);
    }
    yajl_val subs = jget(explain, "sub_kernels");
    for (size_t i = 0; YAJL_IS_ARRAY(subs) && i < subs->u.array.len; i++) {
        yajl_val sk = subs->u.array.values[i];
        double sl;
        if (jnum(jget(sk, "latency_us"), &sl) && isfinite(sl) && sl > 0) add_explain(jget(sk, "explain"), sl, old, depth + 1);
    }
}

static int load_weights(dreport *r, const dside *old, opdb_err *err) {
    const opdb_diff_options *o = r->o;
    FILE *f = fopen(o->weights_path, "r");
    if (!f) return opdb_fail(err, OPDB_ERR_RUNTIME, "weights file not found: %s", o->weights_path);
    for (size_t k = 0; k < r->nkts; k++) r->kts[k].weight = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long long lineno = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        opdb_span s = opdb_py_strip(opdb_span_make(line, (size_t)len));
        if (!s.n) continue;
        opdb_err le;
        opdb_err_clear(&le);
        if (opdb_json_limits_check(s.p, s.n, o->weights_path, lineno, &le)) {
            diff_warn(o, "%s", le.msg);
            continue;
        }
        char ebuf[256];
        char *text = opdb_xmalloc(s.n + 1);
        memcpy(text, s.p, s.n);
        text[s.n] = '\0';
        yajl_val v = yajl_tree_parse(text, ebuf, sizeof ebuf);
        free(text);
        if (!YAJL_IS_OBJECT(v)) {
            diff_warn(o, "%s:%llu: not a JSON object; line skipped", o->weights_path, lineno);
            yajl_tree_free(v);
            continue;
        }
        yajl_val hit = jget(v, "hit"), lat = jget(v, "latency_us"), kt = jget(v, "kernel_type");
        if (YAJL_IS_TRUE(hit) && YAJL_IS_NUMBER(lat)) {
            double x = YAJL_GET_DOUBLE(lat);
            if (YAJL_IS_INTEGER(lat)) x = (double)YAJL_GET_INTEGER(lat);
            if (isfinite(x) && x > 0) {
                r->weights_total += x;
                r->weights_lines++;
                const char *k = YAJL_IS_STRING(kt) ? YAJL_GET_STRING(kt) : NULL;
                for (size_t i = 0; k && !strchr(k, ',') && i < r->nkts; i++)
                    if (strcmp(r->kts[i].name, k) == 0) r->kts[i].weight += x;
                add_explain(jget(v, "explain"), x, old, 0);
            }
        }
        yajl_tree_free(v);
    }
    free(line);
    fclose(f);
    return 0;
}

static int by_kt(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int diff_run_call(const char *old_dir, const char *new_dir, const opdb_diff_options *o, opdb_diff_result *res,
                  opdb_err *err) {
    memset(res, 0, sizeof *res);
    if (!o || o->size != sizeof *o) return opdb_fail(err, OPDB_ERR_USAGE, "opdb_diff_options: call opdb_diff_options_init");
    dside so, sn;
    if (diff_load_side(old_dir, &so, o, err)) return -1;
    if (diff_load_side(new_dir, &sn, o, err)) {
        diff_free_side(&so);
        return -1;
    }
    /* the kernel types of either side, sorted by name */
    const char **names = opdb_xmalloc((so.n + sn.n + 1) * sizeof *names);
    size_t nn = 0;
    for (size_t i = 0; i < so.n; i++) names[nn++] = so.t[i].kernel_type;
    for (size_t i = 0; i < sn.n; i++) names[nn++] = sn.t[i].kernel_type;
    qsort(names, nn, sizeof *names, by_kt);
    size_t u = 0;
    for (size_t i = 0; i < nn; i++)
        if (!u || strcmp(names[u - 1], names[i]) != 0) names[u++] = names[i];
    dreport r = {old_dir, new_dir, o, opdb_xcalloc(u ? u : 1, sizeof(dkt)), u, NULL, 0, res, 0, 0};
    size_t chcap = 0, io = 0, in = 0;
    double *ratios = NULL;
    size_t rcap = 0;
    for (size_t k = 0; k < u; k++) {
        dkt *kt = &r.kts[k];
        kt->name = names[k];
        kt->median = kt->weight = kt->predicted = NAN;
        const dtable *to = io < so.n && strcmp(so.t[io].kernel_type, names[k]) == 0 ? &so.t[io++] : NULL;
        const dtable *tn = in < sn.n && strcmp(sn.t[in].kernel_type, names[k]) == 0 ? &sn.t[in++] : NULL;
        size_t first = r.nch, nr = 0;
        if (to && tn) res->common_kernel_types++;
        for (size_t i = 0; to && i < to->n; i++) {
            dgroup *b = tn ? diff_find(tn, to->g[i].sig, to->g[i].hash) : NULL;
            if (b) b->paired = true, res->paired++;
            OPDB_ALLOC_GROW(r.ch, r.nch + 1, chcap);
            r.ch[r.nch++] = (dchange){k, OPDB_DIFF_SAME, &to->g[i], b, NAN, NAN};
        }
        for (size_t i = 0; tn && i < tn->n; i++) {
            if (tn->g[i].paired) continue;
            OPDB_ALLOC_GROW(r.ch, r.nch + 1, chcap);
            r.ch[r.nch++] = (dchange){k, OPDB_DIFF_SAME, NULL, &tn->g[i], NAN, NAN};
        }
        for (size_t i = first; i < r.nch; i++) {
            judge(&r.ch[i], o);
            kt->count[r.ch[i].v]++;
            res->count[r.ch[i].v]++;
            if (!isnan(r.ch[i].ratio)) {
                OPDB_ALLOC_GROW(ratios, nr + 1, rcap);
                ratios[nr++] = r.ch[i].ratio;
            }
        }
        kt->rows = r.nch - first;
        kt->compared = nr;
        if (nr) {
            kt->median = opdb_median(ratios, nr);
            kt->offset = kt->median > o->offset_factor || kt->median < 1.0 / o->offset_factor;
            if (kt->offset) res->offset_kernel_types++;
        }
    }
    free(ratios);
    res->kernel_types = u;
    int rc = 0;
    if (o->weights_path) {
        rc = load_weights(&r, &so, err);
        if (rc == 0) {
            res->weighted = true;
            res->predicted_change = 0;
            for (size_t k = 0; k < u; k++) {
                dkt *kt = &r.kts[k];
                kt->weight = r.weights_total > 0 ? kt->weight / r.weights_total : 0;
                kt->predicted = isnan(kt->median) ? 0.0 : kt->weight * (kt->median - 1.0);
                res->predicted_change += kt->predicted;
            }
            res->weights_results = r.weights_lines;
            if (!r.weights_lines) diff_warn(o, "%s: no hit with a latency; every weight is 0", o->weights_path);
        }
    }
    if (rc == 0 && o->out) {
        if (o->format == OPDB_DIFF_JSON) diff_write_json(&r, o->out);
        else diff_write_markdown(&r, o->out);
    }
    if (rc == 0 && o->html_path) rc = diff_write_html(&r, o->html_path, err);
    free(r.kts);
    free(r.ch);
    free(names);
    diff_free_side(&so);
    diff_free_side(&sn);
    return rc;
}

int opdb_diff_run(const char *old_dir, const char *new_dir, const opdb_diff_options *o, opdb_diff_result *res,
                  opdb_err *err) {
    opdb_call_scope saved = opdb_call_enter(NULL);
    OPDB_CALL_GUARD(saved, err);
    int rc = diff_run_call(old_dir, new_dir, o, res, err);
    opdb_call_leave(&saved);
    return rc;
}
