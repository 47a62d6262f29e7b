/* See table_merge.h.  Both sides are read as whole tables of strings (the
 * existing file and parse's own rendering, db/text_table); cells are matched
 * by column name, so columns other tools added (for example `opdb update`'s
 * MicroBench columns) are kept as they are. */
#include "ingest/table_merge.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/stats.h"
#include "db/text_table.h"

typedef struct tbl {
    db_text_table src; /* a table read from a file or parse's rendering: the cells' memory */
    opdb_arena ar;
    char ***row;   /* row[0] = header */
    int *nf;
    size_t n, cap;
} tbl;

static void tbl_init(tbl *t) {
    memset(t, 0, sizeof *t);
    opdb_arena_init(&t->ar, 64 * 1024);
}

static void tbl_free(tbl *t) {
    db_text_free(&t->src);
    free(t->row);
    free(t->nf);
    opdb_arena_free(&t->ar);
}

static char **tbl_add(tbl *t, int nf) {
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->row = opdb_xrealloc(t->row, t->cap * sizeof *t->row);
        t->nf = opdb_xrealloc(t->nf, t->cap * sizeof *t->nf);
    }
    t->nf[t->n] = nf;
    t->row[t->n] = opdb_arena_alloc(&t->ar, (size_t)(nf ? nf : 1) * sizeof(char *));
    return t->row[t->n++];
}

/* Adds x's header and rows (each with its own cell count) to t. */
static void tbl_add_text(tbl *t, const db_text_table *x) {
    char **h = tbl_add(t, (int)x->ncols);
    for (size_t i = 0; i < x->ncols; i++) h[i] = (char *)x->names[i].p;
    for (size_t r = 0; r < x->nrows; r++) {
        char **row = tbl_add(t, (int)x->ncells[r]);
        for (uint32_t i = 0; i < x->ncells[r]; i++) row[i] = (char *)x->rows[r][i].p;
    }
}

/* The existing file (exact tokenizer, a BOM skipped, blank lines skipped),
 * or parse's own rendering of it (from memory, read the same way). */
static int load(tbl *t, const char *path, const char *text, size_t n, opdb_err *err) {
    static const db_text_opts o = {.ragged = true};
    db_text_table *x = &t->src;
    int rc = text ? db_text_load_mem(x, "parse's rendering", text, n, &o, NULL, err) : db_text_load(x, path, &o, NULL, err);
    if (rc == 0) tbl_add_text(t, x);
    return rc;
}

static int col_of(const tbl *t, const char *name) {
    for (int i = 0; i < t->nf[0]; i++)
        if (strcmp(t->row[0][i], name) == 0) return i;
    return -1;
}

static const char *cell_of(const tbl *t, size_t r, int c) { return c >= 0 && c < t->nf[r] ? t->row[r][c] : ""; }

static double num(const char *s) {
    double v;
    return opdb_py_float(s, strlen(s), &v) ? v : 0.0;
}

static uint64_t count_of(const char *s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    return *s && *end == '\0' ? (uint64_t)v : 0;
}

static char *fmt(tbl *t, double x) {
    char b[400];
    size_t k = opdb_py_fmt_fixed(b, sizeof b, x, 6);
    return opdb_arena_strndup(&t->ar, b, k);
}

/* The names of `a` followed by those of `b` it lacks, ';'-joined. */
static char *union_names(tbl *t, const char *a, const char *b) {
    opdb_strbuf s;
    opdb_sb_init(&s);
    opdb_sb_adds(&s, a);
    for (const char *p = b; *p;) {
        const char *e = strchr(p, ';');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        bool have = false;
        for (const char *q = a; *q && !have;) {
            const char *qe = strchr(q, ';');
            size_t qk = qe ? (size_t)(qe - q) : strlen(q);
            have = qk == k && memcmp(q, p, k) == 0;
            q = qe ? qe + 1 : q + qk;
        }
        if (!have) {
            if (s.n) opdb_sb_addc(&s, ';');
            opdb_sb_add(&s, p, k);
        }
        p = e ? e + 1 : p + k;
    }
    char *r = opdb_arena_strndup(&t->ar, s.n ? s.p : "", s.n);
    opdb_sb_free(&s);
    return r;
}

