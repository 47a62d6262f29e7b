/* See update_db.h.  Rows keep the reference's dict semantics (dict_row.h):
 * columns are decided per file (get_cols), values outside them are dropped
 * on write, and a file is rewritten only when its rows really changed. */
#include "update/update_db.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/ingest.h"
#include "opdb/pystr.h"
#include "opdb/signature.h"
#include "update/dict_row.h"

#define MB_DUR "Average Duration(us)"
#define LEGACY_MB_DUR "MicroBench Duration(us)"
#define PROF_AVG_DUR "Profiling Average Duration(us)"

static const char *const k_base[8] = {"OP State", "Accelerator Core", "Input Shapes", "Input Data Types",
                                      "Input Formats", "Output Shapes", "Output Data Types", "Output Formats"};

void sv_push(strvec *s, char *owned) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->v = opdb_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = owned;
}

void sv_free(strvec *s) {
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

bool valid_duration(const char *avg, const char *prof_avg) {
    double a = opdb_py_float_or_zero(avg, strlen(avg)), p = opdb_py_float_or_zero(prof_avg, strlen(prof_avg));
    return a > 0 || p > 0;
}

/* ---- column layout (get_cols) */

static void canonical_columns(strvec *cols) {
    for (int b = 0; b < 8; b++) sv_push(cols, opdb_xstrdup(k_base[b]));
    sv_push(cols, opdb_xstrdup(MB_DUR));
    sv_push(cols, opdb_xstrdup("Profiling Average Duration(us)"));
    sv_push(cols, opdb_xstrdup("Profiling Median Duration(us)"));
    sv_push(cols, opdb_xstrdup("Profiling Std Duration(us)"));
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        char buf[96];
        snprintf(buf, sizeof buf, "MicroBench %s", opdb_metric_names[m]);
        sv_push(cols, opdb_xstrdup(buf));
        snprintf(buf, sizeof buf, "Profiling Average %s", opdb_metric_names[m]);
        sv_push(cols, opdb_xstrdup(buf));
    }
}

static long sv_index(const strvec *s, const char *x) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0) return (long)i;
    return -1;
}

static void sv_insert(strvec *s, size_t at, char *owned) {
    sv_push(s, owned);
    memmove(&s->v[at + 1], &s->v[at], (s->n - 1 - at) * sizeof *s->v);
    s->v[at] = owned;
}

static void existing_columns(const strvec *fields, strvec *cols) {
    for (size_t i = 0; i < fields->n; i++)
        if (strcmp(fields->v[i], "MicroBench Task Duration(us)") && strcmp(fields->v[i], "MicroBench Kernel Duration(us)"))
            sv_push(cols, opdb_xstrdup(fields->v[i]));
    long legacy = sv_index(cols, LEGACY_MB_DUR);
    if (legacy >= 0 && sv_index(cols, MB_DUR) < 0) {
        free(cols->v[legacy]);
        cols->v[legacy] = opdb_xstrdup(MB_DUR);
    }
    if (sv_index(cols, MB_DUR) < 0) {
        strvec c2 = {0};
        for (int b = 0; b < 8; b++) sv_push(&c2, opdb_xstrdup(k_base[b]));
        sv_push(&c2, opdb_xstrdup(MB_DUR));
        for (size_t i = 0; i < cols->n; i++) {
            bool base = false;
            for (int b = 0; b < 8; b++) base |= strcmp(cols->v[i], k_base[b]) == 0;
            if (!base) sv_push(&c2, opdb_xstrdup(cols->v[i]));
        }
        sv_free(cols);
        *cols = c2;
    }
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        char prof[96], mb[96];
        snprintf(prof, sizeof prof, "Profiling Average %s", opdb_metric_names[m]);
        snprintf(mb, sizeof mb, "MicroBench %s", opdb_metric_names[m]);
        long at = sv_index(cols, prof);
        if (at >= 0 && sv_index(cols, mb) < 0) sv_insert(cols, (size_t)at, opdb_xstrdup(mb));
    }
}

