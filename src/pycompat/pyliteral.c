/* A recursive-descent reader for the Python literal subset of docs/ANALYSIS.md
 * §1.3, following CPython 3.10's tokenizer and ast.literal_eval rules:
 * unary +/- only directly on a number (`-(1)` yes, `--1` and `-True` no),
 * `(x)` is grouping and `(x,)` a tuple, a bare `1, 2` is a tuple, adjacent
 * strings concatenate, complex numbers and bytes are rejected. */
#include "opdb/pyliteral.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"

/* Deeper nesting is refused (CPython's own parser gives up near here too). */
#define PYLIT_MAX_DEPTH 200

typedef struct {
    const char *p;
    size_t n, i;
    int depth;    /* open brackets: newlines are whitespace only inside them */
    size_t err_off;
    const char *err;
} lexer;

static opdb_pylit *fail(lexer *L, size_t off, const char *msg) {
    if (!L->err) {
        L->err = msg;
        L->err_off = off;
    }
    return NULL;
}

static opdb_pylit *node_new(opdb_pylit_kind k) {
    opdb_pylit *v = opdb_xcalloc(1, sizeof *v);
    v->kind = k;
    return v;
}

void opdb_pylit_free(opdb_pylit *v) {
    if (!v) return;
    for (size_t k = 0; k < v->nitems; k++) opdb_pylit_free(v->items[k]);
    free(v->items);
    free(v->s);
    free(v);
}

static void skip_ws(lexer *L) {
    while (L->i < L->n) {
        char c = L->p[L->i];
        if (c == ' ' || c == '\t' || c == '\f' || ((c == '\n' || c == '\r') && L->depth > 0))
            L->i++;
        else
            break;
    }
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (unsigned char)c >= 0x80;
}
static int digit_value(char c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
}

/* ---- numbers ------------------------------------------------------------ */

/* Scans digits of `base` with single '_' between digits, appending the
 * digits (without '_') to sb; returns the count, or -1 on a misplaced '_'. */
static int scan_digits(lexer *L, int base, opdb_strbuf *sb) {
    int count = 0;
    while (L->i < L->n) {
        char c = L->p[L->i];
        if (c == '_') {
            if (count == 0 || L->i + 1 >= L->n || digit_value(L->p[L->i + 1]) >= base) return -1;
            L->i++;
            continue;
        }
        if (digit_value(c) >= base) break;
        opdb_sb_addc(sb, c);
        count++;
        L->i++;
    }
    return count;
}

/* Digits in `base` (most significant first) -> decimal text, exact. */
static void digits_to_decimal(const char *d, size_t nd, int base, opdb_strbuf *out) {
    size_t cap = nd + 2, nl = 0;
    uint32_t *limb = opdb_xcalloc(cap, sizeof *limb); /* base 1e9, least significant first */
    for (size_t k = 0; k < nd; k++) {
        uint64_t carry = (uint64_t)digit_value(d[k]);
        for (size_t j = 0; j < nl; j++) {
            uint64_t t = (uint64_t)limb[j] * (uint64_t)base + carry;
            limb[j] = (uint32_t)(t % 1000000000u);
            carry = t / 1000000000u;
        }
        while (carry) {
            limb[nl++] = (uint32_t)(carry % 1000000000u);
            carry /= 1000000000u;
        }
    }
    if (nl == 0) {
        opdb_sb_addc(out, '0');
    } else {
        opdb_sb_addf(out, "%u", limb[nl - 1]);
        for (size_t j = nl - 1; j-- > 0;) opdb_sb_addf(out, "%09u", limb[j]);
    }
    free(limb);
}

static void set_int_value(opdb_pylit *v) {
    errno = 0;
    char *end;
    long long x = strtoll(v->s, &end, 10);
    v->fits_int64 = errno == 0 && *end == '\0';
    v->i = v->fits_int64 ? x : 0;
    v->f = strtod(v->s, NULL); /* correctly rounded, as float(int) */
}

