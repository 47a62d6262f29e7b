/* The parts of the Kineto ingest both readers share (see kineto.h): event
 * categories, field conversions, groups and kernel names, calls and their
 * medians, and the verdict on a file without usable events. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/ext_sort.h"
#include "ingest/kineto.h"
#include "opdb/stats.h"


const char *const kn_device_cats[] = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", NULL};
const char *const kn_runtime_cats[] = {"cuda_runtime", "cuda_driver", "runtime", "hip_runtime", NULL};
const char *const kn_op_cats[] = {"cpu_op", "operator", NULL};

bool kn_cat_is(const char *cat, const char *const *names) {
    for (; *names; names++)
        if (strcasecmp(cat, *names) == 0) return true;
    return false;
}

const char *kn_text_of(const opdb_trace_field *f) { return f ? f->text : ""; }

/* "-?D+(.D+)?" with at most 15 digits: m / 10^k, both exact, is the correctly
 * rounded value strtod gives (Clinger's fast path) at a fraction of its cost. */
static bool fast_decimal(const char *s, double *out) {
    static const double p10[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const char *p = s + (*s == '-');
    uint64_t m = 0;
    int digits = 0, frac = 0;
    bool dot = false;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            m = m * 10 + (uint64_t)(*p - '0');
            frac += dot;
            if (++digits > 15) return false;
        } else if (*p == '.' && !dot && digits) {
            dot = true;
        } else {
            return false;
        }
    }
    if (!digits || (dot && !frac)) return false;
    double v = (double)m / p10[frac];
    *out = *s == '-' ? -v : v;
    return true;
}

/* A finite number (a string holding "nan" or "inf" is no time). */
bool kn_num_of(const opdb_trace_field *f, double *out) {
    if (!f || !f->text[0]) return false;
    if (fast_decimal(f->text, out)) return true;
    char *end;
    *out = strtod(f->text, &end);
    return *end == '\0' && isfinite(*out);
}

bool kn_dur_of(kn_agg *a, const opdb_trace_field *f, double *out) {
    *out = 0.0;
    if (!f || !f->text[0]) return true;
    if (kn_num_of(f, out) && *out >= 0) return true;
    a->bad_durations++;
    return false;
}

bool kn_op_interval(kn_agg *a, const opdb_trace_field *ts, const opdb_trace_field *dur, double *t, double *d) {
    *d = 0.0;
    bool ok = kn_num_of(ts, t) && (!dur || !dur->text[0] || (kn_num_of(dur, d) && *d >= 0));
    if (!ok) a->bad_ops++;
    return ok;
}

bool kn_int_of(const opdb_trace_field *f, int64_t *out) {
    if (!f || (f->kind != OPDB_J_INT && f->kind != OPDB_J_STRING) || !f->text[0]) return false;
    char *end;
    *out = strtoll(f->text, &end, 10);
    return *end == '\0';
}

uint32_t kn_kname(kn_agg *a, const char *name) {
    size_t len = strlen(name);
    uint64_t h = opdb_hash_bytes(name, len, 7);
    uint32_t k;
    for (opdb_hprobe p = opdb_hindex_probe(&a->nix, h); opdb_hprobe_next(&p, &k);)
        if (strcmp(a->names[k], name) == 0) return k;
    OPDB_ALLOC_GROW(a->names, a->nnames + 1, a->capnames);
    a->names[a->nnames] = opdb_arena_strndup(&a->arena, name, len);
    opdb_hindex_add(&a->nix, h, (uint32_t)a->nnames);
    return (uint32_t)a->nnames++;
}

uint32_t kn_group_of(kn_agg *a, opdb_strbuf *key, const char *name, const char *dims, const char *types) {
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
    opdb_hindex_add(&a->gix, h, (uint32_t)a->n);
    return (uint32_t)a->n++;
}

void kn_add_kname(kn_group *g, uint32_t k) {
    for (size_t i = 0; i < g->nknames; i++)
        if (g->knames[i] == k) return;
    OPDB_ALLOC_GROW(g->knames, g->nknames + 1, g->capknames);
    g->knames[g->nknames++] = k;
}

typedef struct med_rec { /* one call's time, for its group's median */
    double dur;
    uint32_t group, pad;
} med_rec;