/* ---- loading */

typedef struct csvfile {
    keyspace ks;
    strvec fields;          /* header as read (None when the file had no header) */
    bool has_header;
    drow *rows;
    size_t n, cap;
} csvfile;

static void push_row(csvfile *f, drow r) {
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 64;
        f->rows = opdb_xrealloc(f->rows, f->cap * sizeof *f->rows);
    }
    f->rows[f->n++] = r;
}

static int load_csv(const char *path, csvfile *f, opdb_err *err) {
    opdb_csv_file c;
    if (opdb_csv_file_open(&c, path, 4096, err)) return -1;
    const opdb_field *fl = c.f;
    int rc = opdb_csv_file_next(&c, true);
    int *colkey = NULL;
    int ncols = 0;
    if (rc > 0) {
        f->has_header = true;
        ncols = c.nf;
        ks_init(&f->ks, c.nf + 96);
        colkey = opdb_xmalloc(((size_t)c.nf + 1) * sizeof *colkey);
        for (int i = 0; i < c.nf; i++) {
            char *name = opdb_xmalloc(fl[i].n + 1);
            memcpy(name, fl[i].p, fl[i].n);
            name[fl[i].n] = '\0';
            sv_push(&f->fields, name);
            colkey[i] = ks_add(&f->ks, name);
        }
        while ((rc = opdb_csv_file_next(&c, false)) > 0) {
            drow r = drow_new(&f->ks);
            /* DictReader: every header key present (None for a short row); last duplicate wins */
            for (int i = 0; i < ncols; i++) drow_set_n(&r, &f->ks, colkey[i], i < c.nf ? fl[i].p : "", i < c.nf ? fl[i].n : 0);
            push_row(f, r);
        }
    } else {
        ks_init(&f->ks, 96);
    }
    if (rc < 0) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    free(colkey);
    opdb_csv_file_close(&c);
    return rc < 0 ? -1 : 0;
}

static void csvfile_free(csvfile *f) {
    free(f->rows);
    sv_free(&f->fields);
    ks_free(&f->ks);
}

/* ---- signatures of dict rows and aggregated rows */

static void sig_of_drow(const drow *r, keyspace *ks, const char *op, opdb_strbuf *out, bool display) {
    static const char *const names[6] = {"Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
                                         "Output Data Types", "EP Size"};
    if (ks->sig_n != ks->n) {
        for (int i = 0; i < 6; i++) ks->sig_id[i] = ks_find(ks, names[i]);
        ks->sig_n = ks->n;
    }
    const int *id = ks->sig_id;
    opdb_sig_cells c = {opdb_span_cstr(drow_at(r, id[0])), opdb_span_cstr(drow_at(r, id[1])),
                        opdb_span_cstr(drow_at(r, id[2])), opdb_span_cstr(drow_at(r, id[3])),
                        opdb_span_cstr(drow_at(r, id[4])), opdb_span_cstr(drow_at(r, id[5]))};
    if (display)
        opdb_signature_display(&c, out);
    else
        opdb_signature(&c, op, out);
}

static void sig_of_agg(const agg_row *r, const char *op, opdb_strbuf *out, bool display) {
    opdb_sig_cells c = {opdb_span_cstr(agg_get(r, "Input Shapes")), opdb_span_cstr(agg_get(r, "Input Data Types")),
                        opdb_span_cstr(agg_get(r, "Input Formats")), opdb_span_cstr(agg_get(r, "Output Shapes")),
                        opdb_span_cstr(agg_get(r, "Output Data Types")), opdb_span_cstr(agg_get(r, "EP Size"))};
    if (display)
        opdb_signature_display(&c, out);
    else
        opdb_signature(&c, op, out);
}

/* ---- signature index: signature -> row indexes (first = the match target) */

typedef struct sig_entry {
    char *sig;
    uint64_t hash;
    size_t *rows;
    size_t n, cap;
} sig_entry;

