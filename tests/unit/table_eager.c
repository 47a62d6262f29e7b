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

#include "opdb/pystr.h"

/* pandas' default NA spellings (1.5) */
static const char *const k_na[] = {"",     "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                                   "1.#QNAN", "<NA>", "N/A",     "NA",  "NULL",    "NaN",      "n/a",  "nan",  "null"};

static bool is_na(const char *s, size_t n) {
    if (n == 0) return true;
    /* every NA spelling starts with one of these: most cells are rejected here */
    if (n > 8 || !memchr("#-1<Nn", s[0], 6)) return false;
    for (size_t i = 0; i < sizeof k_na / sizeof k_na[0]; i++)
        if (k_na[i][0] == s[0] && strlen(k_na[i]) == n && memcmp(k_na[i], s, n) == 0) return true;
    return false;
}

static bool utf8_valid(const unsigned char *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        /* ASCII eight bytes at a time (tables are almost all ASCII) */
        uint64_t w;
        if (i + 8 <= n && (memcpy(&w, p + i, 8), !(w & 0x8080808080808080u))) {
            i += 8;
            continue;
        }
        unsigned c = p[i];
        if (c < 0x80) { i++; continue; }
        size_t len;
        unsigned min;
        if ((c & 0xe0) == 0xc0) len = 2, min = 0x80, c &= 0x1f;
        else if ((c & 0xf0) == 0xe0) len = 3, min = 0x800, c &= 0x0f;
        else if ((c & 0xf8) == 0xf0) len = 4, min = 0x10000, c &= 0x07;
        else return false;
        if (i + len > n) return false;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xc0) != 0x80) return false;
            c = (c << 6) | (p[i + k] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return false;
        i += len;
    }
    return true;
}

/* ---- literal classes of the column typing */
static bool is_sp(char c) { return c == ' ' || c == '\t'; }

/* An integer literal: optional spaces/tabs, sign, digits. 1 = int64, 2 = uint64 only, 0 = not. */
static int int_literal(const char *s, size_t n, int64_t *iv, uint64_t *uv) {
    size_t a = 0, b = n;
    while (a < b && is_sp(s[a])) a++;
    while (b > a && is_sp(s[b - 1])) b--;
    bool neg = false;
    if (a < b && (s[a] == '+' || s[a] == '-')) neg = s[a++] == '-';
    if (a == b) return 0;
    uint64_t v = 0;
    for (size_t i = a; i < b; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) return 0;
        *iv = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
        return 1;
    }
    if (v <= (uint64_t)INT64_MAX) {
        *iv = (int64_t)v;
        return 1;
    }
    *uv = v;
    return 2;
}

static bool ci_eq(const char *s, size_t n, const char *w) {
    size_t m = strlen(w);
    if (m != n) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != w[i]) return false;
    }
    return true;
}

/* The common cell "123.456" (at most 19 digits, no exponent) without strtod:
 * when the digits fit in 2^53 and the power of ten is exact, one IEEE
 * multiply or divide rounds correctly, so the value is strtod's. */
static bool exact_decimal(const char *s, size_t n, double *out) {
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    uint64_t m = 0;
    int digits = 0, frac = 0;
    bool dot = false;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '.' && !dot) {
            dot = true;
            continue;
        }
        if (c < '0' || c > '9' || ++digits > 19) return false;
        m = m * 10 + (uint64_t)(c - '0');
        frac += dot;
    }
    if (!digits || m > ((uint64_t)1 << 53) || frac > 22) return false;
    double v = (double)m / p10[frac];
    *out = neg ? -v : v;
    return true;
}