enum { C_COUNT, C_SUM, C_SUMSQ, C_MIN, C_MAX, C_AVG, C_MEDIAN, C_STD, NSTAT };
static const char *const k_stat_cols[NSTAT] = {OPDB_COL_PROF_COUNT,   OPDB_COL_PROF_SUM_DUR,   OPDB_COL_PROF_SUMSQ_DUR,
                                               OPDB_COL_PROF_MIN_DUR, OPDB_COL_PROF_MAX_DUR,   OPDB_COL_PROF_AVG_DUR,
                                               OPDB_COL_PROF_MEDIAN_DUR, OPDB_COL_PROF_STD_DUR};

static bool is_stat(const char *name) {
    for (int i = 0; i < NSTAT; i++)
        if (strcmp(name, k_stat_cols[i]) == 0) return true;
    return false;
}

static bool is_metric_mean(const char *name) {
    return strncmp(name, "Profiling Average ", 18) == 0 && strcmp(name, OPDB_COL_PROF_AVG_DUR) != 0;
}

/* Combines fresh row f (columns fcol[] of the output header) into output row o. */
static void combine(tbl *out, char **o, const int *sc, const tbl *F, size_t f, const int *fcol, int ncols) {
    uint64_t ne = count_of(o[sc[C_COUNT]]);
    uint64_t nf = count_of(cell_of(F, f, fcol[sc[C_COUNT]]));
    for (int c = 0; c < ncols; c++) {
        const char *fv = cell_of(F, f, fcol[c]);
        const char *name = out->row[0][c];
        if (fcol[c] < 0 || is_stat(name)) continue;
        if (!o[c][0] || (ne == 0 && is_metric_mean(name))) { /* an empty cell, or a row never profiled (e.g. added by update) */
            if (fv[0]) o[c] = (char *)fv;
        } else if (is_metric_mean(name) && fv[0] && nf) {
            o[c] = fmt(out, (num(o[c]) * (double)ne + num(fv) * (double)nf) / (double)(ne + nf));
        } else if (strcmp(name, OPDB_COL_KERNEL_NAMES) == 0) {
            o[c] = union_names(out, o[c], fv);
        }
    }
    if (nf == 0) return;
    if (ne == 0) {
        for (int i = 0; i < NSTAT; i++) o[sc[i]] = (char *)cell_of(F, f, fcol[sc[i]]);
        return;
    }
    double n = (double)(ne + nf);
    double sum = num(o[sc[C_SUM]]) + num(cell_of(F, f, fcol[sc[C_SUM]]));
    double sq = num(o[sc[C_SUMSQ]]) + num(cell_of(F, f, fcol[sc[C_SUMSQ]]));
    double mn = num(o[sc[C_MIN]]), fmn = num(cell_of(F, f, fcol[sc[C_MIN]]));
    double mx = num(o[sc[C_MAX]]), fmx = num(cell_of(F, f, fcol[sc[C_MAX]]));
    if (fmn < mn) mn = fmn;
    if (fmx > mx) mx = fmx;
    double med = (num(o[sc[C_MEDIAN]]) * (double)ne + num(cell_of(F, f, fcol[sc[C_MEDIAN]])) * (double)nf) / n;
    char cnt[32];
    snprintf(cnt, sizeof cnt, "%" PRIu64, ne + nf);
    o[sc[C_COUNT]] = opdb_arena_strndup(&out->ar, cnt, strlen(cnt));
    o[sc[C_SUM]] = fmt(out, sum);
    o[sc[C_SUMSQ]] = fmt(out, sq);
    o[sc[C_MIN]] = fmt(out, mn);
    o[sc[C_MAX]] = fmt(out, mx);
    o[sc[C_AVG]] = fmt(out, sum / n);
    o[sc[C_MEDIAN]] = fmt(out, med < mn ? mn : med > mx ? mx : med);
    o[sc[C_STD]] = fmt(out, opdb_pstd_naive(sum, sq, n));
}

