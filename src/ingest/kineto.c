/* See kineto.h.  Attribution rules (spec ingest-more.md §3):
 *   device event  = ph X, cat (lower-cased) kernel / gpu_memcpy / gpu_memset / memcpy / memset
 *   its launch    = the first runtime event (cuda_runtime, cuda_driver, runtime, hip_runtime)
 *                   with the same args.correlation
 *   its operator  = the innermost cpu_op / Operator on the launch's pid+tid whose
 *                   [ts, ts + dur] contains the launch's ts: latest ts, then shortest
 *                   dur, then last in file order
 * Order of everything written: calls in the file order of their operator event,
 * device events of a call in file order. */
#include "ingest/kineto.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/csv.h"
#include "opdb/db.h"
#include "opdb/fs.h"
#include "opdb/pyliteral.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/stats.h"
#include "opdb/trace_reader.h"

#define NO_OP UINT64_MAX

typedef struct dev_rec {      /* one device event, kept between the passes */
    int64_t corr;
    double dur, ts;           /* device dur; launch ts (after pass 1) */
    uint64_t seq;             /* device event's index in the file */
    uint64_t op_seq;          /* innermost operator's index, NO_OP if none yet */
    double op_ts, op_dur;
    uint32_t kname, thread, group;
    bool launched;
} dev_rec;

typedef struct launch_slot {
    int64_t corr;
    double ts;
    uint32_t thread;
    bool used;
} launch_slot;

typedef struct pass {
    kn_agg *a;
    dev_rec *d;
    size_t nd, capd;
    launch_slot *l;           /* open addressing on corr */
    size_t nl, capl;
    char **threads;           /* "pid\x1ftid" */
    size_t nthreads, capthreads;
    opdb_hindex tix;
    size_t *order;            /* launched device events sorted by (thread, ts) */
    size_t norder;
    size_t *tstart;           /* per thread: first position in order; tstart[nthreads] = norder */
    unsigned long long events, cpu_ops;
    opdb_strbuf key;
} pass;

/* ---- small helpers */

static bool cat_is(const char *cat, const char *const *names) {
    for (; *names; names++)
        if (strcasecmp(cat, *names) == 0) return true;
    return false;
}

static const char *const k_device_cats[] = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", NULL};
static const char *const k_runtime_cats[] = {"cuda_runtime", "cuda_driver", "runtime", "hip_runtime", NULL};
static const char *const k_op_cats[] = {"cpu_op", "operator", NULL};

static const char *text_of(const opdb_trace_field *f) { return f ? f->text : ""; }

static bool num_of(const opdb_trace_field *f, double *out) {
    if (!f || !f->text[0]) return false;
    char *end;
    *out = strtod(f->text, &end);
    return *end == '\0';
}

static bool int_of(const opdb_trace_field *f, int64_t *out) {
    if (!f || (f->kind != OPDB_J_INT && f->kind != OPDB_J_STRING) || !f->text[0]) return false;
    char *end;
    *out = strtoll(f->text, &end, 10);
    return *end == '\0';
}

static uint32_t intern(opdb_hindex *ix, char ***v, size_t *n, size_t *cap, opdb_arena *ar, const char *s,
                       size_t len, bool add, bool *found) {
    uint64_t h = opdb_hash_bytes(s, len, 7);
    uint32_t k;
    for (opdb_hprobe p = opdb_hindex_probe(ix, h); opdb_hprobe_next(&p, &k);)
        if (strlen((*v)[k]) == len && memcmp((*v)[k], s, len) == 0) {
            if (found) *found = true;
            return k;
        }
    if (found) *found = false;
    if (!add) return UINT32_MAX;
    OPDB_ALLOC_GROW(*v, *n + 1, *cap);
    (*v)[*n] = opdb_arena_strndup(ar, s, len);
    opdb_hindex_add(ix, h, (uint32_t)*n);
    return (uint32_t)(*n)++;
}