typedef struct sig_index {
    sig_entry *e;           /* in first-seen order */
    size_t n, cap;
    uint32_t *slot;         /* open addressing: entry index + 1 */
    size_t nslots;
} sig_index;

static sig_entry *si_find(sig_index *si, const char *sig) {
    if (!si->nslots) return NULL;
    uint64_t h = opdb_hash_bytes(sig, strlen(sig), 5);
    for (size_t j = h & (si->nslots - 1); si->slot[j]; j = (j + 1) & (si->nslots - 1)) {
        sig_entry *e = &si->e[si->slot[j] - 1];
        if (e->hash == h && strcmp(e->sig, sig) == 0) return e;
    }
    return NULL;
}

static void si_place(sig_index *si, size_t idx) {
    size_t j = si->e[idx].hash & (si->nslots - 1);
    while (si->slot[j]) j = (j + 1) & (si->nslots - 1);
    si->slot[j] = (uint32_t)(idx + 1);
}

static sig_entry *si_add(sig_index *si, const char *sig, size_t row) {
    sig_entry *e = si_find(si, sig);
    if (!e) {
        if (si->n == si->cap) {
            si->cap = si->cap ? si->cap * 2 : 64;
            si->e = opdb_xrealloc(si->e, si->cap * sizeof *si->e);
        }
        if ((si->n + 1) * 2 > si->nslots) {
            free(si->slot);
            si->nslots = si->nslots ? si->nslots * 2 : 128;
            si->slot = opdb_xcalloc(si->nslots, sizeof *si->slot);
            for (size_t i = 0; i < si->n; i++) si_place(si, i);
        }
        e = &si->e[si->n];
        memset(e, 0, sizeof *e);
        e->sig = opdb_xstrdup(sig);
        e->hash = opdb_hash_bytes(sig, strlen(sig), 5);
        si_place(si, si->n++);
    }
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 2;
        e->rows = opdb_xrealloc(e->rows, e->cap * sizeof *e->rows);
    }
    e->rows[e->n++] = row;
    return e;
}

static void si_free(sig_index *si) {
    for (size_t i = 0; i < si->n; i++) {
        free(si->e[i].sig);
        free(si->e[i].rows);
    }
    free(si->e);
    free(si->slot);
}

static int cmp_dup(const void *a, const void *b) {
    const dup_sig *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->sig, y->sig);
}

/* ---- one CSV */

typedef struct merge_ctx {
    const opdb_update_opts *o;
    csvfile *f;
    sig_index *si;
    update_result *res;
    opdb_strbuf sig, disp;
} merge_ctx;

static void add_gap(merge_ctx *m, const drow *t) {
    const char *mbs = drow_get(t, &m->f->ks, MB_DUR), *ps = drow_get(t, &m->f->ks, PROF_AVG_DUR);
    double mb = opdb_py_float_or_zero(mbs, strlen(mbs)), prof = opdb_py_float_or_zero(ps, strlen(ps));
    if (!(mb > 0 && prof > 0)) return;
    update_result *r = m->res;
    if (r->ngaps == r->capgaps) {
        r->capgaps = r->capgaps ? r->capgaps * 2 : 16;
        r->gaps = opdb_xrealloc(r->gaps, r->capgaps * sizeof *r->gaps);
    }
    sig_of_drow(t, &m->f->ks, r->stem, &m->disp, true);
    gap *g = &r->gaps[r->ngaps++];
    g->op = opdb_xstrdup(r->stem);
    g->csv_name = opdb_xstrdup(r->name);
    g->sig = opdb_xstrdup(m->disp.p);
    g->mb = mb;
    g->prof = prof;
    g->diff = mb - prof < 0 ? prof - mb : mb - prof;
    g->ratio = mb / prof;
}

/* Copies the measured values of `nr` into target row `t`; returns whether
 * Average Duration(us) changed. */