/* One existing row's statistics, trusted only when they make sense: a count
 * that is a plain whole number, finite sums and extremes >= 0, min <= mean <=
 * max, and a sum of squares that samples between min and max can have (with
 * room for the 6-decimal rounding of the cells). A row without a count was
 * never profiled (a theory row, a row added by update) and is not checked. */
static int check_stats(const char *path, size_t line, char *const *hdr, int ncols, char *const *o, const int *sc,
                       opdb_err *err) {
    const char *cnt = o[sc[C_COUNT]];
    if (!cnt[0]) return 0;
    size_t k = strspn(cnt, "0123456789");
    double n = 0;
    if (cnt[k] || k > 15 || (n = strtod(cnt, NULL)) > 9007199254740992.0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%zu: '%s' is '%s', not a whole number of samples; the table was not "
                         "written by opdb parse or was edited: fix the row, or parse without --merge to replace the table",
                         path, line, OPDB_COL_PROF_COUNT, cnt);
    if (n == 0) return 0;
    double v[NSTAT];
    for (int i = C_SUM; i <= C_MAX; i++) {
        const char *c = o[sc[i]];
        if (!opdb_py_float(c, strlen(c), &v[i]) || !isfinite(v[i]) || v[i] < 0)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%zu: '%s' is '%s', not a finite number >= 0 (with %s %s); the "
                             "table was not written by opdb parse or was edited: fix the row, or parse without --merge "
                             "to replace the table", path, line, k_stat_cols[i], c, OPDB_COL_PROF_COUNT, cnt);
    }
    /* the median and the metric means are combined count-weighted too: a
     * nan or inf there would become the merged value */
    for (int c = 0; c < ncols; c++) {
        double x;
        if (c != sc[C_MEDIAN] && !is_metric_mean(hdr[c])) continue;
        if (o[c][0] && opdb_py_float(o[c], strlen(o[c]), &x) && (!isfinite(x) || (c == sc[C_MEDIAN] && x < 0)))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%zu: '%s' is '%s', not a finite number%s (with %s %s); the "
                             "table was not written by opdb parse or was edited: fix the row, or parse without --merge "
                             "to replace the table", path, line, hdr[c], o[c], c == sc[C_MEDIAN] ? " >= 0" : "",
                             OPDB_COL_PROF_COUNT, cnt);
    }
    double sum = v[C_SUM], sq = v[C_SUMSQ], mn = v[C_MIN], mx = v[C_MAX];
    double tol = 1e-6 * n + 1e-9 * sum, tolsq = 1e-6 * n * (1 + 2 * mx) + 1e-9 * sq;
    const char *why = mn > mx + 1e-6                           ? "min above max"
                      : mn * n > sum + tol || sum > mx * n + tol ? "mean (sum / count) outside min..max"
                      : sq * n + tolsq * n < sum * sum * (1 - 1e-9) ? "sum of squares below sum^2 / count"
                      : sq > mx * mx * n + tolsq                 ? "sum of squares above count * max^2"
                                                                 : NULL;
    if (why)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%zu: inconsistent statistics (%s: count %s, sum %s, sum of squares "
                         "%s, min %s, max %s); the table was not written by opdb parse or was edited: fix the row, or "
                         "parse without --merge to replace the table", path, line, why, cnt, o[sc[C_SUM]],
                         o[sc[C_SUMSQ]], o[sc[C_MIN]], o[sc[C_MAX]]);
    return 0;
}

static void key_of(opdb_strbuf *k, char *const *cells, int nf, const int *kc, int nk) {
    opdb_sb_clear(k);
    for (int i = 0; i < nk; i++) {
        if (kc[i] >= 0 && kc[i] < nf) opdb_sb_adds(k, cells[kc[i]]);
        opdb_sb_addc(k, '\x1f');
    }
}