/* An INT node from the digits in d (from offset skip; d is freed). */
static opdb_pylit *int_node(opdb_strbuf *d, size_t skip, int base) {
    opdb_strbuf t;
    opdb_sb_init(&t);
    digits_to_decimal(d->p + skip, d->n - skip, base, &t);
    opdb_sb_free(d);
    opdb_pylit *v = node_new(OPDB_PYLIT_INT);
    v->s = t.p;
    v->n = t.n;
    set_int_value(v);
    return v;
}

/* An unsigned number token at L->i (a sign is a unary operator). */
static opdb_pylit *parse_number(lexer *L) {
    size_t start = L->i;
    opdb_strbuf d;
    opdb_sb_init(&d);
    opdb_pylit *v = NULL;
    const char *p = L->p;
    char c1 = L->i + 1 < L->n ? p[L->i + 1] : '\0';
    if (p[L->i] == '0' && c1 && strchr("xXoObB", c1)) {
        int base = (c1 == 'x' || c1 == 'X') ? 16 : (c1 == 'o' || c1 == 'O') ? 8 : 2;
        L->i += 2;
        if (L->i < L->n && p[L->i] == '_') L->i++; /* 0x_1f is valid */
        if (scan_digits(L, base, &d) <= 0) {
            opdb_sb_free(&d);
            return fail(L, start, "invalid integer literal");
        }
        if (L->i < L->n && is_ident(p[L->i])) {
            opdb_sb_free(&d);
            return fail(L, L->i, "invalid character after number");
        }
        return int_node(&d, 0, base);
    }
    int nint = 0;
    if (is_digit(p[L->i])) nint = scan_digits(L, 10, &d);
    if (nint < 0) goto bad;
    bool is_float = false;
    if (L->i < L->n && p[L->i] == '.') {
        is_float = true;
        opdb_sb_addc(&d, '.');
        L->i++;
        if (L->i < L->n && is_digit(p[L->i])) {
            if (scan_digits(L, 10, &d) < 0) goto bad;
        } else if (nint == 0) {
            goto bad;
        }
    }
    if (L->i < L->n && (p[L->i] == 'e' || p[L->i] == 'E')) {
        size_t save = L->i;
        opdb_sb_addc(&d, 'e');
        L->i++;
        if (L->i < L->n && (p[L->i] == '+' || p[L->i] == '-')) opdb_sb_addc(&d, p[L->i++]);
        if (L->i >= L->n || !is_digit(p[L->i]) || scan_digits(L, 10, &d) < 0) {
            L->i = save;
            goto bad;
        }
        is_float = true;
    }
    if (L->i < L->n && (is_ident(p[L->i]) || p[L->i] == '.')) {
        opdb_sb_free(&d);
        return fail(L, L->i, (p[L->i] == 'j' || p[L->i] == 'J') ? "complex numbers are not supported"
                                                                : "invalid character after number");
    }
    if (is_float) {
        v = node_new(OPDB_PYLIT_FLOAT);
        v->f = strtod(d.p, NULL); /* glibc strtod is correctly rounded; overflow -> inf as Python */
        opdb_sb_free(&d);
        return v;
    }
    /* decimal int: "0" may repeat ("00") but a non-zero value has no leading zero */
    size_t z = 0;
    while (z < d.n && d.p[z] == '0') z++;
    if (z > 0 && z < d.n) {
        opdb_sb_free(&d);
        return fail(L, start, "leading zeros in decimal integer literals are not permitted");
    }
    return int_node(&d, z, 10);
bad:
    opdb_sb_free(&d);
    return fail(L, start, "invalid number literal");
}

/* ---- strings ------------------------------------------------------------ */