static bool apply(merge_ctx *m, drow *t, const agg_row *nr) {
    keyspace *ks = &m->f->ks;
    const char *old = drow_get(t, ks, MB_DUR);
    opdb_span so = opdb_py_strip(opdb_span_cstr(old));
    const char *nv = agg_get(nr, MB_DUR);
    opdb_span sn = opdb_py_strip(opdb_span_cstr(nv));
    bool changed = !opdb_span_eq(so, sn);
    drow_set(t, ks, MB_DUR, nv);
    for (int i = 0; i < nr->n; i++)
        if (strncmp(nr->key[i], "MicroBench ", 11) == 0) drow_set(t, ks, nr->key[i], nr->val[i]);
    return changed;
}

static void merge_row(merge_ctx *m, const agg_row *nr, bool allow_add) {
    const opdb_update_opts *o = m->o;
    update_result *res = m->res;
    csvfile *f = m->f;
    if (!o->quirks && nr->no_numeric_sample) {
        /* Nothing measured (every sample non-numeric): keep old values, report it. */
        sig_of_agg(nr, res->stem, &m->disp, true);
        sv_push(&res->no_sample, opdb_xstrdup(m->disp.p));
        return;
    }
    sig_of_agg(nr, res->stem, &m->sig, false);
    sig_entry *e = si_find(m->si, m->sig.p);
    if (!e) {
        sig_of_agg(nr, res->stem, &m->disp, true);
        if (allow_add) sv_push(&res->missing, opdb_xstrdup(m->disp.p));
        if (!allow_add)
            fprintf(o->out, "[WARN] match-only profiling row did not match %s: %s\n", res->name, m->disp.p);
        if (allow_add && !o->missing_only) {
            drow r = drow_new(&f->ks);
            for (int i = 0; i < nr->n; i++) drow_set(&r, &f->ks, nr->key[i], nr->val[i]);
            push_row(f, r);
            si_add(m->si, m->sig.p, f->n - 1);
            res->added++;
        }
        return;
    }
    /* The reference updates the first duplicate only; opdb updates them all. */
    size_t ntargets = o->quirks ? 1 : e->n;
    for (size_t k = 0; k < ntargets; k++) {
        /* counted per database row, so "Rows updated" is rows really changed */
        drow *t = &f->rows[e->rows[k]];
        bool can_update = !o->missing_only ||
                          !valid_duration(drow_get(t, &f->ks, MB_DUR), drow_get(t, &f->ks, PROF_AVG_DUR));
        if (!can_update) {
            if (!allow_add) continue;
            res->unchanged++;
        } else if (apply(m, t, nr)) {
            res->updated++;
        }
        add_gap(m, t);
    }
}

/* The rows normalised to the column list ("" for absent keys), as CSV. */
static void write_rows(opdb_strbuf *out, const strvec *cols, const csvfile *f, const bool *keep) {
    opdb_span *cells = opdb_xmalloc((cols->n + 1) * sizeof *cells);
    int *id = opdb_xmalloc((cols->n + 1) * sizeof *id);
    for (size_t i = 0; i < cols->n; i++) {
        cells[i] = opdb_span_cstr(cols->v[i]);
        id[i] = ks_find(&f->ks, cols->v[i]);
    }
    opdb_csv_write_record(out, cells, cols->n);
    for (size_t r = 0; r < f->n; r++) {
        if (!keep[r]) continue;
        for (size_t i = 0; i < cols->n; i++) cells[i] = opdb_span_cstr(drow_at(&f->rows[r], id[i]));
        opdb_csv_write_record(out, cells, cols->n);
    }
    free(id);
    free(cells);
}

