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

/* The cells a lazy row keeps: what signatures, duplicate checks, pruning
 * and the gap report read.  Every other cell is read only when the row is
 * updated or has to be rendered again (row_mut). */
static const char *const k_lazy_names[] = {"Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
                                           "Output Data Types", "EP Size", MB_DUR, PROF_AVG_DUR};
enum { NLAZY = sizeof k_lazy_names / sizeof k_lazy_names[0] };

/* The readers keep this many cells of a record: a header that fills them
 * may have been cut, and writing it back would lose columns. */
enum { MAX_COLUMNS = 4096 };

typedef struct csvfile {
    keyspace ks;
    strvec fields;       /* header as read */
    char *buf;           /* the file's bytes after the header, as read (rows
                            point into it): view.data; NULL after the exact fallback */
    opdb_file_view view;
    int nh, *colkey;     /* header columns and their key ids */
    int header_keys;     /* key ids below this are the header's */
    int lazy_col[NLAZY], nlazy_cols; /* header columns of the kept cells */
    signed char *slot_of_key;        /* header key id -> kept cell, or -1 */
    int *col_of_key;     /* header key id -> its column */
    opdb_field *scratch; /* MAX_COLUMNS cells */
    struct row_patch *patch; /* per row read lazily (see row_patch) */
    size_t npatch;
    /* called for each lazy row as it is read (its cells still in cache) */
    void (*on_lazy_row)(void *ctx, struct csvfile *f, size_t r);
    void *on_lazy_row_ctx;
    size_t seen_lazy;    /* rows passed to on_lazy_row */
    bool reread;         /* the exact tokenizer read the file again */
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
    if (f->buf) opdb_file_view_close(&f->view);
    free(f->colkey);
    free(f->slot_of_key);
    free(f->col_of_key);
    free(f->scratch);
    free(f->patch);
    sv_free(&f->fields);
    ks_free(&f->ks);
}

/* A layout of aggregated rows in this file's key space: key ids, and for
 * every key id the layout position of the measured value apply() sets
 * there (MB_DUR and the metric means), else -1. */
typedef struct layout_keys {
    const agg_layout *lay;
    int id[AGG_MAX_KEYS];
    int *measured;      /* ks.cap entries */
    /* the file's measured columns in order and each one's layout entry
     * (write_spliced) */
    int nsplice, splice_col[AGG_MAX_KEYS], splice_li[AGG_MAX_KEYS];
} layout_keys;

/* The measurement applied to a lazy row, kept instead of reading the row in
 * full: its values are spliced into the row's bytes when it is written, or
 * set again (drow_set) when the row is read in full. */
typedef struct row_patch {
    const agg_row *nr;
    const layout_keys *lk;
    const struct row_patch *prev; /* measurements applied before (MatMul aliases), oldest last */
} row_patch;

/* A row's patches, oldest first (malloc'ed; *n of them). */
static const row_patch **patch_chain(const row_patch *last, size_t *n) {
    size_t np = 0;
    for (const row_patch *p = last; p; p = p->prev) np++;
    const row_patch **order = opdb_xmalloc((np ? np : 1) * sizeof *order);
    size_t k = np;
    for (const row_patch *p = last; p; p = p->prev) order[--k] = p;
    *n = np;
    return order;
}

static void put_measured(keyspace *ks, drow *t, const agg_row *nr, const int *ids) {
    char buf[400];
    drow_set(t, ks, ids[AGG_K_DUR], agg_span(nr, AGG_K_DUR, buf));
    for (int i = 0; i < agg_nkeys(nr); i++)
        if (nr->lay->num[i] > 0) /* the "MicroBench <metric>" means */
            drow_set(t, ks, ids[i], agg_span(nr, i, buf));
}

/* ---- rows, lazy or not */

/* row.get(key, "") of a row, lazy or not.  Of a lazy row only the kept
 * cells are read (every caller asks for those). */
static opdb_span cell(const csvfile *f, const drow *r, int id) {
    if (!r->lazy) return drow_at(r, id);
    int j = id >= 0 && id < f->header_keys ? f->slot_of_key[id] : -1;
    return j >= 0 ? r->v[j] : opdb_span_make("", 0);
}

/* DictReader: every header key present ("" for a short row); last duplicate wins. */
static drow dict_record(csvfile *f, const opdb_field *c, int nc) {
    drow r = drow_new(&f->ks);
    for (int i = 0; i < f->nh; i++) drow_ref(&r, f->colkey[i], i < nc ? c[i].p : "", i < nc ? c[i].n : 0);
    return r;
}

/* The row with every cell: a lazy row's bytes are copied and tokenized
 * (the whole file passed the fast tokenizer, so its records do too). */
static drow *row_mut(csvfile *f, size_t i) {
    drow *row = &f->rows[i];
    if (!row->lazy) return row;
    char *copy = opdb_arena_alloc(&f->ks.arena, (size_t)row->raw_len + 1);
    memcpy(copy, f->buf + row->raw_off, row->raw_len);
    copy[row->raw_len] = '\0';
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, copy, row->raw_len);
    int nc = 0;
    size_t off;
    if (opdb_csv_fast_next(&t, f->scratch, MAX_COLUMNS, &nc, &off) <= 0) nc = 0;
    drow d = dict_record(f, f->scratch, nc);
    d.raw_ok = row->raw_ok;
    d.raw_off = row->raw_off;
    d.raw_len = row->raw_len;
    d.dirty = row->dirty;
    *row = d;
    if (f->patch && f->patch[i].nr) { /* the measurements again, oldest first */
        size_t np;
        const row_patch **order = patch_chain(&f->patch[i], &np);
        for (size_t k = 0; k < np; k++) put_measured(&f->ks, row, order[k]->nr, order[k]->lk->id);
        free(order);
        f->patch[i].nr = NULL;
        f->patch[i].prev = NULL;
    }
    return row;
}

