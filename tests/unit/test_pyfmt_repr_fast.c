/* repr(float) by the integer shortest-digits search against the snprintf +
 * strtod formatter it replaced (kept as the reference), against strings
 * Python's own repr() wrote, and for reading back as the same double. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"
#include "pycompat/pyshortest.h"

/* OPDB_TEST_SOAK=N runs N times as many random cases (default 1: about 2 s) */
static long soak = 1;

static uint64_t rng = 0x2545f4914f6cdd1du;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double from_bits(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* the fast and the reference text are the same; finite ones read back as x */
static void same(double x) {
    char got[64], want[64];
    size_t n = opdb_py_fmt_repr(got, sizeof got, x);
    size_t k = opdb_py_fmt_repr_slow(want, sizeof want, x);
    if (n != k || strcmp(got, want) != 0) fail_msg("repr(%a): fast %s, reference %s", x, got, want);
    if (n != strlen(got)) fail_msg("repr(%a): length %zu for %s", x, n, got);
    if (isfinite(x)) {
        double back = strtod(got, NULL);
        if (memcmp(&back, &x, sizeof x) != 0) fail_msg("repr(%a) = %s reads back as %a", x, got, back);
    }
}

static void same_and_neighbours(double x) {
    same(x);
    same(-x);
    same(nextafter(x, INFINITY));
    same(nextafter(x, 0));
}

/* written by Python 3's repr() for these doubles */
static const struct {
    double x;
    const char *repr;
} k_python[] = {
    {0x1.999999999999ap-4, "0.1"},
    {0x1.1c37937e08000p+53, "1e+16"},
    {0x1.c6bf526340000p+49, "1000000000000000.0"},
    {0x1.1c37937e07fffp+53, "9999999999999998.0"},
    {0x1.4f8b588e368f1p-17, "1e-05"},
    {0x1.a36e2eb1c432dp-14, "0.0001"},
    {0x1.b69b4ba630f35p+56, "1.2345678901234568e+17"},
    {0x0.0000000000001p-1022, "5e-324"},
    {0x0.0000000000002p-1022, "1e-323"},
    {0x1.0000000000000p-1022, "2.2250738585072014e-308"},
    {0x0.fffffffffffffp-1022, "2.225073858507201e-308"},
    {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
    {0x1.52d02c7e14af6p+76, "1e+23"},
    {0x1.0f0cf064dd592p+73, "1e+22"},
    {0x1.3333333333333p-2, "0.3"},
    {0x1.4000000000000p+1, "2.5"},
    {0x1.1666666666666p+2, "4.35"},
    {0x1.1eb2d66005835p+997, "1.5e+300"},
    {-0x1.0c6f7a0b5ed8dp-23, "-1.25e-07"},
    {0x1.0000000000000p+53, "9007199254740992.0"},
    {0x1.3333333333334p-2, "0.30000000000000004"},
    {-0x0.0p+0, "-0.0"},
    {0x0.0p+0, "0.0"},
    {0x1.0000000000000p+0, "1.0"},
    {-0x1.0000000000000p+1, "-2.0"},
    {0x1.8e757928e0c9ep-14, "9.5e-05"},
    {0x1.56a95319d63e1p+63, "1.2345678901234567e+19"},
    {0x1.0000000000005p+50, "1125899906842625.2"},
    {0x1.0000000000007p+50, "1125899906842625.8"},
    {0x1.c6bf526340001p+50, "2000000000000000.2"},
    {0x1.c6bf526340007p+50, "2000000000000001.8"},
    {0x1.1ccf385ebc8a0p+1023, "1e+308"},
    {0x0.730d67819e8d2p-1022, "1e-308"},
    {0x0.00000000007e8p-1022, "1e-320"},
    {0x1.0000000000000p+1023, "8.98846567431158e+307"},
    {0x1.9000000000000p+6, "100.0"},
    {0x1.249ad2594c37dp+332, "1e+100"},
    {0x1.a36e2eb1c432dp-15, "5e-05"},
    {0x1.0624dd2f1a9fcp-10, "0.001"},
    {0x1.6be1805fdf179p+717, "9.80000154799692e+215"},
    {0x1.71ab7ac0504a5p+187, "2.83258692064095e+56"},
    {-0x1.85d0928398f9fp+431, "-8.443964873396729e+129"},
    {0x1.e90e9f6466d5fp-839, "5.2113861963568407e-253"},
    {0x1.980ee651011cbp+231, "5.5006136794809145e+69"},
    {-0x1.08e67b822b63bp+79, "-6.254782011690302e+23"},
    {0x1.58ab4d47a9a78p-372, "1.399600400975431e-112"},
    {-0x1.bff2f31bfa6afp-509, "-1.044048886463115e-153"},
    {0x1.4f6b506d002dbp-702, "6.227173872990108e-212"},
    {0x1.18bf27b885975p-428, "1.5821095438519796e-129"},
    {0x1.db70b0d99ed20p-44, "1.0556893104542134e-13"},
    {-0x1.152f460ca36fep-901, "-6.404764083647802e-272"},
    {0x1.dd69a83f614dcp-664, "2.4363344318985737e-200"},
    {-0x1.b3f46c9374388p+640, "-7.769600795503148e+192"},
    {-0x1.536a3a434d6f9p+987, "-1.7341901872767892e+297"},
    {-0x1.615766cd44f91p-555, "-1.1703263460492851e-167"},
    {-0x1.7fce60131d9b6p-550, "-4.067938259891717e-166"},
    {-0x1.22b5a9059e86ap-532, "-8.077216623735121e-161"},
    {0x1.eb596c8965f78p-807, "2.248764032895772e-243"},
    {0x1.ab6b5edb6ce2fp-34, "9.718392360694934e-11"},
    {0x1.c76289bd7f38bp+781, "2.2623786186636165e+235"},
    {0x1.1b34701879c05p-49, "1.9651283062141054e-15"},
    {-0x1.0d4a77def588bp-186, "-1.0725128528154586e-56"},
    {0x1.a1ab6642c2eb6p-791, "1.2527553241824238e-238"},
    {-0x1.8f20a05dbb51ap-759, "-5.141678528224045e-229"},
    {-0x1.217876fdc5385p+377, "-3.480749823586265e+113"},
    {-0x1.aab3ffd83b569p-1017, "-1.1868074543832278e-306"},
    {-0x1.4cd4b002b68c8p+778, "-2.066903421200777e+234"},
    {-0x1.7f50a7dc5226ep-398, "-2.319410636599502e-120"},
    {0x1.f8e618cb298ddp+169, "1.4758208920157669e+51"},
    {0x1.5af0491d64484p-955, "4.450069736563115e-288"},
    {0x1.6f9aa9a1dfac4p-131, "5.274860872835742e-40"},
    {-0x1.1f0fbc96d793ep+260, "-2.077465469510037e+78"},
    {0x1.6453f95c43054p-853, "2.3175211828857818e-257"},
    {0x1.62fd8bbacb7e9p+399, "1.790378811736956e+120"},
    {-0x1.eb30e796319f1p+571, "-1.4829892037726352e+172"},
    {0x1.fcabd6f12bbaep-122, "3.7371261190265085e-37"},
    {-0x1.59b3699408f87p-620, "-3.1035814322101544e-187"},
    {-0x1.2dfc709984e97p+991, "-2.468724808078963e+298"},
    {0x1.fb4dbf2e2e083p-927, "1.7467151322622415e-279"},
    {0x1.22b2290a5364dp+125, "4.830014750191616e+37"},
    {0x1.190673b5fda90p+65, "4.05e+19"},
    {0x1.f25db790cf208p-16, "2.97049333e-05"},
    {0x1.2309ce5400000p+43, "10000000000000.0"},
    {0x1.77d20e4302f80p+81, "3.54952455e+24"},
    {0x1.ba40e449e2816p-46, "2.455e-14"},
    {0x1.589cfe0ce0fe3p+142, "7.50501202513677e+42"},
    {0x1.07a1923728000p+39, "566143556500.0"},
    {0x1.6ec8e66666666p+18, "375587.6"},
    {0x1.5a0abff9e407dp-16, "2.062571e-05"},
    {0x1.1980005629a2ep+121, "2.9232631846872e+36"},
    {0x1.363156bbee301p+91, "3e+27"},
    {0x1.e4cf6b04d11f3p+72, "8.94317017676e+21"},
    {0x1.d2ec3a0000000p+28, "489604000.0"},
    {0x1.627bbec92b943p+16, "90747.7452571141"},
    {0x1.16bcc6c9b01d5p-33, "1.26755098e-10"},
    {0x1.004b965649000p+42, "4403119085860.0"},
    {0x1.47be7025b66fep+21, "2684878.0184143772"},
    {0x1.f9bda9bf91b00p+58, "5.694136e+17"},
    {0x1.710b1a70af1dap+119, "9.5809137105562e+35"},
    {0x1.045e13ed5fb5bp-55, "2.82291e-17"},
    {0x1.298167df294d6p+109, "7.542660289988e+32"},
    {0x1.1ae70ff6cf3fbp+31, "2373158907.404783"},
    {0x1.8289060790000p+51, "3400000000000000.0"},
    {0x1.2deebe490015ap+139, "8.219386937858e+41"},
    {0x1.c1a6c7ff50600p-12, "0.0004288210766"},
    {0x1.2fe13f70fd95ep+116, "9.861465729e+34"},
    {0x1.8de8a4f5c28f6p+21, "3259668.62"},
    {0x1.a994914c79612p+70, "1.9626429133e+21"},
    {0x1.7c4b90ebc4813p-92, "3e-28"},
};

static void test_python_strings(void **state) {
    (void)state;
    char got[64];
    for (size_t i = 0; i < sizeof k_python / sizeof k_python[0]; i++) {
        opdb_py_fmt_repr(got, sizeof got, k_python[i].x);
        if (strcmp(got, k_python[i].repr) != 0) fail_msg("repr(%a) = %s, Python wrote %s", k_python[i].x, got, k_python[i].repr);
        same(k_python[i].x);
    }
}

static void test_special(void **state) {
    (void)state;
    char got[64];
    static const struct {
        double x;
        const char *s;
    } sp[] = {{NAN, "nan"}, {-NAN, "nan"}, {INFINITY, "inf"}, {-INFINITY, "-inf"}, {0.0, "0.0"}, {-0.0, "-0.0"}};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        assert_int_equal(opdb_py_fmt_repr(got, sizeof got, sp[i].x), strlen(sp[i].s));
        assert_string_equal(got, sp[i].s);
        same(sp[i].x);
    }
    /* a short buffer is cut as snprintf cuts, the full length returned */
    static const double cut[] = {1.2345678901234567e-300, 0.1, -0.0, INFINITY, NAN, 1e16};
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        for (size_t cap = 0; cap < 26; cap++) {
            char a[32], b[32];
            memset(a, 'x', sizeof a);
            memset(b, 'x', sizeof b);
            size_t n = opdb_py_fmt_repr(a, cap, cut[i]), k = opdb_py_fmt_repr_slow(b, cap, cut[i]);
            assert_int_equal(n, k);
            assert_memory_equal(a, b, sizeof a);
        }
    }
}