static void put_utf8(opdb_strbuf *sb, uint32_t cp) {
    /* surrogates are kept as their 3-byte form, as Python's surrogatepass would */
    if (cp < 0x80) {
        opdb_sb_addc(sb, (char)cp);
    } else if (cp < 0x800) {
        opdb_sb_addc(sb, (char)(0xC0 | (cp >> 6)));
        opdb_sb_addc(sb, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        opdb_sb_addc(sb, (char)(0xE0 | (cp >> 12)));
        opdb_sb_addc(sb, (char)(0x80 | ((cp >> 6) & 0x3F)));
        opdb_sb_addc(sb, (char)(0x80 | (cp & 0x3F)));
    } else {
        opdb_sb_addc(sb, (char)(0xF0 | (cp >> 18)));
        opdb_sb_addc(sb, (char)(0x80 | ((cp >> 12) & 0x3F)));
        opdb_sb_addc(sb, (char)(0x80 | ((cp >> 6) & 0x3F)));
        opdb_sb_addc(sb, (char)(0x80 | (cp & 0x3F)));
    }
}

/* Reads exactly `count` hex digits at L->i into *cp. */
static bool read_hex(lexer *L, int count, uint32_t *cp) {
    uint32_t v = 0;
    for (int k = 0; k < count; k++) {
        if (L->i >= L->n || digit_value(L->p[L->i]) >= 16) return false;
        v = v * 16 + (uint32_t)digit_value(L->p[L->i++]);
    }
    *cp = v;
    return true;
}

/* One escape after the backslash (L->i is past it). */
static bool read_escape(lexer *L, opdb_strbuf *sb) {
    char c = L->p[L->i++];
    uint32_t cp;
    switch (c) {
    case '\n': return true; /* line continuation */
    case '\r':
        if (L->i < L->n && L->p[L->i] == '\n') L->i++;
        return true;
    case '\\': opdb_sb_addc(sb, '\\'); return true;
    case '\'': opdb_sb_addc(sb, '\''); return true;
    case '"': opdb_sb_addc(sb, '"'); return true;
    case 'a': opdb_sb_addc(sb, '\a'); return true;
    case 'b': opdb_sb_addc(sb, '\b'); return true;
    case 'f': opdb_sb_addc(sb, '\f'); return true;
    case 'n': opdb_sb_addc(sb, '\n'); return true;
    case 'r': opdb_sb_addc(sb, '\r'); return true;
    case 't': opdb_sb_addc(sb, '\t'); return true;
    case 'v': opdb_sb_addc(sb, '\v'); return true;
    case 'x':
        if (!read_hex(L, 2, &cp)) return false;
        put_utf8(sb, cp);
        return true;
    case 'u':
        if (!read_hex(L, 4, &cp)) return false;
        put_utf8(sb, cp);
        return true;
    case 'U':
        if (!read_hex(L, 8, &cp) || cp > 0x10FFFF) return false;
        put_utf8(sb, cp);
        return true;
    case 'N': return false; /* \N{name} needs the Unicode name table: refused */
    default:
        if (c >= '0' && c <= '7') {
            cp = (uint32_t)(c - '0');
            for (int k = 0; k < 2 && L->i < L->n && L->p[L->i] >= '0' && L->p[L->i] <= '7'; k++)
                cp = cp * 8 + (uint32_t)(L->p[L->i++] - '0');
            put_utf8(sb, cp);
            return true;
        }
        /* unknown escapes keep the backslash (a DeprecationWarning in Python) */
        opdb_sb_addc(sb, '\\');
        opdb_sb_addc(sb, c);
        return true;
    }
}

/* One quoted piece (prefix already consumed) appended to sb. */
static bool read_quoted(lexer *L, bool raw, opdb_strbuf *sb) {
    char q = L->p[L->i];
    bool triple = L->i + 2 < L->n && L->p[L->i + 1] == q && L->p[L->i + 2] == q;
    size_t open = L->i;
    L->i += triple ? 3 : 1;
    for (;;) {
        if (L->i >= L->n) {
            fail(L, open, "unterminated string literal");
            return false;
        }
        char c = L->p[L->i];
        if (c == q) {
            if (!triple) {
                L->i++;
                return true;
            }
            if (L->i + 2 < L->n && L->p[L->i + 1] == q && L->p[L->i + 2] == q) {
                L->i += 3;
                return true;
            }
        }
        if ((c == '\n' || c == '\r') && !triple) {
            fail(L, open, "unterminated string literal");
            return false;
        }
        if (c == '\r') { /* the tokenizer reads \r\n and \r as \n */
            opdb_sb_addc(sb, '\n');
            L->i += (L->i + 1 < L->n && L->p[L->i + 1] == '\n') ? 2 : 1;
            continue;
        }
        if (c == '\\') {
            if (L->i + 1 >= L->n) {
                fail(L, open, "unterminated string literal");
                return false;
            }
            if (raw) { /* the backslash stays; it only protects the next char */
                opdb_sb_addc(sb, '\\');
                opdb_sb_addc(sb, L->p[L->i + 1]);
                L->i += 2;
                continue;
            }
            size_t at = L->i++;
            if (!read_escape(L, sb)) {
                fail(L, at, "invalid escape sequence");
                return false;
            }
            continue;
        }
        opdb_sb_addc(sb, c);
        L->i++;
    }
}

/* Length of a str prefix (one of r, R, u, U) at L->i followed by a quote;
 * 0 if none, -1 for any other prefix (bytes, f-strings, or invalid ones
 * such as "rr"): none of those is a str literal. */
static int string_prefix(lexer *L, bool *raw) {
    size_t k = L->i;
    *raw = false;
    while (k < L->n && k - L->i < 3 && L->p[k] && strchr("rRuUbBfF", L->p[k])) k++;
    size_t len = k - L->i;
    if (len == 0 || k >= L->n || (L->p[k] != '\'' && L->p[k] != '"')) return 0;
    if (len > 1 || !strchr("rRuU", L->p[L->i])) return -1;
    *raw = L->p[L->i] == 'r' || L->p[L->i] == 'R';
    return 1;
}

static opdb_pylit *parse_string(lexer *L) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    size_t start = L->i;
    for (;;) { /* adjacent literals concatenate: 'a' "b" */
        bool raw = false;
        int pre = string_prefix(L, &raw);
        if (pre < 0) {
            opdb_sb_free(&sb);
            return fail(L, L->i, "only str literals are supported");
        }
        if (L->i + (size_t)pre >= L->n || (L->p[L->i + pre] != '\'' && L->p[L->i + pre] != '"')) break;
        L->i += (size_t)pre;
        if (!read_quoted(L, raw, &sb)) {
            opdb_sb_free(&sb);
            return NULL;
        }
        skip_ws(L);
    }
    if (L->i == start) {
        opdb_sb_free(&sb);
        return fail(L, start, "expected a string");
    }
    opdb_pylit *v = node_new(OPDB_PYLIT_STR);
    opdb_sb_addc(&sb, '\0'); /* make sure p is allocated even for '' */
    v->s = sb.p;
    v->n = sb.n - 1;
    return v;
}

