/* Python float() and int() parsing.  The common case (<= 19 significant
 * digits, small exponent) is converted exactly with one IEEE operation
 * (Clinger's fast path); anything else goes through glibc strtod, which is
 * correctly rounded.  Either way the result equals Python's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "opdb/pystr.h"

static const double k_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool ieq(const char *p, size_t n, const char *word) {
    size_t k = strlen(word);
    if (n != k) return false;
    for (size_t i = 0; i < k; i++) {
        char c = p[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return false;
    }
    return true;
}

/* Scans digits with single underscores between them; returns count of chars
 * consumed (0 if no digit). Sets *bad on a misplaced underscore. */
static size_t scan_digits(const char *p, size_t n, bool *bad) {
    size_t i = 0;
    if (i >= n || !is_digit(p[i])) return 0;
    while (i < n) {
        if (is_digit(p[i])) {
            i++;
        } else if (p[i] == '_' && i + 1 < n && is_digit(p[i + 1])) {
            i++;
        } else {
            break;
        }
    }
    (void)bad;
    return i;
}

static bool slow_path(const char *p, size_t n, double *out) {
    char stackbuf[128];
    char *buf = n < sizeof stackbuf ? stackbuf : opdb_xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] != '_') buf[k++] = p[i];
    buf[k] = '\0';
    char *end;
    double v = strtod(buf, &end);
    bool ok = end == buf + k;
    if (buf != stackbuf) free(buf);
    if (ok) *out = v;
    return ok;
}

/* Python float() for any input; see opdb_py_float for the fast entry. */
__attribute__((noinline)) static bool py_float_general(const char *p0, size_t n0, double *out) {
    opdb_span s = opdb_py_strip_number(opdb_span_make(p0, n0));
    const char *p = s.p;
    size_t n = s.n;
    if (n == 0) return false;
    size_t i = 0;
    bool neg = false;
    if (p[0] == '+' || p[0] == '-') {
        neg = p[0] == '-';
        i = 1;
    }
    if (i < n && !is_digit(p[i]) && p[i] != '.') {
        const char *w = p + i;
        size_t wn = n - i;
        if (ieq(w, wn, "inf") || ieq(w, wn, "infinity")) {
            *out = neg ? -INFINITY : INFINITY;
            return true;
        }
        if (ieq(w, wn, "nan")) {
            *out = neg ? -NAN : NAN;
            return true;
        }
        return false;
    }
    bool bad = false;
    size_t int_start = i;
    size_t int_len = scan_digits(p + i, n - i, &bad);
    i += int_len;
    size_t frac_start = i, frac_len = 0;
    if (i < n && p[i] == '.') {
        i++;
        frac_start = i;
        frac_len = scan_digits(p + i, n - i, &bad);
        i += frac_len;
    }
    if (int_len == 0 && frac_len == 0) return false;
    long exp10 = 0;
    bool has_exp = false;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (p[i] == '+' || p[i] == '-')) {
            eneg = p[i] == '-';
            i++;
        }
        size_t el = scan_digits(p + i, n - i, &bad);
        if (el == 0) return false;
        for (size_t j = 0; j < el; j++) {
            if (p[i + j] == '_') continue;
            if (exp10 < 100000) exp10 = exp10 * 10 + (p[i + j] - '0');
        }
        if (eneg) exp10 = -exp10;
        i += el;
        has_exp = true;
    }
    if (i != n) return false;
    (void)has_exp;

    /* Fast path: collect significant digits. */
    uint64_t mant = 0;
    int ndig = 0;
    bool overflow = false;
    long scale = 0;
    for (size_t j = 0; j < int_len; j++) {
        char c = p[int_start + j];
        if (c == '_') continue;
        if (ndig == 0 && c == '0') continue;
        if (ndig < 19) {
            mant = mant * 10 + (uint64_t)(c - '0');
            ndig++;
        } else {
            overflow = true;
            break;
        }
    }
    if (!overflow) {
        for (size_t j = 0; j < frac_len; j++) {
            char c = p[frac_start + j];
            if (c == '_') continue;
            scale--;
            if (ndig == 0 && c == '0') continue;
            if (ndig < 19) {
                mant = mant * 10 + (uint64_t)(c - '0');
                ndig++;
            } else {
                overflow = true;
                break;
            }
        }
    }
    long e = exp10 + scale;
    if (!overflow && mant <= (1ULL << 53) && e >= -22 && e <= 22) {
        double v = (double)mant;
        v = e < 0 ? v / k_pow10[-e] : v * k_pow10[e];
        *out = neg ? -v : v;
        return true;
    }
    if (!overflow && mant == 0) {
        *out = neg ? -0.0 : 0.0;
        return true;
    }
    return slow_path(p, n, out);
}