/* powers of ten and of two, the extremes, integers near 2^53, the bounds of
 * the positional layout, every small subnormal and the largest ones */
static void test_edges(void **state) {
    (void)state;
    char s[32];
    for (int p = -325; p <= 309; p++) {
        snprintf(s, sizeof s, "1e%d", p);
        same_and_neighbours(strtod(s, NULL));
        snprintf(s, sizeof s, "9.999999999999999e%d", p);
        same_and_neighbours(strtod(s, NULL));
        snprintf(s, sizeof s, "5e%d", p);
        same_and_neighbours(strtod(s, NULL));
    }
    for (int k = -1074; k <= 1023; k++) same_and_neighbours(ldexp(1.0, k));
    static const double fixed[] = {DBL_MAX, DBL_MIN, 4.9406564584124654e-324, 0.1, 0.2, 0.3, 1e16, 1e-5, 1e-4,
                                   123456789012345678.0, 9007199254740992.0, 9007199254740993.0, 4503599627370496.5,
                                   2.2250738585072009e-308, 1.7976931348623157e308, 0.30000000000000004,
                                   5e-324, 1e23, 8.41e21, 5.9604644775390625e-8, 1.0 / 3, 2.0 / 3};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) same_and_neighbours(fixed[i]);
    for (uint64_t c = 1; c < 20000; c++) {
        same(from_bits(c));
        same(from_bits((1ULL << 52) - c));
    }
    for (int64_t n = -3000; n <= 3000; n++) same_and_neighbours((double)((1LL << 53) + n * 7));
    for (long i = 0; i < 50000 * soak; i++) same((double)(int64_t)(next() >> (next() % 64)));
}