static int update_csv(const opdb_update_opts *o, const char *path, const agg_row *const *merge, size_t nmerge,
                      const agg_row *const *match, size_t nmatch, update_result *res, opdb_err *err) {
    memset(res, 0, sizeof *res);
    res->path = opdb_xstrdup(path);
    res->name = opdb_xstrdup(opdb_path_basename(path));
    size_t nl = strlen(res->name);
    res->stem = opdb_xstrdup(res->name);
    if (nl > 4 && strcmp(res->name + nl - 4, ".csv") == 0) res->stem[nl - 4] = '\0';

    csvfile f;
    memset(&f, 0, sizeof f);
    strvec cols = {0};
    bool exists = opdb_path_exists(path);
    if (exists) {
        if (load_csv(path, &f, err)) {
            csvfile_free(&f);
            return -1;
        }
        existing_columns(&f.fields, &cols);
    } else {
        ks_init(&f.ks, 160);
        canonical_columns(&cols);
        for (size_t i = 0; i < nmerge; i++)
            for (int k = 0; k < merge[i]->n; k++)
                if (sv_index(&cols, merge[i]->key[k]) < 0) sv_push(&cols, opdb_xstrdup(merge[i]->key[k]));
    }
    for (size_t i = 0; i < cols.n; i++) ks_add(&f.ks, cols.v[i]);

    char stem_norm[256];
    opdb_normalize_op_name(res->stem, strlen(res->stem), stem_norm, sizeof stem_norm);
    if (strcmp(stem_norm, "DispatchFFNCombine") == 0 && sv_index(&cols, "EP Size") < 0) {
        /* Legacy DFC file without EP Size: borrow the single incoming value. */
        strvec eps = {0};
        for (size_t i = 0; i < nmerge + nmatch; i++) {
            const agg_row *r = i < nmerge ? merge[i] : match[i - nmerge];
            opdb_span e = opdb_py_strip(opdb_span_cstr(agg_get(r, "EP Size")));
            char buf[64];
            snprintf(buf, sizeof buf, "%.*s", (int)e.n, e.p);
            if (e.n && sv_index(&eps, buf) < 0) sv_push(&eps, opdb_xstrdup(buf));
        }
        if (eps.n == 1) {
            sv_push(&cols, opdb_xstrdup("EP Size"));
            for (size_t r = 0; r < f.n; r++) drow_set(&f.rows[r], &f.ks, "EP Size", eps.v[0]);
            fprintf(o->out, "[WARN] %s has no EP Size column; using incoming EP Size=%s for legacy row matching.\n",
                    res->name, eps.v[0]);
        }
        sv_free(&eps);
    }

    merge_ctx m = {o, &f, NULL, res, {0}, {0}};
    opdb_sb_init(&m.sig);
    opdb_sb_init(&m.disp);
    sig_index si = {0};
    m.si = &si;
    for (size_t r = 0; r < f.n; r++) {
        sig_of_drow(&f.rows[r], &f.ks, res->stem, &m.sig, false);
        si_add(&si, m.sig.p, r);
    }
    for (size_t i = 0; i < si.n; i++) {
        if (si.e[i].n < 2) continue;
        res->dups = opdb_xrealloc(res->dups, (res->ndups + 1) * sizeof *res->dups);
        sig_of_drow(&f.rows[si.e[i].rows[0]], &f.ks, res->stem, &m.disp, true);
        res->dups[res->ndups].sig = opdb_xstrdup(m.disp.p);
        res->dups[res->ndups++].count = si.e[i].n;
    }
    if (res->ndups > 1) qsort(res->dups, res->ndups, sizeof *res->dups, cmp_dup);
    for (size_t r = 0; r < f.n; r++)
        if (drow_has(&f.rows[r], &f.ks, LEGACY_MB_DUR) && !drow_has(&f.rows[r], &f.ks, MB_DUR))
            drow_set(&f.rows[r], &f.ks, MB_DUR, drow_get(&f.rows[r], &f.ks, LEGACY_MB_DUR));

    /* Snapshot for change detection, after the legacy copy and EP Size fill. */
    size_t norig = f.n;
    opdb_strbuf before;
    opdb_sb_init(&before);
    bool *keep = opdb_xmalloc((f.n + nmerge + 1) * sizeof *keep);
    for (size_t r = 0; r < f.n; r++) keep[r] = true;
    write_rows(&before, &cols, &f, keep);

    for (size_t i = 0; i < nmerge; i++) merge_row(&m, merge[i], true);
    for (size_t i = 0; i < nmatch; i++) merge_row(&m, match[i], false);

    keep = opdb_xrealloc(keep, (f.n + 1) * sizeof *keep);
    for (size_t r = 0; r < f.n; r++) {
        keep[r] = true;
        if (o->prune && !valid_duration(drow_get(&f.rows[r], &f.ks, MB_DUR), drow_get(&f.rows[r], &f.ks, PROF_AVG_DUR))) {
            keep[r] = false;
            sig_of_drow(&f.rows[r], &f.ks, res->stem, &m.disp, true);
            sv_push(&res->deleted, opdb_xstrdup(m.disp.p));
        }
    }
    opdb_strbuf after;
    opdb_sb_init(&after);
    write_rows(&after, &cols, &f, keep);
    int rc = 0;
    if (!exists || after.n != before.n || memcmp(after.p, before.p, after.n) != 0) {
        if (!exists) {
            char *dir = opdb_path_parent(path);
            rc = opdb_mkdirs(dir, err);
            free(dir);
        }
        if (rc == 0) rc = opdb_atomic_write(path, after.p, after.n, err);
    }
    (void)norig;
    free(keep);
    opdb_sb_free(&before);
    opdb_sb_free(&after);
    opdb_sb_free(&m.sig);
    opdb_sb_free(&m.disp);
    si_free(&si);
    sv_free(&cols);
    csvfile_free(&f);
    return rc;
}