/* ---- containers and values ---------------------------------------------- */

static opdb_pylit *parse_value(lexer *L, bool *signed_num);

static void push_item(opdb_pylit *c, opdb_pylit *item, size_t *cap) {
    OPDB_ALLOC_GROW(c->items, c->nitems + 1, *cap);
    c->items[c->nitems++] = item;
}

/* Comma-separated values up to `close` (L->i past the opener). For '(' a
 * single value without a comma is grouping: it is returned itself. */
static opdb_pylit *parse_seq(lexer *L, char close, bool *signed_num) {
    size_t open = L->i - 1;
    if (++L->depth > PYLIT_MAX_DEPTH) return fail(L, open, "nesting too deep");
    opdb_pylit *c = node_new(close == ']' ? OPDB_PYLIT_LIST : OPDB_PYLIT_TUPLE);
    size_t cap = 0;
    bool comma = false, grouping_signed = false;
    for (;;) {
        skip_ws(L);
        if (L->i < L->n && L->p[L->i] == close) {
            L->i++;
            break;
        }
        if (c->nitems > 0 && !comma) {
            opdb_pylit_free(c);
            return fail(L, L->i, L->i < L->n ? "expected ',' or closing bracket" : "unexpected end of input");
        }
        opdb_pylit *item = parse_value(L, &grouping_signed);
        if (!item) {
            opdb_pylit_free(c);
            return NULL;
        }
        push_item(c, item, &cap);
        skip_ws(L);
        comma = L->i < L->n && L->p[L->i] == ',';
        if (comma) L->i++;
    }
    L->depth--;
    if (close == ')' && c->nitems == 1 && !comma) { /* (x) is x */
        opdb_pylit *only = c->items[0];
        c->nitems = 0;
        opdb_pylit_free(c);
        *signed_num = grouping_signed;
        return only;
    }
    return c;
}

