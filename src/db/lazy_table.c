/* See lazy_table.h: loading a database table, lazy rows read in full.
 * Cells point into the file read once into memory (fast tokenizer, decoded
 * in place) and only changed values are copied. */
#include "db/lazy_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/schema.h"

static const char *const k_lazy_names[] = {
#define LAZY_ITEM(name) name,
    OPDB_SIG_CELL_LIST(LAZY_ITEM) OPDB_COL_MB_DUR, OPDB_COL_PROF_AVG_DUR};
_Static_assert(sizeof k_lazy_names / sizeof k_lazy_names[0] == DB_LAZY_NCELLS, "DB_LAZY_NCELLS: one per kept cell");

void db_lazy_push_row(db_lazy_table *f, db_drow r) {
    OPDB_ALLOC_GROW(f->rows, f->n + 1, f->cap);
    f->rows[f->n++] = r;
}

void db_lazy_free(db_lazy_table *f) {
    free(f->rows);
    if (f->buf) opdb_file_view_close(&f->view);
    free(f->colkey);
    free(f->slot_of_key);
    free(f->col_of_key);
    free(f->scratch);
    free(f->patch);
    opdb_strvec_free(&f->fields);
    db_ks_free(&f->ks);
}

/* ---- rows, lazy or not */

/* row.get(key, "") of a row, lazy or not.  Of a lazy row only the kept
 * cells are read (every caller asks for those). */
opdb_span db_lazy_cell(const db_lazy_table *f, const db_drow *r, int id) {
    if (!r->lazy) return db_drow_at(r, id);
    int j = id >= 0 && id < f->header_keys ? f->slot_of_key[id] : -1;
    return j >= 0 ? r->v[j] : opdb_span_make("", 0);
}

opdb_sig_cells db_lazy_sig_cells(const db_lazy_table *f, const db_drow *r, const db_sig_cols *sig) {
    return r->lazy ? db_sig_cells_from_row(&f->lazy_sig, r->v, DB_LAZY_NCELLS)
                   : db_sig_cells_from_row(sig, r->v, (size_t)r->nv);
}

/* DictReader: every header key present ("" for a short row); last duplicate wins. */
static db_drow dict_record(db_lazy_table *f, const opdb_field *c, int nc) {
    db_drow r = db_drow_new(&f->ks);
    for (int i = 0; i < f->nh; i++) db_drow_ref(&r, f->colkey[i], i < nc ? c[i].p : "", i < nc ? c[i].n : 0);
    return r;
}

/* The row with every cell: a lazy row's bytes are copied and tokenized
 * (the whole file passed the fast tokenizer, so its records do too); its
 * patches are the caller's to set again. */
db_drow *db_lazy_row_full(db_lazy_table *f, size_t i) {
    db_drow *row = &f->rows[i];
    if (!row->lazy) return row;
    char *copy = opdb_arena_alloc(&f->ks.arena, (size_t)row->raw_len + 1);
    memcpy(copy, f->buf + row->raw_off, row->raw_len);
    copy[row->raw_len] = '\0';
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, copy, row->raw_len);
    int nc = 0;
    size_t off;
    if (opdb_csv_fast_next(&t, f->scratch, DB_MAX_COLUMNS, &nc, &off) <= 0) nc = 0;
    db_drow d = dict_record(f, f->scratch, nc);
    d.raw_ok = row->raw_ok;
    d.raw_off = row->raw_off;
    d.raw_len = row->raw_len;
    d.dirty = row->dirty;
    d.nput = row->nput;
    *row = d;
    return row;
}

/* ---- loading */

static void start_header(db_lazy_table *f, const opdb_field *h, int nh) {
    db_ks_init(&f->ks, nh + 140);
    f->nh = nh;
    f->colkey = opdb_xmalloc(((size_t)nh + 1) * sizeof *f->colkey);
    for (int i = 0; i < nh; i++) {
        char *name = opdb_xmalloc(h[i].n + 1);
        memcpy(name, h[i].p, h[i].n);
        name[h[i].n] = '\0';
        opdb_strvec_push_owned(&f->fields, name);
        f->colkey[i] = db_ks_add(&f->ks, name);
    }
    f->header_keys = f->ks.n;
}

/* A header that DictWriter writes back as it was read: no name twice. */
static bool header_unique(const db_lazy_table *f) {
    for (int i = 0; i < f->nh; i++)
        for (int k = 0; k < i; k++)
            if (f->colkey[i] == f->colkey[k]) return false;
    return true;
}

/* Rows are kept lazy unless a rule reads other cells of every row: a header
 * with a name twice (last one wins), or a legacy duration column standing
 * in for a missing OPDB_COL_MB_DUR.  Returns the cells to skim (>= 1). */
