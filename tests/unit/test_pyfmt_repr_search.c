/* repr's digit search against the plain search it shortcuts: for random
 * bit patterns (normal and subnormal), random short decimals and integers,
 * opdb_py_fmt_repr gives the same text as trying every precision from 1
 * digit up (the search as it was before the 15-digit shortcut). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"

/* ---- the reference: the full search, digits from 1 up */
/* Tries tmp with its last mantissa digit moved by +1 and -1 (with carry);
 * on a round-trip keeps the one closer to x in tmp and returns true. */
static bool ref_neighbour(char *tmp, double x) {
    char *e = strchr(tmp, 'e');
    if (!e) return false;
    char best[40] = "";
    double best_err = 0;
    for (int dir = -1; dir <= 1; dir += 2) {
        char c[40];
        snprintf(c, sizeof c, "%s", tmp);
        char *d = c + (e - tmp) - 1; /* last mantissa digit */
        bool ok = true;
        for (;;) {
            if (*d == '.') {
                d--;
                continue;
            }
            if (*d < '0' || *d > '9') {
                ok = false;
                break;
            }
            if (dir > 0 ? *d < '9' : *d > '0') {
                *d = (char)(*d + dir);
                break;
            }
            *d = dir > 0 ? '0' : '9';
            if (d == c || (d == c + 1 && c[0] == '-')) {
                ok = false;
                break;
            }
            d--;
        }
        if (!ok || (c[0] == '0' || (c[0] == '-' && c[1] == '0'))) continue;
        double v = strtod(c, NULL);
        if (v != x) continue;
        double err = 0; /* both candidates equal x after rounding; prefer the first found */
        if (!best[0] || err < best_err) {
            snprintf(best, sizeof best, "%s", c);
            best_err = err;
        }
    }
    if (!best[0]) return false;
    memcpy(tmp, best, strlen(best) + 1);
    return true;
}

/* the digits and exponent of the shortest round-trip form, as "d.ddde+XX" */
static void ref_search(double x, char *tmp, size_t cap) {
    for (int prec = 0; prec <= 16; prec++) {
        snprintf(tmp, cap, "%.*e", prec, x);
        if (strtod(tmp, NULL) == x) break;
        if (ref_neighbour(tmp, x)) break;
    }
}

/* the fast repr's digits, exponent and sign back out of its text */
static void norm(const char *s, char *out, size_t cap) {
    double v = strtod(s, NULL);
    char d[40];
    size_t nd = 0;
    bool neg = s[0] == '-';
    const char *e = strpbrk(s, "eE");
    int ex = 0;
    /* significant digits in order, and the decimal exponent of the first */
    const char *p = s + neg;
    int point = -1, first = -1, i = 0;
    for (; *p && p != e; p++) {
        if (*p == '.') {
            point = i;
            continue;
        }
        if (first < 0 && *p != '0') first = i;
        if (first >= 0) d[nd++] = *p;
        i++;
    }
    if (point < 0) point = i;
    if (e) ex = atoi(e + 1);
    while (nd > 1 && d[nd - 1] == '0') nd--;
    if (nd == 0) d[nd++] = '0', first = point - 1;
    snprintf(out, cap, "%s%.*s e%d", neg ? "-" : "", (int)nd, d, point - first - 1 + ex);
    (void)v;
}

static void ref_norm(double x, char *out, size_t cap) {
    char tmp[40];
    ref_search(x, tmp, sizeof tmp);
    norm(tmp, out, cap);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void check(double x) {
    if (!isfinite(x)) return;
    char got[64], a[64], b[64];
    opdb_py_fmt_repr(got, sizeof got, x);
    norm(got, a, sizeof a);
    ref_norm(x, b, sizeof b);
    if (strcmp(a, b) != 0 || strtod(got, NULL) != x)
        fail_msg("repr(%a) = %s (%s), the full search gives %s", x, got, a, b);
}

static void test_random_bits(void **state) {
    (void)state;
    for (int i = 0; i < 40000; i++) {
        uint64_t u = next();
        double x;
        memcpy(&x, &u, sizeof x);
        check(x);
        u &= 0x800fffffffffffffu; /* subnormal */
        memcpy(&x, &u, sizeof x);
        check(x);
    }
}

static void test_short_decimals(void **state) {
    (void)state;
    char s[64];
    for (int i = 0; i < 60000; i++) {
        int digits = 1 + (int)(next() % 17), ex = (int)(next() % 40) - 20;
        unsigned long long m = next() % 100000000000000000ull;
        for (int k = 17; k > digits; k--) m /= 10;
        snprintf(s, sizeof s, "%s%llue%d", next() % 2 ? "-" : "", m, ex);
        check(strtod(s, NULL));
    }
    static const double fixed[] = {0.0, -0.0, 1.0, 0.1, 0.3, 3.002913, 1e16, 1e15, 123456789012345678.0, 5e-324,
                                   2.2250738585072014e-308, 1.7976931348623157e308, 9.999999999999999e22};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) check(fixed[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_bits),
        cmocka_unit_test(test_short_decimals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
