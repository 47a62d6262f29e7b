/* kn_read_simple (see kineto.h): the simple two-pass reader that
 * kn_read is checked against. Pass 1 pairs each device event with its launch
 * (the first runtime event of the same args.correlation); pass 2 finds, for
 * every launch, the innermost CPU operator on its thread: latest ts, then
 * shortest dur, then last in file order. One record per device event is held
 * between the passes. */
#include <stdlib.h>
#include <string.h>

#include "ingest/kineto.h"

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

static uint32_t thread_of(pass *P, const opdb_trace_event *ev, bool add) {
    opdb_sb_clear(&P->key);
    opdb_sb_adds(&P->key, kn_text_of(opdb_trace_get(ev, "pid")));
    opdb_sb_addc(&P->key, '\x1f');
    opdb_sb_adds(&P->key, kn_text_of(opdb_trace_get(ev, "tid")));
    uint64_t h = opdb_hash_bytes(P->key.p, P->key.n, 7);
    uint32_t k;
    for (opdb_hprobe p = opdb_hindex_probe(&P->tix, h); opdb_hprobe_next(&p, &k);)
        if (strcmp(P->threads[k], P->key.p) == 0) return k;
    if (!add) return UINT32_MAX;
    OPDB_ALLOC_GROW(P->threads, P->nthreads + 1, P->capthreads);
    P->threads[P->nthreads] = opdb_arena_strndup(&P->a->arena, P->key.p, P->key.n);
    opdb_hindex_add(&P->tix, h, (uint32_t)P->nthreads);
    return (uint32_t)P->nthreads++;
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
    if (strcmp(kn_text_of(opdb_trace_get(ev, "ph")), "X") != 0) return 0;
    const char *cat = kn_text_of(opdb_trace_get(ev, "cat"));
    if (kn_cat_is(cat, kn_op_cats)) {
        P->cpu_ops++;
        return 0;
    }
    int64_t corr = 0;
    bool has_corr = kn_int_of(opdb_trace_arg(ev, "correlation"), &corr);
    if (kn_cat_is(cat, kn_device_cats)) {
        double dur;
        if (!kn_dur_of(P->a, opdb_trace_get(ev, "dur"), &dur)) {
            P->a->device_events++;
            return 0;
        }
        OPDB_ALLOC_GROW(P->d, P->nd + 1, P->capd);
        dev_rec *d = &P->d[P->nd++];
        memset(d, 0, sizeof *d);
        d->corr = has_corr ? corr : INT64_MIN;
        d->dur = dur;
        d->seq = ev->index;
        d->op_seq = NO_OP;
        d->kname = kn_kname(P->a, kn_text_of(opdb_trace_get(ev, "name")));
        P->a->device_events++;
    } else if (has_corr && kn_cat_is(cat, kn_runtime_cats)) {
        double ts;
        if (!kn_num_of(opdb_trace_get(ev, "ts"), &ts)) return 0;
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

static int pass2_event(const opdb_trace_event *ev, void *ctx) {
    pass *P = ctx;
    if (strcmp(kn_text_of(opdb_trace_get(ev, "ph")), "X") != 0) return 0;
    if (!kn_cat_is(kn_text_of(opdb_trace_get(ev, "cat")), kn_op_cats)) return 0;
    double ts, dur;
    if (!kn_op_interval(P->a, opdb_trace_get(ev, "ts"), opdb_trace_get(ev, "dur"), &ts, &dur)) return 0;
    uint32_t t = thread_of(P, ev, false);
    if (t == UINT32_MAX) return 0; /* no launch on this thread */
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
            group = kn_group_of(P->a, &P->key, kn_text_of(opdb_trace_get(ev, "name")), dims ? dims->text : "",
                                kn_text_of(opdb_trace_arg(ev, "Input type")));
        }
        d->op_seq = ev->index;
        d->op_ts = ts;
        d->op_dur = dur;
        d->group = group;
    }
    return 0;
}

/* ---- calls into groups */

static int take_calls(pass *P, opdb_err *err) {
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
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double dur = 0.0;
        kn_group *g = &a->g[P->d[i].group];
        for (; j < n && P->d[j].op_seq == P->d[i].op_seq; j++) {
            dur += P->d[j].dur;
            kn_add_kname(g, P->d[j].kname);
        }
        if (kn_add_call(a, P->d[i].group, P->d[i].op_seq, dur, err) != 0) return -1;
        i = j;
    }
    return 0;
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

int kn_read_simple(kn_agg *a, const char *path, char *why, size_t cap, opdb_err *err) {
    static const char *const fields1[] = {"ph", "cat", "name", "pid", "tid", "ts", "dur", NULL};
    static const char *const args1[] = {"correlation", NULL};
    static const char *const args2[] = {"Input Dims", "Input type", NULL};
    pass P;
    memset(&P, 0, sizeof P);
    P.a = a;
    a->simple = true;
    opdb_sb_init(&P.key);
    unsigned long long before = a->device_events;
    int rc = opdb_trace_read_some(path, fields1, args1, pass1_event, &P, err);
    rc = kn_verdict(a, rc, path, P.events, P.cpu_ops, before, why, cap, err);
    if (rc == 0) {
        pair_launches(&P);
        rc = opdb_trace_read_some(path, fields1, args2, pass2_event, &P, err);
    }
    if (rc == 0) rc = take_calls(&P, err);
    a->files++;
    pass_free(&P);
    return rc;
}