static bool word_at(lexer *L, const char *w) {
    size_t k = strlen(w);
    return L->n - L->i >= k && memcmp(L->p + L->i, w, k) == 0 &&
           (L->i + k >= L->n || !is_ident(L->p[L->i + k]));
}

/* One value; *signed_num tells the caller a unary sign was applied (so that
 * a second sign can be refused as literal_eval does). */
static opdb_pylit *parse_value(lexer *L, bool *signed_num) {
    *signed_num = false;
    skip_ws(L);
    if (L->i >= L->n) return fail(L, L->i, "unexpected end of input");
    char c = L->p[L->i];
    if (c == '[' || c == '(') {
        L->i++;
        return parse_seq(L, c == '[' ? ']' : ')', signed_num);
    }
    if (c == '-' || c == '+') {
        size_t at = L->i++;
        bool inner_signed;
        opdb_pylit *v = parse_value(L, &inner_signed);
        if (!v) return NULL;
        if ((v->kind != OPDB_PYLIT_INT && v->kind != OPDB_PYLIT_FLOAT) || inner_signed) {
            opdb_pylit_free(v);
            return fail(L, at, "unary sign applies only to a number");
        }
        if (c == '-') {
            if (v->kind == OPDB_PYLIT_FLOAT) {
                v->f = -v->f;
            } else if (strcmp(v->s, "0") != 0) {
                opdb_strbuf t;
                opdb_sb_init(&t);
                opdb_sb_addc(&t, '-');
                opdb_sb_add(&t, v->s, v->n);
                free(v->s);
                v->s = t.p;
                v->n = t.n;
                set_int_value(v);
            }
        }
        *signed_num = true;
        return v;
    }
    if (is_digit(c) || (c == '.' && L->i + 1 < L->n && is_digit(L->p[L->i + 1]))) return parse_number(L);
    if (c == '\'' || c == '"' || is_ident(c)) {
        bool raw;
        if (string_prefix(L, &raw) != 0 || c == '\'' || c == '"') return parse_string(L);
        if (word_at(L, "True") || word_at(L, "False")) {
            opdb_pylit *v = node_new(OPDB_PYLIT_BOOL);
            v->i = L->p[L->i] == 'T';
            v->f = (double)v->i;
            L->i += v->i ? 4 : 5;
            return v;
        }
        if (word_at(L, "None")) {
            L->i += 4;
            return node_new(OPDB_PYLIT_NONE);
        }
        return fail(L, L->i, "names are not literals");
    }
    return fail(L, L->i, "unexpected character");
}

