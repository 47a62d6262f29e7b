/* The table loader as it was before columns were typed on first use: every
 * cell tokenized, typed and kept (16 bytes) at load. Compiled into the tests
 * only, as the simple twin the lazy loader is compared with. */
#include "table_eager.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/pandas_cells.h"
#include "opdb/pystr.h"


/* ---- tokenizer: RFC 4180 as pandas' C reader sees it (quotes only open a
 * cell at its start; a quote inside an unquoted cell is literal; text after
 * a closing quote is appended), \n, \r and \r\n end records, lines of
 * nothing but spaces/tabs are blank. */
typedef struct tok {
    const char *p;
    size_t n, i;
    uint32_t line;     /* line of p[i] */
    opdb_strbuf cell;  /* decoded bytes of the current record */
    size_t *ends;
    size_t nends, cap;
} tok;

/* 1: a record; 0: end of input. *line = the record's first line. */
static int tok_next(tok *t, uint32_t *line) {
    /* skip blank lines */
    for (;;) {
        if (t->i >= t->n) return 0;
        size_t j = t->i;
        while (j < t->n && db_is_sp(t->p[j])) j++;
        if (j < t->n && (t->p[j] == '\n' || t->p[j] == '\r')) {
            if (t->p[j] == '\r' && j + 1 < t->n && t->p[j + 1] == '\n') j++;
            t->i = j + 1;
            t->line++;
            continue;
        }
        if (j >= t->n) {
            t->i = j;
            return 0;
        }
        break;
    }
    *line = t->line;
    opdb_sb_clear(&t->cell);
    t->nends = 0;
    bool in_q = false, at_start = true;
    for (;;) {
        if (t->i >= t->n) break;
        char c = t->p[t->i++];
        if (in_q) {
            if (c == '"') {
                if (t->i < t->n && t->p[t->i] == '"') {
                    opdb_sb_addc(&t->cell, '"');
                    t->i++;
                } else {
                    in_q = false;
                }
            } else if (c == '\n' || c == '\r') {
                if (c == '\n' || !(t->i < t->n && t->p[t->i] == '\n')) t->line++;
                opdb_sb_addc(&t->cell, c);
            } else {
                /* the rest of a quoted run at once */
                size_t j = t->i;
                while (j < t->n && t->p[j] != '"' && t->p[j] != '\n' && t->p[j] != '\r') j++;
                opdb_sb_add(&t->cell, t->p + t->i - 1, j - t->i + 1);
                t->i = j;
            }
            continue;
        }
        if (c == '"' && at_start) {
            in_q = true;
            at_start = false;
            continue;
        }
        if (c == ',') {
            OPDB_ALLOC_GROW(t->ends, t->nends + 1, t->cap);
            t->ends[t->nends++] = t->cell.n;
            at_start = true;
            continue;
        }
        if (c == '\n' || c == '\r') {
            if (c == '\r' && t->i < t->n && t->p[t->i] == '\n') t->i++;
            t->line++;
            break;
        }
        at_start = false;
        /* the rest of an unquoted run at once */
        size_t j = t->i;
        while (j < t->n && t->p[j] != ',' && t->p[j] != '\n' && t->p[j] != '\r') j++;
        opdb_sb_add(&t->cell, t->p + t->i - 1, j - t->i + 1);
        t->i = j;
    }
    OPDB_ALLOC_GROW(t->ends, t->nends + 1, t->cap);
    t->ends[t->nends++] = t->cell.n;
    return 1;
}

static void cell_span(const tok *t, size_t k, const char **p, size_t *n) {
    size_t a = k ? t->ends[k - 1] : 0;
    *p = t->cell.p ? t->cell.p + a : ""; /* a record of empty cells added no byte */
    *n = t->ends[k] - a;
}

static int fail_at(opdb_err *err, const char *name, uint32_t line, const char *what) {
    if (line) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%u: %s", name, (unsigned)line, what);
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", name, what);
}