/* A float literal: decimal with optional fraction/exponent, or inf/infinity. */
static bool float_literal(const char *s, size_t n, double *out) {
    size_t a = 0, b = n;
    while (a < b && is_sp(s[a])) a++;
    while (b > a && is_sp(s[b - 1])) b--;
    size_t i = a;
    bool neg = false;
    if (i < b && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (ci_eq(s + i, b - i, "inf") || ci_eq(s + i, b - i, "infinity")) {
        *out = neg ? -INFINITY : INFINITY;
        return true;
    }
    size_t digits = 0;
    while (i < b && s[i] >= '0' && s[i] <= '9') i++, digits++;
    if (i < b && s[i] == '.') {
        i++;
        while (i < b && s[i] >= '0' && s[i] <= '9') i++, digits++;
    }
    if (!digits) return false;
    if (i < b && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < b && (s[i] == '+' || s[i] == '-')) i++;
        size_t ed = 0;
        while (i < b && s[i] >= '0' && s[i] <= '9') i++, ed++;
        if (!ed) return false;
    }
    if (i != b) return false;
    if (exact_decimal(s + a, b - a, out)) return true;
    char tmp[128], *buf = tmp;
    size_t len = b - a;
    if (len >= sizeof tmp) buf = opdb_xmalloc(len + 1);
    memcpy(buf, s + a, len);
    buf[len] = 0;
    errno = 0;
    double v = strtod(buf, NULL);
    bool ok = !(errno == ERANGE && isinf(v));
    if (buf != tmp) free(buf);
    if (!ok) return false;
    *out = v;
    return true;
}

static int bool_literal(const char *s, size_t n) {
    if (n != 4 && n != 5) return -1;
    static const char *const t[] = {"True", "TRUE", "true"}, *const f[] = {"False", "FALSE", "false"};
    for (int k = 0; k < 3; k++) {
        if (strlen(t[k]) == n && memcmp(t[k], s, n) == 0) return 1;
        if (strlen(f[k]) == n && memcmp(f[k], s, n) == 0) return 0;
    }
    return -1;
}

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
        while (j < t->n && is_sp(t->p[j])) j++;
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

typedef struct ncount {
    const char *name;
    unsigned count;
} ncount;

static unsigned nc_get(const ncount *v, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0) return v[i].count;
    return 0;
}

static void nc_set(ncount *v, size_t *n, const char *name, unsigned count) {
    for (size_t i = 0; i < *n; i++)
        if (strcmp(v[i].name, name) == 0) {
            v[i].count = count;
            return;
        }
    v[*n].name = name;
    v[(*n)++].count = count;
}

static void name_columns(eager_table *t, const tok *k) {
    t->ncols = k->nends;
    t->cols = opdb_xcalloc(t->ncols, sizeof *t->cols);
    /* every column sets at most 1 + (renames) counts: 2 per column is enough room */
    ncount *counts = opdb_xcalloc(2 * t->ncols + 1, sizeof *counts);
    size_t ncounts = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        const char *p;
        size_t n;
        cell_span(k, c, &p, &n);
        char *name;
        if (n == 0) {
            char buf[32];
            snprintf(buf, sizeof buf, "Unnamed: %zu", c);
            name = opdb_arena_strndup(&t->arena, buf, strlen(buf));
        } else {
            name = opdb_arena_strndup(&t->arena, p, n);
        }
        /* pandas' renaming of duplicate names: X, X.1, X.2, ...; a generated
         * name that is already taken gets its own suffix in turn */
        unsigned cur = nc_get(counts, ncounts, name);
        while (cur > 0) {
            nc_set(counts, &ncounts, name, cur + 1);
            char suf[24];
            snprintf(suf, sizeof suf, ".%u", cur);
            size_t bl = strlen(name), sl = strlen(suf);
            char *nn = opdb_arena_alloc(&t->arena, bl + sl + 1);
            memcpy(nn, name, bl);
            memcpy(nn + bl, suf, sl + 1);
            name = nn;
            cur = nc_get(counts, ncounts, name);
        }
        nc_set(counts, &ncounts, name, cur + 1);
        t->cols[c] = name;
    }
    free(counts);
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
                int k = int_literal(xs, x->n, &x->v.i, &x->v.u);
                if (k) lit[r] = (uint8_t)k;
                else all_int = false;
            }
            if (!all_int && all_float) {
                if (float_literal(xs, x->n, &x->v.f)) lit[r] = 3;
                else all_float = false;
            }
            if (all_bool && bool_literal(xs, x->n) < 0) all_bool = false;
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
                if (lit[r] != 3) float_literal(txt[r * t->ncols + c], x->n, &x->v.f);
                x->kind = DBC_FLOAT;
            } else {
                x->v.b = bool_literal(txt[r * t->ncols + c], x->n) == 1;
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
    if (!utf8_valid((const unsigned char *)data, n)) return fail_at(err, name, 0, "not UTF-8 text");
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
            x->kind = is_na(p, len) ? DBC_NA : DBC_TEXT;
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