opdb_pylit *opdb_pylit_parse(const char *text, size_t n, size_t *err_off, const char **err_msg) {
    lexer L = {text, n, 0, 0, 0, NULL};
    opdb_pylit *v = NULL;
    if (memchr(text, '\0', n)) {
        fail(&L, (size_t)((const char *)memchr(text, '\0', n) - text), "null byte in literal");
        goto out;
    }
    /* eval mode: blank lines before and after the expression are fine */
    while (L.i < n && strchr(" \t\f\r\n", text[L.i])) L.i++;
    bool sgn;
    v = parse_value(&L, &sgn);
    if (!v) goto out;
    skip_ws(&L);
    if (L.i < n && text[L.i] == ',') { /* a bare `1, 2` is a tuple */
        opdb_pylit *t = node_new(OPDB_PYLIT_TUPLE);
        size_t cap = 0;
        push_item(t, v, &cap);
        v = t;
        while (L.i < n && text[L.i] == ',') {
            L.i++;
            skip_ws(&L);
            if (L.i >= n || strchr("\r\n", text[L.i])) break;
            opdb_pylit *item = parse_value(&L, &sgn);
            if (!item) {
                opdb_pylit_free(v);
                v = NULL;
                goto out;
            }
            push_item(t, item, &cap);
            skip_ws(&L);
        }
    }
    while (L.i < n && strchr(" \t\f\r\n", text[L.i])) L.i++;
    if (L.i < n) {
        fail(&L, L.i, "unexpected text after the literal");
        opdb_pylit_free(v);
        v = NULL;
    }
out:
    if (!v) {
        if (err_off) *err_off = L.err_off;
        if (err_msg) *err_msg = L.err ? L.err : "invalid literal";
    }
    return v;
}

bool opdb_pylit_number(const opdb_pylit *v, double *out) {
    if (!v || (v->kind != OPDB_PYLIT_INT && v->kind != OPDB_PYLIT_FLOAT)) return false;
    *out = v->f;
    return true;
}

/* Python repr(str): single quotes unless the text has ' and no ". */
void opdb_py_repr_str(opdb_strbuf *sb, const char *s, size_t n) {
    char q = (memchr(s, '\'', n) && !memchr(s, '"', n)) ? '"' : '\'';
    opdb_sb_addc(sb, q);
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)s[k];
        if (c == (unsigned char)q || c == '\\') {
            opdb_sb_addc(sb, '\\');
            opdb_sb_addc(sb, (char)c);
        } else if (c == '\n') opdb_sb_adds(sb, "\\n");
        else if (c == '\r') opdb_sb_adds(sb, "\\r");
        else if (c == '\t') opdb_sb_adds(sb, "\\t");
        else if (c < 0x20 || c == 0x7f) opdb_sb_addf(sb, "\\x%02x", c);
        else opdb_sb_addc(sb, (char)c);
    }
    opdb_sb_addc(sb, q);
}

static void lit_str(opdb_strbuf *sb, const opdb_pylit *v, bool inner) {
    char buf[64];
    switch (v->kind) {
    case OPDB_PYLIT_STR:
        if (inner) opdb_py_repr_str(sb, v->s, v->n);
        else opdb_sb_add(sb, v->s, v->n);
        break;
    case OPDB_PYLIT_INT: opdb_sb_add(sb, v->s, v->n); break;
    case OPDB_PYLIT_FLOAT:
        opdb_sb_add(sb, buf, opdb_py_fmt_repr(buf, sizeof buf, v->f));
        break;
    case OPDB_PYLIT_BOOL: opdb_sb_adds(sb, v->i ? "True" : "False"); break;
    case OPDB_PYLIT_NONE: opdb_sb_adds(sb, "None"); break;
    case OPDB_PYLIT_LIST:
    case OPDB_PYLIT_TUPLE: {
        bool list = v->kind == OPDB_PYLIT_LIST;
        opdb_sb_addc(sb, list ? '[' : '(');
        for (size_t k = 0; k < v->nitems; k++) {
            if (k) opdb_sb_adds(sb, ", ");
            lit_str(sb, v->items[k], true);
        }
        if (!list && v->nitems == 1) opdb_sb_addc(sb, ',');
        opdb_sb_addc(sb, list ? ']' : ')');
        break;
    }
    }
}

void opdb_pylit_str(opdb_strbuf *sb, const opdb_pylit *v) { lit_str(sb, v, false); }

void opdb_pylit_repr(opdb_strbuf *sb, const opdb_pylit *v) { lit_str(sb, v, true); }