static int by_group_dur(const void *x, const void *y) {
    const med_rec *a = x, *b = y;
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    return (a->dur > b->dur) - (a->dur < b->dur);
}

int kn_add_call(kn_agg *a, uint32_t gi, uint64_t op_seq, double dur, opdb_err *err) {
    kn_group *g = &a->g[gi];
    if (!isfinite(g->sum + dur) || !isfinite(g->sumsq + dur * dur)) { /* the sums would overflow */
        a->bad_durations++;
        return 0;
    }
    if (g->first_call == UINT64_MAX) g->first_call = ((uint64_t)a->files << 40) | op_seq;
    if (g->count == 0 || dur < g->min) g->min = dur;
    if (g->count == 0 || dur > g->max) g->max = dur;
    g->count++;
    g->sum += dur;
    g->sumsq += dur * dur;
    a->calls++;
    if (!g->dims[0]) a->calls_without_dims++;
    if (a->simple) {
        OPDB_ALLOC_GROW(g->durs, g->ndurs + 1, g->capdurs);
        g->durs[g->ndurs++] = dur;
        return 0;
    }
    if (!a->medians) {
        a->medians = opdb_xmalloc(sizeof(xsort));
        xs_init(a->medians, sizeof(med_rec), a->sort_budget, by_group_dur);
    }
    med_rec r;
    memset(&r, 0, sizeof r);
    r.dur = dur;
    r.group = gi;
    return xs_push(a->medians, &r, err);
}

/* Medians: from the kept times (simple path) or one walk over the (group, time) sort. */
int kn_finish(kn_agg *a, opdb_err *err) {
    if (a->finished) return 0;
    a->finished = true;
    if (a->simple) {
        for (size_t i = 0; i < a->n; i++)
            if (a->g[i].ndurs) a->g[i].median = opdb_median(a->g[i].durs, a->g[i].ndurs);
        return 0;
    }
    if (!a->medians) return 0;
    xsort *s = a->medians;
    if (xs_finish(s, err) != 0) return -1;
    int rc = 0;
    uint32_t cur = UINT32_MAX;
    uint64_t i = 0;
    double below = 0.0;
    for (const med_rec *r; (r = xs_next(s, &rc, err));) {
        if (r->group != cur) {
            cur = r->group;
            i = 0;
        }
        uint64_t n = a->g[cur].count, k = n / 2;
        if (i + 1 == k) below = r->dur;
        if (i == k) a->g[cur].median = n % 2 ? r->dur : (below + r->dur) / 2;
        i++;
    }
    return rc;
}

int kn_verdict(kn_agg *a, int rc, const char *path, unsigned long long events, unsigned long long cpu_ops,
               unsigned long long devices_before, char *why, size_t cap, opdb_err *err) {
    if (rc < 0 && events == 0) { /* JSON, but not a trace: say what to do instead of how it broke */
        const char *m = strncmp(err->msg, path, strlen(path)) == 0 ? err->msg + strlen(path) : err->msg;
        while (*m == ':' || *m == ' ') m++;
        snprintf(why, cap, "not a per-kernel profile (%s%s); give opdb parse a kernel_details.csv, an "
                           "op_summary_*.csv, a profiler .db export or a PyTorch profiler trace",
                 strstr(m, "no trace events") ? "JSON without trace events, e.g. communication.json or profiler_info.json: " : "",
                 m);
        char *nl = strchr(why, '\n');
        if (nl) *nl = ' ';
        opdb_err_clear(err);
        return 1;
    }
    if (rc == 0 && a->device_events == devices_before) {
        if (cpu_ops)
            snprintf(why, cap, "a PyTorch profiler trace without device kernels (CPU only): profile with "
                               "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] and record_shapes=True");
        else if (events)
            snprintf(why, cap, "a trace without PyTorch-profiler device kernels or operators (e.g. an Ascend "
                               "trace_view.json or msprof timeline): parse the kernel_details.csv or the .db export "
                               "of the same run");
        else
            snprintf(why, cap, "not a per-kernel profile (JSON without trace events, e.g. communication.json or "
                               "profiler_info.json); give opdb parse a kernel_details.csv, an op_summary_*.csv, a "
                               "profiler .db export or a PyTorch profiler trace");
        return 1;
    }
    return rc;
}
