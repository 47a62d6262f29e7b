/* See update_csv.h.  Rows keep the reference's dict semantics (dict_row.h);
 * cells point into the file read once into memory (fast tokenizer, decoded
 * in place) and only changed values are copied.  A row is "dirty" when a
 * written column changes, so change detection needs no second rendering. */
#include "update/update_csv.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/ingest.h"
#include "opdb/pystr.h"
#include "opdb/signature.h"
#include "update/dict_row.h"
#include "update/update_extra.h"
#include "update/update_layout.h"

typedef struct csvfile {
    keyspace ks;
    strvec fields;       /* header as read */
    char *buf;           /* whole file; cells point into it */
    char *raw;           /* the same bytes before quoted cells were decoded in
                            place; NULL when no row may be copied as read */
    drow *rows;
    size_t n, cap;
} csvfile;

static void push_row(csvfile *f, drow r) {
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 256;
        f->rows = opdb_xrealloc(f->rows, f->cap * sizeof *f->rows);
    }
    f->rows[f->n++] = r;
}

static void csvfile_free(csvfile *f) {
    free(f->rows);
    free(f->buf);
    free(f->raw);
    sv_free(&f->fields);
    ks_free(&f->ks);
}

/* ---- loading */

static int *start_header(csvfile *f, const opdb_field *h, int nh) {
    ks_init(&f->ks, nh + 140);
    int *colkey = opdb_xmalloc(((size_t)nh + 1) * sizeof *colkey);
    for (int i = 0; i < nh; i++) {
        char *name = opdb_xmalloc(h[i].n + 1);
        memcpy(name, h[i].p, h[i].n);
        name[h[i].n] = '\0';
        sv_push(&f->fields, name);
        colkey[i] = ks_add(&f->ks, name);
    }
    return colkey;
}

/* DictReader: every header key present ("" for a short row); last duplicate wins. */
static void add_record(csvfile *f, const int *colkey, int nh, const opdb_field *c, int nc, bool copy) {
    drow r = drow_new(&f->ks);
    for (int i = 0; i < nh; i++) {
        const char *p = i < nc ? c[i].p : "";
        size_t n = i < nc ? c[i].n : 0;
        if (copy) p = opdb_arena_strndup(&f->ks.arena, p, n);
        drow_ref(&r, colkey[i], p, n);
    }
    push_row(f, r);
}

/* Rows the writer would reproduce byte for byte are copied as read instead
 * of rendered again: as many cells as the header, each quoted exactly when it
 * holds , " CR or LF (QUOTE_MINIMAL), and "\r\n" after the last cell only.
 * The fast tokenizer has already proved the quoting itself canonical, and it
 * decodes a quoted cell to the cell's own first byte, so c[i].p tells where
 * each cell started in the raw copy.  The cells are judged here ... */
static bool record_fields_ok(const csvfile *f, const opdb_field *c, int nc, int nh) {
    if (nc != nh || nh < 2) return false;
    for (int i = 0; i < nc; i++) {
        if (f->raw[c[i].p - f->buf] != '"') continue;
        bool special = false;
        for (size_t k = 0; k < c[i].n && !special; k++)
            special = c[i].p[k] == ',' || c[i].p[k] == '"' || c[i].p[k] == '\r' || c[i].p[k] == '\n';
        if (!special) return false;
    }
    return true;
}

/* ... and the last row's terminator once the next record's start (or the end
 * of the file) is known: exactly one "\r\n", no blank line after it. */
static void mark_raw(csvfile *f, size_t off, size_t end) {
    const char *r = f->raw;
    if (end - off < 3 || end - off > UINT32_MAX) return;
    if (r[end - 2] != '\r' || r[end - 1] != '\n' || r[end - 3] == '\r' || r[end - 3] == '\n') return;
    drow *row = &f->rows[f->n - 1];
    row->raw_off = off;
    row->raw_len = (uint32_t)(end - off);
}

/* A header that DictWriter writes back as it was read: no name twice. */
static bool header_unique(const int *colkey, int nh) {
    for (int i = 0; i < nh; i++)
        for (int k = 0; k < i; k++)
            if (colkey[i] == colkey[k]) return false;
    return true;
}

/* The readers keep this many cells of a record: a header that fills them
 * may have been cut, and writing it back would lose columns. */
enum { MAX_COLUMNS = 4096 };