static void name_columns(eager_table *t, const tok *k) {
    t->ncols = k->nends;
    t->cols = opdb_xcalloc(t->ncols, sizeof *t->cols);
    db_col_namer nm;
    db_col_namer_init(&nm, t->ncols);
    for (size_t c = 0; c < t->ncols; c++) {
        const char *p;
        size_t n;
        cell_span(k, c, &p, &n);
        t->cols[c] = db_col_namer_add(&nm, &t->arena, c, p, n);
    }
    db_col_namer_free(&nm);
}

/* Column typing over all non-NA cells, then each cell's value. A number is
 * parsed once: the typing pass keeps what it read (lit[r]: 1 int64, 2 uint64,
 * 3 float) and the value pass only re-reads an integer cell of a column that
 * turned out float. */
static void type_columns(eager_table *t, const char *const *txt) {
    t->col_kind = opdb_xcalloc(t->ncols ? t->ncols : 1, 1);
    uint8_t *lit = opdb_xmalloc(t->nrows ? t->nrows : 1);
    for (size_t c = 0; c < t->ncols; c++) {
        bool all_int = true, all_float = true, all_bool = true, any = false, any_na = false;
        memset(lit, 0, t->nrows ? t->nrows : 1);
        for (size_t r = 0; r < t->nrows; r++) {
            db_cell *x = &t->cells[r * t->ncols + c];
            if (x->kind == DBC_NA) {
                any_na = true;
                continue;
            }
            any = true;
            const char *xs = txt[r * t->ncols + c];
            if (all_int) {
                int k = db_int_literal(xs, x->n, &x->v.i, &x->v.u);
                if (k) lit[r] = (uint8_t)k;
                else all_int = false;
            }
            if (!all_int && all_float) {
                if (db_float_literal(xs, x->n, &x->v.f)) lit[r] = 3;
                else all_float = false;
            }
            if (all_bool && db_bool_literal(xs, x->n) < 0) all_bool = false;
            if (!all_int && !all_float && !all_bool) break;
        }
        uint8_t kind = !any ? DBC_NA : all_int ? (any_na ? DBC_FLOAT : DBC_INT) : all_float ? DBC_FLOAT
                                                                      : all_bool ? DBC_BOOL : DBC_TEXT;
        t->col_kind[c] = kind;
        if (kind == DBC_TEXT || kind == DBC_NA) continue; /* their text is set by retain_text */
        for (size_t r = 0; r < t->nrows; r++) {
            db_cell *x = &t->cells[r * t->ncols + c];
            if (x->kind == DBC_NA) continue;
            if (kind == DBC_INT) {
                x->kind = lit[r] == 2 ? DBC_UINT : DBC_INT;
            } else if (kind == DBC_FLOAT) {
                if (lit[r] != 3) db_float_literal(txt[r * t->ncols + c], x->n, &x->v.f);
                x->kind = DBC_FLOAT;
            } else {
                x->v.b = db_bool_literal(txt[r * t->ncols + c], x->n) == 1;
                x->kind = DBC_BOOL;
            }
        }
    }
    free(lit);
}

/* After typing, only text cells keep their text, and each distinct text of a
 * column once (a table repeats its dtypes, formats and states on every row):
 * the cells' text moves from the loading arena into the table's. */
