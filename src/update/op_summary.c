/* See op_summary.h. */
#include "update/op_summary.h"
#include "core/call.h"
#include "update/op_summary_table.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv/batch.h"
#include "db/sig_cells.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/ingest.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/signature.h"


/* ---- aggregation */


/* The op's entry in a (a new one at the end for a new op). */
static agg_op *op_slot(op_summary_agg *a, const char *op) {
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->ops[i].op, op) == 0) return &a->ops[i];
    OPDB_ALLOC_GROW(a->ops, a->n + 1, a->cap);
    agg_op *o = &a->ops[a->n++];
    memset(o, 0, sizeof *o);
    o->op = opdb_xstrdup(op);
    opdb_normalize_op_name(op, strlen(op), o->norm, sizeof o->norm);
    return o;
}

static void put(agg_keyset *l, const char *key, int num) {
    l->key[l->n] = key;
    l->num[l->n++] = (signed char)num;
}

/* The reference's row dict: the 8 descriptive cells, the duration, EP Size
 * (DispatchFFNCombine with --dispatch-ffn-combine-ep-size), the metric means. */
#define MB_NAME(name) OPDB_METRIC_MB_PREFIX name,
static const char *const mb_names[OPDB_NMETRICS] = {OPDB_METRIC_LIST(MB_NAME)}; /* constant: calls may run at once */
#undef MB_NAME

static agg_keyset *make_keyset(opdb_arena *a, bool with_ep, bool with_metrics) {
    agg_keyset *l = opdb_arena_alloc(a, sizeof *l);
    memset(l, 0, sizeof *l);
    for (int b = 0; b < 8; b++) put(l, opdb_base_cols[b], -1);
    put(l, OPDB_COL_MB_DUR, 0);
    if (with_ep) put(l, OPDB_COL_EP_SIZE, -1);
    for (int m = 0; m < OPDB_NMETRICS && with_metrics; m++) put(l, mb_names[m], 1 + m);
    return l;
}

enum { K_DUR = AGG_K_DUR, K_EP = 9 }; /* key positions in a key set */

/* Groups [from, to) into their agg_rows. */
typedef struct fill_job {
    const gtable *t;
    agg_row *rows;
    const agg_keyset *plain, *with_ep;
    const char *ep_text;
    const bool *ep_of_op;
    bool with_metrics;
    size_t from, to;
    bool quirks;
} fill_job;

static void *fill_rows(void *arg) {
    const fill_job *J = arg;
    for (size_t i = J->from; i < J->to; i++) {
        if (i + AHEAD < J->to) __builtin_prefetch(J->t->g[i + AHEAD].key); /* keys lie in the arena, apart */
        const group *g = &J->t->g[i];
        agg_row *r = &J->rows[i];
        bool ep = J->ep_of_op[g->opid];
        r->kset = ep ? J->with_ep : J->plain;
        r->first = g->first;
        r->ep = ep ? J->ep_text : NULL;
        r->no_numeric_sample = !g->have_min;
        r->dur = g->min;
        r->half[0] = J->with_metrics ? g->half[0] : NULL;
        r->half[1] = J->with_metrics ? g->half[1] : NULL;
        r->samples = g->count;
        r->finite_only = !J->quirks;
        r->key_op = g->key->op;
        r->key_sig = g->key->sig;
        r->key_sig_len = g->key->sign;
    }
    return NULL;
}