static int too_wide(const char *path, opdb_err *err) {
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the header has %d or more columns; opdb update handles at most %d",
                     path, MAX_COLUMNS, MAX_COLUMNS - 1);
}

static int load_exact(const char *path, csvfile *f, opdb_err *err) {
    opdb_csv_file c;
    if (opdb_csv_file_open(&c, path, MAX_COLUMNS, err)) return -1;
    int rc = opdb_csv_file_next(&c, true);
    if (rc > 0 && c.nf >= MAX_COLUMNS) {
        ks_init(&f->ks, 140);
        opdb_csv_file_close(&c);
        return too_wide(path, err);
    }
    if (rc > 0) {
        int nh = c.nf;
        int *colkey = start_header(f, c.f, nh);
        while ((rc = opdb_csv_file_next(&c, false)) > 0) add_record(f, colkey, nh, c.f, c.nf, true);
        free(colkey);
    } else {
        ks_init(&f->ks, 140);
    }
    if (rc < 0) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    opdb_csv_file_close(&c);
    return rc < 0 ? -1 : 0;
}

static int load_csv(const char *path, csvfile *f, opdb_err *err) {
    uint64_t body;
    int fd = opdb_csv_open(path, &body, err);
    if (fd < 0) return -1;
    struct stat st;
    size_t size = fstat(fd, &st) == 0 ? (size_t)st.st_size : 0;
    size_t len = size > body ? size - (size_t)body : 0;
    f->buf = opdb_xmalloc(len + 1);
    size_t got = 0;
    while (got < len) {
        ssize_t k = pread(fd, f->buf + got, len - got, (off_t)(body + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    if (got != len) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    /* A leading blank line is a header of its own for DictReader: exact rules. */
    bool fast = len && f->buf[0] != '\n' && f->buf[0] != '\r';
    if (fast) {
        opdb_csv_fast t;
        opdb_csv_fast_init(&t, f->buf, len);
        enum { MAXF = MAX_COLUMNS };
        opdb_field *c = opdb_xmalloc(MAXF * sizeof *c);
        int nc, rc;
        size_t off;
        f->raw = opdb_xmalloc(len + 1);
        memcpy(f->raw, f->buf, len);
        f->raw[len] = '\0'; /* an empty last cell starts at len */
        rc = opdb_csv_fast_next(&t, c, MAXF, &nc, &off);
        if (rc > 0 && nc >= MAXF) {
            free(c);
            ks_init(&f->ks, 140);
            return too_wide(path, err);
        }
        if (rc > 0) {
            int nh = nc;
            int *colkey = start_header(f, c, nh);
            bool copyable = header_unique(colkey, nh);
            size_t prev = SIZE_MAX; /* start of the previous record, if its cells qualify */
            while ((rc = opdb_csv_fast_next(&t, c, MAXF, &nc, &off)) > 0) {
                if (prev != SIZE_MAX) mark_raw(f, prev, off);
                add_record(f, colkey, nh, c, nc, false);
                prev = copyable && record_fields_ok(f, c, nc, nh) ? off : SIZE_MAX;
            }
            if (rc == 0 && prev != SIZE_MAX) mark_raw(f, prev, len);
            free(colkey);
        }
        free(c);
        if (rc == 0) return 0;
        /* Anomaly: start again with the exact tokenizer. */
        free(f->raw);
        f->raw = NULL;
        free(f->rows);
        f->rows = NULL;
        f->n = f->cap = 0;
        sv_free(&f->fields);
        ks_free(&f->ks);
    }
    free(f->buf);
    f->buf = NULL;
    return load_exact(path, f, err);
}

/* ---- signatures */

typedef struct ids {
    int sig[6];          /* Input Shapes .. EP Size */
    int mb_dur, prof_avg, legacy;
} ids;

static void sig_of_drow(const drow *r, const ids *id, const char *op, opdb_strbuf *out, bool display) {
    opdb_sig_cells c = {drow_at(r, id->sig[0]), drow_at(r, id->sig[1]), drow_at(r, id->sig[2]),
                        drow_at(r, id->sig[3]), drow_at(r, id->sig[4]), drow_at(r, id->sig[5])};
    if (display) opdb_signature_display(&c, out);
    else opdb_signature(&c, op, out);
}

static void sig_of_agg(const agg_row *r, const char *op, opdb_strbuf *out, bool display) {
    opdb_sig_cells c = {opdb_span_cstr(r->sig[0]), opdb_span_cstr(r->sig[1]), opdb_span_cstr(r->sig[2]),
                        opdb_span_cstr(r->sig[3]), opdb_span_cstr(r->sig[4]), opdb_span_cstr(r->sig[5])};
    if (display) opdb_signature_display(&c, out);
    else opdb_signature(&c, op, out);
}

/* ---- signature index: signature -> row indexes (first = the match target) */

typedef struct sig_entry {
    const char *sig;     /* in the index's arena */
    size_t len;
    uint64_t hash;
    size_t row0;         /* the first row; more only for duplicates */
    size_t *more;
    size_t n, cap;       /* rows in all; room in more */
} sig_entry;

static size_t entry_row(const sig_entry *e, size_t k) { return k == 0 ? e->row0 : e->more[k - 1]; }

typedef struct sig_index {
    sig_entry *e;   /* first-seen order */
    size_t n, cap;
    opdb_hindex ix;
    opdb_arena arena;
} sig_index;

static sig_entry *si_find_h(sig_index *si, const char *sig, size_t len, uint64_t h) {
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&si->ix, h); opdb_hprobe_next(&p, &i);) {
        const sig_entry *e = &si->e[i];
        if (e->hash == h && e->len == len && memcmp(e->sig, sig, len) == 0) return &si->e[i];
    }
    return NULL;
}

static sig_entry *si_find(sig_index *si, const opdb_strbuf *sig) {
    return si_find_h(si, sig->p, sig->n, opdb_hash_bytes(sig->p, sig->n, 5));
}

static void si_add(sig_index *si, const opdb_strbuf *sig, size_t row) {
    if (!si->arena.chunk_size) opdb_arena_init(&si->arena, 1 << 20);
    uint64_t h = opdb_hash_bytes(sig->p, sig->n, 5);
    sig_entry *e = si_find_h(si, sig->p, sig->n, h);
    if (!e) {
        if (si->n == si->cap) {
            si->cap = si->cap ? si->cap * 2 : 64;
            si->e = opdb_xrealloc(si->e, si->cap * sizeof *si->e);
        }
        e = &si->e[si->n];
        memset(e, 0, sizeof *e);
        e->sig = opdb_arena_strndup(&si->arena, sig->p, sig->n);
        e->len = sig->n;
        e->hash = h;
        e->row0 = row;
        e->n = 1;
        opdb_hindex_add(&si->ix, h, (uint32_t)si->n++);
        return;
    }
    if (e->n - 1 == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 2;
        e->more = opdb_xrealloc(e->more, e->cap * sizeof *e->more);
    }
    e->more[e->n++ - 1] = row;
}

static void si_free(sig_index *si) {
    for (size_t i = 0; i < si->n; i++) free(si->e[i].more);
    free(si->e);
    opdb_hindex_free(&si->ix);
    if (si->arena.chunk_size) opdb_arena_free(&si->arena);
}

static int cmp_dup(const void *a, const void *b) {
    const dup_sig *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->sig, y->sig);
}