static int merge_into(const char *path, const tbl *E, const tbl *F, opdb_strbuf *rendered, opdb_err *err) {
    tbl out;
    tbl_init(&out);
    /* header: the existing one, then fresh columns it lacks */
    int ncols = E->nf[0];
    for (int c = 0; c < F->nf[0]; c++) ncols += col_of(E, F->row[0][c]) < 0;
    char **h = tbl_add(&out, ncols);
    int k = 0;
    for (int c = 0; c < E->nf[0]; c++) h[k++] = E->row[0][c];
    for (int c = 0; c < F->nf[0]; c++)
        if (col_of(E, F->row[0][c]) < 0) h[k++] = F->row[0][c];
    int *fcol = opdb_xmalloc((size_t)ncols * sizeof *fcol);
    for (int c = 0; c < ncols; c++) fcol[c] = col_of(F, h[c]);
    int sc[NSTAT];
    int rc = 0;
    for (int i = 0; i < NSTAT && rc == 0; i++) {
        sc[i] = col_of(E, k_stat_cols[i]);
        if (sc[i] < 0)
            rc = opdb_fail(err, OPDB_ERR_RUNTIME,
                           "%s has no '%s' column (written by --reference-quirks, the reference parser or an older "
                           "opdb), so rows cannot be merged exactly; parse without --merge to replace it",
                           path, k_stat_cols[i]);
    }
    /* rows of one shape: Ascend tables by (Input Shapes, Output Shapes), PyTorch ones also by input types */
    bool kineto = col_of(F, OPDB_COL_KERNEL_NAMES) >= 0;
    int kc[3] = {col_of(&out, OPDB_COL_INPUT_SHAPES), col_of(&out, OPDB_COL_OUTPUT_SHAPES),
                 kineto ? col_of(&out, OPDB_COL_INPUT_DTYPES) : -1};
    int nk = kineto ? 3 : 2;
    opdb_hindex ix = {0};
    opdb_strbuf key, key2;
    opdb_sb_init(&key);
    opdb_sb_init(&key2);
    for (size_t r = 1; r < E->n && rc == 0; r++) { /* existing rows, widened to the output header */
        char **o = tbl_add(&out, ncols);
        for (int c = 0; c < ncols; c++) o[c] = (char *)(c < E->nf[r] ? E->row[r][c] : "");
        rc = check_stats(path, (size_t)E->src.line[r - 1], out.row[0], ncols, o, sc, err);
        key_of(&key, o, ncols, kc, nk);
        opdb_hindex_add(&ix, opdb_hash_bytes(key.p, key.n, 5), (uint32_t)(out.n - 1));
    }
    for (size_t f = 1; f < F->n && rc == 0; f++) {
        char **fr = opdb_xmalloc((size_t)ncols * sizeof *fr);
        for (int c = 0; c < ncols; c++) fr[c] = (char *)cell_of(F, f, fcol[c]);
        key_of(&key, fr, ncols, kc, nk);
        uint64_t hsh = opdb_hash_bytes(key.p, key.n, 5);
        uint32_t hit = UINT32_MAX, j;
        for (opdb_hprobe p = opdb_hindex_probe(&ix, hsh); hit == UINT32_MAX && opdb_hprobe_next(&p, &j);) {
            key_of(&key2, out.row[j], ncols, kc, nk);
            if (key2.n == key.n && memcmp(key2.p, key.p, key.n) == 0) hit = j; /* the first of duplicates */
        }
        if (hit != UINT32_MAX) {
            combine(&out, out.row[hit], sc, F, f, fcol, ncols);
        } else {
            char **o = tbl_add(&out, ncols);
            memcpy(o, fr, (size_t)ncols * sizeof *o);
            opdb_hindex_add(&ix, hsh, (uint32_t)(out.n - 1));
        }
        free(fr);
    }
    opdb_span *cells = opdb_xmalloc((size_t)(ncols ? ncols : 1) * sizeof *cells);
    for (size_t r = 0; r < out.n && rc == 0; r++) {
        for (int c = 0; c < ncols; c++) cells[c] = opdb_span_cstr(out.row[r][c]);
        opdb_csv_write_record(rendered, cells, (size_t)ncols);
    }
    free(cells);
    free(fcol);
    opdb_sb_free(&key);
    opdb_sb_free(&key2);
    opdb_hindex_free(&ix);
    tbl_free(&out);
    return rc;
}

