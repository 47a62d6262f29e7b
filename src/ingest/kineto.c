/* See kineto.h.  Attribution rules (docs/ingest-formats.md §3):
 *   device event  = ph X, cat (lower-cased) kernel / gpu_memcpy / gpu_memset / memcpy / memset
 *   its launch    = the first runtime event (cuda_runtime, cuda_driver, runtime, hip_runtime)
 *                   with the same args.correlation
 *   its operator  = the innermost cpu_op / Operator on the launch's pid+tid whose
 *                   [ts, ts + dur] contains the launch's ts: latest ts, then shortest
 *                   dur, then last in file order
 * Order of everything written: calls in the file order of their operator event,
 * device events of a call in file order.
 *
 * kn_read's pipeline (every stream a sorted run of 32-byte records, ext_sort.h):
 *   JSON pass     -> ops (thread, ts, -dur, seq), launches (corr, seq), devices (corr, seq)
 *   merge on corr -> matched device events (thread, launch ts, seq)
 *   sweep         -> per thread, ops and launches in time order with a stack of the open
 *                    operators (pushed in innermost-key order, so the top that still
 *                    contains the launch is its innermost operator) -> (op seq, seq)
 *   walk          -> calls, in operator file order, into their groups; call times into
 *                    the median sort (group, time). */
#include "ingest/kineto.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ext_sort.h"
#include "opdb/csv.h"
#include "opdb/db.h"
#include "opdb/fs.h"
#include "opdb/pyliteral.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/stats.h"

/* ---- kn_read: one JSON pass into record sorts, then merges */

typedef struct op_rec { /* an operator event */
    double ts, dur;
    uint64_t seq;
    uint32_t thread, group;
} op_rec;

typedef struct launch_rec { /* a runtime event with a correlation */
    int64_t corr;
    double ts;
    uint64_t seq;
    uint32_t thread, pad;
} launch_rec;

typedef struct dev_rec { /* a device event with a correlation */
    int64_t corr;
    double dur;
    uint64_t seq;
    uint32_t kname, pad;
} dev_rec;

typedef struct match_rec { /* a device event with its launch */
    double ts;             /* the launch's */
    uint64_t seq;
    double dur;
    uint32_t thread, kname;
} match_rec;

typedef struct attr_rec { /* a device event with its operator */
    uint64_t op_seq, seq;
    double dur;
    uint32_t kname, group;
} attr_rec;

#define CMP(x, y) \
    if ((x) != (y)) return (x) < (y) ? -1 : 1
#define CMP_SEQ(x, y) return (x) < (y) ? -1 : (x) > (y)

/* innermost-key order within a thread: ts ascending, dur descending, file order */
static int op_order(const void *x, const void *y) {
    const op_rec *a = x, *b = y;
    CMP(a->thread, b->thread);
    CMP(a->ts, b->ts);
    CMP(b->dur, a->dur);
    CMP_SEQ(a->seq, b->seq);
}

static int launch_order(const void *x, const void *y) {
    const launch_rec *a = x, *b = y;
    CMP(a->corr, b->corr);
    CMP_SEQ(a->seq, b->seq);
}

static int dev_order(const void *x, const void *y) {
    const dev_rec *a = x, *b = y;
    CMP(a->corr, b->corr);
    CMP_SEQ(a->seq, b->seq);
}

static int match_order(const void *x, const void *y) {
    const match_rec *a = x, *b = y;
    CMP(a->thread, b->thread);
    CMP(a->ts, b->ts);
    CMP_SEQ(a->seq, b->seq);
}

static int attr_order(const void *x, const void *y) {
    const attr_rec *a = x, *b = y;
    CMP(a->op_seq, b->op_seq);
    CMP_SEQ(a->seq, b->seq);
}

typedef struct scan {
    kn_agg *a;
    xsort ops, launches, devs;
    opdb_hindex tix;          /* threads "pid\x1ftid" of this file */
    char **threads;
    size_t nthreads, capthreads;
    char *last_pid, *last_tid; /* the previous event's thread: most events repeat it */
    uint32_t last_thread;
    opdb_strbuf key;
    unsigned long long events, cpu_ops, devices, no_corr;
    opdb_err *err;
    int rc;
} scan;