/* ---- merging */

enum { MAX_LAYOUTS = 4 };

typedef struct merge_ctx {
    const opdb_update_opts *o;
    csvfile *f;
    ids id;
    const agg_layout *lay[MAX_LAYOUTS]; /* layouts seen, and their key ids */
    int lay_id[MAX_LAYOUTS][AGG_MAX_KEYS], nlay;
    sig_index si;
    extra_index xi;      /* opdb bench's extra values for this CSV */
    update_result *res;
    opdb_strbuf *log;
    opdb_strbuf sig, disp;
} merge_ctx;

static bool row_valid(const drow *r, const ids *id) {
    opdb_span a = drow_at(r, id->mb_dur), p = drow_at(r, id->prof_avg);
    return opdb_py_float_or_zero(a.p, a.n) > 0 || opdb_py_float_or_zero(p.p, p.n) > 0;
}

static void add_gap(merge_ctx *m, const drow *t) {
    opdb_span mbs = drow_at(t, m->id.mb_dur), ps = drow_at(t, m->id.prof_avg);
    double mb = opdb_py_float_or_zero(mbs.p, mbs.n), prof = opdb_py_float_or_zero(ps.p, ps.n);
    if (!(mb > 0 && prof > 0)) return;
    update_result *r = m->res;
    if (r->ngaps == r->capgaps) {
        r->capgaps = r->capgaps ? r->capgaps * 2 : 16;
        r->gaps = opdb_xrealloc(r->gaps, r->capgaps * sizeof *r->gaps);
    }
    sig_of_drow(t, &m->id, r->stem, &m->disp, true);
    gap *g = &r->gaps[r->ngaps++];
    g->op = opdb_xstrdup(r->stem);
    g->csv_name = opdb_xstrdup(r->name);
    g->sig = opdb_xstrdup(m->disp.p);
    g->mb = mb;
    g->prof = prof;
    g->diff = mb - prof < 0 ? prof - mb : mb - prof;
    g->ratio = mb / prof;
}

