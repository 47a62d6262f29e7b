/* Python number rendering: "%.Nf" and repr(float) (its digits in pyshortest.c). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opdb/pystr.h"
#include "pycompat/pyshortest.h"

__extension__ typedef unsigned __int128 u128;

static const char k_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

static const uint64_t k_p10[20] = {1ULL,
                                   10ULL,
                                   100ULL,
                                   1000ULL,
                                   10000ULL,
                                   100000ULL,
                                   1000000ULL,
                                   10000000ULL,
                                   100000000ULL,
                                   1000000000ULL,
                                   10000000000ULL,
                                   100000000000ULL,
                                   1000000000000ULL,
                                   10000000000000ULL,
                                   100000000000000ULL,
                                   1000000000000000ULL,
                                   10000000000000000ULL,
                                   100000000000000000ULL,
                                   1000000000000000000ULL,
                                   10000000000000000000ULL};

/* v's decimal digit count: from the bit length, 1233 / 4096 being just below
 * log10(2), t is the count or one less (v | 1: 0 has one digit, and no other
 * v changes count, 10^t being even) */
static int ndigits(uint64_t v) {
    int t = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
    return t + ((v | 1) >= k_p10[t]);
}

/* The last k digits of v written back from p, two per division; returns
 * where they start, v divided by 10^k. */
static char *put_back(char *p, uint64_t *v, int k) {
    uint64_t x = *v;
    for (; k >= 2; k -= 2) {
        unsigned r = (unsigned)(x % 100);
        x /= 100;
        p -= 2;
        memcpy(p, k_pairs + 2 * r, 2);
    }
    if (k) {
        *--p = (char)('0' + x % 10);
        x /= 10;
    }
    *v = x;
    return p;
}

/* v in decimal at o (no copy); returns the end. */
static char *put_uint(char *o, uint64_t v) {
    int n = ndigits(v);
    put_back(o + n, &v, n);
    return o + n;
}

size_t opdb_py_fmt_int(char *buf, long long v) {
    char *o = buf;
    /* the magnitude as unsigned: LLONG_MIN's too */
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    if (v < 0) *o++ = '-';
    return (size_t)(put_uint(o, u) - buf);
}

/* v's nd digits at o with a point after the first ip of them (0 < ip < nd):
 * each digit stored once, at its place; returns the end. */
static char *put_uint_point(char *o, uint64_t v, int nd, int ip) {
    char *p = put_back(o + nd + 1, &v, nd - ip);
    *--p = '.';
    put_back(p, &v, ip);
    return o + nd + 1;
}

/* The last d digits of v (leading zeros kept) at o[0..d). */
static void put_digits(char *o, uint32_t v, int d) {
    if (d == 6) {
        memcpy(o, k_pairs + 2 * (v / 10000), 2);
        memcpy(o + 2, k_pairs + 2 * (v / 100 % 100), 2);
        memcpy(o + 4, k_pairs + 2 * (v % 100), 2);
        return;
    }
    for (char *p = o + d; p > o; v /= 10) *--p = (char)('0' + v % 10);
}

/* Exact "%.<d>f" for |x| * 10^d < 1.8e19 and d <= 9: x = m * 2^e, so x * 10^d is the
 * integer m * 10^d shifted right by -e; the bits shifted out decide the
 * rounding, half to even, as glibc does on the exact binary value.
 * Returns 0 when out of range (the caller falls back to snprintf). */
