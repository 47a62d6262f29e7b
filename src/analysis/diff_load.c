/* opdb diff: one side's tables, each row identity reduced to what the
 * consumer sees (a latency, nothing, a zero, or an ambiguity). */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff_internal.h"
#include "db/sig_cells.h"
#include "db/text_table.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/signature.h"

void diff_warn(const opdb_diff_options *o, const char *fmt, ...) {
    if (!o->warn) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->warn(o->warn_ctx, buf);
}

dgroup *diff_find(const dtable *t, const char *sig, uint64_t hash) {
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&t->ix, hash); opdb_hprobe_next(&p, &i);)
        if (strcmp(t->g[i].sig, sig) == 0) return &t->g[i];
    return NULL;
}

/* The consumer's latency columns, in the order it tries them. */
static const char *const k_lat_cols[] = {OPDB_COL_MB_DUR, OPDB_COL_PROF_AVG_DUR, OPDB_COMM_COL_DUR};
#define NLAT 3

static bool cell_float(opdb_span c, double *x) {
    c = opdb_py_strip(c);
    return c.n && opdb_py_float(c.p, c.n, x);
}

/* Same normal form as validate gives runtime cells (numbers as numbers). */
static opdb_span runtime_cell(opdb_span c, char *buf, size_t cap) {
    c = opdb_py_strip(c);
    static const char *const na[] = {"N/A", "NA", "NULL", "nan", "NaN", "None", "null", "n/a"};
    for (size_t i = 0; i < sizeof na / sizeof na[0]; i++)
        if (opdb_span_eq_cstr(c, na[i])) return opdb_span_make("", 0);
    double x;
    if (c.n && opdb_py_float(c.p, c.n, &x) && isfinite(x)) {
        int n = snprintf(buf, cap, "%.17g", x);
        return opdb_span_make(buf, (size_t)n);
    }
    return c;
}

static void set_rep(dgroup *g, const opdb_sig_cells *sc, unsigned long long line, double lat, const double st[3],
                    bool has_stats) {
    opdb_strbuf d;
    opdb_sb_init(&d);
    opdb_signature_display(sc, &d);
    free(g->display);
    g->display = opdb_xstrdup(d.p ? d.p : "");
    opdb_sb_free(&d);
    g->line = line;
    g->lat = lat;
    g->has_stats = has_stats;
    g->n = st[0];
    g->mean = st[1];
    g->var = has_stats ? st[2] * st[2] * st[0] / (st[0] - 1) : NAN;
}

