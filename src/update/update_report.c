/* See update_report.h. */
#include "update/update_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"

#define MAX_GAP_DISPLAY 20
#define MAX_EXAMPLES 3

/* ---- Markdown tables: widths in code points, cells left-justified */

typedef struct table {
    size_t ncols, nrows;
    char **cell; /* row-major, (nrows + 1) * ncols, row 0 = headers */
} table;

static size_t cp_len(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static void t_init(table *t, size_t ncols, const char *const *headers) {
    t->ncols = ncols;
    t->nrows = 0;
    t->cell = opdb_xmalloc(ncols * sizeof *t->cell);
    for (size_t i = 0; i < ncols; i++) t->cell[i] = opdb_xstrdup(headers[i]);
}

static void t_row(table *t, char **cells /* owned */) {
    t->nrows++;
    t->cell = opdb_xrealloc(t->cell, (t->nrows + 1) * t->ncols * sizeof *t->cell);
    memcpy(&t->cell[t->nrows * t->ncols], cells, t->ncols * sizeof *cells);
}

static void t_render(table *t, opdb_strbuf *out) {
    if (t->nrows == 0) {
        opdb_sb_adds(out, "_None_");
    } else {
        size_t *w = opdb_xcalloc(t->ncols, sizeof *w);
        for (size_t r = 0; r <= t->nrows; r++)
            for (size_t c = 0; c < t->ncols; c++) {
                size_t l = cp_len(t->cell[r * t->ncols + c]);
                if (l > w[c]) w[c] = l;
            }
        for (size_t r = 0; r <= t->nrows; r++) {
            if (r == 1) {
                opdb_sb_adds(out, "\n|");
                for (size_t c = 0; c < t->ncols; c++) {
                    opdb_sb_addc(out, ' ');
                    for (size_t k = 0; k < w[c]; k++) opdb_sb_addc(out, '-');
                    opdb_sb_adds(out, " |");
                }
            }
            if (r) opdb_sb_addc(out, '\n');
            opdb_sb_addc(out, '|');
            for (size_t c = 0; c < t->ncols; c++) {
                const char *s = t->cell[r * t->ncols + c];
                opdb_sb_addc(out, ' ');
                opdb_sb_adds(out, s);
                for (size_t k = cp_len(s); k < w[c]; k++) opdb_sb_addc(out, ' ');
                opdb_sb_adds(out, " |");
            }
        }
        free(w);
    }
    for (size_t i = 0; i < (t->nrows + 1) * t->ncols; i++) free(t->cell[i]);
    free(t->cell);
}

static char *fmt(const char *f, ...) OPDB_PRINTF(1, 2);
static char *fmt(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0) s = NULL;
    va_end(ap);
    if (!s) s = opdb_xstrdup("");
    return s;
}

static char *join_examples(const opdb_strvec *v) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    for (size_t i = 0; i < v->n && i < MAX_EXAMPLES; i++) {
        if (i) opdb_sb_adds(&sb, "; ");
        opdb_sb_adds(&sb, v->v[i]);
    }
    if (!sb.n) opdb_sb_adds(&sb, "-");
    return sb.p;
}

/* ---- hotspots: ratio outside [0.8, 1.2], by (max(r, 1/r), diff, op) descending, stable */

typedef struct hot {
    const gap *g;
    size_t order;
} hot;

static int cmp_hot(const void *a, const void *b) {
    const hot *x = a, *y = b;
    double kx = x->g->ratio > 1 / x->g->ratio ? x->g->ratio : 1 / x->g->ratio;
    double ky = y->g->ratio > 1 / y->g->ratio ? y->g->ratio : 1 / y->g->ratio;
    if (kx != ky) return kx > ky ? -1 : 1;
    if (x->g->diff != y->g->diff) return x->g->diff > y->g->diff ? -1 : 1;
    int c = strcmp(x->g->op, y->g->op);
    if (c) return -c;
    return x->order < y->order ? -1 : (x->order > y->order);
}