static size_t fixed_exact(char *buf, size_t cap, double x, int d) {
    static const uint64_t p10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
    static const double limit[10] = {1.8e19, 1.8e18, 1.8e17, 1.8e16, 1.8e15, 1.8e14, 1.8e13, 1.8e12, 1.8e11, 1.8e10};
    double a = fabs(x);
    if (d < 0 || d > 9 || cap < 40 || !(a < limit[d])) return 0; /* q must fit 64 bits */
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int biased = (int)((bits >> 52) & 0x7ff);
    uint64_t m = bits & ((1ULL << 52) - 1);
    int e;
    if (biased == 0) {
        e = -1074;
    } else {
        m |= 1ULL << 52;
        e = biased - 1075;
    }
    u128 num = (u128)m * p10[d];
    uint64_t q;
    if (e >= 0) {
        q = (uint64_t)(num << e);
    } else if (-e < 64) { /* the usual case, in 64-bit halves (q fits 64 bits) */
        int s = -e;
        uint64_t lo = (uint64_t)num, hi = (uint64_t)(num >> 64);
        q = (lo >> s) | (hi << (64 - s));
        uint64_t rem = lo & ((1ULL << s) - 1), half = 1ULL << (s - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
    } else {
        int s = -e;
        if (s >= 128) {
            q = 0; /* num < 2^(s-1): rounds to zero */
        } else {
            u128 qq = num >> s;
            u128 rem = num - (qq << s);
            u128 half = (u128)1 << (s - 1);
            if (rem > half || (rem == half && (qq & 1))) qq++;
            q = (uint64_t)qq;
        }
    }
    char *o = buf;
    if (signbit(x)) *o++ = '-';
    uint64_t ip, fp; /* integer and fraction digits */
    if (d == 6) { /* the database's format: divisions by constants */
        ip = q / 1000000;
        fp = q % 1000000;
    } else {
        ip = q / p10[d];
        fp = q - ip * p10[d];
    }
    o = put_uint(o, ip);
    if (d) {
        *o++ = '.';
        put_digits(o, (uint32_t)fp, d);
        o += d;
    }
    *o = '\0';
    return (size_t)(o - buf);
}

size_t opdb_py_fmt_fixed(char *buf, size_t cap, double x, int decimals) {
    int k;
    if (isnan(x)) {
        k = snprintf(buf, cap, "nan");
    } else {
        size_t n = fixed_exact(buf, cap, x, decimals);
        if (n) return n;
        k = snprintf(buf, cap, "%.*f", decimals, x);
    }
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

size_t opdb_py_fmt_repr_slow(char *buf, size_t cap, double x) {
    if (isnan(x)) return (size_t)snprintf(buf, cap, "nan");
    if (isinf(x)) return (size_t)snprintf(buf, cap, x > 0 ? "inf" : "-inf");
    /* Shortest %.*e that round-trips gives the digits and exponent. */
    char tmp[40];
    /* Any decimal of at most 15 significant digits survives decimal -> double
     * -> 15 digits unchanged, so when the 15-digit form round-trips it is the
     * shortest one padded with zeros (stripped below); when it does not, no
     * form of 15 digits or fewer does, and the search starts at 16. (Not for
     * subnormals: fewer digits survive there, so they search from 1.) */
    int from = 0;
    if (x == 0 || fabs(x) >= DBL_MIN) {
        snprintf(tmp, sizeof tmp, "%.14e", x);
        from = strtod(tmp, NULL) == x ? 17 : 15;
    }
    for (int prec = from; prec <= 16; prec++) {
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

/* Copies n bytes of out and a NUL into buf as snprintf would (cut to cap);
 * returns n. */
static size_t put_out(char *buf, size_t cap, const char *out, size_t n) {
    if (cap) {
        size_t k = n < cap ? n : cap - 1;
        memcpy(buf, out, k);
        buf[k] = '\0';
    }
    return n;
}

/* Python's layout of the shortest digits: exponent form for a decimal
 * exponent below -4 or from 16 up, else positional with at least one digit
 * after the point. Written straight into buf when it has room for the
 * fixed-size copies below (the common case: a caller's 40-byte buffer), so
 * that no copy of a length known only at run time is made. */
size_t opdb_py_fmt_repr(char *buf, size_t cap, double x) {
    char tmp[OPDB_PY_REPR_ROOM]; /* 17 digits, 5 zeros, sign, point, "e-324" at most: 25 bytes */
    char *out = cap >= sizeof tmp ? buf : tmp;
    char *o = out;
    if (isnan(x)) return put_out(buf, cap, "nan", 3);
    if (signbit(x)) *o++ = '-';
    if (isinf(x)) {
        memcpy(o, "inf", 3);
        return put_out(buf, cap, out, (size_t)(o + 3 - out));
    }
    if (x == 0) {
        memcpy(o, "0.0", 3);
        return put_out(buf, cap, out, (size_t)(o + 3 - out));
    }
    double a = fabs(x);
    if (a >= 1e-4 && a < 1e9) {
        /* Six decimals or fewer, as the database writes its latencies: when
         * m6 / 10^6 reads back as a, no other decimal of 15 significant
         * digits or fewer does (each such decimal survives a trip through
         * the double), so its digits, trailing zeros cut, are the shortest.
         * Positional from 1e-4 up. */
        uint64_t m6 = (uint64_t)(a * 1e6 + 0.5);
        if ((double)m6 / 1e6 == a) {
            uint64_t ip = m6 / 1000000;
            uint32_t fp = (uint32_t)(m6 - ip * 1000000);
            o = put_uint(o, ip);
            *o++ = '.';
            if (fp) {
                put_digits(o, fp, 6);
                o += 6;
                while (o[-1] == '0') o--;
            } else {
                *o++ = '0';
            }
            goto done;
        }
    }
    uint64_t m;
    int e;
    opdb_shortest_digits(a, &m, &e);
    /* the digits are stored at their places: no copy (nor a read of bytes
     * just stored in smaller pieces, which the store buffer cannot forward) */
    int nd = ndigits(m); /* at most 17 */
    int ex = e + nd - 1; /* the exponent of the first digit */
    if (ex < -4 || ex >= 16) {
        if (nd > 1) o = put_uint_point(o, m, nd, 1);
        else *o++ = (char)('0' + m);
        *o++ = 'e';
        *o++ = ex < 0 ? '-' : '+';
        unsigned a = (unsigned)(ex < 0 ? -ex : ex);
        if (a >= 100) {
            *o++ = (char)('0' + a / 100);
            a %= 100;
        }
        memcpy(o, k_pairs + 2 * a, 2);
        o += 2;
    } else if (ex < 0) {
        memcpy(o, "0.0000", 6);
        o += 1 - ex;
        o = put_uint(o, m);
    } else if (nd <= ex + 1) {
        /* the digits over zeros: ex + 1 <= 16 places before the point */
        memset(o, '0', 16);
        put_uint(o, m);
        o += ex + 1;
        memcpy(o, ".0", 2);
        o += 2;
    } else {
        o = put_uint_point(o, m, nd, ex + 1);
    }
done:;
    size_t n = (size_t)(o - out);
    if (out == buf) {
        buf[n] = '\0';
        return n;
    }
    return put_out(buf, cap, out, n);
}