static int load_table(const char *path, dtable *t, const opdb_diff_options *o) {
    opdb_err e;
    opdb_err_clear(&e);
    opdb_csv_file c;
    /* no check refuses: a file that is no table is skipped below, by its columns */
    static const db_open_opts oo = {0};
    if (db_csv_open(&c, path, &oo, NULL, &e)) {
        diff_warn(o, "%s: skipped: %s", path, e.msg);
        return -1;
    }
    const opdb_field *f = c.f;
    int r = c.nf > 0;
    int lat[NLAT], cnt = -1, avg = -1, sd = -1, rt[64];
    size_t nrt = 0;
    db_sig_cols sigc;
    opdb_span *names = opdb_xmalloc(((size_t)c.nf + 1) * sizeof *names);
    for (int i = 0; i < c.nf; i++) names[i] = opdb_span_make(f[i].p, f[i].n);
    db_sig_cols_from_header(&sigc, names, (size_t)c.nf, DB_NAME_FIRST);
    free(names);
    for (int i = 0; i < NLAT; i++) lat[i] = -1;
    for (int i = 0; r > 0 && i < c.nf; i++) {
        opdb_span h = opdb_span_make(f[i].p, f[i].n);
        for (int d = 0; d < NLAT; d++)
            if (lat[d] < 0 && opdb_span_eq_cstr(h, k_lat_cols[d])) lat[d] = i;
        if (cnt < 0 && opdb_span_eq_cstr(h, OPDB_COL_PROF_COUNT)) cnt = i;
        if (avg < 0 && opdb_span_eq_cstr(h, OPDB_COL_PROF_AVG_DUR)) avg = i;
        if (sd < 0 && opdb_span_eq_cstr(h, OPDB_COL_PROF_STD_DUR)) sd = i;
        if (opdb_is_runtime_column(h) && nrt < sizeof rt / sizeof rt[0]) rt[nrt++] = (int)i;
    }
    if (r <= 0 || sigc.col[0] < 0 || (lat[0] < 0 && lat[1] < 0 && lat[2] < 0)) {
        diff_warn(o, "%s: skipped: not a database table (no %s or no duration column)", path, OPDB_COL_INPUT_SHAPES);
        opdb_csv_file_close(&c);
        return -1;
    }
    char stem[256];
    const char *name = opdb_path_basename(path);
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(name) - 4), name);
    opdb_strbuf sig;
    opdb_sb_init(&sig);
    opdb_span rtv[64];
    char rtbuf[64][40];
    while ((r = opdb_csv_file_next(&c, false)) > 0) {
        unsigned long long line = c.x.rec_line;
#define CELL(i) ((i) >= 0 && (i) < c.nf ? opdb_span_make(f[i].p, f[i].n) : opdb_span_make("", 0))
        double l = NAN, x;
        bool zero = false;
        for (int d = 0; d < NLAT; d++) {
            if (lat[d] < 0 || !cell_float(CELL(lat[d]), &x)) continue;
            if (isfinite(x) && x > 0) {
                l = x;
                break;
            }
            if (x == 0) zero = true;
        }
        double st[3] = {NAN, NAN, NAN};
        bool has = cell_float(CELL(cnt), &st[0]) && isfinite(st[0]) && st[0] >= 2 && st[0] == floor(st[0]) &&
                   cell_float(CELL(avg), &st[1]) && isfinite(st[1]) && st[1] > 0 && cell_float(CELL(sd), &st[2]) &&
                   isfinite(st[2]) && st[2] >= 0;
        opdb_sig_cells sc = db_sig_cells_from_fields(&sigc, f, c.nf);
        for (size_t k = 0; k < nrt; k++) rtv[k] = runtime_cell(CELL(rt[k]), rtbuf[k], sizeof rtbuf[k]);
#undef CELL
        opdb_row_identity(&sc, stem, rtv, nrt, &sig);
        const char *s = sig.p ? sig.p : "";
        uint64_t h = opdb_hash_bytes(s, strlen(s), 7);
        dgroup *g = diff_find(t, s, h);
        bool visible = !isnan(l);
        if (!g) {
            OPDB_ALLOC_GROW(t->g, t->n + 1, t->cap);
            g = &t->g[t->n];
            memset(g, 0, sizeof *g);
            g->sig = opdb_xstrdup(s);
            g->hash = h;
            opdb_hindex_add(&t->ix, h, (uint32_t)t->n++);
            g->status = visible ? DS_VISIBLE : zero ? DS_ZERO : DS_INVISIBLE;
            set_rep(g, &sc, line, l, st, has);
        } else if (visible) {
            if (g->status == DS_VISIBLE && g->lat != l) g->status = DS_CONFLICT;
            else if (g->status == DS_ZERO || g->status == DS_INVISIBLE) {
                g->status = DS_VISIBLE;
                set_rep(g, &sc, line, l, st, has);
            }
        } else if (zero && g->status == DS_INVISIBLE) {
            g->status = DS_ZERO;
        }
        if (line >= t->nby_line) {
            size_t n = t->nby_line ? t->nby_line : 64;
            while (n <= line) n *= 2;
            t->by_line = opdb_xrealloc(t->by_line, n * sizeof *t->by_line);
            memset(t->by_line + t->nby_line, 0, (n - t->nby_line) * sizeof *t->by_line);
            t->nby_line = n;
        }
        t->by_line[line] = (uint32_t)(g - t->g) + 1;
    }
    if (r < 0) diff_warn(o, "%s: read failed; the rows before the failure are used", path);
    opdb_sb_free(&sig);
    opdb_csv_file_close(&c);
    return 0;
}

static bool is_csv(const char *name) {
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".csv") == 0 && name[0] != '.';
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const dtable *)a)->kernel_type, ((const dtable *)b)->kernel_type);
}

int diff_load_side(const char *dir, dside *s, const opdb_diff_options *o, opdb_err *err) {
    memset(s, 0, sizeof *s);
    if (!opdb_is_dir(dir)) return opdb_fail(err, OPDB_ERR_RUNTIME, "database folder not found: %s", dir);
    DIR *d = opendir(dir);
    if (!d) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot read folder", dir);
    struct dirent *e;
    size_t cap = 0;
    while ((e = readdir(d)) != NULL) {
        if (!is_csv(e->d_name)) continue;
        char *p = opdb_path_join(dir, e->d_name);
        if (!opdb_is_file(p)) {
            free(p);
            continue;
        }
        OPDB_ALLOC_GROW(s->t, s->n + 1, cap);
        dtable *t = &s->t[s->n];
        memset(t, 0, sizeof *t);
        size_t n = strlen(e->d_name) - 4;
        t->kernel_type = opdb_xmalloc(n + 1);
        memcpy(t->kernel_type, e->d_name, n);
        t->kernel_type[n] = '\0';
        if (load_table(p, t, o) == 0) {
            s->n++;
        } else {
            free(t->kernel_type);
            free(t->g);
            free(t->by_line);
            opdb_hindex_free(&t->ix);
        }
        free(p);
    }
    closedir(d);
    if (s->n > 1) qsort(s->t, s->n, sizeof *s->t, by_name);
    return 0;
}

void diff_free_side(dside *s) {
    for (size_t i = 0; i < s->n; i++) {
        dtable *t = &s->t[i];
        for (size_t k = 0; k < t->n; k++) {
            free(t->g[k].sig);
            free(t->g[k].display);
        }
        free(t->g);
        free(t->by_line);
        free(t->kernel_type);
        opdb_hindex_free(&t->ix);
    }
    free(s->t);
    memset(s, 0, sizeof *s);
}