/* ---- what replacing a table would lose */

#define LOSS_NAMES 3  /* column names listed before "and N more" */
#define LOSS_TABLES 4 /* tables described before "and N more" (the message is one line) */

/* Describes into w->losses what `E` holds that `F` lacks: rows without a
 * counterpart of the same shapes (duplicates matched in order), columns F
 * does not have that hold a value, and cells F leaves empty. */
static bool describe_loss(tbl_writer *w, const char *path, const tbl *E, const tbl *F) {
    bool kineto = col_of(F, OPDB_COL_KERNEL_NAMES) >= 0;
    int ekc[3] = {col_of(E, OPDB_COL_INPUT_SHAPES), col_of(E, OPDB_COL_OUTPUT_SHAPES),
                  kineto ? col_of(E, OPDB_COL_INPUT_DTYPES) : -1};
    int fkc[3] = {col_of(F, OPDB_COL_INPUT_SHAPES), col_of(F, OPDB_COL_OUTPUT_SHAPES),
                  kineto ? col_of(F, OPDB_COL_INPUT_DTYPES) : -1};
    int nk = kineto ? 3 : 2;
    int ne = E->nf[0];
    int *fcol = opdb_xmalloc((size_t)(ne ? ne : 1) * sizeof *fcol);
    bool *col_lost = opdb_xcalloc((size_t)(ne ? ne : 1), sizeof *col_lost);
    for (int c = 0; c < ne; c++) fcol[c] = col_of(F, E->row[0][c]);
    bool *used = opdb_xcalloc(F->n, sizeof *used);
    opdb_hindex ix = {0};
    opdb_strbuf key, key2;
    opdb_sb_init(&key);
    opdb_sb_init(&key2);
    for (size_t f = 1; f < F->n; f++) {
        key_of(&key, F->row[f], F->nf[f], fkc, nk);
        opdb_hindex_add(&ix, opdb_hash_bytes(key.p, key.n, 5), (uint32_t)f);
    }
    size_t rows_lost = 0, cells_lost = 0;
    for (size_t r = 1; r < E->n; r++) {
        key_of(&key, E->row[r], E->nf[r], ekc, nk);
        uint32_t hit = UINT32_MAX, j;
        for (opdb_hprobe p = opdb_hindex_probe(&ix, opdb_hash_bytes(key.p, key.n, 5));
             hit == UINT32_MAX && opdb_hprobe_next(&p, &j);) {
            if (used[j]) continue;
            key_of(&key2, F->row[j], F->nf[j], fkc, nk);
            if (key2.n == key.n && memcmp(key2.p, key.p, key.n) == 0) hit = j;
        }
        bool any = false;
        for (int c = 0; c < ne && c < E->nf[r]; c++) any = any || E->row[r][c][0];
        if (hit == UINT32_MAX) {
            rows_lost += any; /* a blank line holds nothing */
            continue;
        }
        used[hit] = true;
        for (int c = 0; c < ne && c < E->nf[r]; c++) {
            if (!E->row[r][c][0]) continue;
            if (fcol[c] < 0) col_lost[c] = true;
            else if (!cell_of(F, hit, fcol[c])[0]) cells_lost++;
        }
    }
    size_t ncols_lost = 0;
    for (int c = 0; c < ne; c++) ncols_lost += col_lost[c];
    bool lost = rows_lost || ncols_lost || cells_lost;
    if (lost && w->refused++ < LOSS_TABLES) {
        opdb_strbuf *d = &w->losses;
        opdb_sb_addf(d, "%s%s (", d->n ? "; " : "", opdb_path_basename(path));
        const char *sep = "";
        if (rows_lost) {
            opdb_sb_addf(d, "%zu of %zu row(s) the new table lacks", rows_lost, E->n - 1);
            sep = ", ";
        }
        if (ncols_lost) {
            opdb_sb_addf(d, "%scolumn%s ", sep, ncols_lost > 1 ? "s" : "");
            size_t k = 0;
            for (int c = 0; c < ne && k < LOSS_NAMES; c++)
                if (col_lost[c]) opdb_sb_addf(d, "%s'%s'", k++ ? ", " : "", E->row[0][c]);
            if (ncols_lost > LOSS_NAMES) opdb_sb_addf(d, " and %zu more", ncols_lost - LOSS_NAMES);
            sep = ", ";
        }
        if (cells_lost) opdb_sb_addf(d, "%s%zu filled cell(s) it leaves empty", sep, cells_lost);
        opdb_sb_addc(d, ')');
    }
    opdb_sb_free(&key);
    opdb_sb_free(&key2);
    opdb_hindex_free(&ix);
    free(used);
    free(col_lost);
    free(fcol);
    return lost;
}

