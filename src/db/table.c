/* Loading one database table with pandas.read_csv's default reading: the
 * performance model reads every table that way, so a cell's type (and hence
 * how `4096` or `nan` in a shape column reads) must be the same here.
 *
 * Loading keeps the file (mapped where it can be) and notes where each
 * record starts: a block scan (table_scan.c) where the records mean the same
 * under the exact rules, else the exact scan, which also notes where each
 * cell starts. The block scan leaves the cells' starts to the table's first
 * use. A column's cells are decoded and typed the first time the column is
 * read. */
#include "db/table.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/call.h"
#include "db/open_check.h"
#include "db/pandas_cells.h"
#include "db/table_scan.h"
#include "opdb/pystr.h"

/* ---- records and cells: RFC 4180 as pandas' C reader sees it (quotes only
 * open a cell at its start; a quote inside an unquoted cell is literal; text
 * after a closing quote is appended), \n, \r and \r\n end records, lines of
 * nothing but spaces/tabs are blank. */
static bool is_end(char c) { return c == ',' || c == '\n' || c == '\r'; }

typedef struct scan {
    const char *p;
    size_t n, i;
    uint32_t line;     /* line of p[i] */
    size_t *st;        /* absolute start of each cell of the current record */
    size_t nst, cap;
} scan;

/* 1: a record (its cells' starts in s->st); 0: end of input. *line = the
 * record's first line. */