/* The key ids of a layout's keys in this file's key space (rows of one
 * aggregation share a handful of layouts). */
static const int *layout_ids(merge_ctx *m, const agg_layout *lay) {
    for (int k = 0; k < m->nlay; k++)
        if (m->lay[k] == lay) return m->lay_id[k];
    int k = m->nlay < MAX_LAYOUTS ? m->nlay++ : MAX_LAYOUTS - 1;
    m->lay[k] = lay;
    for (int i = 0; i < lay->n; i++) m->lay_id[k][i] = ks_add(&m->f->ks, lay->key[i]);
    return m->lay_id[k];
}

/* Copies the measured values of nr into t; returns whether Average
 * Duration(us) changed (compared stripped, as the reference). */
static bool apply(merge_ctx *m, drow *t, const agg_row *nr) {
    keyspace *ks = &m->f->ks;
    const int *ids = layout_ids(m, nr->lay);
    opdb_span old = opdb_py_strip(drow_at(t, m->id.mb_dur));
    char buf[400];
    opdb_span nv = agg_span(nr, AGG_K_DUR, buf);
    bool changed = !opdb_span_eq(old, opdb_py_strip(nv));
    drow_set(t, ks, m->id.mb_dur, nv);
    for (int i = 0; i < agg_nkeys(nr); i++)
        if (nr->lay->num[i] > 0) /* the "MicroBench <metric>" means */
            drow_set(t, ks, ids[i], agg_span(nr, i, buf));
    return changed;
}

/* The extra values measured for signature m->sig (opdb bench), if any. */
static void set_extras(merge_ctx *m, drow *t) {
    const opdb_update_extra *x = extra_find(&m->xi, m->sig.p);
    if (!x || x->drop || !x->values) return;
    for (size_t c = 0; c < m->o->nextra_cols; c++)
        if (x->values[c]) drow_set(t, &m->f->ks, ks_add(&m->f->ks, m->o->extra_cols[c]), opdb_span_cstr(x->values[c]));
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
    sig_entry *e = si_find(&m->si, &m->sig);
    if (!e) {
        sig_of_agg(nr, res->stem, &m->disp, true);
        if (allow_add) sv_push(&res->missing, opdb_xstrdup(m->disp.p));
        else opdb_sb_addf(m->log, "[WARN] match-only profiling row did not match %s: %s\n", res->name, m->disp.p);
        if (allow_add && !o->missing_only) {
            drow r = drow_new(&f->ks);
            char buf[400];
            const int *ids = layout_ids(m, nr->lay);
            for (int i = 0; i < agg_nkeys(nr); i++) drow_set(&r, &f->ks, ids[i], agg_span(nr, i, buf));
            set_extras(m, &r);
            push_row(f, r);
            si_add(&m->si, &m->sig, f->n - 1);
            res->added++;
        }
        return;
    }
    /* The reference updates the first duplicate only; opdb updates them all,
     * counting per database row so "Rows updated" is rows really changed. */
    size_t ntargets = o->quirks ? 1 : e->n;
    for (size_t k = 0; k < ntargets; k++) {
        drow *t = &f->rows[entry_row(e, k)];
        bool can_update = !o->missing_only || !row_valid(t, &m->id);
        if (!can_update) {
            if (!allow_add) continue;
            res->unchanged++;
        } else {
            if (apply(m, t, nr)) res->updated++;
            set_extras(m, t);
        }
        add_gap(m, t);
    }
}

/* ---- writing */

/* Renders the kept rows into the file through its buffer, flushing every
 * MiB so no whole-file copy is held in memory. */