/* 1 when replacing path by fresh would lose data (described in w), 0 when not, -1 on error. */
static int would_lose(tbl_writer *w, const char *path, const char *fresh, size_t n, opdb_err *err) {
    tbl E, F;
    tbl_init(&E);
    tbl_init(&F);
    int rc = load(&E, path, NULL, 0, err);
    if (rc) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        opdb_fail(err, OPDB_ERR_RUNTIME, "%s; cannot tell what replacing it would lose (--replace overwrites it)", why);
    }
    if (rc == 0) rc = load(&F, NULL, fresh, n, err);
    if (rc == 0) rc = describe_loss(w, path, &E, &F);
    tbl_free(&E);
    tbl_free(&F);
    return rc;
}

int tbl_emit(tbl_writer *w, const char *path, const char *fresh, size_t n, opdb_err *err) {
    bool exists = opdb_is_file(path);
    if (!w->merge || !exists) {
        if (exists && !w->merge && !w->replace) {
            int lose = would_lose(w, path, fresh, n, err);
            if (lose) return lose < 0 ? -1 : 0; /* refused: tbl_writer_check fails the run */
        }
        if (exists && w->replaced++ == 0) w->first_replaced = opdb_xstrdup(opdb_path_basename(path));
        return opdb_atomic_write(path, fresh, n, err);
    }
    tbl E, F;
    tbl_init(&E);
    tbl_init(&F);
    opdb_strbuf out;
    opdb_sb_init(&out);
    int rc = load(&E, path, NULL, 0, err);
    if (rc == 0) rc = load(&F, NULL, fresh, n, err);
    if (rc == 0) rc = merge_into(path, &E, &F, &out, err);
    if (rc == 0) rc = opdb_atomic_write(path, out.p, out.n, err);
    if (rc == 0) w->merged++;
    opdb_sb_free(&out);
    tbl_free(&E);
    tbl_free(&F);
    return rc;
}

int tbl_writer_check(const tbl_writer *w, const char *outdir, opdb_err *err) {
    if (!w->refused) return 0;
    return opdb_fail(err, OPDB_ERR_RUNTIME,
                     "nothing written: replacing %zu table(s) in %s would lose data: %s%s; --merge combines the new "
                     "rows with them, --replace overwrites them",
                     w->refused, outdir, w->losses.p, w->refused > LOSS_TABLES ? " and more" : "");
}

void tbl_writer_finish(tbl_writer *w, const char *outdir) {
    if (w->replaced)
        opdb_warn("replaced %zu existing table(s) in %s (first: %s); --merge combines rows with them instead", w->replaced,
                  outdir, w->first_replaced);
    free(w->first_replaced);
    w->first_replaced = NULL;
    opdb_sb_free(&w->losses);
}
