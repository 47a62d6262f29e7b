/* Python number rendering: "%.Nf" and repr(float). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opdb/pystr.h"

size_t opdb_py_fmt_fixed(char *buf, size_t cap, double x, int decimals) {
    int k;
    if (isnan(x))
        k = snprintf(buf, cap, "nan");
    else
        k = snprintf(buf, cap, "%.*f", decimals, x);
    return k < 0 ? 0 : (size_t)k;
}

/* Tries tmp with its last mantissa digit moved by +1 and -1 (with carry);
 * on a round-trip keeps the one closer to x in tmp and returns true. */
static bool neighbour_roundtrips(char *tmp, double x) {
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

size_t opdb_py_fmt_repr(char *buf, size_t cap, double x) {
    if (isnan(x)) return (size_t)snprintf(buf, cap, "nan");
    if (isinf(x)) return (size_t)snprintf(buf, cap, x > 0 ? "inf" : "-inf");
    /* Shortest %.*e that round-trips gives the digits and exponent. */
    char tmp[40];
    for (int prec = 0; prec <= 16; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec, x);
        if (strtod(tmp, NULL) == x) break;
        /* printf rounds ties to even; the shortest round-trip string may be
         * the neighbour one unit up or down in the last digit. */
        if (neighbour_roundtrips(tmp, x)) break;
    }
    char digits[24];
    size_t nd = 0;
    const char *q = tmp;
    bool neg = false;
    if (*q == '-') {
        neg = true;
        q++;
    }
    for (; *q && *q != 'e'; q++)
        if (*q != '.') digits[nd++] = *q;
    int e = atoi(q + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    char out[64];
    size_t o = 0;
    if (neg) out[o++] = '-';
    if (e < -4 || e >= 16) {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (size_t i = 1; i < nd; i++) out[o++] = digits[i];
        }
        o += (size_t)snprintf(out + o, sizeof out - o, "e%c%02d", e < 0 ? '-' : '+', abs(e));
    } else if (e < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = -1; i > e; i--) out[o++] = '0';
        for (size_t i = 0; i < nd; i++) out[o++] = digits[i];
    } else {
        for (int i = 0; i <= e; i++) out[o++] = (size_t)i < nd ? digits[i] : '0';
        out[o++] = '.';
        if ((size_t)e + 1 < nd) {
            for (size_t i = (size_t)e + 1; i < nd; i++) out[o++] = digits[i];
        } else {
            out[o++] = '0';
        }
    }
    out[o] = '\0';
    return (size_t)snprintf(buf, cap, "%s", out);
}