int op_summary_aggregate(char **files, size_t nfiles, long ep_size, bool quirks, bool with_metrics, op_summary_agg *out,
                         opdb_err *err) {
    memset(out, 0, sizeof *out);
    /* op_summary rows take 300-400 bytes; a group has a few of them */
    size_t bytes = 0;
    for (size_t i = 0; i < nfiles; i++) {
        struct stat st;
        if (stat(files[i], &st) == 0) bytes += (size_t)st.st_size;
    }
    /* the groups' strings take about a quarter of the input; in 8 MiB chunks,
     * each populated whole when it is taken (so the last one wastes little) */
    opdb_arena_init(&out->arena, bytes > ((size_t)256 << 20) ? (size_t)8 << 20 : (size_t)1 << 20);
    /* the group tables and strings are faulted in ahead of the thread that
     * fills them, while the workers leave a CPU idle */
    opdb_prefault_begin();
    gtable t;
    gtable_init(&t, &out->arena, bytes / 1024);
    /* the aggregated rows too: one per group, as many as the table expects */
    out->rows_bytes = (t.cap + 1) * sizeof(agg_row);
    out->rows = opdb_big_alloc(out->rows_bytes);
    int rc = 0;
    for (size_t i = 0; i < nfiles && rc == 0; i++)
        rc = aggregate_file(files[i], &t, quirks, &out->rows_read, &out->rows_rejected, err);
    opdb_prefault_end();
    if (rc == 0 && out->rows_rejected)
        opdb_warn("%llu op_summary row(s) with a non-finite or negative duration or counter: those values skipped",
                  out->rows_rejected);
    if (rc == 0 && !quirks && with_metrics) {
        /* finite samples whose sum passes DBL_MAX: that mean is written empty (agg_span) */
        unsigned long long over = 0;
        for (size_t i = 0; i < t.n; i++)
            for (int h = 0; h < 2; h++)
                for (int j = 0; t.g[i].half[h] && j < (h ? AGG_HALF1_N : AGG_HALF0_N); j++) over += !isfinite(t.g[i].half[h][j]);
        if (over) opdb_warn("%llu counter mean(s) larger than the largest number: left empty", over);
    }
    const agg_keyset *plain = make_keyset(&out->arena, false, with_metrics);
    const agg_keyset *with_ep = make_keyset(&out->arena, true, with_metrics);
    const char *ep_text = "";
    if (ep_size) {
        char buf[32];
        snprintf(buf, sizeof buf, "%ld", ep_size);
        ep_text = opdb_arena_strndup(&out->arena, buf, strlen(buf));
    }
    /* In group order: each op's entry (first seen first) and its rows. */
    long *slot_of_op = opdb_xmalloc((t.nops + 1) * sizeof *slot_of_op); /* op id -> out->ops index */
    bool *ep_of_op = opdb_xcalloc(t.nops + 1, sizeof *ep_of_op);
    for (size_t i = 0; i < t.nops; i++) slot_of_op[i] = -1;
    if ((t.n + 1) * sizeof(agg_row) > out->rows_bytes) { /* more groups than expected */
        out->rows = opdb_big_realloc(out->rows, out->rows_bytes, (t.n + 1) * sizeof(agg_row));
        out->rows_bytes = (t.n + 1) * sizeof(agg_row);
    }
    for (size_t i = 0; i < t.n && rc == 0; i++) {
        uint32_t opid = t.g[i].opid;
        long *so = &slot_of_op[opid];
        if (*so < 0) {
            *so = op_slot(out, t.g[i].key->op) - out->ops;
            ep_of_op[opid] = strcmp(out->ops[*so].norm, "DispatchFFNCombine") == 0 && ep_size;
        }
        agg_op *o = &out->ops[*so];
        OPDB_ALLOC_GROW(o->rows, o->n + 1, o->cap);
        o->rows[o->n++] = &((agg_row *)out->rows)[i];
    }
    /* The rows themselves: independent, two threads for many. */
    if (rc == 0) {
        fill_job jobs[2] = {{&t, out->rows, plain, with_ep, ep_text, ep_of_op, with_metrics, 0, t.n / 2, quirks},
                            {&t, out->rows, plain, with_ep, ep_text, ep_of_op, with_metrics, t.n / 2, t.n, quirks}};
        pthread_t th;
        bool two = t.n > 100000 && opdb_thread_create(&th, fill_rows, &jobs[1]) == 0;
        if (!two) jobs[0].to = t.n;
        opdb_call_workers held;
        opdb_call_hold_workers(&held, &th, &two, 1, NULL, NULL);
        fill_rows(&jobs[0]);
        opdb_call_drop_workers(&held);
        if (two) pthread_join(th, NULL);
        opdb_call_check();
    }
    free(ep_of_op);
    free(slot_of_op);
    os_release_spares(&t);
    gtable_free(&t); /* the rows point into the arena only */
    if (rc) op_summary_free(out);
    return rc;
}

void op_summary_free(op_summary_agg *a) {
    for (size_t i = 0; i < a->n; i++) {
        free(a->ops[i].rows);
        free(a->ops[i].op);
    }
    free(a->ops);
    opdb_big_free(a->rows, a->rows_bytes);
    opdb_arena_free(&a->arena);
    memset(a, 0, sizeof *a);
}

const agg_op *op_summary_get(const op_summary_agg *a, const char *op) {
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->ops[i].op, op) == 0) return &a->ops[i];
    return NULL;
}

/* Cell b (0..8) of a group's first-launch cells. */
static const char *first_cell(const char *first, int b) {
    for (; b > 0; b--) first += strlen(first) + 1;
    return first;
}

const char *agg_str(const agg_row *r, int i) {
    if (i == K_EP) return r->ep ? r->ep : "";
    if (i < 0 || i > 7) return "";
    return first_cell(r->first, i == 1 ? 8 : i); /* Accelerator Core := Task Type, in its position */
}

void agg_key_cells(const agg_row *r, opdb_span out[OPDB_NKEY_COLS]) {
    const char *c = r->first;
    for (int k = 0; k < OPDB_NBASE_COLS; k++) {
        out[k] = opdb_span_cstr(c);
        c += out[k].n + 1;
    }
    out[1] = opdb_span_cstr(c); /* Accelerator Core := Task Type (cell 8), as agg_str */
    out[OPDB_NBASE_COLS] = opdb_span_cstr(r->ep ? r->ep : "");
}

opdb_sig_cells agg_sig_cells(const agg_row *r) {
    opdb_span k[OPDB_NKEY_COLS];
    agg_key_cells(r, k);
    return db_sig_cells_from_row(db_sig_cols_of_key_cols(), k, OPDB_NKEY_COLS);
}

bool agg_has_na_shape(const agg_row *r) {
    opdb_sig_cells c = agg_sig_cells(r);
    return opdb_shape_is_na(c.in_shapes.p, c.in_shapes.n) || opdb_shape_is_na(c.out_shapes.p, c.out_shapes.n);
}

opdb_span agg_span(const agg_row *r, int i, char buf[400]) {
    int num = r->kset->num[i];
    if (num < 0) return opdb_span_cstr(agg_str(r, i));
    if (num == 0 && r->no_numeric_sample) return opdb_span_make("", 0);
    double x = num == 0 ? r->dur : agg_msum(r, num - 1) / (double)r->samples; /* the mean */
    if (x == 0 && !signbit(x)) return opdb_span_make("0.000000", 8); /* most counter means */
    /* default mode: every sample is finite, so only a sum past DBL_MAX is not:
     * no value rather than `inf` (agg_overflowed counts them) */
    if (r->finite_only && !isfinite(x)) return opdb_span_make("", 0);
    size_t n = opdb_py_fmt_fixed(buf, 400, x, 6);
    return opdb_span_make(buf, n);
}

const char *agg_val(const agg_row *r, int i, char buf[400]) { return agg_span(r, i, buf).p; }

const char *agg_get(const agg_row *r, const char *key, char buf[400]) {
    for (int i = 0; i < r->kset->n; i++)
        if (strcmp(r->kset->key[i], key) == 0) return agg_val(r, i, buf);
    return "";
}
