/* See pandas_cells.h. */
#include "db/pandas_cells.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/core.h"

/* pandas' default NA spellings (1.5): "", "#N/A", "#N/A N/A", "#NA",
 * "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
 * "NA", "NULL", "NaN", "n/a", "nan", "null"; found by their first byte (most
 * cells are rejected there) and compared at their fixed lengths. */
#define NA_IS(lit) (n == sizeof lit - 1 && memcmp(s, lit, sizeof lit - 1) == 0)
bool db_is_na(const char *s, size_t n) {
    if (n == 0) return true;
    if (n > 8) return false;
    switch (s[0]) {
    case '#': return NA_IS("#N/A") || NA_IS("#N/A N/A") || NA_IS("#NA");
    case '-': return NA_IS("-1.#IND") || NA_IS("-1.#QNAN") || NA_IS("-NaN") || NA_IS("-nan");
    case '1': return NA_IS("1.#IND") || NA_IS("1.#QNAN");
    case '<': return NA_IS("<NA>");
    case 'N': return NA_IS("N/A") || NA_IS("NA") || NA_IS("NULL") || NA_IS("NaN");
    case 'n': return NA_IS("n/a") || NA_IS("nan") || NA_IS("null");
    default: return false;
    }
}
#undef NA_IS

bool db_utf8_valid(const unsigned char *p, size_t n) {
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

/* An integer literal: optional spaces/tabs, sign, digits. 1 = int64, 2 = uint64 only, 0 = not. */
int db_int_literal(const char *s, size_t n, int64_t *iv, uint64_t *uv) {
    size_t a = 0, b = n;
    while (a < b && db_is_sp(s[a])) a++;
    while (b > a && db_is_sp(s[b - 1])) b--;
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
    size_t i0 = i;
    /* the digits before the point, then those after it (m wraps past 19 digits, which are refused) */
    for (unsigned d; i < n && (d = (unsigned)(s[i] - '0')) < 10; i++) m = m * 10 + d;
    size_t digits = i - i0, frac = 0;
    if (i < n && s[i] == '.') {
        size_t f0 = ++i;
        for (unsigned d; i < n && (d = (unsigned)(s[i] - '0')) < 10; i++) m = m * 10 + d;
        frac = i - f0;
        digits += frac;
    }
    if (i != n || !digits || digits > 19 || m > ((uint64_t)1 << 53) || frac > 22) return false;
    double v = (double)m / p10[frac];
    *out = neg ? -v : v;
    return true;
}

/* A float literal: decimal with optional fraction/exponent, or inf/infinity. */
bool db_float_literal(const char *s, size_t n, double *out) {
    /* the common cell first: what exact_decimal reads is a float literal */
    if (exact_decimal(s, n, out)) return true;
    size_t a = 0, b = n;
    while (a < b && db_is_sp(s[a])) a++;
    while (b > a && db_is_sp(s[b - 1])) b--;
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

int db_bool_literal(const char *s, size_t n) {
    if (n != 4 && n != 5) return -1;
    static const char *const t[] = {"True", "TRUE", "true"}, *const f[] = {"False", "FALSE", "false"};
    for (int k = 0; k < 3; k++) {
        if (strlen(t[k]) == n && memcmp(t[k], s, n) == 0) return 1;
        if (strlen(f[k]) == n && memcmp(f[k], s, n) == 0) return 0;
    }
    return -1;
}

struct db_name_count {
    const char *name;
    unsigned count;
};

static unsigned nc_get(const db_col_namer *nm, const char *name) {
    for (size_t i = 0; i < nm->n; i++)
        if (strcmp(nm->v[i].name, name) == 0) return nm->v[i].count;
    return 0;
}

static void nc_set(db_col_namer *nm, const char *name, unsigned count) {
    for (size_t i = 0; i < nm->n; i++)
        if (strcmp(nm->v[i].name, name) == 0) {
            nm->v[i].count = count;
            return;
        }
    nm->v[nm->n].name = name;
    nm->v[nm->n++].count = count;
}

void db_col_namer_init(db_col_namer *nm, size_t ncols) {
    /* every column sets at most 1 + (renames) counts: 2 per column is enough room */
    nm->v = opdb_xcalloc(2 * ncols + 1, sizeof *nm->v);
    nm->n = 0;
}

char *db_col_namer_add(db_col_namer *nm, opdb_arena *a, size_t c, const char *s, size_t n) {
    char *name;
    if (n == 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "Unnamed: %zu", c);
        name = opdb_arena_strndup(a, buf, strlen(buf));
    } else {
        name = opdb_arena_strndup(a, s, n);
    }
    unsigned cur = nc_get(nm, name);
    while (cur > 0) {
        nc_set(nm, name, cur + 1);
        char suf[24];
        snprintf(suf, sizeof suf, ".%u", cur);
        size_t bl = strlen(name), sl = strlen(suf);
        char *nn = opdb_arena_alloc(a, bl + sl + 1);
        memcpy(nn, name, bl);
        memcpy(nn + bl, suf, sl + 1);
        name = nn;
        cur = nc_get(nm, name);
    }
    nc_set(nm, name, cur + 1);
    return name;
}

void db_col_namer_free(db_col_namer *nm) { free(nm->v); }
