/* The query line's fast JSON reader: the plain subset that query lines are
 * written in (ASCII strings without escapes, JSON numbers, literals, objects
 * and arrays), handed to the same callbacks yajl would call, in the same
 * order with the same bytes. Anything else (an escape, a non-ASCII byte, a
 * syntax error, deep nesting, a callback that refuses) returns 0 before the
 * caller trusts the result, and the caller parses the line again with yajl,
 * which also words the error. This is the batch's hot loop: yajl's handle
 * allocation and lexer cost more than the lookup itself. */
#include <stdbool.h>
#include <string.h>

#include "query/qline_fast.h"

#define QF_MAX_DEPTH 64

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static size_t skip_ws(const char *s, size_t i, size_t n) {
    while (i < n && is_ws(s[i])) i++;
    return i;
}

/* s[*i] is the opening quote; the bytes between the quotes in *a, *len */
static bool scan_str(const char *s, size_t n, size_t *i, size_t *a, size_t *len) {
    size_t j = *i + 1;
    *a = j;
    for (; j < n; j++) {
        unsigned char c = (unsigned char)s[j];
        if (c == '"') break;
        if (c == '\\' || c < 0x20 || c >= 0x80) return false;
    }
    if (j >= n) return false;
    *len = j - *a;
    *i = j + 1;
    return true;
}

/* JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool scan_num(const char *s, size_t n, size_t *i) {
    size_t j = *i;
    if (j < n && s[j] == '-') j++;
    if (j >= n) return false;
    if (s[j] == '0') j++;
    else if (s[j] >= '1' && s[j] <= '9')
        while (j < n && is_digit(s[j])) j++;
    else return false;
    if (j < n && s[j] == '.') {
        size_t d = ++j;
        while (j < n && is_digit(s[j])) j++;
        if (j == d) return false;
    }
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        j++;
        if (j < n && (s[j] == '+' || s[j] == '-')) j++;
        size_t d = j;
        while (j < n && is_digit(s[j])) j++;
        if (j == d) return false;
    }
    *i = j;
    return true;
}

static bool word(const char *s, size_t n, size_t i, const char *w, size_t wl) {
    return n - i >= wl && memcmp(s + i, w, wl) == 0;
}

enum { QF_VALUE, QF_KEY, QF_AFTER };

int q_json_fast(const yajl_callbacks *cb, void *ctx, const char *s, size_t n) {
    char stack[QF_MAX_DEPTH]; /* 'o' object, 'a' array */
    int depth = 0, state = QF_VALUE;
    size_t i = skip_ws(s, 0, n), a, len;
    if (i >= n || s[i] != '{') return 0; /* only objects are queries: the rest goes to yajl */
    for (;;) {
        i = skip_ws(s, i, n);
        if (state == QF_KEY) {
            if (i >= n || s[i] != '"' || !scan_str(s, n, &i, &a, &len)) return 0;
            if (!cb->yajl_map_key(ctx, (const unsigned char *)s + a, len)) return 0;
            i = skip_ws(s, i, n);
            if (i >= n || s[i] != ':') return 0;
            i++;
            state = QF_VALUE;
            continue;
        }
        if (state == QF_AFTER) {
            if (depth == 0) return i == n;
            if (i >= n) return 0;
            char top = stack[depth - 1];
            if (s[i] == ',') {
                i++;
                state = top == 'o' ? QF_KEY : QF_VALUE;
            } else if (s[i] == (top == 'o' ? '}' : ']')) {
                i++;
                depth--;
                if (!(top == 'o' ? cb->yajl_end_map(ctx) : cb->yajl_end_array(ctx))) return 0;
            } else {
                return 0;
            }
            continue;
        }
        if (i >= n) return 0;
        char c = s[i];
        int ok;
        if (c == '{' || c == '[') {
            if (depth >= QF_MAX_DEPTH) return 0;
            if (!(c == '{' ? cb->yajl_start_map(ctx) : cb->yajl_start_array(ctx))) return 0;
            stack[depth++] = c == '{' ? 'o' : 'a';
            i = skip_ws(s, i + 1, n);
            if (i < n && s[i] == (c == '{' ? '}' : ']')) {
                i++;
                depth--;
                if (!(c == '{' ? cb->yajl_end_map(ctx) : cb->yajl_end_array(ctx))) return 0;
                state = QF_AFTER;
            } else {
                state = c == '{' ? QF_KEY : QF_VALUE;
            }
            continue;
        }
        if (c == '"') {
            if (!scan_str(s, n, &i, &a, &len)) return 0;
            ok = cb->yajl_string(ctx, (const unsigned char *)s + a, len);
        } else if (word(s, n, i, "true", 4) || word(s, n, i, "false", 5)) {
            ok = cb->yajl_boolean(ctx, c == 't');
            i += c == 't' ? 4 : 5;
        } else if (word(s, n, i, "null", 4)) {
            ok = cb->yajl_null(ctx);
            i += 4;
        } else {
            a = i;
            if (!scan_num(s, n, &i)) return 0;
            ok = cb->yajl_number(ctx, s + a, i - a);
        }
        if (!ok) return 0;
        state = QF_AFTER;
    }
}