/* kn_read's wanted keys; F_* / A_* index them in the event's fields_by_want / args_by_want */
static const char *const k_fields[] = {"ph", "cat", "name", "pid", "tid", "ts", "dur", NULL};
enum { F_PH, F_CAT, F_NAME, F_PID, F_TID, F_TS, F_DUR };
static const char *const k_args[] = {"correlation", "Input Dims", "Input type", NULL};
enum { A_CORR, A_DIMS, A_TYPES };
#define FIELD(ev, i) ((ev)->fields_by_want[i])
#define ARG(ev, i) ((ev)->args_by_want[i])

enum { CAT_OTHER, CAT_OP, CAT_DEVICE, CAT_RUNTIME };

/* Which list cat is in (kn_cat_is on each), the common spellings matched first at no cost. */
static int cat_class(const char *cat) {
    switch (cat[0]) {
    case 'c':
        if (strcmp(cat, "cpu_op") == 0) return CAT_OP;
        if (strcmp(cat, "cuda_runtime") == 0) return CAT_RUNTIME;
        break;
    case 'k':
        if (strcmp(cat, "kernel") == 0) return CAT_DEVICE;
        break;
    case 'u':
        if (strcmp(cat, "user_annotation") == 0) return CAT_OTHER;
        break;
    default:
        break;
    }
    if (kn_cat_is(cat, kn_op_cats)) return CAT_OP;
    if (kn_cat_is(cat, kn_device_cats)) return CAT_DEVICE;
    if (kn_cat_is(cat, kn_runtime_cats)) return CAT_RUNTIME;
    return CAT_OTHER;
}

static uint32_t scan_thread(scan *S, const opdb_trace_event *ev) {
    const char *pid = kn_text_of(FIELD(ev, F_PID)), *tid = kn_text_of(FIELD(ev, F_TID));
    if (S->last_pid && strcmp(pid, S->last_pid) == 0 && strcmp(tid, S->last_tid) == 0) return S->last_thread;
    opdb_sb_clear(&S->key);
    opdb_sb_adds(&S->key, pid);
    opdb_sb_addc(&S->key, '\x1f');
    opdb_sb_adds(&S->key, tid);
    uint64_t h = opdb_hash_bytes(S->key.p, S->key.n, 7);
    uint32_t k, found = UINT32_MAX;
    for (opdb_hprobe p = opdb_hindex_probe(&S->tix, h); found == UINT32_MAX && opdb_hprobe_next(&p, &k);)
        if (strcmp(S->threads[k], S->key.p) == 0) found = k;
    if (found == UINT32_MAX) {
        OPDB_ALLOC_GROW(S->threads, S->nthreads + 1, S->capthreads);
        S->threads[S->nthreads] = opdb_xstrdup(S->key.p);
        opdb_hindex_add(&S->tix, h, (uint32_t)S->nthreads);
        found = (uint32_t)S->nthreads++;
    }
    free(S->last_pid);
    free(S->last_tid);
    S->last_pid = opdb_xstrdup(pid);
    S->last_tid = opdb_xstrdup(tid);
    S->last_thread = found;
    return found;
}