/* ---- loading */

static void start_header(csvfile *f, const opdb_field *h, int nh) {
    ks_init(&f->ks, nh + 140);
    f->nh = nh;
    f->colkey = opdb_xmalloc(((size_t)nh + 1) * sizeof *f->colkey);
    for (int i = 0; i < nh; i++) {
        char *name = opdb_xmalloc(h[i].n + 1);
        memcpy(name, h[i].p, h[i].n);
        name[h[i].n] = '\0';
        sv_push(&f->fields, name);
        f->colkey[i] = ks_add(&f->ks, name);
    }
    f->header_keys = f->ks.n;
}

/* A header that DictWriter writes back as it was read: no name twice. */
static bool header_unique(const csvfile *f) {
    for (int i = 0; i < f->nh; i++)
        for (int k = 0; k < i; k++)
            if (f->colkey[i] == f->colkey[k]) return false;
    return true;
}

/* Rows are kept lazy unless a rule reads other cells of every row: a header
 * with a name twice (last one wins), or a legacy duration column standing
 * in for a missing MB_DUR.  Returns the cells to skim (>= 1). */
static int plan_lazy(csvfile *f, bool *lazy) {
    int legacy = ks_find(&f->ks, LEGACY_MB_DUR), mb = ks_find(&f->ks, MB_DUR);
    *lazy = header_unique(f) && !(legacy >= 0 && mb < 0);
    int keep = 1;
    f->slot_of_key = opdb_xmalloc((size_t)f->header_keys + 1);
    memset(f->slot_of_key, -1, (size_t)f->header_keys + 1);
    f->col_of_key = opdb_xmalloc(((size_t)f->header_keys + 1) * sizeof *f->col_of_key);
    for (int i = 0; i < f->nh; i++) f->col_of_key[f->colkey[i]] = i;
    for (int j = 0; j < NLAZY; j++) {
        int id = ks_find(&f->ks, k_lazy_names[j]);
        if (id >= 0) f->slot_of_key[id] = (signed char)j;
        f->lazy_col[j] = -1;
        for (int i = 0; i < f->nh && id >= 0; i++)
            if (f->colkey[i] == id) f->lazy_col[j] = i;
        if (f->lazy_col[j] + 1 > keep) keep = f->lazy_col[j] + 1;
    }
    return *lazy ? keep : 1;
}

/* Rows the writer would reproduce byte for byte are copied as read instead
 * of rendered again: as many cells as the header, each quoted exactly when it
 * holds , " CR or LF (QUOTE_MINIMAL), and "\r\n" after the last cell only.
 * The fast tokenizer has already proved the quoting itself canonical.  The
 * cells are judged here (c: the first ones as written; quote_after: a quote
 * in the rest, judged by rendering) ... */
static bool record_fields_ok(const csvfile *f, const opdb_field *c, int nkept, int nc, bool quote_after) {
    if (nc != f->nh || f->nh < 2 || quote_after) return false;
    for (int i = 0; i < nkept; i++) {
        if (c[i].n < 2 || c[i].p[0] != '"') continue;
        bool special = false;
        for (size_t k = 1; k + 1 < c[i].n && !special; k++)
            special = c[i].p[k] == ',' || c[i].p[k] == '"' || c[i].p[k] == '\r' || c[i].p[k] == '\n';
        if (!special) return false;
    }
    return true;
}

/* ... and the last row's terminator once the next record's start (or the end
 * of the file) is known: exactly one "\r\n", no blank line after it. */
static void close_record(csvfile *f, size_t off, size_t end) {
    drow *row = &f->rows[f->n - 1];
    const char *r = f->buf;
    row->raw_off = off;
    row->raw_len = (uint32_t)(end - off);
    if (end - off < 3 || r[end - 2] != '\r' || r[end - 1] != '\n' || r[end - 3] == '\r' || r[end - 3] == '\n')
        row->raw_ok = false;
}

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
        start_header(f, c.f, c.nf);
        while ((rc = opdb_csv_file_next(&c, false)) > 0) {
            drow r = dict_record(f, c.f, c.nf);
            for (int i = 0; i < r.nv; i++)
                if (r.v[i].p) r.v[i].p = opdb_arena_strndup(&f->ks.arena, r.v[i].p, r.v[i].n);
            push_row(f, r);
        }
    } else {
        ks_init(&f->ks, 140);
    }
    if (rc < 0) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    opdb_csv_file_close(&c);
    return rc < 0 ? -1 : 0;
}

/* The header with the fast tokenizer's cells decoded. */
static void fast_header(csvfile *f, int nc) {
    size_t total = 0;
    for (int i = 0; i < nc; i++) total += f->scratch[i].n;
    char *names = opdb_xmalloc(total + 1);
    size_t o = 0;
    for (int i = 0; i < nc; i++) {
        size_t n = opdb_csv_unquote(f->scratch[i].p, f->scratch[i].n, names + o);
        f->scratch[i].p = names + o;
        f->scratch[i].n = (uint32_t)n;
        o += n;
    }
    start_header(f, f->scratch, nc);
    free(names);
}

/* A lazy row: its kept cells (decoded), the rest left in the buffer. */
static void lazy_record(csvfile *f, const opdb_field *c, int nkept) {
    drow r = {opdb_arena_alloc(&f->ks.arena, NLAZY * sizeof(opdb_span)), NLAZY, false, true, false, 0, 0};
    for (int j = 0; j < NLAZY; j++) {
        int col = f->lazy_col[j];
        if (col < 0 || col >= nkept) {
            r.v[j] = opdb_span_make("", 0);
        } else if (c[col].n >= 2 && c[col].p[0] == '"') {
            /* "x" and """x""": their value in place, else decoded */
            const char *v;
            size_t vn;
            if (opdb_csv_quoted_view(c[col].p, c[col].n, &v, &vn)) {
                r.v[j] = opdb_span_make(v, vn);
                continue;
            }
            char *d = opdb_arena_alloc(&f->ks.arena, c[col].n);
            r.v[j] = opdb_span_make(d, opdb_csv_unquote(c[col].p, c[col].n, d));
        } else {
            r.v[j] = opdb_span_make(c[col].p, c[col].n);
        }
    }
    push_row(f, r);
}