static int plan_lazy(db_lazy_table *f, bool *lazy) {
    int legacy = db_ks_find(&f->ks, OPDB_COL_LEGACY_MB_DUR), mb = db_ks_find(&f->ks, OPDB_COL_MB_DUR);
    *lazy = header_unique(f) && !(legacy >= 0 && mb < 0);
    int keep = 1;
    f->slot_of_key = opdb_xmalloc((size_t)f->header_keys + 1);
    memset(f->slot_of_key, -1, (size_t)f->header_keys + 1);
    f->col_of_key = opdb_xmalloc(((size_t)f->header_keys + 1) * sizeof *f->col_of_key);
    for (int i = 0; i < f->nh; i++) f->col_of_key[f->colkey[i]] = i;
    for (int j = 0; j < DB_LAZY_NCELLS; j++) {
        int id = db_ks_find(&f->ks, k_lazy_names[j]);
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
static bool record_fields_ok(const db_lazy_table *f, const opdb_field *c, int nkept, int nc, bool quote_after) {
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
static void close_record(db_lazy_table *f, size_t off, size_t end) {
    db_drow *row = &f->rows[f->n - 1];
    const char *r = f->buf;
    row->raw_off = off;
    row->raw_len = (uint32_t)(end - off);
    if (end - off < 3 || r[end - 2] != '\r' || r[end - 1] != '\n' || r[end - 3] == '\r' || r[end - 3] == '\n')
        row->raw_ok = false;
}

static int too_wide(const char *path, opdb_err *err) {
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the header has %d or more columns; opdb reads at most %d",
                     path, DB_MAX_COLUMNS, DB_MAX_COLUMNS - 1);
}

static int load_exact(const char *path, db_lazy_table *f, opdb_err *err) {
    opdb_csv_file c;
    if (opdb_csv_file_open(&c, path, DB_MAX_COLUMNS, err)) return -1;
    int rc = opdb_csv_file_next(&c, true);
    if (rc > 0 && c.nf >= DB_MAX_COLUMNS) {
        db_ks_init(&f->ks, 140);
        opdb_csv_file_close(&c);
        return too_wide(path, err);
    }
    if (rc > 0) {
        start_header(f, c.f, c.nf);
        while ((rc = opdb_csv_file_next(&c, false)) > 0) {
            db_drow r = dict_record(f, c.f, c.nf);
            for (int i = 0; i < r.nv; i++)
                if (r.v[i].p) r.v[i].p = opdb_arena_strndup(&f->ks.arena, r.v[i].p, r.v[i].n);
            db_lazy_push_row(f, r);
            if (c.x.unterminated) f->unterminated_line = c.x.rec_line;
        }
    } else {
        db_ks_init(&f->ks, 140);
    }
    if (rc < 0) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    opdb_csv_file_close(&c);
    return rc < 0 ? -1 : 0;
}

/* The header with the fast tokenizer's cells decoded. */
static void fast_header(db_lazy_table *f, int nc) {
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
static void lazy_record(db_lazy_table *f, const opdb_field *c, int nkept) {
    db_drow r = {opdb_arena_alloc(&f->ks.arena, DB_LAZY_NCELLS * sizeof(opdb_span)), DB_LAZY_NCELLS, false, true, false,
                 0, 0, 0};
    for (int j = 0; j < DB_LAZY_NCELLS; j++) {
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
    db_lazy_push_row(f, r);
}

/* Fast path: 0, or 1 when the file needs the exact rules (nothing kept). */
static int load_fast(const char *path, db_lazy_table *f, size_t len, opdb_err *err) {
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, f->buf, len);
    int nc, rc;
    size_t off;
    bool quote_after;
    rc = opdb_csv_fast_skim(&t, f->scratch, DB_MAX_COLUMNS, &nc, &off, &quote_after);
    if (rc > 0 && nc >= DB_MAX_COLUMNS) {
        db_ks_init(&f->ks, 140);
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
        for (size_t i = 0; i < f->n; i++) db_lazy_row_full(f, i);
    else
        f->lazy_rows = true;
    return 0;
}

/* An empty table reads as one without rows (DictReader's way); an LFS
 * pointer or random bytes reach update's own "not a database table" check. */
const db_open_opts db_lazy_update_rules = {0};

static int load(const char *path, db_lazy_table *f, bool eager, const db_open_opts *o, db_open_problem *p,
                opdb_err *err) {
    uint64_t body;
    int fd = db_open_file(path, o, &body, p, err);
    if (fd < 0) return -1;
    struct stat st;
    uint64_t size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    f->scratch = opdb_xmalloc(DB_MAX_COLUMNS * sizeof *f->scratch);
    db_sig_cols_from_names(&f->lazy_sig, k_lazy_names, DB_LAZY_NCELLS);
    /* mapped: the rows are read, and unchanged ones written, from the page cache */
    int rc = opdb_file_view_open(&f->view, fd, path, body, size, true, err);
    close(fd);
    if (rc) return rc;
    f->buf = f->view.data;
    size_t len = f->view.len;
    if (db_open_check_bytes(path, f->buf, len, o, p, err)) return -1;
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
        opdb_strvec_free(&f->fields);
        db_ks_free(&f->ks);
    }
    opdb_file_view_close(&f->view);
    f->buf = NULL;
    return load_exact(path, f, err);
}

int db_lazy_load(const char *path, db_lazy_table *f, bool eager, const db_open_opts *o, db_open_problem *p,
                 opdb_err *err) {
    if (load(path, f, eager, o, p, err)) return -1;
    const char *first = f->fields.n ? f->fields.v[0] : "";
    return db_open_check_header(path, f->fields.n, first, strlen(first), o, p, err);
}