static void write_rows(opdb_atomic_file *af, const strvec *cols, csvfile *f, const bool *keep) {
    opdb_strbuf *out = &af->buf;
    size_t nc = cols->n;
    opdb_span *cells = opdb_xmalloc((nc + 1) * sizeof *cells);
    int *id = opdb_xmalloc((nc + 1) * sizeof *id);
    for (size_t i = 0; i < nc; i++) {
        cells[i] = opdb_span_cstr(cols->v[i]);
        id[i] = ks_find(&f->ks, cols->v[i]);
    }
    opdb_csv_write_record(out, cells, nc);
    /* rows copied as read only when the columns are the file's own */
    bool same_columns = f->raw && nc == f->fields.n;
    for (size_t i = 0; i < nc && same_columns; i++) same_columns = strcmp(cols->v[i], f->fields.v[i]) == 0;
    for (size_t r = 0; r < f->n; r++) {
        if (!keep[r]) continue;
        const drow *row = &f->rows[r];
        if (same_columns && row->raw_len && !row->dirty) {
            opdb_sb_add(out, f->raw + row->raw_off, row->raw_len);
            if (out->n > (1u << 20)) opdb_atomic_flush(af);
            continue;
        }
        for (size_t i = 0; i < nc; i++) cells[i] = drow_at(row, id[i]);
        opdb_csv_write_record(out, cells, nc);
        if (out->n > (1u << 20)) opdb_atomic_flush(af);
    }
    free(id);
    free(cells);
}

static void result_names(update_result *res, const char *path) {
    memset(res, 0, sizeof *res);
    res->path = opdb_xstrdup(path);
    res->name = opdb_xstrdup(opdb_path_basename(path));
    size_t nl = strlen(res->name);
    res->stem = opdb_xstrdup(res->name);
    if (nl > 4 && strcmp(res->name + nl - 4, ".csv") == 0) res->stem[nl - 4] = '\0';
}

/* A DispatchFFNCombine file without EP Size borrows the single incoming value. */
static void legacy_ep_size(merge_ctx *m, strvec *cols, const agg_row *const *merge, size_t nmerge,
                           const agg_row *const *match, size_t nmatch) {
    strvec eps = {0};
    for (size_t i = 0; i < nmerge + nmatch; i++) {
        const agg_row *r = i < nmerge ? merge[i] : match[i - nmerge];
        char vb[400];
        opdb_span e = opdb_py_strip(opdb_span_cstr(agg_get(r, "EP Size", vb)));
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)e.n, e.p);
        if (e.n && sv_index(&eps, buf) < 0) sv_push(&eps, opdb_xstrdup(buf));
    }
    if (eps.n == 1) {
        sv_push(cols, opdb_xstrdup("EP Size"));
        int id = ks_add(&m->f->ks, "EP Size");
        for (size_t r = 0; r < m->f->n; r++) drow_set(&m->f->rows[r], &m->f->ks, id, opdb_span_cstr(eps.v[0]));
        opdb_sb_addf(m->log, "[WARN] %s has no EP Size column; using incoming EP Size=%s for legacy row matching.\n",
                     m->res->name, eps.v[0]);
    }
    sv_free(&eps);
}