static int scan_event(const opdb_trace_event *ev, void *ctx) {
    scan *S = ctx;
    S->events++;
    const char *ph = kn_text_of(FIELD(ev, F_PH));
    if (ph[0] != 'X' || ph[1]) return 0;
    int cls = cat_class(kn_text_of(FIELD(ev, F_CAT)));
    if (cls == CAT_OP) {
        S->cpu_ops++;
        op_rec r;
        memset(&r, 0, sizeof r);
        if (!kn_op_interval(S->a, FIELD(ev, F_TS), FIELD(ev, F_DUR), &r.ts, &r.dur)) return 0;
        r.seq = ev->index;
        r.thread = scan_thread(S, ev);
        const opdb_trace_field *dims = ARG(ev, A_DIMS);
        r.group = kn_group_of(S->a, &S->key, kn_text_of(FIELD(ev, F_NAME)), dims ? dims->text : "",
                              kn_text_of(ARG(ev, A_TYPES)));
        S->rc = xs_push(&S->ops, &r, S->err);
        return S->rc;
    }
    int64_t corr = 0;
    bool has_corr = kn_int_of(ARG(ev, A_CORR), &corr);
    if (cls == CAT_DEVICE) {
        S->a->device_events++;
        S->devices++;
        if (!has_corr) {
            S->no_corr++;
            return 0;
        }
        dev_rec r;
        memset(&r, 0, sizeof r);
        r.corr = corr;
        if (!kn_dur_of(S->a, FIELD(ev, F_DUR), &r.dur)) return 0;
        r.seq = ev->index;
        r.kname = kn_kname(S->a, kn_text_of(FIELD(ev, F_NAME)));
        S->rc = xs_push(&S->devs, &r, S->err);
        return S->rc;
    }
    if (has_corr && cls == CAT_RUNTIME) {
        launch_rec r;
        memset(&r, 0, sizeof r);
        if (!kn_num_of(FIELD(ev, F_TS), &r.ts)) return 0;
        r.corr = corr;
        r.seq = ev->index;
        r.thread = scan_thread(S, ev);
        S->rc = xs_push(&S->launches, &r, S->err);
        return S->rc;
    }
    return 0;
}

/* Devices and launches, both by correlation: the first launch of a correlation wins. */
static int join_launches(scan *S, xsort *matched, opdb_err *err) {
    int rc = 0;
    if (xs_finish(&S->launches, err) != 0 || xs_finish(&S->devs, err) != 0) return -1;
    launch_rec l;
    bool have_l = false;
    const launch_rec *lp = xs_next(&S->launches, &rc, err);
    if (lp) {
        l = *lp;
        have_l = true;
    }
    for (const dev_rec *d; rc == 0 && (d = xs_next(&S->devs, &rc, err));) {
        while (have_l && l.corr < d->corr) {
            lp = xs_next(&S->launches, &rc, err);
            have_l = lp != NULL;
            if (lp) l = *lp;
        }
        if (!have_l || l.corr != d->corr) {
            S->a->no_launch++;
            continue;
        }
        match_rec m;
        memset(&m, 0, sizeof m);
        m.ts = l.ts;
        m.seq = d->seq;
        m.dur = d->dur;
        m.thread = l.thread;
        m.kname = d->kname;
        if (xs_push(matched, &m, err) != 0) return -1;
    }
    return rc;
}

/* Launches and operators of each thread in time order; the stack holds the operators that may
 * still contain a later launch, in push order = innermost-key order. */
static int sweep(scan *S, xsort *matched, xsort *attributed, opdb_err *err) {
    int rc = 0;
    if (xs_finish(&S->ops, err) != 0 || xs_finish(matched, err) != 0) return -1;
    op_rec *stack = NULL, op;
    size_t n = 0, cap = 0;
    uint32_t thread = UINT32_MAX;
    const op_rec *opp = xs_next(&S->ops, &rc, err);
    bool have_op = opp != NULL;
    if (opp) op = *opp;
    for (const match_rec *m; rc == 0 && (m = xs_next(matched, &rc, err));) {
        if (m->thread != thread) {
            thread = m->thread;
            n = 0;
        }
        while (rc == 0 && have_op && (op.thread < thread || (op.thread == thread && op.ts <= m->ts))) {
            if (op.thread == thread) {
                while (n && stack[n - 1].ts + stack[n - 1].dur < op.ts) n--;
                OPDB_ALLOC_GROW(stack, n + 1, cap);
                stack[n++] = op;
            }
            opp = xs_next(&S->ops, &rc, err);
            have_op = opp != NULL;
            if (opp) op = *opp;
        }
        while (n && stack[n - 1].ts + stack[n - 1].dur < m->ts) n--;
        if (!n) {
            S->a->no_operator++;
            continue;
        }
        attr_rec r;
        memset(&r, 0, sizeof r);
        r.op_seq = stack[n - 1].seq;
        r.seq = m->seq;
        r.dur = m->dur;
        r.kname = m->kname;
        r.group = stack[n - 1].group;
        if (xs_push(attributed, &r, err) != 0) rc = -1;
    }
    free(stack);
    return rc;
}