/* ---- which CSVs, and the whole database */

const char *const opdb_replay_ops[] = {
    "Add", "AddRmsNormBias", "ArgMaxV2", "AscendQuantV2", "BatchMatMulV2", "DispatchFFNCombine", "DynamicQuant",
    "FusedInferAttentionScore", "GatherV2", "GroupedMatmul", "GroupedMatmulSwigluQuant", "Index", "InterleaveRope",
    "KvRmsNormRopeCache", "LightningIndexer", "MaskedFill", "MatMulCommon", "MatMulV2", "MatMulV3", "MoeTokenPermute",
    "MoeTokenUnpermute", "PadV3", "QuantBatchMatmulV3", "RINGMLAPrefillBF16Kernel", "ReshapeAndCacheNdKernel",
    "RmsNorm", "ScatterNdUpdate", "Slice", "SoftmaxV2", "Sort", "SparseFlashAttention", "SwiGlu", "TensorMove",
    "Transpose", "TransposeBatchMatMul", "split_qkv_rmsnorm_rope_kernel",
};
const size_t opdb_nreplay_ops = sizeof opdb_replay_ops / sizeof opdb_replay_ops[0];

bool opdb_is_replay_op(const char *name) {
    for (size_t i = 0; i < opdb_nreplay_ops; i++)
        if (strcmp(opdb_replay_ops[i], name) == 0) return true;
    return false;
}

static const char *const *matmul_aliases(const char *op) {
    static const char *const v2[] = {"MatMulV3", "MatMulCommon", NULL};
    static const char *const v3[] = {"MatMulV2", "MatMulCommon", NULL};
    static const char *const common[] = {"MatMulV2", "MatMulV3", NULL};
    static const char *const none[] = {NULL};
    if (strcmp(op, "MatMulV2") == 0) return v2;
    if (strcmp(op, "MatMulV3") == 0) return v3;
    if (strcmp(op, "MatMulCommon") == 0) return common;
    return none;
}

static const char *g_want_name;
static bool name_is(const char *name, void *ctx) {
    (void)ctx;
    return strcmp(name, g_want_name) == 0;
}

static bool catalogue_csv(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    if (n < 4 || strcmp(name + n - 4, ".csv") != 0) return false;
    char norm[256];
    opdb_normalize_op_name(name, n - 4, norm, sizeof norm);
    return opdb_is_replay_op(norm);
}