/* every exponent, random significands: the bulk of the check */
static void test_random_bits(void **state) {
    (void)state;
    for (long i = 0; i < 500000 * soak; i++) same(from_bits(next()));
    /* c a power of two or close to one: the asymmetric interval */
    for (long i = 0; i < 30000 * soak; i++) {
        uint64_t u = next() & 0xfff0000000000000u;
        same(from_bits(u | (next() & 3)));
        same(from_bits(u | 0x000fffffffffffffu));
    }
}

/* doubles read from short decimals: the shortest form has few digits */
static void test_short_decimals(void **state) {
    (void)state;
    char s[64];
    for (long i = 0; i < 150000 * soak; i++) {
        int digits = 1 + (int)(next() % 17), ex = (int)(next() % 650) - 340;
        unsigned long long m = next() % 100000000000000000ull;
        for (int k = 17; k > digits; k--) m /= 10;
        snprintf(s, sizeof s, "%llue%d", m, ex);
        same(strtod(s, NULL));
    }
    /* ties: m / 4 with an odd m between 2^52 and 2^53, halfway between two
     * 17-digit decimals, both of which read back */
    for (long i = 0; i < 30000 * soak; i++) {
        uint64_t m = (1ULL << 52) | (next() & ((1ULL << 52) - 1)) | 1;
        same(ldexp((double)m, -2));
        same(ldexp((double)m, -1));
    }
}