bool opdb_py_int(const char *p0, size_t n0, long long *out) {
    opdb_span s = opdb_py_strip_number(opdb_span_make(p0, n0));
    const char *p = s.p;
    size_t n = s.n;
    size_t i = 0;
    bool neg = false;
    if (n && (p[0] == '+' || p[0] == '-')) {
        neg = p[0] == '-';
        i = 1;
    }
    bool bad = false;
    size_t dl = scan_digits(p + i, n - i, &bad);
    if (dl == 0 || i + dl != n) return false;
    unsigned long long v = 0, limit = neg ? 9223372036854775808ULL : 9223372036854775807ULL;
    for (size_t j = i; j < n; j++) {
        if (p[j] == '_') continue;
        unsigned d = (unsigned)(p[j] - '0');
        if (v > (limit - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = neg ? (long long)(0 - v) : (long long)v;
    return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include "core/load_tail.h"

/* Byte shuffles: drop the byte at a position (the dot), and move n bytes
 * to the top of the register with zeros below (0x80 selects zero). */
static signed char k_drop[17][16], k_align[17][16];
static bool k_cpu_short_decimal; /* the CPU has what short_decimal uses */

__attribute__((constructor)) static void init_shuffles(void) {
    k_cpu_short_decimal =
        __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("popcnt");
    for (int at = 0; at <= 16; at++)
        for (int i = 0; i < 16; i++) {
            k_drop[at][i] = (signed char)(i < at ? i : i + 1 < 16 ? i + 1 : 0x80);
            k_align[at][i] = (signed char)(i >= 16 - at ? i - (16 - at) : 0x80);
        }
}

/* `digits[.digits]` of at most 16 bytes and 15 digits (n > 0), in the low
 * lanes of v minus '0' (lanes from n on are ignored), without a loop over
 * its bytes: digit and dot masks by compares, the dot dropped and the digits
 * right-aligned by shuffles, their value by multiply-adds (pairs, then 4
 * digits, then 8).  False for any other text. */
__attribute__((target("ssse3,sse4.1,popcnt"))) static inline bool decimal_lanes(__m128i d, size_t n, uint64_t *mant,
                                                                               size_t *frac) {
    uint32_t all = n == 16 ? 0xFFFFu : (1u << n) - 1;
    uint32_t digit = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d)) & all;
    uint32_t dot = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_set1_epi8('.' - '0'))) & all;
    int ndig = __builtin_popcount(digit);
    if ((digit | dot) != all || (dot & (dot - 1)) || ndig == 0 || ndig > 15) return false;
    int at = dot ? __builtin_ctz(dot) : 16;
    d = _mm_shuffle_epi8(d, _mm_loadu_si128((const __m128i *)(const void *)k_drop[at]));
    d = _mm_shuffle_epi8(d, _mm_loadu_si128((const __m128i *)(const void *)k_align[ndig]));
    __m128i pairs = _mm_maddubs_epi16(d, _mm_set_epi8(1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10));
    __m128i quads = _mm_madd_epi16(pairs, _mm_set_epi16(1, 100, 1, 100, 1, 100, 1, 100));
    __m128i octs = _mm_madd_epi16(_mm_packus_epi32(quads, quads), _mm_set_epi16(1, 10000, 1, 10000, 1, 10000, 1, 10000));
    *mant = (uint64_t)(uint32_t)_mm_cvtsi128_si32(octs) * 100000000u + (uint32_t)_mm_extract_epi32(octs, 1);
    *frac = dot ? n - (size_t)at - 1 : 0;
    return true;
}

/* decimal_lanes of p[0..n), loaded without reading past its end. */
__attribute__((target("ssse3,sse4.1,popcnt"))) static bool short_decimal(const char *p, size_t n, uint64_t *mant,
                                                                        size_t *frac) {
    return decimal_lanes(_mm_sub_epi8(opdb_load_tail16(p, n), _mm_set1_epi8('0')), n, mant, frac);
}

static inline bool have_short_decimal(void) { return k_cpu_short_decimal; }

/* The value of p[0..n) (n < 16) with 16 readable bytes from p: one load, no
 * branches on the length. */
__attribute__((target("ssse3,sse4.1,popcnt"))) static bool short_decimal_padded(const char *p, size_t n,
                                                                               double *out) {
    uint64_t m;
    size_t fr;
    if (!decimal_lanes(_mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), _mm_set1_epi8('0')), n, &m, &fr))
        return false;
    *out = fr ? (double)m / k_pow10[fr] : (double)m;
    return true;
}
#endif

bool opdb_py_float_padded(const char *p, size_t n, double *out) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (n && n < 16 && *p != '-' && have_short_decimal() && short_decimal_padded(p, n, out)) return true;
#endif
    return opdb_py_float(p, n, out);
}

/* Single pass over the common shape `[-]digits[.digits]` (at most 19 digits
 * in all, so the integer cannot overflow); anything else, surrounding
 * whitespace included, takes the general path.  vec: short decimals may
 * take the vector path. */
static inline __attribute__((always_inline)) bool py_float_at(const char *p, size_t n, double *out, bool vec) {
    const char *q = p, *end = p + n;
    bool neg = q < end && *q == '-';
    q += neg;
#if defined(__x86_64__) && defined(__GNUC__)
    uint64_t m;
    size_t fr;
    if (q < end && end - q <= 16 && vec && short_decimal(q, (size_t)(end - q), &m, &fr)) {
        double v = fr ? (double)m / k_pow10[fr] : (double)m;
        *out = neg ? -v : v;
        return true;
    }
#endif
    uint64_t mant = 0;
    const char *digits = q;
    while (q < end && (unsigned)(unsigned char)*q - '0' <= 9) mant = mant * 10 + (uint64_t)(*q++ - '0');
    size_t nint = (size_t)(q - digits), frac = 0;
    if (q < end && *q == '.') {
        const char *f = ++q;
        while (q < end && (unsigned)(unsigned char)*q - '0' <= 9) mant = mant * 10 + (uint64_t)(*q++ - '0');
        frac = (size_t)(q - f);
    }
    if (q != end || nint + frac == 0 || nint + frac > 19 || frac > 22 || mant > (1ULL << 53))
        return py_float_general(p, n, out);
    double v = frac ? (double)mant / k_pow10[frac] : (double)mant;
    *out = neg ? -v : v;
    return true;
}

bool opdb_py_float(const char *p, size_t n, double *out) {
#if defined(__x86_64__) && defined(__GNUC__)
    return py_float_at(p, n, out, have_short_decimal());
#else
    return py_float_at(p, n, out, false);
#endif
}

bool opdb_py_float_portable(const char *p, size_t n, double *out) { return py_float_at(p, n, out, false); }