int update_target_csvs(const opdb_update_opts *o, strvec *paths, opdb_err *err) {
    memset(paths, 0, sizeof *paths);
    if (o->nops) {
        for (size_t i = 0; i < o->nops; i++) {
            char name[300];
            snprintf(name, sizeof name, "%s.csv", o->ops[i]);
            if (!o->quirks) {
                char *p = opdb_path_join(o->db_dir, name);
                if (opdb_is_file(p)) sv_push(paths, p);
                else free(p);
                continue;
            }
            char **found;
            size_t nf;
            g_want_name = name;
            if (opdb_is_dir(o->db_dir)) {
                if (opdb_find_files(o->db_dir, name_is, NULL, &found, &nf, err)) return -1;
                for (size_t k = 0; k < nf; k++) sv_push(paths, found[k]);
                free(found);
            }
        }
        return 0;
    }
    DIR *d = opendir(o->db_dir);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!catalogue_csv(e->d_name, NULL)) continue;
        char *p = opdb_path_join(o->db_dir, e->d_name);
        if (opdb_is_file(p)) sv_push(paths, p);
        else free(p);
    }
    closedir(d);
    for (size_t i = 1; i < paths->n; i++)
        for (size_t j = i; j > 0 && opdb_path_cmp(paths->v[j - 1], paths->v[j]) > 0; j--) {
            char *t = paths->v[j];
            paths->v[j] = paths->v[j - 1];
            paths->v[j - 1] = t;
        }
    return 0;
}

typedef struct target {
    char *stem, *path;
} target;

static int cmp_target(const void *a, const void *b) { return strcmp(((const target *)a)->stem, ((const target *)b)->stem); }

static bool selected(const opdb_update_opts *o, const char *norm) {
    if (!o->nops) return true;
    for (size_t i = 0; i < o->nops; i++) {
        if (strcmp(o->ops[i], norm) == 0) return true;
        for (const char *const *a = matmul_aliases(o->ops[i]); *a; a++)
            if (strcmp(*a, norm) == 0) return true;
    }
    return false;
}