/* Fast path: 0, or 1 when the file needs the exact rules (nothing kept). */
static int load_fast(const char *path, csvfile *f, size_t len, opdb_err *err) {
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, f->buf, len);
    int nc, rc;
    size_t off;
    bool quote_after;
    rc = opdb_csv_fast_skim(&t, f->scratch, MAX_COLUMNS, &nc, &off, &quote_after);
    if (rc > 0 && nc >= MAX_COLUMNS) {
        ks_init(&f->ks, 140);
        return too_wide(path, err);
    }
    if (rc <= 0) return rc < 0 ? 1 : 0;
    fast_header(f, nc);
    bool lazy;
    int keep = plan_lazy(f, &lazy);
    size_t prev = SIZE_MAX; /* start of the previous record */
    while ((rc = opdb_csv_fast_skim(&t, f->scratch, keep, &nc, &off, &quote_after)) > 0) {
        if (prev != SIZE_MAX) close_record(f, prev, off);
        if (f->n == 1 && off > prev && f->cap < 2 * (len / (off - prev))) { /* rows like the first: room for all */
            f->cap = 2 * (len / (off - prev)) + 16;
            f->rows = opdb_xrealloc(f->rows, f->cap * sizeof *f->rows);
        }
        int nkept = nc < keep ? nc : keep;
        lazy_record(f, f->scratch, nkept);
        f->rows[f->n - 1].raw_ok = record_fields_ok(f, f->scratch, nkept, nc, quote_after);
        if (lazy && f->on_lazy_row) {
            f->on_lazy_row(f->on_lazy_row_ctx, f, f->n - 1);
            f->seen_lazy = f->n;
        }
        prev = off;
    }
    if (rc < 0) return 1;
    if (prev != SIZE_MAX) close_record(f, prev, len);
    if (!header_unique(f))
        for (size_t i = 0; i < f->n; i++) f->rows[i].raw_ok = false;
    if (!lazy)
        for (size_t i = 0; i < f->n; i++) row_mut(f, i);
    else
        f->patch = opdb_xcalloc(f->n + 1, sizeof *f->patch), f->npatch = f->n;
    return 0;
}

/* The reference path (opts.eager or OPDB_UPDATE_EAGER=1): every row read by
 * the exact tokenizer into a dict row and rendered again on write; no lazy
 * rows, patches, splices or copies.  Tests run both paths and compare. */
static bool eager_rows(const opdb_update_opts *o) {
    const char *env = getenv("OPDB_UPDATE_EAGER");
    return o->eager || (env && strcmp(env, "1") == 0);
}

static int load_csv(const char *path, csvfile *f, bool eager, opdb_err *err) {
    uint64_t body;
    int fd = opdb_csv_open(path, &body, err);
    if (fd < 0) return -1;
    struct stat st;
    uint64_t size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    f->scratch = opdb_xmalloc(MAX_COLUMNS * sizeof *f->scratch);
    /* mapped: the rows are read, and unchanged ones written, from the page cache */
    int rc = opdb_file_view_open(&f->view, fd, path, body, size, true, err);
    close(fd);
    if (rc) return rc;
    f->buf = f->view.data;
    size_t len = f->view.len;
    /* A leading blank line is a header of its own for DictReader: exact
     * rules; so are files too big for 32-bit record lengths. */
    if (!eager && len && len <= UINT32_MAX && f->buf[0] != '\n' && f->buf[0] != '\r') {
        int rc = load_fast(path, f, len, err);
        if (rc <= 0) return rc;
        /* Anomaly: start again with the exact tokenizer. */
        f->reread = true;
        f->seen_lazy = 0;
        free(f->rows);
        f->rows = NULL;
        f->n = f->cap = 0;
        free(f->colkey);
        f->colkey = NULL;
        free(f->slot_of_key);
        f->slot_of_key = NULL;
        free(f->col_of_key);
        f->col_of_key = NULL;
        sv_free(&f->fields);
        ks_free(&f->ks);
    }
    opdb_file_view_close(&f->view);
    f->buf = NULL;
    return load_exact(path, f, err);
}

/* ---- signatures */

typedef struct ids {
    int sig[6];          /* Input Shapes .. EP Size */
    int mb_dur, prof_avg, legacy;
} ids;

static void sig_of_drow(const csvfile *f, const drow *r, const ids *id, const char *op, opdb_strbuf *out,
                        bool display) {
    opdb_sig_cells c = {cell(f, r, id->sig[0]), cell(f, r, id->sig[1]), cell(f, r, id->sig[2]),
                        cell(f, r, id->sig[3]), cell(f, r, id->sig[4]), cell(f, r, id->sig[5])};
    if (display) opdb_signature_display(&c, out);
    else opdb_signature(&c, op, out);
}