static int scan_record(scan *s, uint32_t *line) {
    const char *p = s->p;
    size_t n = s->n;
    for (;;) { /* skip blank lines */
        if (s->i >= n) return 0;
        size_t j = s->i;
        while (j < n && db_is_sp(p[j])) j++;
        if (j < n && (p[j] == '\n' || p[j] == '\r')) {
            if (p[j] == '\r' && j + 1 < n && p[j + 1] == '\n') j++;
            s->i = j + 1;
            s->line++;
            continue;
        }
        if (j >= n) {
            s->i = j;
            return 0;
        }
        break;
    }
    *line = s->line;
    s->nst = 0;
    size_t i = s->i;
    for (;;) {
        OPDB_ALLOC_GROW(s->st, s->nst + 1, s->cap);
        s->st[s->nst++] = i;
        if (i < n && p[i] == '"') {
            /* a quoted run: to its closing quote ("" is a quote inside) */
            i++;
            for (;;) {
                while (i < n && p[i] != '"' && p[i] != '\n' && p[i] != '\r') i++;
                if (i >= n) break;
                if (p[i] == '"') {
                    if (i + 1 < n && p[i + 1] == '"') {
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                if (p[i] == '\n' || !(i + 1 < n && p[i + 1] == '\n')) s->line++;
                i++;
            }
        }
        while (i < n && !is_end(p[i])) i++;
        if (i >= n) break;
        if (p[i] == ',') {
            i++;
            continue;
        }
        if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n') i++;
        i++;
        s->line++;
        break;
    }
    s->i = i;
    return 1;
}

/* Where the cell starting at a ends (its ',', line end or the end of input). */
static size_t cell_end(const char *p, size_t n, size_t a) {
    size_t i = a;
    if (i < n && p[i] == '"') {
        i++;
        for (;;) {
            while (i < n && p[i] != '"') i++;
            if (i >= n) return n;
            if (i + 1 < n && p[i + 1] == '"') {
                i += 2;
                continue;
            }
            i++;
            break;
        }
    }
    while (i < n && !is_end(p[i])) i++;
    return i;
}

/* The text of the cell starting at a: a view of its bytes when that is its
 * text, else decoded into sb (cleared first). */
static opdb_span cell_text_at(const char *p, size_t n, size_t a, opdb_strbuf *sb) {
    opdb_sb_clear(sb);
    if (a >= n || p[a] != '"') {
        size_t e = a;
        while (e < n && !is_end(p[e])) e++;
        return opdb_span_make(p + a, e - a);
    }
    const char *q = memchr(p + a + 1, '"', n - a - 1);
    if (!q) return opdb_span_make(p + a + 1, n - a - 1); /* unclosed: the rest of the input */
    size_t qi = (size_t)(q - p);
    if (qi + 1 >= n || is_end(p[qi + 1])) return opdb_span_make(p + a + 1, qi - a - 1);
    size_t i = a + 1;
    bool in_q = true;
    while (i < n) {
        char c = p[i++];
        if (in_q) {
            if (c != '"') opdb_sb_addc(sb, c);
            else if (i < n && p[i] == '"') opdb_sb_addc(sb, '"'), i++;
            else in_q = false;
        } else if (is_end(c)) {
            break;
        } else {
            opdb_sb_addc(sb, c);
        }
    }
    return opdb_span_make(sb->p ? sb->p : "", sb->n);
}

static inline size_t rec_at(const db_table *t, size_t r) { return t->rec32 ? t->rec32[r] : t->rec[r]; }

/* Absolute start of cell c of row r, too far into its record for its offset
 * to be noted in ats (the cells' starts). */
static size_t cell_start_far(const db_table *t, const uint16_t *ats, size_t r, size_t c) {
    /* walk from the last cell whose offset was noted */
    size_t k = c;
    while (k > 0 && ats[r * t->ncols + k] == DB_AT_FAR) k--;
    size_t a = rec_at(t, r) + ats[r * t->ncols + k];
    for (; k < c; k++) a = cell_end(t->data, t->n, a) + 1;
    return a;
}

/* The text of cell c of row r (ats: the cells' starts; "" past a short
 * record): cell_text_at's, where an unquoted cell ends just before the next
 * cell's start when that start was noted. */
static inline opdb_span cell_text_rc(const db_table *t, const uint16_t *ats, size_t r, size_t c, opdb_strbuf *sb) {
    const uint16_t *ra = ats + r * t->ncols;
    uint16_t o = ra[c];
    if (o == DB_AT_ABSENT) return opdb_span_make("", 0);
    size_t a = o != DB_AT_FAR ? rec_at(t, r) + o : cell_start_far(t, ats, r, c);
    if (a < t->n && t->data[a] != '"' && c + 1 < t->ncols && ra[c + 1] < DB_AT_ABSENT) {
        sb->n = 0;
        return opdb_span_make(t->data + a, rec_at(t, r) + ra[c + 1] - 1 - a);
    }
    return cell_text_at(t->data, t->n, a, sb);
}

static int fail_at(opdb_err *err, const char *name, uint32_t line, const char *what) {
    if (line) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%u: %s", name, (unsigned)line, what);
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", name, what);
}

static void name_columns(db_table *t, const scan *k) {
    t->ncols = k->nst;
    t->cols = opdb_xcalloc(t->ncols, sizeof *t->cols);
    /* one block holds them all: the header's bytes, and room for each name's
     * terminator, alignment, "Unnamed: N" and ".N" suffixes */
    opdb_arena_init(&t->names, (k->i - k->st[0]) + t->ncols * 32 + 64);
    db_col_namer nm;
    db_col_namer_init(&nm, t->ncols);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    for (size_t c = 0; c < t->ncols; c++) {
        opdb_span s = cell_text_at(k->p, k->n, k->st[c], &sb);
        t->cols[c] = db_col_namer_add(&nm, &t->names, c, s.p, s.n);
    }
    opdb_sb_free(&sb);
    db_col_namer_free(&nm);
}

/* Where the cells of a row start (at: its ncols offsets), from the scan k of its record. */
static void note_cells(size_t ncols, uint16_t *at, const scan *k) {
    size_t r0 = k->st[0];
    for (size_t c = 0; c < ncols; c++) {
        size_t off = c < k->nst ? k->st[c] - r0 : DB_AT_ABSENT;
        at[c] = off < DB_AT_ABSENT ? (uint16_t)off : c < k->nst ? DB_AT_FAR : DB_AT_ABSENT;
    }
}

_Static_assert(DB_AT_ABSENT == DB_SCAN_AT_ABSENT && DB_AT_FAR == DB_SCAN_AT_FAR, "one meaning of a cell's start");

/* Where every cell starts, into at (nrows x ncols), for records either scan
 * found (the records and file bytes never change after loading). */
static void cells_into(const db_table *t, uint16_t *at) {
    if (t->fast) {
        db_scan_cells(t->data, t->n, (db_rec_starts){t->rec32, t->rec}, t->nrows, t->ncols,
                      t->way == DB_SCAN_PORTABLE, at);
        return;
    }
    /* records the exact scan found (it noted their cells, since given back): each read again */
    scan k = {t->data, t->n, 0, 1, NULL, 0, 0};
    uint32_t line;
    for (size_t r = 0; r < t->nrows; r++) {
        k.i = rec_at(t, r);
        if (scan_record(&k, &line)) note_cells(t->ncols, at + r * t->ncols, &k);
    }
    free(k.st);
}

/* The table's cells' starts (the first column typed; under the table's guard). */
static void find_cells(db_table *t) {
    t->at = opdb_xmalloc(t->nrows * t->ncols * sizeof *t->at);
    cells_into(t, t->at);
}

static bool ascii(const char *p, size_t n) {
    unsigned char any = 0;
    for (size_t i = 0; i < n; i++) any |= (unsigned char)p[i];
    return any < 0x80;
}

/* The records after the header by the block scan: false (nothing kept) when
 * the exact rules are needed. */
static bool find_records(db_table *t, const scan *k, bool *utf8) {
    if (t->way == DB_SCAN_EXACT) return false;
    db_recs rs = {NULL, NULL, 0, 0};
    bool asc = false;
    if (!db_scan_records(t->data, t->n, k->i, k->line, t->ncols, t->way == DB_SCAN_PORTABLE, &rs, &asc)) {
        free(rs.rec);
        free(rs.line);
        return false;
    }
    *utf8 = (asc && ascii(t->data, k->i)) || db_utf8_valid((const unsigned char *)t->data, t->n);
    t->nrows = rs.n;
    t->rec = rs.rec;
    t->line = rs.line;
    t->fast = true;
    return true;
}

/* t->mem holds the n bytes at data (the table owns them from here on) */
static int load_owned(db_table *t, const char *name, const db_open_opts *o, db_open_problem *p, opdb_err *err) {
    const char *data = t->mem;
    size_t n = t->n;
    size_t bom = o->keep_bom ? 0 : db_open_bom_len(data, n);
    data += bom, n -= bom;
    t->data = data;
    t->n = n;
    scan k = {data, n, 0, 1, NULL, 0, 0};
    uint32_t line;
    int rc = -1;
    bool utf8 = true;
    /* the header by the exact scan (a blank-only file is ASCII: the UTF-8
     * check, which an error about the file's text comes before, is not needed) */
    bool any = scan_record(&k, &line);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_span first = any ? cell_text_at(data, n, k.st[0], &sb) : opdb_span_make("", 0);
    rc = db_open_check_header(name, any ? k.nst : 0, first.p, first.n, o, p, err);
    opdb_sb_free(&sb);
    if (rc || !any) goto out;
    rc = -1;
    name_columns(t, &k);
    /* the block scan tells whether every byte is ASCII: the whole-file
     * check then runs only where a byte is not */
    if (find_records(t, &k, &utf8)) {
        if (!utf8 && db_open_check_bytes(name, data, n, o, p, err)) goto out;
        goto done;
    }
    if (db_open_check_bytes(name, data, n, o, p, err)) goto out;
    size_t cap = 0, lcap = 0;
    while (scan_record(&k, &line)) {
        if (k.nst > t->ncols) {
            char what[96];
            snprintf(what, sizeof what, "%zu fields, the header has %zu", k.nst, t->ncols);
            fail_at(err, name, line, what);
            goto out;
        }
        if (t->nrows + 1 > lcap) {
            size_t old = lcap;
            OPDB_ALLOC_GROW(t->line, t->nrows + 1, lcap);
            t->rec = opdb_xrealloc(t->rec, lcap * sizeof *t->rec);
            (void)old;
        }
        OPDB_ALLOC_GROW(t->at, (t->nrows + 1) * t->ncols, cap);
        note_cells(t->ncols, t->at + t->nrows * t->ncols, &k);
        t->rec[t->nrows] = k.st[0];
        t->line[t->nrows++] = line;
    }
    if (t->nrows) t->at = opdb_xrealloc(t->at, t->nrows * t->ncols * sizeof *t->at);
done:
    /* the arrays grew by doubling: give the slack back */
    if (t->nrows) {
        t->line = opdb_xrealloc(t->line, t->nrows * sizeof *t->line);
        t->rec = opdb_xrealloc(t->rec, t->nrows * sizeof *t->rec);
        /* a file under 4 GiB: its record starts in 4 bytes each */
        if (t->n <= UINT32_MAX) {
            t->rec32 = opdb_xmalloc(t->nrows * sizeof *t->rec32);
            for (size_t r = 0; r < t->nrows; r++) t->rec32[r] = (uint32_t)t->rec[r];
            free(t->rec);
            t->rec = NULL;
        }
    }
    t->colv = opdb_xcalloc(t->ncols, sizeof *t->colv);
    t->ready = opdb_xcalloc(t->ncols, sizeof *t->ready);
    for (size_t c = 0; c < t->ncols; c++) atomic_init(&t->ready[c], 0);
    rc = 0;
out:
    free(k.st);
    return rc;
}

static void table_init(db_table *t, const char *name) {
    memset(t, 0, sizeof *t);
    t->path = opdb_xstrdup(name);
    opdb_arena_init(&t->arena, 1 << 14);
    opdb_arena_init(&t->names, 256);
    atomic_init(&t->late_typed, 0);
    pthread_mutex_init(&t->mu, NULL);
    t->mu_init = true;
}

/* pandas raises on bytes that are not UTF-8 and on a file without a
 * header; an LFS pointer is a one-column table to it. */
const db_open_opts db_table_query_rules = {
    .utf8 = true, .need_header = true, .regular = true, .no_header_msg = "empty file (no header)"};

int db_table_load_mem_checked(db_table *t, const char *name, const char *data, size_t n, const db_open_opts *o,
                              db_open_problem *p, opdb_err *err) {
    table_init(t, name);
    t->mem = opdb_xmalloc(n + 1);
    if (n) memcpy(t->mem, data, n);
    t->n = n;
    return load_owned(t, name, o, p, err);
}

int db_table_load_mem(db_table *t, const char *name, const char *data, size_t n, opdb_err *err) {
    return db_table_load_mem_checked(t, name, data, n, &db_table_query_rules, NULL, err);
}

int db_table_load_mem_way(db_table *t, const char *name, const char *data, size_t n, db_scan_way way,
                          opdb_err *err) {
    table_init(t, name);
    t->way = (uint8_t)way;
    t->mem = opdb_xmalloc(n + 1);
    if (n) memcpy(t->mem, data, n);
    t->n = n;
    return load_owned(t, name, &db_table_query_rules, NULL, err);
}

static int load_path(db_table *t, const char *path, const db_open_opts *o, bool map, db_open_problem *p,
                     opdb_err *err) {
    memset(t, 0, sizeof *t);
    uint64_t body;
    int fd = db_open_file(path, o, &body, p, err);
    if (fd < 0) return -1;
    struct stat st;
    size_t n = fstat(fd, &st) == 0 ? (size_t)st.st_size : 0, got = 0;
    opdb_file_view v;
    if (map && opdb_file_view_map(&v, fd, path, 0, n)) {
        /* mapped: the page cache is read where it lies, not copied */
        close(fd);
        table_init(t, path);
        t->view = v;
        t->mem = v.data;
        t->n = v.len;
        return load_owned(t, path, o, p, err);
    }
    char *buf = opdb_xmalloc(n + 1);
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    int e = errno;
    close(fd);
    if (got < n) {
        free(buf);
        memset(t, 0, sizeof *t);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read error: %s", path, strerror(e));
    }
    table_init(t, path);
    t->mem = buf;
    t->n = n;
    return load_owned(t, path, o, p, err);
}

int db_table_load_checked(db_table *t, const char *path, const db_open_opts *o, db_open_problem *p, opdb_err *err) {
    return load_path(t, path, o, true, p, err);
}

int db_table_load_read(db_table *t, const char *path, opdb_err *err) {
    return load_path(t, path, &db_table_query_rules, false, NULL, err);
}

int db_table_load(db_table *t, const char *path, opdb_err *err) {
    return db_table_load_checked(t, path, &db_table_query_rules, NULL, err);
}

static void col_free(db_col *c) {
    free(c->v);
    free(c->uint_rows);
    free(c->dec);
    free(c->big);
}

void db_table_free(db_table *t) {
    for (size_t c = 0; t->colv && c < t->ncols; c++) col_free(&t->colv[c]);
    free(t->colv);
    free(t->ready);
    if (t->mu_init) pthread_mutex_destroy(&t->mu);
    free(t->path);
    free(t->cols);
    if (t->view.map) opdb_file_view_close(&t->view);
    else free(t->mem);
    free(t->rec);
    free(t->rec32);
    free(t->at);
    free(t->line);
    opdb_arena_free(&t->arena);
    opdb_arena_free(&t->names);
    memset(t, 0, sizeof *t);
}

int db_table_col(const db_table *t, const char *name) {
    for (size_t c = 0; c < t->ncols; c++)
        if (strcmp(t->cols[c], name) == 0) return (int)c;
    return -1;
}
/* ---- typing a column on first use */

static void trim_locked(db_table *t);

/* A text reference: offset (40 bits) and length (24 bits) in the table's
 * bytes followed by the column's decoded texts; a longer text or a farther
 * offset is kept in the column's big list (the length field all ones). */
#define REF_LEN_MAX 0xffffffu

static uint64_t text_ref(db_col *c, size_t *nbig, size_t *capbig, size_t off, size_t len) {
    if (len < REF_LEN_MAX && off < ((uint64_t)1 << 40)) return (uint64_t)off << 24 | len;
    OPDB_ALLOC_GROW(c->big, 2 * (*nbig + 1), *capbig);
    c->big[2 * *nbig] = off;
    c->big[2 * *nbig + 1] = len;
    return (uint64_t)(*nbig)++ << 24 | REF_LEN_MAX;
}

/* Column typing over all non-NA cells (int / float / bool / text, an int
 * column with an NA cell turns float), then each cell's value. A number is
 * parsed once: the typing pass keeps what it read (lit[r]: 1 int64, 2
 * uint64, 3 float) and the value pass only re-reads an integer cell of a
 * column that turned out float. */
static void type_column(const db_table *t, const uint16_t *ats, size_t ci, db_col *c, bool detach) {
    size_t nr = t->nrows;
    memset(c, 0, sizeof *c);
    if (!nr) return;
    uint64_t *v = opdb_xmalloc(nr * sizeof *v);
    uint8_t *lit = opdb_xcalloc(nr, 1);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    bool all_int = true, all_float = true, all_bool = true, any = false, any_na = false;
    for (size_t r = 0; r < nr; r++) {
        opdb_span s = cell_text_rc(t, ats, r, ci, &sb);
        if (db_is_na(s.p, s.n)) {
            any_na = true;
            lit[r] = 4;
            continue;
        }
        any = true;
        if (!all_int && !all_float && !all_bool) continue; /* text: only the NA cells remain to mark */
        int64_t iv;
        uint64_t uv;
        double fv;
        if (all_int) {
            int k = db_int_literal(s.p, s.n, &iv, &uv);
            if (k == 1) lit[r] = 1, memcpy(&v[r], &iv, 8);
            else if (k == 2) lit[r] = 2, v[r] = uv;
            else all_int = false;
        }
        if (!all_int && all_float) {
            if (db_float_literal(s.p, s.n, &fv)) lit[r] = 3, memcpy(&v[r], &fv, 8);
            else all_float = false;
        }
        if (all_bool && db_bool_literal(s.p, s.n) < 0) all_bool = false;
    }
    uint8_t kind = !any ? DBC_NA : all_int ? (any_na ? DBC_FLOAT : DBC_INT) : all_float ? DBC_FLOAT
                                                                  : all_bool ? DBC_BOOL : DBC_TEXT;
    c->kind = kind;
    if (kind == DBC_NA) {
        free(v);
        v = NULL;
    } else if (kind == DBC_INT) {
        for (size_t r = 0; r < nr; r++)
            if (lit[r] == 2) {
                if (!c->uint_rows) c->uint_rows = opdb_xcalloc(nr, 1);
                c->uint_rows[r] = 1;
            }
    } else {
        opdb_strbuf dec;
        opdb_sb_init(&dec);
        size_t nbig = 0, capbig = 0;
        uint64_t prev = DB_V_NA; /* detached: a text equal to the previous row's is kept once */
        size_t prev_off = 0, prev_n = 0;
        for (size_t r = 0; r < nr; r++) {
            if (lit[r] == 4) {
                v[r] = kind == DBC_FLOAT ? 0x7ff8000000000000u : DB_V_NA;
                continue;
            }
            if (kind == DBC_FLOAT && lit[r] == 3) continue;
            opdb_span s = cell_text_rc(t, ats, r, ci, &sb);
            if (kind == DBC_FLOAT) {
                double fv = 0;
                db_float_literal(s.p, s.n, &fv);
                memcpy(&v[r], &fv, 8);
            } else if (kind == DBC_BOOL) {
                v[r] = db_bool_literal(s.p, s.n) == 1;
            } else if (!detach && (!sb.n || s.p != sb.p)) { /* a view of the file's bytes */
                v[r] = text_ref(c, &nbig, &capbig, (size_t)(s.p - t->data), s.n);
            } else if (detach && prev != DB_V_NA && prev_n == s.n &&
                       (!s.n || memcmp(dec.p + prev_off, s.p, s.n) == 0)) {
                v[r] = prev;
            } else {
                prev_off = dec.n;
                prev_n = s.n;
                v[r] = prev = text_ref(c, &nbig, &capbig, t->n + dec.n, s.n);
                opdb_sb_add(&dec, s.p, s.n);
            }
        }
        if (dec.n) {
            c->dec = dec.p;
        } else {
            opdb_sb_free(&dec);
        }
    }
    c->v = v;
    free(lit);
    opdb_sb_free(&sb);
}

const db_col *db_table_column(const db_table *ct, int col) {
    db_table *t = (db_table *)ct; /* typing is internally synchronised */
    if (atomic_load_explicit(&t->ready[col], memory_order_acquire)) return &t->colv[col];
    opdb_call_lock(&t->mu);
    if (!atomic_load_explicit(&t->ready[col], memory_order_relaxed)) {
        if (!t->at && t->nrows) find_cells(t);
        /* after the trim: the column keeps its own texts, and what typing read goes back */
        bool late = t->trimmed && t->view.map;
        type_column(t, t->at, (size_t)col, &t->colv[col], late);
        atomic_store_explicit(&t->ready[col], 1, memory_order_release);
        if (t->trimmed) {
            atomic_fetch_add(&t->late_typed, 1);
            trim_locked(t);
        }
    }
    opdb_call_unlock(&t->mu);
    return &t->colv[col];
}

/* ---- a pass's own columns */

void db_pass_begin(db_pass *p, const db_table *t) {
    p->t = t;
    p->colv = opdb_xcalloc(t->ncols ? t->ncols : 1, sizeof *p->colv);
    p->typed = opdb_xcalloc(t->ncols ? t->ncols : 1, 1);
    p->way = opdb_xcalloc(t->ncols ? t->ncols : 1, 1);
    p->at = NULL;
    opdb_sb_init(&p->sb);
}

/* The pass finds its own cells' starts: the table's may be given back by
 * another thread meanwhile, and the records and bytes they index never change. */
static const uint16_t *pass_at(db_pass *p) {
    if (!p->at) {
        p->at = opdb_xmalloc((p->t->nrows ? p->t->nrows : 1) * p->t->ncols * sizeof *p->at);
        cells_into(p->t, p->at);
    }
    return p->at;
}

const db_cell *db_pass_cell_into(db_pass *p, size_t row, int col, db_cell *o) {
    db_table *t = (db_table *)p->t; /* typing is internally synchronised */
    if (atomic_load_explicit(&t->ready[col], memory_order_acquire)) return db_col_cell_into(t, &t->colv[col], row, o);
    if (!p->typed[col]) {
        type_column(t, pass_at(p), (size_t)col, &p->colv[col], false);
        opdb_call_lock(&t->mu);
        if (t->trimmed) atomic_fetch_add(&t->late_typed, 1);
        opdb_call_unlock(&t->mu);
        p->typed[col] = 1;
    }
    return db_col_cell_into(t, &p->colv[col], row, o);
}

enum { PASS_TYPED = 1, PASS_TEXT = 2 };

/* Whether some cell of the column shows it to be text, as typing it would
 * find: one that is neither NA nor a float (so nor an int) nor a bool. */
static bool column_is_text(db_pass *p, int col) {
    const db_table *t = p->t;
    const uint16_t *at = pass_at(p);
    double f;
    for (size_t r = 0; r < t->nrows; r++) {
        opdb_span s = cell_text_rc(t, at, r, (size_t)col, &p->sb);
        if (!db_is_na(s.p, s.n) && !db_float_literal(s.p, s.n, &f) && db_bool_literal(s.p, s.n) < 0) return true;
    }
    return false;
}

opdb_span db_pass_str(db_pass *p, size_t row, int col, char *buf, size_t cap, bool *stable) {
    const db_table *t = p->t;
    if (!p->way[col]) {
        bool text = !atomic_load_explicit(&t->ready[col], memory_order_acquire) && !p->typed[col] &&
                    column_is_text(p, col);
        p->way[col] = text ? PASS_TEXT : PASS_TYPED;
    }
    if (p->way[col] == PASS_TYPED) {
        const db_cell *c = db_pass_cell_into(p, row, col, &(db_cell){.kind = DBC_NA});
        *stable = c->kind == DBC_TEXT || c->kind == DBC_NA || c->kind == DBC_BOOL;
        return db_cell_text(c, buf, cap);
    }
    /* a text column: a cell's text is its bytes (decoded), an NA cell's "nan" */
    opdb_span s = cell_text_rc(t, p->at, row, (size_t)col, &p->sb);
    if (db_is_na(s.p, s.n)) {
        *stable = true;
        return opdb_span_make("nan", 3);
    }
    *stable = !p->sb.n || s.p != p->sb.p;
    return s;
}

void db_pass_end(db_pass *p) {
    for (size_t c = 0; p->colv && c < p->t->ncols; c++)
        if (p->typed[c]) col_free(&p->colv[c]);
    free(p->colv);
    free(p->typed);
    free(p->way);
    free(p->at);
    opdb_sb_free(&p->sb);
    memset(p, 0, sizeof *p);
}

/* db_table_trim under the table's guard */
static void trim_locked(db_table *t) {
    /* found again from the records (find_cells) when a column is typed later */
    free(t->at);
    t->at = NULL;
    /* a private mapping the table never writes: its pages come back from the file as they were */
    if (t->view.map) (void)madvise(t->view.map, t->view.map_len, MADV_DONTNEED);
    t->trimmed = true;
}

void db_table_trim(db_table *t) {
    if (!t->mu_init) return;
    opdb_call_lock(&t->mu);
    trim_locked(t);
    opdb_call_unlock(&t->mu);
}

const db_cell *db_table_cell_into(const db_table *t, size_t row, int col, db_cell *o) {
    const db_col *c = atomic_load_explicit(&t->ready[col], memory_order_acquire) ? &t->colv[col]
                                                                                   : db_table_column(t, col);
    return db_col_cell_into(t, c, row, o);
}

const db_cell *db_col_cell_into(const db_table *t, const db_col *c, size_t row, db_cell *o) {
    o->v.u = 0;
    o->n = 0;
    o->kind = DBC_NA;
    if (c->kind == DBC_NA) return o;
    uint64_t v = c->v[row];
    switch (c->kind) {
    case DBC_INT:
        o->v.u = v;
        o->kind = c->uint_rows && c->uint_rows[row] ? DBC_UINT : DBC_INT;
        break;
    case DBC_FLOAT:
        memcpy(&o->v.f, &v, 8);
        if (isnan(o->v.f)) o->v.u = 0;
        else o->kind = DBC_FLOAT;
        break;
    case DBC_BOOL:
        if (v != DB_V_NA) o->v.b = v != 0, o->kind = DBC_BOOL;
        break;
    default: {
        if (v == DB_V_NA) break;
        size_t off = (size_t)(v >> 24), len = (size_t)(v & REF_LEN_MAX);
        if (len == REF_LEN_MAX) {
            len = c->big[2 * off + 1];
            off = c->big[2 * off];
        }
        o->v.s = off < t->n ? t->data + off : c->dec + (off - t->n);
        o->n = (uint32_t)len;
        o->kind = DBC_TEXT;
    }
    }
    return o;
}

opdb_span db_cell_text(const db_cell *c, char *buf, size_t cap) {
    switch (c->kind) {
    case DBC_NA: return opdb_span_cstr("nan");
    case DBC_INT: return opdb_span_make(buf, (size_t)snprintf(buf, cap, "%lld", (long long)c->v.i));
    case DBC_UINT: return opdb_span_make(buf, (size_t)snprintf(buf, cap, "%llu", (unsigned long long)c->v.u));
    case DBC_FLOAT: return opdb_span_make(buf, opdb_py_fmt_repr(buf, cap, c->v.f));
    case DBC_BOOL: return opdb_span_cstr(c->v.b ? "True" : "False");
    default: return opdb_span_make(c->v.s, c->n);
    }
}

bool db_cell_num(const db_cell *c, double *out) {
    switch (c->kind) {
    case DBC_NA: *out = NAN; return true;
    case DBC_INT: *out = (double)c->v.i; return true;
    case DBC_UINT: *out = (double)c->v.u; return true;
    case DBC_FLOAT: *out = c->v.f; return true;
    case DBC_BOOL: *out = c->v.b ? 1.0 : 0.0; return true;
    default: return opdb_py_float(c->v.s, c->n, out);
    }
}

bool db_cell_pyint(const db_cell *c, int64_t *out) {
    switch (c->kind) {
    case DBC_NA: return false;
    case DBC_INT: *out = c->v.i; return true;
    case DBC_UINT: return false; /* beyond int64: no shape or count is that large */
    case DBC_FLOAT:
        if (!isfinite(c->v.f) || fabs(c->v.f) >= 9.2e18) return false;
        *out = (int64_t)c->v.f;
        return true;
    case DBC_BOOL: *out = c->v.b; return true;
    default: {
        long long v;
        if (!opdb_py_int(c->v.s, c->n, &v)) return false;
        *out = v;
        return true;
    }
    }
}