/* Device events by operator, in file order: one call per operator event. */
static int take_calls(kn_agg *a, xsort *attributed, opdb_err *err) {
    if (xs_finish(attributed, err) != 0) return -1;
    int rc = 0;
    bool have = false;
    uint64_t op_seq = 0;
    uint32_t group = 0;
    double dur = 0.0;
    for (const attr_rec *r; rc == 0 && (r = xs_next(attributed, &rc, err));) {
        if (!have || r->op_seq != op_seq) {
            if (have && kn_add_call(a, group, op_seq, dur, err) != 0) return -1;
            have = true;
            op_seq = r->op_seq;
            group = r->group;
            dur = 0.0;
        }
        dur += r->dur;
        kn_add_kname(&a->g[r->group], r->kname);
    }
    if (rc == 0 && have) rc = kn_add_call(a, group, op_seq, dur, err);
    return rc;
}

int kn_read(kn_agg *a, const char *path, char *why, size_t cap, opdb_err *err) {
    if (a->read_simple) return kn_read_simple(a, path, why, cap, err);
    scan S;
    memset(&S, 0, sizeof S);
    S.a = a;
    S.err = err;
    opdb_sb_init(&S.key);
    xs_init(&S.ops, sizeof(op_rec), a->sort_budget, op_order);
    xs_init(&S.launches, sizeof(launch_rec), a->sort_budget, launch_order);
    xs_init(&S.devs, sizeof(dev_rec), a->sort_budget, dev_order);
    xsort matched, attributed;
    xs_init(&matched, sizeof(match_rec), a->sort_budget, match_order);
    xs_init(&attributed, sizeof(attr_rec), a->sort_budget, attr_order);
    unsigned long long before = a->device_events;
    int rc = opdb_trace_read_serial(path, k_fields, k_args, scan_event, &S, err);
    if (S.rc != 0) rc = -1; /* a temp file could not be written: err says why */
    else rc = kn_verdict(a, rc, path, S.events, S.cpu_ops, before, why, cap, err);
    if (rc == 0) {
        a->no_launch += S.no_corr;
        rc = join_launches(&S, &matched, err);
    }
    xs_free(&S.launches);
    xs_free(&S.devs);
    if (rc == 0) rc = sweep(&S, &matched, &attributed, err);
    xs_free(&S.ops);
    xs_free(&matched);
    if (rc == 0) rc = take_calls(a, &attributed, err);
    xs_free(&attributed);
    a->files++;
    for (size_t i = 0; i < S.nthreads; i++) free(S.threads[i]);
    free(S.threads);
    free(S.last_pid);
    free(S.last_tid);
    opdb_hindex_free(&S.tix);
    opdb_sb_free(&S.key);
    return rc;
}

/* ---- output */

/* The Ascend-style cells of a group, rendered once when it is written. */
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


void kn_agg_init(kn_agg *a) {
    memset(a, 0, sizeof *a);
    opdb_arena_init(&a->arena, 64 * 1024);
    a->sort_budget = KN_SORT_BUDGET;
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
    if (a->medians) xs_free(a->medians);
    free(a->medians);
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
    double v[KN_NNUM] = {g->sum / count, g->median, opdb_pstd_naive(g->sum, g->sumsq, count),
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

int kn_write_tables(kn_agg *a, const char *outdir, tbl_writer *w, opdb_parse_result *res, opdb_err *err) {
    if (kn_finish(a, err) != 0) return -1;
    size_t ng = 0;
    size_t *order = opdb_xmalloc((a->n + 1) * sizeof *order);
    for (size_t i = 0; i < a->n; i++)
        if (a->g[i].count) {
            order[ng++] = i;
            if (!a->g[i].shapes_cell) render_cells(&a->g[i]);
        }
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
        /* the same path policy as kernel_details tables, against every name
         * this parse has chosen so far */
        const char **used = opdb_xmalloc((res->ntables + 1) * sizeof *used);
        for (size_t i = 0; i < res->ntables; i++) used[i] = res->tables[i].file;
        char *fname = opdb_table_file_name(used, res->ntables, type, strlen(type));
        free(used);
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
        char *path = opdb_path_in_dir(outdir, fname, err);
        rc = path ? tbl_emit(w, path, out.p, out.n, err) : -1;
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