int update_csv(const opdb_update_opts *o, const char *path, const agg_row *const *merge, size_t nmerge,
               const agg_row *const *match, size_t nmatch, update_result *res, opdb_strbuf *log, opdb_err *err) {
    result_names(res, path);
    csvfile f;
    memset(&f, 0, sizeof f);
    strvec cols = {0};
    bool exists = opdb_path_exists(path);
    if (exists) {
        if (load_csv(path, &f, err)) {
            csvfile_free(&f);
            return -1;
        }
        layout_existing(&f.fields, &cols);
    } else {
        ks_init(&f.ks, 140);
        layout_canonical(&cols);
        for (size_t i = 0; i < nmerge; i++)
            for (int k = 0; k < agg_nkeys(merge[i]); k++)
                if (sv_index(&cols, agg_key(merge[i], k)) < 0) sv_push(&cols, opdb_xstrdup(agg_key(merge[i], k)));
    }
    if (!o->quirks)
        for (size_t i = 0; i < o->nextra_cols; i++)
            if (sv_index(&cols, o->extra_cols[i]) < 0) sv_push(&cols, opdb_xstrdup(o->extra_cols[i]));
    for (size_t i = 0; i < cols.n; i++) ks_add(&f.ks, cols.v[i]);

    merge_ctx m;
    memset(&m, 0, sizeof m);
    m.o = o;
    m.f = &f;
    m.res = res;
    m.log = log;
    opdb_sb_init(&m.sig);
    opdb_sb_init(&m.disp);
    extra_index_build(&m.xi, o, res->stem);
    char stem_norm[256];
    opdb_normalize_op_name(res->stem, strlen(res->stem), stem_norm, sizeof stem_norm);
    if (strcmp(stem_norm, "DispatchFFNCombine") == 0 && sv_index(&cols, "EP Size") < 0)
        legacy_ep_size(&m, &cols, merge, nmerge, match, nmatch);
    for (size_t i = 0; i < cols.n; i++) f.ks.is_col[ks_add(&f.ks, cols.v[i])] = true;
    static const char *const sig_names[6] = {"Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
                                             "Output Data Types", "EP Size"};
    for (int i = 0; i < 6; i++) m.id.sig[i] = ks_find(&f.ks, sig_names[i]);
    m.id.mb_dur = ks_add(&f.ks, MB_DUR);
    m.id.prof_avg = ks_add(&f.ks, PROF_AVG_DUR);
    m.id.legacy = ks_find(&f.ks, LEGACY_MB_DUR);

    for (size_t r = 0; r < f.n; r++) {
        sig_of_drow(&f.rows[r], &m.id, res->stem, &m.sig, false);
        si_add(&m.si, &m.sig, r);
    }
    for (size_t i = 0; i < m.si.n; i++) {
        if (m.si.e[i].n < 2) continue;
        res->dups = opdb_xrealloc(res->dups, (res->ndups + 1) * sizeof *res->dups);
        sig_of_drow(&f.rows[m.si.e[i].row0], &m.id, res->stem, &m.disp, true);
        res->dups[res->ndups].sig = opdb_xstrdup(m.disp.p);
        res->dups[res->ndups++].count = m.si.e[i].n;
    }
    if (res->ndups > 1) qsort(res->dups, res->ndups, sizeof *res->dups, cmp_dup);
    for (size_t r = 0; r < f.n; r++) {
        drow *row = &f.rows[r];
        if (drow_has(row, m.id.legacy) && !drow_has(row, m.id.mb_dur))
            drow_link(row, &f.ks, m.id.mb_dur, row->v[m.id.legacy]);
        row->dirty = false; /* the snapshot for change detection is taken here */
    }
    size_t norig = f.n;

    for (size_t i = 0; i < nmerge; i++) merge_row(&m, merge[i], true);
    for (size_t i = 0; i < nmatch; i++) merge_row(&m, match[i], false);

    bool *keep = opdb_xmalloc((f.n + 1) * sizeof *keep);
    bool changed = f.n != norig;
    for (size_t r = 0; r < f.n; r++) {
        keep[r] = true;
        changed |= f.rows[r].dirty;
        bool drop = false;
        if (m.xi.ndrop) {
            sig_of_drow(&f.rows[r], &m.id, res->stem, &m.sig, false);
            const opdb_update_extra *x = extra_find(&m.xi, m.sig.p);
            drop = x && x->drop;
        }
        if (drop || (o->prune && !row_valid(&f.rows[r], &m.id))) {
            keep[r] = false;
            changed = true;
            sig_of_drow(&f.rows[r], &m.id, res->stem, &m.disp, true);
            sv_push(&res->deleted, opdb_xstrdup(m.disp.p));
        }
    }
    int rc = 0;
    if (!exists || changed) {
        if (!exists) {
            char *dir = opdb_path_parent(path);
            rc = opdb_mkdirs(dir, err);
            free(dir);
        }
        opdb_atomic_file af;
        if (rc == 0) rc = opdb_atomic_open(&af, path, err);
        if (rc == 0) {
            write_rows(&af, &cols, &f, keep);
            rc = opdb_atomic_commit(&af, err);
        }
    }
    free(keep);
    opdb_sb_free(&m.sig);
    opdb_sb_free(&m.disp);
    si_free(&m.si);
    extra_index_free(&m.xi);
    sv_free(&cols);
    csvfile_free(&f);
    return rc;
}