static uint32_t thread_of(pass *P, const opdb_trace_event *ev, bool add) {
    opdb_sb_clear(&P->key);
    opdb_sb_adds(&P->key, text_of(opdb_trace_get(ev, "pid")));
    opdb_sb_addc(&P->key, '\x1f');
    opdb_sb_adds(&P->key, text_of(opdb_trace_get(ev, "tid")));
    return intern(&P->tix, &P->threads, &P->nthreads, &P->capthreads, &P->a->arena, P->key.p, P->key.n, add, NULL);
}

static launch_slot *launch_find(pass *P, int64_t corr, bool add) {
    if (add && (P->nl + 1) * 2 > P->capl) {
        size_t ncap = P->capl ? P->capl * 2 : 1024;
        launch_slot *nl = opdb_xcalloc(ncap, sizeof *nl);
        for (size_t i = 0; i < P->capl; i++) {
            if (!P->l[i].used) continue;
            size_t j = (size_t)opdb_hash_bytes(&P->l[i].corr, sizeof P->l[i].corr, 1) & (ncap - 1);
            while (nl[j].used) j = (j + 1) & (ncap - 1);
            nl[j] = P->l[i];
        }
        free(P->l);
        P->l = nl;
        P->capl = ncap;
    }
    if (!P->capl) return NULL;
    size_t j = (size_t)opdb_hash_bytes(&corr, sizeof corr, 1) & (P->capl - 1);
    while (P->l[j].used) {
        if (P->l[j].corr == corr) return &P->l[j];
        j = (j + 1) & (P->capl - 1);
    }
    if (!add) return NULL;
    P->l[j].used = true;
    P->l[j].corr = corr;
    P->nl++;
    return &P->l[j];
}

/* ---- pass 1: device events and launches */

static int pass1_event(const opdb_trace_event *ev, void *ctx) {
    pass *P = ctx;
    P->events++;
    if (strcmp(text_of(opdb_trace_get(ev, "ph")), "X") != 0) return 0;
    const char *cat = text_of(opdb_trace_get(ev, "cat"));
    if (cat_is(cat, k_op_cats)) {
        P->cpu_ops++;
        return 0;
    }
    int64_t corr = 0;
    bool has_corr = int_of(opdb_trace_arg(ev, "correlation"), &corr);
    if (cat_is(cat, k_device_cats)) {
        OPDB_ALLOC_GROW(P->d, P->nd + 1, P->capd);
        dev_rec *d = &P->d[P->nd++];
        memset(d, 0, sizeof *d);
        d->corr = has_corr ? corr : INT64_MIN;
        if (!num_of(opdb_trace_get(ev, "dur"), &d->dur)) d->dur = 0.0;
        d->seq = ev->index;
        d->op_seq = NO_OP;
        const char *name = text_of(opdb_trace_get(ev, "name"));
        kn_agg *a = P->a;
        d->kname = intern(&a->nix, &a->names, &a->nnames, &a->capnames, &a->arena, name, strlen(name), true, NULL);
        a->device_events++;
    } else if (has_corr && cat_is(cat, k_runtime_cats)) {
        double ts;
        if (!num_of(opdb_trace_get(ev, "ts"), &ts)) return 0;
        if (launch_find(P, corr, false)) return 0; /* the first runtime event of a correlation wins */
        launch_slot *s = launch_find(P, corr, true);
        s->ts = ts;
        s->thread = thread_of(P, ev, true);
    }
    return 0;
}

static const pass *g_sort_pass; /* qsort has no context argument */