int update_db(const opdb_update_opts *o, const op_summary_agg *agg, update_run *run, opdb_err *err) {
    memset(run, 0, sizeof *run);
    strvec paths;
    if (update_target_csvs(o, &paths, err)) return -1;
    target *t = NULL;
    size_t nt = 0;
    /* {stem: path}: a later path with the same stem replaces the earlier one */
    for (size_t i = 0; i < paths.n; i++) {
        const char *name = opdb_path_basename(paths.v[i]);
        size_t n = strlen(name) - 4;
        size_t k;
        for (k = 0; k < nt; k++)
            if (strlen(t[k].stem) == n && strncmp(t[k].stem, name, n) == 0) break;
        if (k == nt) {
            t = opdb_xrealloc(t, (nt + 1) * sizeof *t);
            t[nt].stem = opdb_xmalloc(n + 1);
            memcpy(t[nt].stem, name, n);
            t[nt].stem[n] = '\0';
            t[nt].path = NULL;
            nt++;
        }
        free(t[k].path);
        t[k].path = opdb_xstrdup(paths.v[i]);
    }
    bool new_db = nt == 0;
    /* Profiled operators that no CSV takes (directly or as a MatMul alias). */
    for (size_t i = 0; i < agg->n; i++) {
        const agg_op *op = &agg->ops[i];
        if (!selected(o, op->norm)) continue;
        bool taken = new_db;
        for (size_t k = 0; k < nt && !taken; k++) {
            taken = strcmp(t[k].stem, op->op) == 0;
            for (const char *const *a = matmul_aliases(t[k].stem); *a && !taken; a++) taken = strcmp(*a, op->op) == 0;
        }
        if (taken) continue;
        if (!o->quirks && o->add_new_ops) {
            t = opdb_xrealloc(t, (nt + 1) * sizeof *t);
            t[nt].stem = opdb_xstrdup(op->op);
            char name[300];
            snprintf(name, sizeof name, "%s.csv", op->op);
            t[nt].path = opdb_path_join(o->db_dir, name);
            nt++;
        } else {
            sv_push(&run->unmatched_ops, opdb_xstrdup(op->op));
            run->unmatched_rows = opdb_xrealloc(run->unmatched_rows, run->unmatched_ops.n * sizeof *run->unmatched_rows);
            run->unmatched_rows[run->unmatched_ops.n - 1] = op->n;
        }
    }
    if (new_db) {
        for (size_t i = 0; i < agg->n; i++) {
            if (!selected(o, agg->ops[i].norm)) continue;
            t = opdb_xrealloc(t, (nt + 1) * sizeof *t);
            t[nt].stem = opdb_xstrdup(agg->ops[i].op);
            char name[300];
            snprintf(name, sizeof name, "%s.csv", agg->ops[i].op);
            t[nt].path = opdb_path_join(o->db_dir, name);
            nt++;
        }
    }
    if (nt > 1) qsort(t, nt, sizeof *t, cmp_target);
    run->r = opdb_xcalloc(nt + 1, sizeof *run->r);
    int rc = 0;
    for (size_t k = 0; k < nt && rc == 0; k++) {
        /* merge = rows of exactly this operator; match-only = its MatMul aliases'
         * rows. MatMul-family CSVs never gain rows: everything is match-only. */
        const agg_op *own = op_summary_get(agg, t[k].stem);
        if (own && !selected(o, own->norm)) own = NULL;
        size_t cap = (own ? own->n : 0) + 1;
        for (const char *const *a = matmul_aliases(t[k].stem); *a; a++) {
            const agg_op *ao = op_summary_get(agg, *a);
            if (ao && selected(o, ao->norm)) cap += ao->n;
        }
        const agg_row **merge = opdb_xmalloc(cap * sizeof *merge), **match = opdb_xmalloc(cap * sizeof *match);
        size_t nmerge = 0, nmatch = 0;
        char norm[256];
        opdb_normalize_op_name(t[k].stem, strlen(t[k].stem), norm, sizeof norm);
        bool mm = opdb_is_matmul_family(norm);
        for (size_t i = 0; own && i < own->n; i++) {
            if (mm) match[nmatch++] = own->rows[i];
            else merge[nmerge++] = own->rows[i];
        }
        for (const char *const *a = matmul_aliases(t[k].stem); *a; a++) {
            const agg_op *ao = op_summary_get(agg, *a);
            if (ao && selected(o, ao->norm))
                for (size_t i = 0; i < ao->n; i++) match[nmatch++] = ao->rows[i];
        }
        rc = update_csv(o, t[k].path, (const agg_row *const *)merge, nmerge, (const agg_row *const *)match, nmatch,
                        &run->r[run->n], err);
        run->n++;
        free(merge);
        free(match);
    }
    for (size_t k = 0; k < nt; k++) {
        free(t[k].stem);
        free(t[k].path);
    }
    free(t);
    sv_free(&paths);
    return rc;
}

void update_run_free(update_run *run) {
    for (size_t i = 0; i < run->n; i++) {
        update_result *r = &run->r[i];
        free(r->path), free(r->stem), free(r->name);
        sv_free(&r->missing), sv_free(&r->deleted), sv_free(&r->no_sample);
        for (size_t k = 0; k < r->ndups; k++) free(r->dups[k].sig);
        free(r->dups);
        for (size_t k = 0; k < r->ngaps; k++) free(r->gaps[k].op), free(r->gaps[k].csv_name), free(r->gaps[k].sig);
        free(r->gaps);
    }
    free(run->r);
    sv_free(&run->unmatched_ops);
    free(run->unmatched_rows);
    memset(run, 0, sizeof *run);
}
