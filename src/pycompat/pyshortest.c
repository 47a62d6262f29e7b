/* Shortest round-trip digits of a double, integers only (the Schubfach
 * method): the bounds of the interval of reals that round to the double are
 * scaled by a power of ten so that at most one multiple of 10 and at least
 * one integer fall between them, and the answer is read off the scaled
 * values.  Each product by a 128-bit power of ten is rounded to odd, which
 * keeps every comparison with an even integer exact. */
#include "pycompat/pyshortest.h"

#include <stdbool.h>
#include <string.h>

#include "pycompat/pow10_128.h"

__extension__ typedef unsigned __int128 u128;

/* floor(log10(2^e)), floor(log10(3/4 * 2^e)), floor(log2(10^e)) for the
 * exponents a double has (gen_pow10_128.py checks the constants); >> of a
 * negative int is an arithmetic shift on every compiler the project builds with. */
static const uint64_t k_pow10_u64[17] = {1,
                                          10,
                                          100,
                                          1000,
                                          10000,
                                          100000,
                                          1000000,
                                          10000000,
                                          100000000,
                                          1000000000,
                                          10000000000,
                                          100000000000,
                                          1000000000000,
                                          10000000000000,
                                          100000000000000,
                                          1000000000000000,
                                          10000000000000000};

static inline int floor_log10_pow2(int e) { return (e * 315653) >> 20; }
static inline int floor_log10_three_quarters_pow2(int e) { return (e * 315653 - 131237) >> 20; }
static inline int floor_log2_pow10(int e) { return (e * 1741647) >> 19; }

/* floor(g * cp / 2^128), its last bit set when the bits below (but the
 * lowest 64, which only hold g's rounding up) are not all zero. */
static inline uint64_t round_to_odd(const uint64_t g[2], uint64_t cp) {
    u128 lo = (u128)g[1] * cp;
    u128 hi = (u128)g[0] * cp + (uint64_t)(lo >> 64);
    return (uint64_t)(hi >> 64) | ((uint64_t)hi > 1);
}

void opdb_shortest_digits(double a, uint64_t *m_out, int *e_out) {
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    uint64_t frac = bits & ((1ULL << 52) - 1);
    int biased = (int)((bits >> 52) & 0x7ff);
    uint64_t c;
    int q; /* a = c * 2^q */
    uint64_t m;
    int e;
    if (biased == 0) {
        c = frac;
        q = -1074;
    } else {
        c = frac | (1ULL << 52);
        q = biased - 1075;
        /* an integer below 2^53 is its own shortest form: a shorter decimal
         * would be at least 1 away, the interval is at most 1/2 either side */
        if (q <= 0 && q > -53 && (c & ((1ULL << -q) - 1)) == 0) {
            m = c >> -q;
            e = 0;
            goto strip;
        }
    }
    {
        bool even = (c & 1) == 0; /* round-half-even reading keeps the bounds */
        /* the next double down is half as far when c is a power of two
         * (except at the smallest normal exponent) */
        bool closer = frac == 0 && biased > 1;
        int k = closer ? floor_log10_three_quarters_pow2(q) : floor_log10_pow2(q);
        int h = q + floor_log2_pow10(-k) + 1; /* in [1, 4]: the shifts below fit 64 bits */
        const uint64_t *g = opdb_pow10_128[-k - OPDB_POW10_MIN];
        uint64_t cb = c << 2, cbl = cb - 2 + closer, cbr = cb + 2;
        /* 4 * (a, lower bound, upper bound) / 10^k, rounded to odd */
        uint64_t vb = round_to_odd(g, cb << h);
        uint64_t vbl = round_to_odd(g, cbl << h);
        uint64_t vbr = round_to_odd(g, cbr << h);
        uint64_t lower = vbl + !even, upper = vbr - !even;
        uint64_t s = vb >> 2; /* floor(a / 10^k) */
        e = k;
        if (s >= 10) { /* one digit fewer: at most one multiple of 10^(k+1) fits */
            uint64_t sp = s / 10;
            bool up_in = lower <= 40 * sp, wp_in = 40 * sp + 40 <= upper;
            if (up_in != wp_in) {
                m = sp + wp_in;
                e = k + 1;
                goto strip;
            }
        }
        bool u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
        if (u_in != w_in) {
            m = s + w_in;
        } else { /* both fit: the closer one, an even s on a tie */
            uint64_t mid = 4 * s + 2;
            m = s + (vb > mid || (vb == mid && (s & 1)));
        }
    }
strip:
    /* m < 10^17 has at most 16 trailing zeros: off in steps of 16, 8, 4, 2, 1 */
    for (int z = 16; z; z /= 2) {
        if (m % k_pow10_u64[z] == 0) {
            m /= k_pow10_u64[z];
            e += z;
        }
    }
    *m_out = m;
    *e_out = e;
}