static int by_thread_ts(const void *x, const void *y) {
    const dev_rec *a = &g_sort_pass->d[*(const size_t *)x], *b = &g_sort_pass->d[*(const size_t *)y];
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_op_then_seq(const void *x, const void *y) {
    const dev_rec *a = x, *b = y;
    if (a->op_seq != b->op_seq) return a->op_seq < b->op_seq ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Pairs device events with launches, then indexes launches by (thread, ts). */
static void pair_launches(pass *P) {
    P->order = opdb_xmalloc((P->nd + 1) * sizeof *P->order);
    for (size_t i = 0; i < P->nd; i++) {
        dev_rec *d = &P->d[i];
        launch_slot *s = d->corr == INT64_MIN ? NULL : launch_find(P, d->corr, false);
        if (!s) {
            P->a->no_launch++;
            continue;
        }
        d->launched = true;
        d->ts = s->ts;
        d->thread = s->thread;
        P->order[P->norder++] = i;
    }
    free(P->l);
    P->l = NULL;
    P->capl = P->nl = 0;
    g_sort_pass = P;
    qsort(P->order, P->norder, sizeof *P->order, by_thread_ts);
    P->tstart = opdb_xmalloc((P->nthreads + 1) * sizeof *P->tstart);
    size_t k = 0;
    for (size_t t = 0; t <= P->nthreads; t++) {
        while (k < P->norder && P->d[P->order[k]].thread < t) k++;
        P->tstart[t] = k;
    }
}

/* ---- pass 2: operators */

static void render_cells(kn_group *g) {
    opdb_strbuf s;
    opdb_sb_init(&s);
    size_t n = strlen(g->dims);
    opdb_pylit *v = n ? opdb_pylit_parse(g->dims, n, NULL, NULL) : NULL;
    if (n) {
        opdb_sb_addc(&s, '"');
        if (v && v->kind == OPDB_PYLIT_LIST) {
            bool first = true;
            for (size_t i = 0; i < v->nitems; i++) {
                const opdb_pylit *e = v->items[i];
                bool tensor_list = e->kind == OPDB_PYLIT_LIST && e->nitems && e->items[0]->kind == OPDB_PYLIT_LIST;
                size_t slots = tensor_list ? e->nitems : 1;
                for (size_t t = 0; t < slots; t++) {
                    const opdb_pylit *dims = tensor_list ? e->items[t] : e;
                    if (!first) opdb_sb_addc(&s, ';');
                    first = false;
                    if (dims->kind != OPDB_PYLIT_LIST) continue; /* a scalar: empty slot */
                    for (size_t k = 0; k < dims->nitems; k++) {
                        if (k) opdb_sb_addc(&s, ',');
                        opdb_pylit_str(&s, dims->items[k]);
                    }
                }
            }
        } else {
            opdb_sb_adds(&s, g->dims);
        }
        opdb_sb_addc(&s, '"');
    }
    opdb_pylit_free(v);
    g->shapes_cell = opdb_xstrdup(s.n ? s.p : "");
    opdb_sb_clear(&s);
    n = strlen(g->types);
    v = n ? opdb_pylit_parse(g->types, n, NULL, NULL) : NULL;
    if (v && v->kind == OPDB_PYLIT_LIST) {
        for (size_t i = 0; i < v->nitems; i++) {
            if (i) opdb_sb_addc(&s, ';');
            opdb_pylit_str(&s, v->items[i]);
        }
    } else if (n) {
        opdb_sb_adds(&s, g->types);
    }
    opdb_pylit_free(v);
    g->dtypes_cell = opdb_xstrdup(s.n ? s.p : "");
    opdb_sb_free(&s);
}

static uint32_t group_of(kn_agg *a, opdb_strbuf *key, const char *name, const char *dims, const char *types) {
    opdb_sb_clear(key);
    opdb_sb_adds(key, name);
    opdb_sb_addc(key, '\0');
    opdb_sb_adds(key, dims);
    opdb_sb_addc(key, '\0');
    opdb_sb_adds(key, types);
    uint64_t h = opdb_hash_bytes(key->p, key->n, 11);
    uint32_t k;
    for (opdb_hprobe p = opdb_hindex_probe(&a->gix, h); opdb_hprobe_next(&p, &k);)
        if (!strcmp(a->g[k].name, name) && !strcmp(a->g[k].dims, dims) && !strcmp(a->g[k].types, types)) return k;
    OPDB_ALLOC_GROW(a->g, a->n + 1, a->cap);
    kn_group *g = &a->g[a->n];
    memset(g, 0, sizeof *g);
    g->name = opdb_arena_strndup(&a->arena, name, strlen(name));
    g->dims = opdb_arena_strndup(&a->arena, dims, strlen(dims));
    g->types = opdb_arena_strndup(&a->arena, types, strlen(types));
    g->first_call = UINT64_MAX;
    render_cells(g);
    opdb_hindex_add(&a->gix, h, (uint32_t)a->n);
    return (uint32_t)a->n++;
}

static int pass2_event(const opdb_trace_event *ev, void *ctx) {
    pass *P = ctx;
    if (strcmp(text_of(opdb_trace_get(ev, "ph")), "X") != 0) return 0;
    if (!cat_is(text_of(opdb_trace_get(ev, "cat")), k_op_cats)) return 0;
    uint32_t t = thread_of(P, ev, false);
    if (t == UINT32_MAX) return 0; /* no launch on this thread */
    double ts, dur;
    if (!num_of(opdb_trace_get(ev, "ts"), &ts)) return 0;
    if (!num_of(opdb_trace_get(ev, "dur"), &dur)) dur = 0.0;
    double end = ts + dur;
    size_t lo = P->tstart[t], hi = P->tstart[t + 1];
    while (lo < hi) { /* first launch with ts >= op ts */
        size_t mid = lo + (hi - lo) / 2;
        if (P->d[P->order[mid]].ts < ts) lo = mid + 1;
        else hi = mid;
    }
    uint32_t group = UINT32_MAX;
    for (size_t k = lo; k < P->tstart[t + 1]; k++) {
        dev_rec *d = &P->d[P->order[k]];
        if (d->ts > end) break;
        /* later in file order wins a full tie: this event comes after the current one */
        bool inner = d->op_seq == NO_OP || ts > d->op_ts || (ts == d->op_ts && dur <= d->op_dur);
        if (!inner) continue;
        if (group == UINT32_MAX) {
            const opdb_trace_field *dims = opdb_trace_arg(ev, "Input Dims");
            group = group_of(P->a, &P->key, text_of(opdb_trace_get(ev, "name")), dims ? dims->text : "",
                             text_of(opdb_trace_arg(ev, "Input type")));
        }
        d->op_seq = ev->index;
        d->op_ts = ts;
        d->op_dur = dur;
        d->group = group;
    }
    return 0;
}

/* ---- calls into groups */

static void add_kname(kn_group *g, uint32_t k) {
    for (size_t i = 0; i < g->nknames; i++)
        if (g->knames[i] == k) return;
    OPDB_ALLOC_GROW(g->knames, g->nknames + 1, g->capknames);
    g->knames[g->nknames++] = k;
}

static void take_calls(pass *P) {
    kn_agg *a = P->a;
    size_t n = 0;
    for (size_t i = 0; i < P->nd; i++) {
        if (!P->d[i].launched) continue;
        if (P->d[i].op_seq == NO_OP) {
            a->no_operator++;
            continue;
        }
        P->d[n++] = P->d[i];
    }
    qsort(P->d, n, sizeof *P->d, by_op_then_seq);
    uint64_t file_bits = (uint64_t)a->files << 40;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double dur = 0.0;
        kn_group *g = &a->g[P->d[i].group];
        for (; j < n && P->d[j].op_seq == P->d[i].op_seq; j++) {
            dur += P->d[j].dur;
            add_kname(g, P->d[j].kname);
        }
        if (g->first_call == UINT64_MAX) g->first_call = file_bits | P->d[i].op_seq;
        if (g->count == 0 || dur < g->min) g->min = dur;
        if (g->count == 0 || dur > g->max) g->max = dur;
        g->count++;
        g->sum += dur;
        g->sumsq += dur * dur;
        OPDB_ALLOC_GROW(g->durs, g->ndurs + 1, g->capdurs);
        g->durs[g->ndurs++] = dur;
        a->calls++;
        if (!g->dims[0]) a->calls_without_dims++;
        i = j;
    }
}

static void pass_free(pass *P) {
    free(P->d);
    free(P->l);
    free(P->threads);
    opdb_hindex_free(&P->tix);
    free(P->order);
    free(P->tstart);
    opdb_sb_free(&P->key);
}

int kn_read(kn_agg *a, const char *path, char *why, size_t cap, opdb_err *err) {
    static const char *const fields1[] = {"ph", "cat", "name", "pid", "tid", "ts", "dur", NULL};
    static const char *const args1[] = {"correlation", NULL};
    static const char *const args2[] = {"Input Dims", "Input type", NULL};
    pass P;
    memset(&P, 0, sizeof P);
    P.a = a;
    opdb_sb_init(&P.key);
    unsigned long long before = a->device_events;
    int rc = opdb_trace_read_some(path, fields1, args1, pass1_event, &P, err);
    if (rc < 0 && P.events == 0) { /* JSON, but not a trace: say what to do instead of how it broke */
        const char *m = strncmp(err->msg, path, strlen(path)) == 0 ? err->msg + strlen(path) : err->msg;
        while (*m == ':' || *m == ' ') m++;
        snprintf(why, cap, "not a per-kernel profile (%s%s); give opdb parse a kernel_details.csv, an "
                           "op_summary_*.csv, a profiler .db export or a PyTorch profiler trace",
                 strstr(m, "no trace events") ? "JSON without trace events, e.g. communication.json or profiler_info.json: " : "",
                 m);
        char *nl = strchr(why, '\n');
        if (nl) *nl = ' ';
        opdb_err_clear(err);
        rc = 1;
    }
    if (rc == 0 && a->device_events == before) {
        if (P.cpu_ops)
            snprintf(why, cap, "a PyTorch profiler trace without device kernels (CPU only): profile with "
                               "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] and record_shapes=True");
        else if (P.events)
            snprintf(why, cap, "a trace without PyTorch-profiler device kernels or operators (e.g. an Ascend "
                               "trace_view.json or msprof timeline): parse the kernel_details.csv or the .db export "
                               "of the same run");
        else
            snprintf(why, cap, "not a per-kernel profile (JSON without trace events, e.g. communication.json or "
                               "profiler_info.json); give opdb parse a kernel_details.csv, an op_summary_*.csv, a "
                               "profiler .db export or a PyTorch profiler trace");
        rc = 1;
    }
    if (rc == 0) {
        pair_launches(&P);
        rc = opdb_trace_read_some(path, fields1, args2, pass2_event, &P, err);
    }
    if (rc == 0) take_calls(&P);
    a->files++;
    pass_free(&P);
    return rc;
}

/* ---- output */

void kn_agg_init(kn_agg *a) {
    memset(a, 0, sizeof *a);
    opdb_arena_init(&a->arena, 64 * 1024);
}

void kn_agg_free(kn_agg *a) {
    for (size_t i = 0; i < a->n; i++) {
        free(a->g[i].durs);
        free(a->g[i].knames);
        free(a->g[i].shapes_cell);
        free(a->g[i].dtypes_cell);
    }
    free(a->g);
    free(a->names);
    opdb_hindex_free(&a->gix);
    opdb_hindex_free(&a->nix);
    opdb_arena_free(&a->arena);
    memset(a, 0, sizeof *a);
}

static const kn_agg *g_sort_agg;

static int by_first_call(const void *x, const void *y) {
    const kn_group *a = &g_sort_agg->g[*(const size_t *)x], *b = &g_sort_agg->g[*(const size_t *)y];
    return a->first_call < b->first_call ? -1 : a->first_call > b->first_call;
}

#define KN_NCOLS 17
#define KN_NNUM 8 /* average .. sum of squares */

static void header(opdb_strbuf *out) {
#define KN_ITEM(name) name,
    static const char *const names[KN_NCOLS] = {
        OPDB_BASE_COL_LIST(KN_ITEM) OPDB_PROF_DUR_COL_LIST(KN_ITEM) OPDB_COL_PROF_COUNT, OPDB_COL_PROF_MIN_DUR,
        OPDB_COL_PROF_MAX_DUR, OPDB_COL_PROF_SUM_DUR, OPDB_COL_PROF_SUMSQ_DUR, OPDB_COL_KERNEL_NAMES};
#undef KN_ITEM
    opdb_span c[KN_NCOLS];
    for (int i = 0; i < KN_NCOLS; i++) c[i] = opdb_span_cstr(names[i]);
    opdb_csv_write_record(out, c, KN_NCOLS);
}

static void row(opdb_strbuf *out, const kn_agg *a, kn_group *g, opdb_strbuf *knames) {
    char num[KN_NNUM][400];
    double count = (double)g->count;
    double v[KN_NNUM] = {g->sum / count, opdb_median(g->durs, g->ndurs), opdb_pstd_naive(g->sum, g->sumsq, count),
                         0, g->min, g->max, g->sum, g->sumsq};
    opdb_span c[KN_NCOLS];
    for (int i = 0; i < KN_NNUM; i++) {
        size_t k = i == 3 ? (size_t)snprintf(num[i], sizeof num[i], "%llu", (unsigned long long)g->count)
                          : opdb_py_fmt_fixed(num[i], sizeof num[i], v[i], 6);
        c[8 + i] = opdb_span_make(num[i], k);
    }
    opdb_sb_clear(knames);
    for (size_t i = 0; i < g->nknames; i++) {
        if (i) opdb_sb_addc(knames, ';');
        opdb_sb_adds(knames, a->names[g->knames[i]]);
    }
    c[0] = opdb_span_cstr("");
    c[1] = opdb_span_cstr("GPU");
    c[2] = opdb_span_cstr(g->shapes_cell);
    c[3] = opdb_span_cstr(g->dtypes_cell);
    for (int i = 4; i < 8; i++) c[i] = opdb_span_cstr("");
    c[16] = opdb_span_make(knames->n ? knames->p : "", knames->n);
    opdb_csv_write_record(out, c, KN_NCOLS);
}

static bool taken(const opdb_parse_result *res, const char *name) {
    for (size_t i = 0; i < res->ntables; i++)
        if (strcmp(res->tables[i].file, name) == 0) return true;
    return false;
}

int kn_write_tables(kn_agg *a, const char *outdir, tbl_writer *w, opdb_parse_result *res, opdb_err *err) {
    size_t ng = 0;
    size_t *order = opdb_xmalloc((a->n + 1) * sizeof *order);
    for (size_t i = 0; i < a->n; i++)
        if (a->g[i].count) order[ng++] = i;
    g_sort_agg = a;
    qsort(order, ng, sizeof *order, by_first_call);
    bool *done = opdb_xcalloc(ng + 1, sizeof *done);
    opdb_strbuf out, kn;
    opdb_sb_init(&out);
    opdb_sb_init(&kn);
    res->tables = opdb_xrealloc(res->tables, (res->ntables + ng + 1) * sizeof *res->tables);
    int rc = 0;
    for (size_t t = 0; t < ng && rc == 0; t++) {
        if (done[t]) continue;
        const char *type = a->g[order[t]].name;
        char *base = opdb_sanitize_type_name(type, strlen(type));
        char *fname = opdb_xmalloc(strlen(base) + 32);
        sprintf(fname, "%s.csv", base);
        for (int k = 2; taken(res, fname); k++) sprintf(fname, "%s~%d.csv", base, k);
        free(base);
        opdb_sb_clear(&out);
        header(&out);
        opdb_table_summary sum = {fname, 0, 0, 0.0};
        for (size_t i = t; i < ng; i++) {
            kn_group *g = &a->g[order[i]];
            if (done[i] || strcmp(g->name, type) != 0) continue;
            done[i] = true;
            row(&out, a, g, &kn);
            sum.shapes++;
            sum.launches += g->count;
            sum.total_us += g->sum;
        }
        char *path = opdb_path_join(outdir, fname);
        rc = tbl_emit(w, path, out.p, out.n, err);
        free(path);
        if (rc == 0) {
            res->tables[res->ntables++] = sum;
            res->files_written++;
        } else {
            free(fname);
        }
    }
    free(done);
    free(order);
    opdb_sb_free(&out);
    opdb_sb_free(&kn);
    return rc;
}