/* the digits alone: m has no trailing zero and m * 10^e reads back */
static void test_digits(void **state) {
    (void)state;
    char s[48];
    for (long i = 0; i < 100000 * soak; i++) {
        double x = fabs(from_bits(next()));
        if (!isfinite(x) || x == 0) continue;
        uint64_t m;
        int e;
        opdb_shortest_digits(x, &m, &e);
        assert_true(m > 0 && m % 10 != 0 && m < 100000000000000000ull);
        snprintf(s, sizeof s, "%llue%d", (unsigned long long)m, e);
        assert_true(strtod(s, NULL) == x);
    }
}

/* values of six decimals or fewer, the database's latencies: the path that
 * reads m / 10^6 back against the reference, with the edges of its range
 * (1e-4, below which repr writes an exponent, and 1e9) and their neighbours */
static void test_six_decimals(void **state) {
    (void)state;
    for (long i = 0; i < 200000 * soak; i++) {
        uint64_t m = next() % (next() % 2 ? 1000000000ull : 1000000000000000ull);
        int cut = (int)(next() % 7); /* fewer decimals: trailing zeros */
        for (int k = 0; k < cut; k++) m -= m % 10;
        double x = (double)m / 1e6;
        same(x);
        same(-x);
        same(nextafter(x, INFINITY));
        same(nextafter(x, 0));
        same((double)m / 1e7); /* a seventh decimal: the other path */
    }
    static const double edges[] = {1e-4, 1.5e-4, 9.99999e-5, 1e-5, 0.000123, 0.1, 0.5, 1.0, 2.0, 10.0, 999999.999999,
                                   123456789.123456, 999999999.999999, 1e9, 1e9 - 1, 4.5e15, 1e16, 1e-7, 5e-324};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        same_and_neighbours(edges[i]);
        double x = edges[i];
        for (int k = 0; k < 40; k++) x = nextafter(x, INFINITY), same(x);
        x = edges[i];
        for (int k = 0; k < 40; k++) x = nextafter(x, 0), same(x);
    }
    /* Python's own repr of a few of them */
    char b[64];
    opdb_py_fmt_repr(b, sizeof b, 1e-4);
    assert_string_equal(b, "0.0001");
    opdb_py_fmt_repr(b, sizeof b, 9.99999e-5);
    assert_string_equal(b, "9.99999e-05");
    opdb_py_fmt_repr(b, sizeof b, 432.49673);
    assert_string_equal(b, "432.49673");
    opdb_py_fmt_repr(b, sizeof b, 1e9 - 1);
    assert_string_equal(b, "999999999.0");
    opdb_py_fmt_repr(b, sizeof b, -0.25);
    assert_string_equal(b, "-0.25");
}

/* repr(int) two digits at a time against printf's %lld */
static void int_same(long long v) {
    char got[32], want[32];
    memset(got, 'x', sizeof got);
    size_t n = opdb_py_fmt_int(got, v);
    int k = snprintf(want, sizeof want, "%lld", v);
    if ((int)n != k || memcmp(got, want, n) != 0 || got[n] != 'x') fail_msg("repr(%lld): %.*s", v, (int)n, got);
}

static void test_ints(void **state) {
    (void)state;
    int_same(0);
    int_same(LLONG_MAX);
    int_same(LLONG_MIN);
    int_same(LLONG_MAX - 1);
    int_same(LLONG_MIN + 1);
    long long p = 1;
    for (int i = 0; i < 19; i++) {
        for (long long d = -2; d <= 2; d++) {
            int_same(p + d);
            int_same(-(p + d));
        }
        if (i < 18) p *= 10; /* 10^18 is the last power in range */
    }
    for (long i = 0; i < 300000 * soak; i++) {
        uint64_t u = next() >> (next() % 64);
        int_same((long long)u);
        int_same(-(long long)(u >> 1));
    }
}

int main(void) {
    const char *env = getenv("OPDB_TEST_SOAK");
    if (env && atol(env) > 0) soak = atol(env);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_python_strings), cmocka_unit_test(test_special),        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_random_bits),    cmocka_unit_test(test_short_decimals), cmocka_unit_test(test_digits),
        cmocka_unit_test(test_six_decimals),   cmocka_unit_test(test_ints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