static void sig_of_agg(const agg_row *r, const char *op, opdb_strbuf *out, bool display) {
    const char *sc[6];
    agg_sig_cells(r, sc);
    opdb_sig_cells c = {opdb_span_cstr(sc[0]), opdb_span_cstr(sc[1]), opdb_span_cstr(sc[2]),
                        opdb_span_cstr(sc[3]), opdb_span_cstr(sc[4]), opdb_span_cstr(sc[5])};
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

/* Rows indexed as a file is read wait this many rows in a queue, so that
 * the index slot each will probe is asked for from memory first. */
enum { SI_AHEAD = 8 };

typedef struct si_pending {
    uint64_t hash;
    const char *sig;  /* in the index's arena */
    size_t len, row;
} si_pending;

typedef struct sig_index {
    sig_entry *e;   /* first-seen order */
    size_t n, cap;
    opdb_hindex ix;
    opdb_arena arena;
    si_pending pend[SI_AHEAD]; /* si_add_soon's queue, oldest at phead */
    int phead, npend;
} sig_index;

static sig_entry *si_find_h(sig_index *si, const char *sig, size_t len, uint64_t h) {
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&si->ix, h); opdb_hprobe_next(&p, &i);) {
        const sig_entry *e = &si->e[i];
        if (e->hash == h && e->len == len && memcmp(e->sig, sig, len) == 0) return &si->e[i];
    }
    return NULL;
}


static uint64_t si_hash(const char *sig, size_t n) { return opdb_hash_bytes(sig, n, 5); }

/* Files row under its signature; sig_in_arena: sig is a copy the index
 * keeps (else it is copied when new). */