static void retain_text(eager_table *t, const char *const *txt) {
    typedef struct seen {
        const char *s;
        uint32_t n;
    } seen;
    seen *v = NULL;
    size_t nv = 0, cap = 0;
    opdb_hindex ix = {0};
    for (size_t c = 0; c < t->ncols; c++) {
        bool text = t->col_kind[c] == DBC_TEXT;
        nv = 0;
        opdb_hindex_free(&ix);
        memset(&ix, 0, sizeof ix);
        for (size_t r = 0; r < t->nrows; r++) {
            db_cell *x = &t->cells[r * t->ncols + c];
            if (!text || x->kind == DBC_NA) {
                x->n = 0; /* a typed or NA cell is read through its value */
                continue;
            }
            const char *xs = txt[r * t->ncols + c];
            uint64_t h = opdb_hash_bytes(xs, x->n, 3);
            const char *kept = NULL;
            uint32_t idx;
            for (opdb_hprobe p = opdb_hindex_probe(&ix, h); !kept && opdb_hprobe_next(&p, &idx);)
                if (v[idx].n == x->n && memcmp(v[idx].s, xs, x->n) == 0) kept = v[idx].s;
            if (!kept) {
                kept = opdb_arena_strndup(&t->arena, xs, x->n);
                OPDB_ALLOC_GROW(v, nv + 1, cap);
                v[nv].s = kept;
                v[nv].n = x->n;
                opdb_hindex_add(&ix, h, (uint32_t)nv++);
            }
            x->v.s = kept;
        }
    }
    opdb_hindex_free(&ix);
    free(v);
}

int eager_table_load_mem(eager_table *t, const char *name, const char *data, size_t n, opdb_err *err) {
    memset(t, 0, sizeof *t);
    t->path = opdb_xmalloc(strlen(name) + 1);
    strcpy(t->path, name);
    opdb_arena_init(&t->arena, 1 << 16);
    if (n >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) data += 3, n -= 3;
    if (!db_utf8_valid((const unsigned char *)data, n)) return fail_at(err, name, 0, "not UTF-8 text");
    tok k = {data, n, 0, 1, {0}, NULL, 0, 0};
    opdb_arena loading; /* every cell's text (txt, per cell) until the columns are typed */
    const char **txt = NULL;
    opdb_arena_init(&loading, 1 << 20);
    opdb_sb_init(&k.cell);
    uint32_t line;
    int rc = -1;
    if (!tok_next(&k, &line)) {
        fail_at(err, name, 0, "empty file (no header)");
        goto out;
    }
    name_columns(t, &k);
    size_t cap = 0, lcap = 0, tcap = 0;
    while (tok_next(&k, &line)) {
        if (k.nends > t->ncols) {
            char what[96];
            snprintf(what, sizeof what, "%zu fields, the header has %zu", k.nends, t->ncols);
            fail_at(err, name, line, what);
            goto out;
        }
        OPDB_ALLOC_GROW(t->cells, (t->nrows + 1) * t->ncols, cap);
        OPDB_ALLOC_GROW(t->line, t->nrows + 1, lcap);
        OPDB_ALLOC_GROW(txt, (t->nrows + 1) * t->ncols, tcap);
        db_cell *row = t->cells + t->nrows * t->ncols;
        for (size_t c = 0; c < t->ncols; c++) {
            db_cell *x = &row[c];
            memset(x, 0, sizeof *x);
            if (c >= k.nends) {
                x->kind = DBC_NA;
                txt[t->nrows * t->ncols + c] = "";
                continue;
            }
            const char *p;
            size_t len;
            cell_span(&k, c, &p, &len);
            txt[t->nrows * t->ncols + c] = opdb_arena_strndup(&loading, p, len);
            x->n = (uint32_t)len;
            x->kind = db_is_na(p, len) ? DBC_NA : DBC_TEXT;
        }
        t->line[t->nrows++] = line;
    }
    type_columns(t, txt);
    retain_text(t, txt);
    /* the arrays grew by doubling: give the slack back */
    if (t->nrows) {
        t->cells = opdb_xrealloc(t->cells, t->nrows * t->ncols * sizeof *t->cells);
        t->line = opdb_xrealloc(t->line, t->nrows * sizeof *t->line);
    }
    rc = 0;
out:
    free(txt);
    opdb_arena_free(&loading);
    opdb_sb_free(&k.cell);
    free(k.ends);
    return rc;
}


void eager_table_free(eager_table *t) {
    free(t->path);
    free(t->cols);
    free(t->col_kind);
    free(t->cells);
    free(t->line);
    opdb_arena_free(&t->arena);
    memset(t, 0, sizeof *t);
}