static hot *hotspots(const opdb_update_opts *o, const update_run *run, size_t *n) {
    size_t cap = 0;
    for (size_t i = 0; i < run->n; i++) cap += run->r[i].ngaps;
    hot *h = opdb_xmalloc((cap + 1) * sizeof *h);
    *n = 0;
    for (size_t i = 0; i < run->n; i++)
        for (size_t k = 0; k < run->r[i].ngaps; k++) {
            const gap *g = &run->r[i].gaps[k];
            if (!o->gaps_not_compared && (g->ratio < 0.8 || g->ratio > 1.2)) {
                h[*n].g = g;
                h[*n].order = *n;
                (*n)++;
            }
        }
    qsort(h, *n, sizeof *h, cmp_hot);
    return h;
}

/* Results sorted for a list-valued table: (list length desc, file name asc). */
typedef size_t (*list_len_fn)(const update_result *r);
static size_t len_missing(const update_result *r) { return r->missing.n; }
static size_t len_deleted(const update_result *r) { return r->deleted.n; }
static size_t len_dups(const update_result *r) { return r->ndups; }
static size_t len_nosample(const update_result *r) { return r->no_sample.n; }
static size_t len_added(const update_result *r) { return r->added_rows.n; }
static _Thread_local list_len_fn g_len; /* qsort's key, per thread: two calls may sort at once */
static int cmp_by_len(const void *a, const void *b) {
    const update_result *x = *(const update_result *const *)a, *y = *(const update_result *const *)b;
    size_t lx = g_len(x), ly = g_len(y);
    if (lx != ly) return lx > ly ? -1 : 1;
    return strcmp(x->name, y->name);
}
static int cmp_summary(const void *a, const void *b) {
    const update_result *x = *(const update_result *const *)a, *y = *(const update_result *const *)b;
    if (x->added != y->added) return x->added > y->added ? -1 : 1;
    if (x->updated != y->updated) return x->updated > y->updated ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void list_section(opdb_strbuf *out, const char *title, const update_run *run, list_len_fn len, int kind) {
    static const char *const hdr[] = {"Operator", "Count", "Examples"};
    table t;
    t_init(&t, 3, hdr);
    const update_result **v = opdb_xmalloc((run->n + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < run->n; i++)
        if (len(&run->r[i])) v[n++] = &run->r[i];
    g_len = len;
    qsort(v, n, sizeof *v, cmp_by_len);
    for (size_t i = 0; i < n; i++) {
        char *cells[3];
        cells[0] = opdb_xstrdup(v[i]->stem);
        cells[1] = fmt("%zu", len(v[i]));
        if (kind == 2) {
            opdb_strbuf sb;
            opdb_sb_init(&sb);
            for (size_t k = 0; k < v[i]->ndups && k < MAX_EXAMPLES; k++)
                opdb_sb_addf(&sb, "%s%s (x%zu)", k ? "; " : "", v[i]->dups[k].sig, v[i]->dups[k].count);
            cells[2] = sb.p ? sb.p : opdb_xstrdup("");
        } else {
            cells[2] = join_examples(kind == 0   ? &v[i]->missing
                                     : kind == 1 ? &v[i]->deleted
                                     : kind == 3 ? &v[i]->no_sample
                                                 : &v[i]->added_rows);
        }
        t_row(&t, cells);
    }
    free(v);
    opdb_sb_addf(out, "\n\n## %s\n", title);
    t_render(&t, out);
}

static bool has_status(const opdb_update_opts *o) {
    const opdb_update_status *s = o->status;
    return s && s->nsuccess + s->nfailed + s->nskipped > 0;
}

/* Operator Execution Status (opdb bench's run status; skip reasons are an opdb addition). */
static void status_section(const opdb_update_opts *o, opdb_strbuf *out) {
    if (!has_status(o)) return;
    const opdb_update_status *s = o->status;
    opdb_sb_addf(out, "\n\n## Operator Execution Status\n- Success: %zu\n- Failed: %zu\n- Skipped: %zu", s->nsuccess,
                 s->nfailed, s->nskipped);
    for (size_t i = 0; i < s->nfailed; i++) opdb_sb_addf(out, "\n  - FAILED: %s: %s", s->failed[i].op, s->failed[i].reason);
    if (!o->quirks)
        for (size_t i = 0; i < s->nskipped; i++)
            opdb_sb_addf(out, "\n  - SKIPPED: %s: %s", s->skipped[i].op, s->skipped[i].reason);
}

static void failures_section(const opdb_update_opts *o, opdb_strbuf *out) {
    if (!has_status(o) || !o->status->nfailed) return;
    static const char *const hdr[] = {"Operator", "Reason"};
    table t;
    t_init(&t, 2, hdr);
    for (size_t i = 0; i < o->status->nfailed; i++) {
        char *c2[2] = {opdb_xstrdup(o->status->failed[i].op), opdb_xstrdup(o->status->failed[i].reason)};
        t_row(&t, c2);
    }
    opdb_sb_adds(out, "\n\n## Failures\n> [!WARNING]\n> Operators that failed.\n\n");
    t_render(&t, out);
}

void update_report_text(const opdb_update_opts *o, const update_run *run, opdb_strbuf *out) {
    opdb_sb_clear(out);
    long upd = 0, add = 0, del = 0, unch = 0, dups = 0, miss = 0;
    for (size_t i = 0; i < run->n; i++) {
        upd += run->r[i].updated;
        add += run->r[i].added;
        del += (long)run->r[i].deleted.n;
        unch += run->r[i].unchanged;
        dups += (long)run->r[i].ndups;
        miss += (long)run->r[i].missing.n;
    }
    size_t nh;
    hot *h = hotspots(o, run, &nh);
    opdb_sb_addf(out, "# %s", o->title ? o->title : "Profile Update Report");
    status_section(o, out);
    static const char *const ov_hdr[] = {"Metric", "Value"};
    table t;
    t_init(&t, 2, ov_hdr);
    const char *names[] = {"CSV files touched", "Rows updated", "Rows added", "Rows deleted", "Rows unchanged",
                           "Duplicate signatures", "Missing shapes", "Hotspots"};
    long vals[] = {(long)run->n, upd, add, del, unch, dups, miss, (long)nh};
    for (int i = 0; i < 8; i++) {
        char *cells[2] = {opdb_xstrdup(names[i]),
                          i == 7 && o->gaps_not_compared ? opdb_xstrdup("not compared") : fmt("%ld", vals[i])};
        t_row(&t, cells);
    }
    char *cells[2] = {opdb_xstrdup("Gap threshold"), opdb_xstrdup("microbench/profiling not in [0.80x, 1.20x]")};
    t_row(&t, cells);
    opdb_sb_adds(out, "\n\n## Overview\n");
    t_render(&t, out);

    static const char *const us_hdr[] = {"Operator", "Updated", "Added", "Deleted", "Unchanged", "Missing Samples"};
    t_init(&t, 6, us_hdr);
    const update_result **v = opdb_xmalloc((run->n + 1) * sizeof *v);
    for (size_t i = 0; i < run->n; i++) v[i] = &run->r[i];
    qsort(v, run->n, sizeof *v, cmp_summary);
    for (size_t i = 0; i < run->n; i++) {
        char *c6[6] = {opdb_xstrdup(v[i]->stem), fmt("%ld", v[i]->updated), fmt("%ld", v[i]->added),
                       fmt("%zu", v[i]->deleted.n), fmt("%ld", v[i]->unchanged), join_examples(&v[i]->missing)};
        t_row(&t, c6);
    }
    free(v);
    opdb_sb_adds(out, "\n\n## Update Summary\n");
    t_render(&t, out);
    if (!o->quirks) list_section(out, "Rows Added", run, len_added, 4); /* the reference counts them as missing too */
    list_section(out, "Missing Shapes", run, len_missing, 0);
    list_section(out, "Deleted Empty Rows", run, len_deleted, 1);
    list_section(out, "Duplicate Signatures", run, len_dups, 2);
    if (!o->quirks) {
        static const char *const nr_hdr[] = {"Operator", "Rows", "Table"};
        t_init(&t, 3, nr_hdr);
        for (size_t i = 0; i < run->foreign_ops.n; i++) {
            const char *csv = run->foreign_csv.v[i];
            char *c3[3] = {opdb_xstrdup(run->foreign_ops.v[i]), fmt("%llu", run->foreign_rows[i]),
                           *csv ? fmt("%s (left as is)", csv) : opdb_xstrdup("-")};
            t_row(&t, c3);
        }
        opdb_sb_adds(out, "\n\n## Profiled Operators Not Replayable Here\n"
                          "> update merges only the operators it can replay; these rows were not merged.\n\n");
        t_render(&t, out);
        static const char *const pw_hdr[] = {"Operator", "Rows"};
        t_init(&t, 2, pw_hdr);
        for (size_t i = 0; i < run->unmatched_ops.n; i++) {
            char *c2[2] = {opdb_xstrdup(run->unmatched_ops.v[i]), fmt("%llu", run->unmatched_rows[i])};
            t_row(&t, c2);
        }
        opdb_sb_adds(out, "\n\n## Profiled Operators Without CSV\n");
        t_render(&t, out);
        list_section(out, "Rows Without Numeric Samples", run, len_nosample, 3);
    }
    static const char *const gh[] = {"Operator", "MicroBench(us)", "Profiling(us)", "Abs Diff(us)", "MB/Profile", "Shape"};
    t_init(&t, 6, gh);
    for (size_t i = 0; i < nh && i < MAX_GAP_DISPLAY; i++) {
        const gap *g = h[i].g;
        char a[400], b[400], c[400], d[400];
        opdb_py_fmt_fixed(a, sizeof a, g->mb, 6);
        opdb_py_fmt_fixed(b, sizeof b, g->prof, 6);
        opdb_py_fmt_fixed(c, sizeof c, g->diff, 6);
        opdb_py_fmt_fixed(d, sizeof d, g->ratio, 2);
        char *c6[6] = {opdb_xstrdup(g->op), opdb_xstrdup(a), opdb_xstrdup(b), opdb_xstrdup(c), fmt("%sx", d),
                       opdb_xstrdup(g->sig)};
        t_row(&t, c6);
    }
    opdb_sb_adds(out, "\n\n## Duration Gap Hotspots\n");
    if (o->gaps_not_compared) opdb_sb_addf(out, "> Not compared: %s.\n\n", o->gaps_not_compared);
    t_render(&t, out);
    failures_section(o, out);
    opdb_sb_addc(out, '\n');
    free(h);
}

static char *unique_name(const char *dir, const char *stem, const char *ts, const char *ext, int k) {
    char *name = k > 1 ? fmt("%s_%s_%d%s", stem, ts, k, ext) : fmt("%s_%s%s", stem, ts, ext);
    char *p = opdb_path_join(dir, name);
    free(name);
    return p;
}

int update_report_files(const opdb_update_opts *o, const update_run *run, const char *text, char **md_path,
                        char **csv_path, opdb_err *err) {
    char ts[32];
    if (o->timestamp && *o->timestamp) {
        snprintf(ts, sizeof ts, "%s", o->timestamp);
    } else {
        time_t now = time(NULL);
        struct tm tmv;
        localtime_r(&now, &tmv);
        strftime(ts, sizeof ts, "%Y%m%d_%H%M%S", &tmv);
    }
    char *dir = opdb_path_join(o->db_dir, OPDB_REPORTS_DIR);
    if (opdb_mkdirs(dir, err)) {
        free(dir);
        return -1;
    }
    /* The reference overwrites a report of the same second; opdb adds _2, _3... */
    int k = 1;
    char *md = unique_name(dir, "profile_update_report", ts, ".md", k);
    char *csv = unique_name(dir, "duration_gap_hotspots_full", ts, ".csv", k);
    while (!o->quirks && (opdb_path_exists(md) || opdb_path_exists(csv))) {
        free(md), free(csv);
        k++;
        md = unique_name(dir, "profile_update_report", ts, ".md", k);
        csv = unique_name(dir, "duration_gap_hotspots_full", ts, ".csv", k);
    }
    free(dir);
    size_t nh;
    hot *h = hotspots(o, run, &nh);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    static const char *const hdr[] = {"Operator", "CSV Name", "MicroBench(us)", "Profiling(us)", "Abs Diff(us)", "MB/Profile", "Shape"};
    opdb_span cells[7];
    for (int i = 0; i < 7; i++) cells[i] = opdb_span_cstr(hdr[i]);
    opdb_csv_write_record(&sb, cells, 7);
    for (size_t i = 0; i < nh; i++) {
        const gap *g = h[i].g;
        char n[4][400];
        double v[4] = {g->mb, g->prof, g->diff, g->ratio};
        for (int j = 0; j < 4; j++) opdb_py_fmt_fixed(n[j], sizeof n[j], v[j], 6);
        cells[0] = opdb_span_cstr(g->op);
        cells[1] = opdb_span_cstr(g->csv_name);
        for (int j = 0; j < 4; j++) cells[2 + j] = opdb_span_cstr(n[j]);
        cells[6] = opdb_span_cstr(g->sig);
        opdb_csv_write_record(&sb, cells, 7);
    }
    free(h);
    int rc = opdb_atomic_write(csv, sb.p, sb.n, err);
    opdb_sb_clear(&sb);
    opdb_sb_adds(&sb, text);
    opdb_sb_addf(&sb, "Full hotspot CSV: %s\n", opdb_path_basename(csv));
    if (rc == 0) rc = opdb_atomic_write(md, sb.p, sb.n, err);
    opdb_sb_free(&sb);
    *md_path = md;
    *csv_path = csv;
    return rc;
}

static void json_str(opdb_strbuf *out, const char *s) {
    opdb_sb_addc(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') opdb_sb_addf(out, "\\%c", *p);
        else if (*p < 0x20) opdb_sb_addf(out, "\\u%04x", *p);
        else opdb_sb_addc(out, (char)*p);
    }
    opdb_sb_addc(out, '"');
}

static void json_list(opdb_strbuf *out, const char *key, const opdb_strvec *v, const char *indent) {
    opdb_sb_addf(out, ",\n%s\"%s\": [", indent, key);
    for (size_t i = 0; i < v->n; i++) {
        opdb_sb_adds(out, i ? ", " : "");
        json_str(out, v->v[i]);
    }
    opdb_sb_adds(out, "]");
}

void update_report_json(const opdb_update_opts *o, const update_run *run, const char *md_path, const char *csv_path,
                        opdb_strbuf *out) {
    (void)o;
    size_t nh;
    hot *h = hotspots(o, run, &nh);
    opdb_sb_clear(out);
    opdb_sb_adds(out, "{\n  \"report\": ");
    json_str(out, md_path ? md_path : "");
    opdb_sb_adds(out, ",\n  \"hotspot_csv\": ");
    json_str(out, csv_path ? csv_path : "");
    opdb_sb_addf(out, ",\n  \"hotspots\": %zu,\n  \"csv_files\": [", nh);
    for (size_t i = 0; i < run->n; i++) {
        const update_result *r = &run->r[i];
        opdb_sb_adds(out, i ? ",\n    {\n      \"operator\": " : "\n    {\n      \"operator\": ");
        json_str(out, r->stem);
        opdb_sb_adds(out, ",\n      \"path\": ");
        json_str(out, r->path);
        opdb_sb_addf(out, ",\n      \"updated\": %ld,\n      \"added\": %ld,\n      \"deleted\": %zu,\n      \"unchanged\": %ld,\n      \"duplicate_signatures\": %zu",
                     r->updated, r->added, r->deleted.n, r->unchanged, r->ndups);
        json_list(out, "missing", &r->missing, "      ");
        json_list(out, "no_numeric_samples", &r->no_sample, "      ");
        json_list(out, "added_shapes", &r->added_rows, "      ");
        opdb_sb_adds(out, "\n    }");
    }
    opdb_sb_adds(out, run->n ? "\n  ]" : "]");
    json_list(out, "profiled_operators_without_csv", &run->unmatched_ops, "  ");
    json_list(out, "profiled_operators_not_replayable", &run->foreign_ops, "  ");
    opdb_sb_adds(out, "\n}\n");
    free(h);
}