static void si_insert(sig_index *si, const char *sig, size_t len, uint64_t h, size_t row, bool sig_in_arena) {
    sig_entry *e = si_find_h(si, sig, len, h);
    if (!e) {
        if (si->n == si->cap) {
            si->cap = si->cap ? si->cap * 2 : 64;
            si->e = opdb_xrealloc(si->e, si->cap * sizeof *si->e);
        }
        e = &si->e[si->n];
        memset(e, 0, sizeof *e);
        e->sig = sig_in_arena ? sig : opdb_arena_strndup(&si->arena, sig, len);
        e->len = len;
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

/* Files the oldest queued row. */
static void si_file_oldest(sig_index *si) {
    const si_pending *q = &si->pend[si->phead];
    si_insert(si, q->sig, q->len, q->hash, q->row, true);
    si->phead = (si->phead + 1) % SI_AHEAD;
    si->npend--;
}

/* Files the queued rows, oldest first (first-seen order is kept). */
static void si_flush(sig_index *si) {
    while (si->npend > 0) si_file_oldest(si);
}

static void si_add(sig_index *si, const opdb_strbuf *sig, size_t row) {
    if (!si->arena.chunk_size) opdb_arena_init(&si->arena, 1 << 20);
    si_flush(si);
    si_insert(si, sig->p, sig->n, si_hash(sig->p, sig->n), row, false);
}

/* si_add a few rows later: the row's slot is asked for now (si_flush files
 * what is left). */
static void si_add_soon(sig_index *si, const opdb_strbuf *sig, size_t row) {
    if (!si->arena.chunk_size) opdb_arena_init(&si->arena, 1 << 20);
    uint64_t h = si_hash(sig->p, sig->n);
    if (si->ix.nslots) __builtin_prefetch(&si->ix.slot[h & (si->ix.nslots - 1)]);
    if (si->npend == SI_AHEAD) si_file_oldest(si);
    si_pending *q = &si->pend[(si->phead + si->npend++) % SI_AHEAD];
    *q = (si_pending){h, opdb_arena_strndup(&si->arena, sig->p, sig->n), sig->n, row};
}

/* Room for n signatures (a file's rows, estimated from its first): no
 * growing copies of the entries and the index as the file is read. */
static void si_reserve(sig_index *si, size_t n) {
    if (n <= si->cap) return;
    si->e = opdb_xrealloc(si->e, n * sizeof *si->e);
    si->cap = n;
    opdb_hindex_reserve(&si->ix, n);
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
    layout_keys *lay[MAX_LAYOUTS]; /* layouts seen (in the key space's arena) */
    int nlay;
    sig_index si;
    extra_index xi;      /* opdb bench's extra values for this CSV */
    update_result *res;
    opdb_strbuf *log;
    opdb_strbuf sig, disp;
    bool own_sig_reusable; /* signatures do not read EP Size here */
    int own_class;         /* opdb_signature_class of the file's operator */
    const char *class_op;  /* the last aggregated row's op looked at (interned), */
    bool class_same;       /* and whether its class is own_class */
} merge_ctx;

static bool row_valid(const csvfile *f, const drow *r, const ids *id) {
    opdb_span a = cell(f, r, id->mb_dur), p = cell(f, r, id->prof_avg);
    return opdb_py_float_or_zero(a.p, a.n) > 0 || opdb_py_float_or_zero(p.p, p.n) > 0;
}

static void add_gap(merge_ctx *m, const drow *t) {
    opdb_span mbs = cell(m->f, t, m->id.mb_dur), ps = cell(m->f, t, m->id.prof_avg);
    double mb = opdb_py_float_or_zero(mbs.p, mbs.n), prof = opdb_py_float_or_zero(ps.p, ps.n);
    if (!(mb > 0 && prof > 0)) return;
    /* only hotspots are reported (update_report.c): ratio outside [0.8, 1.2] */
    double ratio = mb / prof;
    if (!(ratio < 0.8 || ratio > 1.2)) return;
    update_result *r = m->res;
    if (r->ngaps == r->capgaps) {
        r->capgaps = r->capgaps ? r->capgaps * 2 : 16;
        r->gaps = opdb_xrealloc(r->gaps, r->capgaps * sizeof *r->gaps);
    }
    sig_of_drow(m->f, t, &m->id, r->stem, &m->disp, true);
    gap *g = &r->gaps[r->ngaps++];
    g->op = opdb_xstrdup(r->stem);
    g->csv_name = opdb_xstrdup(r->name);
    g->sig = opdb_xstrdup(m->disp.p);
    g->mb = mb;
    g->prof = prof;
    g->diff = mb - prof < 0 ? prof - mb : mb - prof;
    g->ratio = ratio;
}

/* A layout's keys in this file's key space (rows of one aggregation share
 * a handful of layouts). */
static const layout_keys *layout_keys_of(merge_ctx *m, const agg_layout *lay) {
    for (int k = 0; k < m->nlay; k++)
        if (m->lay[k]->lay == lay) return m->lay[k];
    keyspace *ks = &m->f->ks;
    layout_keys *lk = opdb_arena_alloc(&ks->arena, sizeof *lk);
    lk->lay = lay;
    for (int i = 0; i < lay->n; i++) lk->id[i] = ks_add(ks, lay->key[i]);
    lk->measured = opdb_arena_alloc(&ks->arena, (size_t)ks->cap * sizeof *lk->measured);
    for (int k = 0; k < ks->cap; k++) lk->measured[k] = -1;
    for (int i = lay->n - 1; i >= 0; i--)
        if (lk->id[i] >= 0 && (i == AGG_K_DUR || lay->num[i] > 0)) lk->measured[lk->id[i]] = i;
    lk->nsplice = 0; /* header columns: only a file read by the fast path has its rows spliced */
    for (int i = 0; m->f->colkey && i < m->f->nh && lk->nsplice < AGG_MAX_KEYS; i++) {
        int li = lk->measured[m->f->colkey[i]];
        if (li < 0) continue;
        lk->splice_col[lk->nsplice] = i;
        lk->splice_li[lk->nsplice++] = li;
    }
    if (m->nlay == MAX_LAYOUTS) m->nlay--; /* forget one; the old one stays valid */
    m->lay[m->nlay++] = lk;
    return lk;
}

/* Copies the measured values of nr into t; returns whether Average
 * Duration(us) changed (compared stripped, as the reference). */
static bool apply(merge_ctx *m, drow *t, const agg_row *nr) {
    opdb_span old = opdb_py_strip(drow_at(t, m->id.mb_dur));
    char buf[400];
    opdb_span nv = agg_span(nr, AGG_K_DUR, buf);
    bool changed = !opdb_span_eq(old, opdb_py_strip(nv));
    put_measured(&m->f->ks, t, nr, layout_keys_of(m, nr->lay)->id);
    return changed;
}

/* apply() for a lazy row that has no patch yet and keeps MB_DUR: the new
 * duration goes into the kept cell, the rest is kept as a patch. */
static bool apply_lazy(merge_ctx *m, size_t ri, const agg_row *nr) {
    csvfile *f = m->f;
    drow *t = &f->rows[ri];
    int slot = f->slot_of_key[m->id.mb_dur];
    char buf[400];
    opdb_span nv = agg_span(nr, AGG_K_DUR, buf);
    bool changed = !opdb_span_eq(opdb_py_strip(t->v[slot]), opdb_py_strip(nv));
    t->v[slot] = opdb_span_make(opdb_arena_strndup(&f->ks.arena, nv.p, nv.n), nv.n);
    if (f->patch[ri].nr) { /* keep the earlier measurement for replay and change detection */
        row_patch *earlier = opdb_arena_alloc(&f->ks.arena, sizeof *earlier);
        *earlier = f->patch[ri];
        f->patch[ri].prev = earlier;
    }
    f->patch[ri].nr = nr;
    f->patch[ri].lk = layout_keys_of(m, nr->lay);
    return changed;
}

/* A lazy row can take nr as a patch: it keeps MB_DUR, and any earlier
 * patch has nr's layout (so both set the same keys). */
static bool lazy_patchable(const merge_ctx *m, size_t ri, const agg_row *nr) {
    const csvfile *f = m->f;
    return f->rows[ri].lazy && (!f->patch[ri].nr || f->patch[ri].nr->lay == nr->lay) &&
           m->id.mb_dur < f->header_keys && f->slot_of_key[m->id.mb_dur] >= 0;
}

/* Whether a lazy row's patches change a written column, by drow_set's rule:
 * each measured value against the value before it (the row's own first). */
static bool patch_changes(csvfile *f, size_t ri) {
    const drow *row = &f->rows[ri];
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, f->buf + row->raw_off, row->raw_len);
    int nc = 0;
    size_t off;
    bool quote_after;
    if (opdb_csv_fast_skim(&t, f->scratch, f->nh, &nc, &off, &quote_after) <= 0) nc = 0;
    size_t np, k;
    const row_patch **order = patch_chain(&f->patch[ri], &np);
    /* the current value of each key, as it would be after each drow_set */
    opdb_span *cur = opdb_xcalloc((size_t)f->ks.cap + 1, sizeof *cur);
    bool *known = opdb_xcalloc((size_t)f->ks.cap + 1, sizeof *known);
    opdb_arena vals;
    opdb_arena_init(&vals, 4096);
    bool changes = false;
    for (k = 0; k < np && !changes; k++) {
        const row_patch *p = order[k];
        const agg_layout *lay = p->nr->lay;
        for (int i = 0; i < lay->n && !changes; i++) {
            int id = p->lk->id[i];
            if (id < 0 || p->lk->measured[id] != i || !f->ks.is_col[id]) continue;
            if (!known[id]) {
                int col = id < f->header_keys ? f->col_of_key[id] : -1;
                cur[id] = opdb_span_make("", 0);
                if (col >= 0 && col < nc) {
                    char *d = opdb_arena_alloc(&vals, f->scratch[col].n + 1);
                    cur[id] = opdb_span_make(d, opdb_csv_unquote(f->scratch[col].p, f->scratch[col].n, d));
                }
                known[id] = true;
            }
            char buf[400];
            opdb_span v = agg_span(p->nr, i, buf);
            changes = !opdb_span_eq(cur[id], v);
            cur[id] = opdb_span_make(opdb_arena_strndup(&vals, v.p, v.n), v.n);
        }
    }
    opdb_arena_free(&vals);
    free(known);
    free(cur);
    free(order);
    return changes;
}

/* The extra values measured for signature m->sig (opdb bench), if any. */
static void set_extras(merge_ctx *m, drow *t) {
    const opdb_update_extra *x = extra_find(&m->xi, m->sig.p);
    if (!x || x->drop || !x->values) return;
    for (size_t c = 0; c < m->o->nextra_cols; c++)
        if (x->values[c]) drow_set(t, &m->f->ks, ks_add(&m->f->ks, m->o->extra_cols[c]), opdb_span_cstr(x->values[c]));
}

static bool has_extras(merge_ctx *m) {
    const opdb_update_extra *x = extra_find(&m->xi, m->sig.p);
    return x && !x->drop && x->values;
}

/* The signature of nr for this file is the one the aggregation computed:
 * its op's signature rules are the file's (MatMul aliases, say). */
static bool sig_reusable(merge_ctx *m, const agg_row *nr) {
    if (!m->own_sig_reusable || !nr->key_sig) return false;
    if (nr->key_op != m->class_op) { /* a group's op name is shared by its rows */
        m->class_op = nr->key_op;
        m->class_same = strcmp(nr->key_op, m->res->stem) == 0 || opdb_signature_class(nr->key_op) == m->own_class;
    }
    return m->class_same;
}

/* pre: the row's signature index hash when sig_reusable (merge_list). */
static void merge_row(merge_ctx *m, const agg_row *nr, bool allow_add, const uint64_t *pre) {
    const opdb_update_opts *o = m->o;
    update_result *res = m->res;
    csvfile *f = m->f;
    if (!o->quirks && nr->no_numeric_sample) {
        /* Nothing measured (every sample non-numeric): keep old values, report it. */
        sig_of_agg(nr, res->stem, &m->disp, true);
        sv_push(&res->no_sample, opdb_xstrdup(m->disp.p));
        return;
    }
    if (pre) {
        opdb_sb_clear(&m->sig);
        opdb_sb_add(&m->sig, nr->key_sig, nr->key_sig_len);
    } else {
        sig_of_agg(nr, res->stem, &m->sig, false);
    }
    sig_entry *e = si_find_h(&m->si, m->sig.p, m->sig.n, pre ? *pre : si_hash(m->sig.p, m->sig.n));
    if (!e) {
        sig_of_agg(nr, res->stem, &m->disp, true);
        if (allow_add) sv_push(&res->missing, opdb_xstrdup(m->disp.p));
        else opdb_sb_addf(m->log, "[WARN] match-only profiling row did not match %s: %s\n", res->name, m->disp.p);
        if (allow_add && !o->missing_only) {
            drow r = drow_new(&f->ks);
            char buf[400];
            const int *ids = layout_keys_of(m, nr->lay)->id;
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
        bool can_update = !o->missing_only || !row_valid(f, t, &m->id);
        if (!can_update) {
            if (!allow_add) continue;
            res->unchanged++;
        } else {
            size_t ri = entry_row(e, k);
            if (lazy_patchable(m, ri, nr) && !has_extras(m)) {
                if (apply_lazy(m, ri, nr)) res->updated++;
            } else {
                t = row_mut(f, ri);
                if (apply(m, t, nr)) res->updated++;
                set_extras(m, t);
            }
            t = &f->rows[ri];
        }
        add_gap(m, t);
    }
}

/* merge_row over a list, with what each row will look up asked for from
 * memory a few rows ahead: the aggregated row, then its signature, then
 * the index slot and entry of that signature. */
static void merge_list(merge_ctx *m, const agg_row *const *rows, size_t n, bool allow_add) {
    /* stage distances, in rows behind the lead row i: each stage reads what
     * the one before asked for and asks for what the next one reads */
    enum { RING = 64, TO_SIG = 8, TO_SLOT = 16, TO_ENTRY = 24, TO_ROW = 32, TO_CELL = 40, TO_MERGE = 48 };
    uint64_t hash[RING];
    bool reuse[RING];
    size_t row_of[RING]; /* the matching database row, when the probe found one (a hint) */
    const csvfile *f = m->f;
    for (size_t i = 0; i < n + TO_MERGE; i++) {
        size_t k;
        if (i < n) __builtin_prefetch(rows[i]);
        if (i >= TO_SIG && (k = i - TO_SIG) < n && (reuse[k % RING] = sig_reusable(m, rows[k]))) {
            __builtin_prefetch(rows[k]->key_sig);
            __builtin_prefetch(rows[k]->key_sig + 64);
        }
        if (i >= TO_SLOT && (k = i - TO_SLOT) < n && reuse[k % RING]) {
            uint64_t h = hash[k % RING] = si_hash(rows[k]->key_sig, rows[k]->key_sig_len);
            if (m->si.ix.nslots) __builtin_prefetch(&m->si.ix.slot[h & (m->si.ix.nslots - 1)]);
        }
        if (i >= TO_ENTRY && (k = i - TO_ENTRY) < n) {
            row_of[k % RING] = SIZE_MAX;
            uint32_t idx;
            if (reuse[k % RING]) {
                opdb_hprobe pr = opdb_hindex_probe(&m->si.ix, hash[k % RING]);
                if (opdb_hprobe_next(&pr, &idx)) {
                    __builtin_prefetch(&m->si.e[idx]);
                    row_of[k % RING] = idx;
                }
            }
        }
        if (i >= TO_ROW && (k = i - TO_ROW) < n && row_of[k % RING] != SIZE_MAX) {
            const sig_entry *e = &m->si.e[row_of[k % RING]];
            __builtin_prefetch(e->sig);
            __builtin_prefetch(e->sig + 64); /* signatures take ~80 bytes */
            row_of[k % RING] = e->row0 < f->n ? e->row0 : SIZE_MAX;
            if (row_of[k % RING] != SIZE_MAX) {
                __builtin_prefetch(&f->rows[e->row0]);
                if (e->row0 < f->npatch) __builtin_prefetch(&f->patch[e->row0]);
            }
        }
        if (i >= TO_CELL && (k = i - TO_CELL) < n && row_of[k % RING] != SIZE_MAX) {
            const drow *d = &f->rows[row_of[k % RING]];
            if (d->lazy) {
                __builtin_prefetch(d->v);
                __builtin_prefetch(f->buf + d->raw_off); /* its first cells */
                __builtin_prefetch(f->buf + d->raw_off + 64);
                __builtin_prefetch(f->buf + d->raw_off + 128);
            }
        }
        if (i >= TO_MERGE && (k = i - TO_MERGE) < n)
            merge_row(m, rows[k], allow_add, reuse[k % RING] ? &hash[k % RING] : NULL);
    }
}

/* A lazy row's signature as soon as it is read: its kept cells 0..5 are
 * the signature's cells (k_lazy_names), as sig_of_drow would read them. */
static void index_at_load(void *ctx, csvfile *f, size_t r) {
    merge_ctx *m = ctx;
    if (r == 1) si_reserve(&m->si, f->cap / 2 + 16); /* f->cap: twice the rows the first one suggests */
    const drow *row = &f->rows[r];
    opdb_sig_cells c = {row->v[0], row->v[1], row->v[2], row->v[3], row->v[4], row->v[5]};
    opdb_signature(&c, m->res->stem, &m->sig);
    si_add_soon(&m->si, &m->sig, r);
}

/* ---- writing */

/* A lazy row with a patch, as rendering it would write it: its bytes with
 * the measured cells replaced (every other cell is written as read, which
 * raw_ok says is how the writer renders it). */
static void write_spliced(opdb_strbuf *out, csvfile *f, size_t ri) {
    const drow *row = &f->rows[ri];
    const row_patch *p = &f->patch[ri];
    const layout_keys *lk = p->lk;
    const char *rec = f->buf + row->raw_off, *run = rec;
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, (char *)rec, row->raw_len);
    int nc = 0, want = lk->nsplice ? lk->splice_col[lk->nsplice - 1] + 1 : 1; /* cells up to the last measured one */
    size_t off;
    bool quote_after;
    if (opdb_csv_fast_skim(&t, f->scratch, want, &nc, &off, &quote_after) <= 0) nc = 0;
    /* room for the row and its longest values: the pieces are copied unchecked */
    opdb_sb_reserve(out, row->raw_len + (size_t)lk->nsplice * 400);
    char *o = out->p + out->n;
    char buf[400];
    for (int k = 0; k < lk->nsplice; k++) {
        int i = lk->splice_col[k];
        if (i >= nc) break; /* a short row */
        opdb_span v = agg_span(p->nr, lk->splice_li[k], buf);
        size_t gap = (size_t)(f->scratch[i].p - run);
        memcpy(o, run, gap);
        memcpy(o + gap, v.p, v.n); /* a number ("%.6f", nan, inf) or "": never quoted */
        o += gap + v.n;
        run = f->scratch[i].p + f->scratch[i].n;
    }
    size_t rest = (size_t)(rec + row->raw_len - run);
    memcpy(o, run, rest);
    out->n = (size_t)(o + rest - out->p);
}

/* A run of bytes copied as read: long ones go to the file directly, short
 * ones through the buffer. */
static void put_run(opdb_atomic_file *af, const char *p, size_t n) {
    if (n >= ((size_t)64 << 10)) {
        opdb_atomic_append_direct(af, p, n);
        return;
    }
    opdb_sb_add(&af->buf, p, n);
    if (af->buf.n > (1u << 20)) opdb_atomic_flush(af);
}

/* Renders the kept rows into the file through its buffer, flushing every
 * MiB so no whole-file copy is held in memory. */
static void write_rows(opdb_atomic_file *af, const strvec *cols, csvfile *f, const bool *keep) {
    opdb_strbuf *out = &af->buf;
    opdb_sb_reserve(out, (1u << 20) + (64u << 10)); /* flushed past 1 MiB: never grown by copying */
    size_t nc = cols->n;
    opdb_span *cells = opdb_xmalloc((nc + 1) * sizeof *cells);
    int *id = opdb_xmalloc((nc + 1) * sizeof *id);
    for (size_t i = 0; i < nc; i++) {
        cells[i] = opdb_span_cstr(cols->v[i]);
        id[i] = ks_find(&f->ks, cols->v[i]);
    }
    opdb_csv_write_record(out, cells, nc);
    /* rows copied as read only when the columns are the file's own */
    bool same_columns = f->buf && nc == f->fields.n;
    for (size_t i = 0; i < nc && same_columns; i++) same_columns = strcmp(cols->v[i], f->fields.v[i]) == 0;
    /* a patched row's values are far away: its aggregated row is asked for
     * 64 rows ahead, the metric sums that row points at 32 rows ahead (most
     * rows are copied as read, in a fraction of a memory access's time) */
    enum { AHEAD = 32 };
    size_t run_off = 0, run_len = 0; /* rows to copy as read, not yet written */
    const row_patch *patch = f->patch;
    size_t npatch = f->npatch; /* rows added later have none */
    for (size_t r = 0; r < f->n; r++) {
        if (r + 2 * AHEAD < npatch && patch[r + 2 * AHEAD].nr) __builtin_prefetch(patch[r + 2 * AHEAD].nr);
        if (r + AHEAD < npatch && patch[r + AHEAD].nr) {
            for (int h = 0; h < 2; h++) {
                const double *ms = patch[r + AHEAD].nr->half[h];
                if (ms) __builtin_prefetch(ms), __builtin_prefetch((const char *)ms + 64);
            }
        }
        if (!keep[r]) continue;
        const drow *row = &f->rows[r];
        bool patched = row->lazy && f->patch[r].nr;
        if (same_columns && row->raw_ok && !row->dirty && !patched) {
            /* rows copied as read, back to back in the file: one run */
            if (run_len && row->raw_off != run_off + run_len) {
                put_run(af, f->buf + run_off, run_len);
                run_len = 0;
            }
            if (!run_len) run_off = row->raw_off;
            run_len += row->raw_len;
            continue;
        }
        if (run_len) {
            put_run(af, f->buf + run_off, run_len);
            run_len = 0;
        }
        if (same_columns && row->raw_ok && !row->dirty) {
            write_spliced(out, f, r);
            if (out->n > (1u << 20)) opdb_atomic_flush(af);
            continue;
        }
        row = row_mut(f, r);
        for (size_t i = 0; i < nc; i++) cells[i] = drow_at(row, id[i]);
        opdb_csv_write_record(out, cells, nc);
        if (out->n > (1u << 20)) opdb_atomic_flush(af);
    }
    if (run_len) put_run(af, f->buf + run_off, run_len);
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
        for (size_t r = 0; r < m->f->n; r++) drow_set(row_mut(m->f, r), &m->f->ks, id, opdb_span_cstr(eps.v[0]));
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
    merge_ctx m;
    memset(&m, 0, sizeof m);
    m.o = o;
    m.f = &f;
    m.res = res;
    m.log = log;
    opdb_sb_init(&m.sig);
    opdb_sb_init(&m.disp);
    char stem_norm[256];
    opdb_normalize_op_name(res->stem, strlen(res->stem), stem_norm, sizeof stem_norm);
    /* EP Size may still change (legacy_ep_size), and only DFC signatures read it */
    m.own_sig_reusable = strcmp(stem_norm, "DispatchFFNCombine") != 0;
    m.own_class = opdb_signature_class(res->stem);
    if (m.own_sig_reusable) {
        f.on_lazy_row = index_at_load;
        f.on_lazy_row_ctx = &m;
    }
    bool exists = opdb_path_exists(path);
    if (exists) {
        if (load_csv(path, &f, eager_rows(o), err)) {
            opdb_sb_free(&m.sig);
            opdb_sb_free(&m.disp);
            si_free(&m.si);
            csvfile_free(&f);
            return -1;
        }
        if (f.reread) { /* rows indexed before the anomaly are gone */
            si_free(&m.si);
            memset(&m.si, 0, sizeof m.si);
        }
        si_flush(&m.si); /* the last rows index_at_load queued */
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

    extra_index_build(&m.xi, o, res->stem);
    if (strcmp(stem_norm, "DispatchFFNCombine") == 0 && sv_index(&cols, "EP Size") < 0)
        legacy_ep_size(&m, &cols, merge, nmerge, match, nmatch);
    for (size_t i = 0; i < cols.n; i++) f.ks.is_col[ks_add(&f.ks, cols.v[i])] = true;
    static const char *const sig_names[6] = {"Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
                                             "Output Data Types", "EP Size"};
    for (int i = 0; i < 6; i++) m.id.sig[i] = ks_find(&f.ks, sig_names[i]);
    m.id.mb_dur = ks_add(&f.ks, MB_DUR);
    m.id.prof_avg = ks_add(&f.ks, PROF_AVG_DUR);
    m.id.legacy = ks_find(&f.ks, LEGACY_MB_DUR);

    for (size_t r = f.seen_lazy; r < f.n; r++) {
        sig_of_drow(&f, &f.rows[r], &m.id, res->stem, &m.sig, false);
        si_add(&m.si, &m.sig, r);
    }
    for (size_t i = 0; i < m.si.n; i++) {
        if (m.si.e[i].n < 2) continue;
        res->dups = opdb_xrealloc(res->dups, (res->ndups + 1) * sizeof *res->dups);
        sig_of_drow(&f, &f.rows[m.si.e[i].row0], &m.id, res->stem, &m.disp, true);
        res->dups[res->ndups].sig = opdb_xstrdup(m.disp.p);
        res->dups[res->ndups++].count = m.si.e[i].n;
    }
    if (res->ndups > 1) qsort(res->dups, res->ndups, sizeof *res->dups, cmp_dup);
    for (size_t r = 0; r < f.n; r++) {
        drow *row = &f.rows[r];
        /* (a file with the legacy column and no MB_DUR has no lazy rows) */
        if (!row->lazy && drow_has(row, m.id.legacy) && !drow_has(row, m.id.mb_dur))
            drow_link(row, &f.ks, m.id.mb_dur, row->v[m.id.legacy]);
        row->dirty = false; /* the snapshot for change detection is taken here */
    }
    size_t norig = f.n;

    merge_list(&m, merge, nmerge, true);
    merge_list(&m, match, nmatch, false);

    bool *keep = opdb_xmalloc((f.n + 1) * sizeof *keep);
    bool changed = f.n != norig;
    for (size_t r = 0; r < f.n; r++) {
        keep[r] = true;
        changed |= f.rows[r].dirty;
        if (!changed && f.patch && r < norig && f.patch[r].nr) changed = patch_changes(&f, r);
        bool drop = false;
        if (m.xi.ndrop) {
            sig_of_drow(&f, &f.rows[r], &m.id, res->stem, &m.sig, false);
            const opdb_update_extra *x = extra_find(&m.xi, m.sig.p);
            drop = x && x->drop;
        }
        if (drop || (o->prune && !row_valid(&f, &f.rows[r], &m.id))) {
            keep[r] = false;
            changed = true;
            sig_of_drow(&f, &f.rows[r], &m.id, res->stem, &m.disp, true);
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
