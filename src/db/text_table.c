/* See text_table.h.  Files and memory go through the same exact tokenizer
 * (memory as a reader whose whole input is already buffered), so both give
 * the same table. */
#include "db/text_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_BUFFER (1 << 18)

static void csv_init(opdb_csv_file *c, int fd, uint64_t start) {
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->maxf = DB_TEXT_MAX_FIELDS;
    c->f = opdb_xmalloc((size_t)c->maxf * sizeof *c->f);
    opdb_byte_reader_init(&c->br, fd, start, READ_BUFFER);
    opdb_csv_exact_init(&c->x, &c->br, 1);
}

/* A reader over bytes already in memory: its buffer is the data, at end of
 * input from the start, so it never reads the (absent) descriptor. */
static void csv_init_mem(opdb_csv_file *c, const char *data, size_t n, bool keep_bom) {
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->maxf = DB_TEXT_MAX_FIELDS;
    c->f = opdb_xmalloc((size_t)c->maxf * sizeof *c->f);
    size_t skip = keep_bom ? 0 : db_open_bom_len(data, n);
    c->br.fd = -1;
    c->br.buf = (char *)data + skip; /* only read: the tokenizer copies cells out */
    c->br.cap = c->br.len = n - skip;
    c->br.eof = true;
    opdb_csv_exact_init(&c->x, &c->br, 1);
}

static void csv_close(opdb_csv_file *c, bool mem) {
    if (mem) c->br.buf = NULL; /* the caller's data */
    opdb_csv_file_close(c);
}

/* The header record and the checks on it, for a reader already opened. */
static int read_header(opdb_csv_file *c, const char *name, const db_open_opts *o, db_open_problem *p,
                       opdb_err *err) {
    int r = opdb_csv_file_next(c, o->need_header);
    if (r < 0) {
        if (p) *p = (db_open_problem){DB_OPEN_CANNOT_OPEN, 0, "read failed"};
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", name, strerror(c->br.err));
    }
    if (r == 0) c->nf = 0;
    return db_open_check_header(name, (size_t)c->nf, c->nf ? c->f[0].p : "", c->nf ? c->f[0].n : 0, o, p, err);
}

int db_csv_open(opdb_csv_file *c, const char *path, const db_open_opts *o, db_open_problem *p, opdb_err *err) {
    memset(c, 0, sizeof *c);
    c->fd = -1;
    uint64_t body;
    int fd = db_open_file(path, o, &body, p, err);
    if (fd < 0) return -1;
    csv_init(c, fd, body);
    if (read_header(c, path, o, p, err)) {
        opdb_csv_file_close(c);
        return -1;
    }
    return 0;
}

/* ---- whole tables */

static void add_row(db_text_table *t, const opdb_csv_file *c, const int *src, bool ragged) {
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->rows = opdb_xrealloc(t->rows, t->cap * sizeof *t->rows);
        t->line = opdb_xrealloc(t->line, t->cap * sizeof *t->line);
        if (ragged) t->ncells = opdb_xrealloc(t->ncells, t->cap * sizeof *t->ncells);
    }
    size_t n = ragged ? (size_t)c->nf : t->ncols;
    opdb_span *row = opdb_arena_alloc(&t->arena, (n ? n : 1) * sizeof *row);
    for (size_t i = 0; i < n; i++) {
        int s = src ? src[i] : (int)i;
        row[i] = s < c->nf ? opdb_span_make(opdb_arena_strndup(&t->arena, c->f[s].p, c->f[s].n), c->f[s].n)
                           : opdb_span_make("", 0);
    }
    if (ragged) t->ncells[t->nrows] = (uint32_t)n;
    t->line[t->nrows] = c->x.rec_line;
    t->rows[t->nrows++] = row;
}

/* src[i] = the last column named like column i (NULL when no name repeats). */
static int *last_of_names(const db_text_table *t) {
    int *src = NULL;
    for (size_t i = 0; i < t->ncols; i++)
        for (size_t j = t->ncols; j-- > i + 1;)
            if (t->names[i].n == t->names[j].n && !memcmp(t->names[i].p, t->names[j].p, t->names[j].n)) {
                if (!src) {
                    src = opdb_xmalloc(t->ncols * sizeof *src);
                    for (size_t k = 0; k < t->ncols; k++) src[k] = (int)k;
                }
                src[i] = (int)j;
                break;
            }
    return src;
}

static int open_quote(const opdb_csv_file *c, const char *name, opdb_err *err) {
    return opdb_fail(err, OPDB_ERR_RUNTIME,
                     "%s:%llu: unterminated quoted field (the quote never closes before the end of the file)", name,
                     (unsigned long long)c->x.open_quote_line);
}

/* The rows after the header c has read. */
static int read_rows(db_text_table *t, opdb_csv_file *c, const char *name, const db_text_opts *o, opdb_err *err) {
    t->ncols = (size_t)c->nf;
    if (c->nf > 0) {
        t->names = opdb_arena_alloc(&t->arena, t->ncols * sizeof *t->names);
        for (size_t i = 0; i < t->ncols; i++)
            t->names[i] = opdb_span_make(opdb_arena_strndup(&t->arena, c->f[i].p, c->f[i].n), c->f[i].n);
    }
    /* a quote that never closes swallows the rest of the file into one cell */
    if (o->refuse_open_quote && c->nf > 0 && c->x.unterminated) return open_quote(c, name, err);
    int *src = o->last_name_wins && !o->ragged ? last_of_names(t) : NULL;
    int r = 0;
    while (t->names && (!o->max_rows || t->nrows < o->max_rows) && (r = opdb_csv_file_next(c, false)) > 0) {
        if (o->refuse_open_quote && c->x.unterminated) {
            free(src);
            return open_quote(c, name, err);
        }
        add_row(t, c, src, o->ragged);
    }
    free(src);
    if (r < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", name, strerror(c->br.err));
    return 0;
}

static void table_init(db_text_table *t) {
    memset(t, 0, sizeof *t);
    opdb_arena_init(&t->arena, 1 << 20);
}

int db_text_load(db_text_table *t, const char *path, const db_text_opts *o, db_open_problem *p, opdb_err *err) {
    table_init(t);
    opdb_csv_file c;
    if (db_csv_open(&c, path, &o->open, p, err)) return -1;
    int rc = read_rows(t, &c, path, o, err);
    opdb_csv_file_close(&c);
    return rc;
}

int db_text_load_mem(db_text_table *t, const char *name, const char *data, size_t n, const db_text_opts *o,
                     db_open_problem *p, opdb_err *err) {
    table_init(t);
    if (p) *p = (db_open_problem){DB_OPEN_OK, 0, ""};
    opdb_csv_file c;
    csv_init_mem(&c, data, n, o->open.keep_bom);
    int rc = read_header(&c, name, &o->open, p, err);
    if (rc == 0) rc = read_rows(t, &c, name, o, err);
    csv_close(&c, true);
    return rc;
}

void db_text_free(db_text_table *t) {
    free(t->rows);
    free(t->ncells);
    free(t->line);
    opdb_arena_free(&t->arena);
    memset(t, 0, sizeof *t);
}

int db_text_col(const db_text_table *t, const char *name) {
    size_t k = strlen(name);
    for (size_t i = 0; i < t->ncols; i++)
        if (t->names[i].n == k && !memcmp(t->names[i].p, name, k)) return (int)i;
    return -1;
}
