/* Python float()/int() parsing and number rendering (%.6f, repr). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"

/* ---- helpers ------------------------------------------------------------ */

static uint64_t bits_of(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* opdb_py_float(text) must succeed and give exactly the bits of `want`. */
static void expect_float_n(const char *text, size_t n, double want) {
    double got = 12345.0;
    if (!opdb_py_float(text, n, &got)) {
        print_error("opdb_py_float rejected \"%.*s\"\n", (int)n, text);
        fail();
    }
    if (memcmp(&got, &want, sizeof got) != 0) {
        print_error("\"%.*s\": got %a (%016llx), want %a (%016llx)\n", (int)n, text, got,
                    (unsigned long long)bits_of(got), want, (unsigned long long)bits_of(want));
        fail();
    }
}

static void expect_float(const char *text, double want) { expect_float_n(text, strlen(text), want); }

/* Same, with `want` taken from glibc strtod (correctly rounded) of `ref`. */
static void expect_float_strtod(const char *text, const char *ref) {
    char *end;
    double want = strtod(ref, &end);
    assert_true(*end == '\0');
    expect_float(text, want);
}

static void expect_float_rejected(const char *text) {
    double got = 99.0;
    if (opdb_py_float(text, strlen(text), &got)) {
        print_error("opdb_py_float accepted \"%s\" as %a\n", text, got);
        fail();
    }
}

static void expect_fixed(double x, int dec, const char *want) {
    char buf[512];
    size_t n = opdb_py_fmt_fixed(buf, sizeof buf, x, dec);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void expect_repr(double x, const char *want) {
    char buf[64];
    size_t n = opdb_py_fmt_repr(buf, sizeof buf, x);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

/* ---- opdb_py_float: accepted forms ------------------------------------- */

static void test_float_plain_decimals(void **s) {
    (void)s;
    expect_float("12.5", 12.5);
    expect_float("0", 0.0);
    expect_float("-3", -3.0);
    expect_float("007.250", 7.25);
}

static void test_float_trailing_tab_and_spaces(void **s) {
    (void)s;
    expect_float("12.5\t", 12.5);
    expect_float("  1736408883704643.212\t", 1736408883704643.212);
    expect_float("\t\n 4 \r\n", 4.0);
    expect_float("\x0b\x0c 4\x0b\x0c", 4.0);
}

static void test_float_underscores_between_digits(void **s) {
    (void)s;
    expect_float(" 1_000 ", 1000.0);
    expect_float("1_0.2_5", 10.25);
    expect_float("1e1_0", 1e10);
}

static void test_float_exponent_forms(void **s) {
    (void)s;
    expect_float("1e3", 1000.0);
    expect_float("1E+3", 1000.0);
    expect_float("2.5e-3", 2.5e-3);
    expect_float("-7e22", -7e22);
    expect_float("123456789e-22", 123456789e-22);
}

static void test_float_point_without_digits_on_one_side(void **s) {
    (void)s;
    expect_float(".5", 0.5);
    expect_float("5.", 5.0);
    expect_float("+3.", 3.0);
    expect_float("-.25", -0.25);
}

static void test_float_negative_zero_keeps_sign(void **s) {
    (void)s;
    expect_float("-0.0", -0.0);
    expect_float("-0", -0.0);
    expect_float("-0e5", -0.0);
    expect_float("-0.0e-400", -0.0);
    expect_float("0.0", 0.0);
}

static void test_float_inf_and_nan_words(void **s) {
    (void)s;
    expect_float("inf", INFINITY);
    expect_float("-Infinity", -INFINITY);
    expect_float("+INF", INFINITY);
    expect_float(" iNfInItY\t", INFINITY);
    double v;
    assert_true(opdb_py_float("nan", 3, &v));
    assert_true(isnan(v));
    assert_false(signbit(v));
    assert_true(opdb_py_float("-NaN", 4, &v));
    assert_true(isnan(v));
    assert_true(signbit(v));
}

static void test_float_overflow_and_underflow(void **s) {
    (void)s;
    expect_float("1e400", INFINITY);
    expect_float("-1e400", -INFINITY);
    expect_float("1e-400", 0.0);
    expect_float("-1e-400", -0.0);
    expect_float("1e99999999999999999999", INFINITY);
    expect_float("4.9e-324", 4.9e-324);
    expect_float("2.4703282292062328e-324", 5e-324); /* just above half the min subnormal */
}

static void test_float_very_long_digit_strings(void **s) {
    (void)s;
    char buf[1200];
    /* 1 followed by 400 zeros, then e-400 */
    buf[0] = '1';
    memset(buf + 1, '0', 400);
    strcpy(buf + 401, "e-400");
    expect_float(buf, 1.0);
    /* 0.000...0001 with 500 zeros */
    strcpy(buf, "0.");
    memset(buf + 2, '0', 500);
    strcpy(buf + 502, "1e501");
    expect_float(buf, 1.0);
    /* 300 significant digits */
    for (int i = 0; i < 300; i++) buf[i] = (char)('1' + i % 9);
    buf[300] = '\0';
    expect_float_strtod(buf, buf);
}

static void test_float_nineteen_twenty_digit_mantissas(void **s) {
    (void)s;
    expect_float_strtod("1736413971558972.912", "1736413971558972.912");
    expect_float_strtod("0.1000000000000000055511151231257827", "0.1000000000000000055511151231257827");
    expect_float_strtod("9007199254740993", "9007199254740993");         /* 2^53 + 1: ties to even */
    expect_float_strtod("9007199254740993.0", "9007199254740993.0");
    expect_float_strtod("1234567890123456789", "1234567890123456789");   /* 19 digits */
    expect_float_strtod("12345678901234567890", "12345678901234567890"); /* 20 digits */
    expect_float_strtod("18446744073709551615", "18446744073709551615");
    expect_float_strtod("18446744073709551616", "18446744073709551616");
    expect_float_strtod("0.30000000000000001665", "0.30000000000000001665");
    expect_float_strtod("2.2250738585072011e-308", "2.2250738585072011e-308");
}

static void test_float_unicode_whitespace_around(void **s) {
    (void)s;
    expect_float("\xc2\xa0" "12.5" "\xc2\xa0", 12.5);
    expect_float("\xe3\x80\x80" "-2" "\xe3\x80\x80", -2.0);
    expect_float("\xe2\x80\x89" "1e2" "\xc2\x85", 100.0);
}

static void test_float_zero_length_span_not_nul_terminated(void **s) {
    (void)s;
    /* only the first n bytes count */
    expect_float_n("12345", 2, 12.0);
    double v;
    assert_false(opdb_py_float("7", 0, &v));
}

/* ---- opdb_py_float: rejected forms ------------------------------------- */

/* The fast path against the general one: a leading space sends the same
 * text through the general parser (Python strips it), so both must accept
 * the same strings and give the same bits; plain decimals also against
 * strtod. */
static void test_float_fast_path_matches_general(void **s) {
    (void)s;
    const char alphabet[] = "0123456789000.-+e_ x";
    uint64_t st = 0x2545F4914F6CDD1DULL;
    int plain = 0;
    /* even rounds take the vector path for short decimals where the CPU has one, odd ones the loop */
    for (int it = 0; it < 400000; it++) {
        bool (*parse)(const char *, size_t, double *) = it % 2 ? opdb_py_float_portable : opdb_py_float;
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        char text[40], spaced[41];
        size_t n = 1 + st % 26;
        uint64_t r = st;
        bool decimal = it % 4 < 2; /* half: [-]digits[.digits] only */
        size_t o = 0;
        if (decimal && (r & 1)) text[o++] = '-';
        size_t dot = decimal ? (r >> 1) % (n + 1) : SIZE_MAX;
        for (size_t i = 0; o < n; i++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            if (i == dot) text[o++] = '.';
            else text[o++] = decimal ? (char)('0' + st % 10) : alphabet[st % (sizeof alphabet - 1)];
        }
        text[o] = '\0';
        spaced[0] = ' ';
        memcpy(spaced + 1, text, o + 1);
        double a = 0, b = 0;
        bool ka = parse(text, o, &a), kb = parse(spaced, o + 1, &b);
        if (ka != kb || (ka && memcmp(&a, &b, sizeof a) != 0)) {
            print_error("'%s': fast %d %.17g, general %d %.17g\n", text, ka, a, kb, b);
            fail();
        }
        if (decimal && ka) {
            plain++;
            double want = strtod(text, NULL);
            if (memcmp(&a, &want, sizeof a) != 0) {
                print_error("'%s': %.17g, strtod %.17g\n", text, a, want);
                fail();
            }
        }
    }
    assert_true(plain > 180000);
}

/* The padded entry reads 16 bytes from the text's start whatever its
 * length: what follows the text (digits, dots, junk) must never change the
 * result, which is opdb_py_float's. */
static void test_float_padded_matches_plain(void **s) {
    (void)s;
    const char alphabet[] = "0123456789000..-+e_ x";
    uint64_t st = 0x9E3779B97F4A7C15ULL;
    int fast = 0;
    for (int it = 0; it < 400000; it++) {
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        char text[64];
        size_t n = st % 20; /* 0..19: both sides of the 16-byte limit */
        bool decimal = it % 4 < 3;
        size_t dot = decimal ? (st >> 8) % (n + 2) : SIZE_MAX;
        for (size_t i = 0; i < sizeof text; i++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            /* the bytes after the text: digits and dots, as a following cell could be */
            text[i] = i < n && !decimal ? alphabet[st % (sizeof alphabet - 1)]
                      : i == dot      ? '.'
                                      : (char)(i >= n && st % 3 == 0 ? ".,-"[st % 3] : '0' + (char)(st % 10));
        }
        if (decimal && n && it % 8 == 1) text[0] = '-';
        double a = 0, b = 0;
        bool ka = opdb_py_float(text, n, &a), kb = opdb_py_float_padded(text, n, &b);
        if (ka != kb || (ka && memcmp(&a, &b, sizeof a) != 0)) {
            print_error("'%.*s' (+ '%.*s'): plain %d %.17g, padded %d %.17g\n", (int)n, text, 16, text + n, ka, a, kb,
                        b);
            fail();
        }
        fast += ka && n < 16 && decimal;
    }
    assert_true(fast > 150000);
}

static void test_float_rejects_empty_and_blank(void **s) {
    (void)s;
    expect_float_rejected("");
    expect_float_rejected(" ");
    expect_float_rejected("\t\r\n");
    expect_float_rejected("\xc2\xa0");
}

static void test_float_rejects_bad_underscores(void **s) {
    (void)s;
    expect_float_rejected("1__0");
    expect_float_rejected("_1");
    expect_float_rejected("1_");
    expect_float_rejected("1_.5");
    expect_float_rejected("1._5");
    expect_float_rejected("1e_5");
}

static void test_float_rejects_hex_and_incomplete(void **s) {
    (void)s;
    expect_float_rejected("0x10");
    expect_float_rejected("0x1p3");
    expect_float_rejected("1e");
    expect_float_rejected("1e+");
    expect_float_rejected(".");
    expect_float_rejected("-");
    expect_float_rejected("+.e1");
    expect_float_rejected("e5");
}

static void test_float_rejects_junk(void **s) {
    (void)s;
    expect_float_rejected("N/A");
    expect_float_rejected("1.2.3");
    expect_float_rejected("1,5");
    expect_float_rejected("1 2");
    expect_float_rejected("--1");
    expect_float_rejected("+-1");
    expect_float_rejected("infinit");
    expect_float_rejected("nana");
    expect_float_rejected("in f");
    expect_float_rejected("12abc");
    expect_float_rejected("\xe2\x80\x8b" "1"); /* U+200B is not whitespace */
}

static void test_float_rejects_ascii_separator_controls(void **s) {
    (void)s;
    /* float() keeps ASCII bytes as they are and strips only " \t\n\v\f\r";
     * U+001C..U+001F are str.isspace() but float("\x1c4") is a ValueError
     * (CPython 3.11: _PyUnicode_TransformDecimalAndSpaceToASCII + Py_ISSPACE). */
    expect_float_rejected("\x1c" "4");
    expect_float_rejected("4\x1f");
    expect_float_rejected("\x1d" "4.5\x1e");
}

static void test_float_rejects_embedded_nul(void **s) {
    (void)s;
    double v;
    assert_false(opdb_py_float("1\0", 2, &v));
    assert_false(opdb_py_float("\0" "1", 2, &v));
}

static void test_float_or_zero_on_failure(void **s) {
    (void)s;
    assert_true(opdb_py_float_or_zero("abc", 3) == 0.0);
    assert_true(opdb_py_float_or_zero("2.5", 3) == 2.5);
}

/* ---- opdb_py_float vs glibc strtod on random decimal strings ------------- */

static uint64_t rng_state = 0x243f6a8885a308d3ULL;
static uint32_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static void test_float_random_decimals_match_strtod(void **s) {
    (void)s;
    char buf[64];
    for (int it = 0; it < 200000; it++) {
        size_t o = 0;
        if (rng() % 4 == 0) buf[o++] = '-';
        int nd = 1 + (int)(rng() % 20);
        int point = (int)(rng() % (unsigned)(nd + 2)) - 1; /* -1: no point */
        for (int i = 0; i < nd; i++) {
            if (i == point) buf[o++] = '.';
            buf[o++] = (char)('0' + rng() % 10);
        }
        if (point == nd) buf[o++] = '.';
        if (rng() % 2) o += (size_t)snprintf(buf + o, sizeof buf - o, "e%d", (int)(rng() % 61) - 30);
        buf[o] = '\0';
        double want = strtod(buf, NULL), got;
        if (!opdb_py_float(buf, o, &got) || memcmp(&got, &want, sizeof got) != 0) {
            print_error("\"%s\": got %a want %a\n", buf, got, want);
            fail();
        }
    }
}

/* ---- opdb_py_int --------------------------------------------------------- */

static void expect_int(const char *text, long long want) {
    long long v = -12345;
    if (!opdb_py_int(text, strlen(text), &v)) {
        print_error("opdb_py_int rejected \"%s\"\n", text);
        fail();
    }
    assert_int_equal(v, want);
}

static void expect_int_rejected(const char *text) {
    long long v;
    if (opdb_py_int(text, strlen(text), &v)) {
        print_error("opdb_py_int accepted \"%s\" as %lld\n", text, v);
        fail();
    }
}

static void test_int_accepts_python_forms(void **s) {
    (void)s;
    expect_int(" +7 ", 7);
    expect_int("-1", -1);
    expect_int("1_0", 10);
    expect_int("007", 7);
    expect_int("\t42\n", 42);
    expect_int("9223372036854775807", 9223372036854775807LL);
}

static void test_int_accepts_int64_min(void **s) {
    (void)s;
    /* documented: false only on failure or int64 overflow; INT64_MIN fits */
    expect_int("-9223372036854775808", INT64_MIN);
}

static void test_int_rejects_non_integers(void **s) {
    (void)s;
    expect_int_rejected("1.0");
    expect_int_rejected("");
    expect_int_rejected(" ");
    expect_int_rejected("+");
    expect_int_rejected("1__0");
    expect_int_rejected("_1");
    expect_int_rejected("1_");
    expect_int_rejected("1e3");
    expect_int_rejected("0x10");
    expect_int_rejected("1 2");
}

static void test_int_rejects_ascii_separator_controls(void **s) {
    (void)s;
    /* int("\x1c7") is a ValueError in Python, like float() */
    expect_int_rejected("\x1c" "7");
    expect_int_rejected("7\x1f");
}

static void test_int_rejects_overflow(void **s) {
    (void)s;
    expect_int_rejected("9223372036854775808");
    expect_int_rejected("99999999999999999999999");
}

/* ---- opdb_py_fmt_fixed ----------------------------------------------------- */

/* The exact fast path of "%.Nf" must agree with glibc printf on every kind
 * of double: arbitrary bit patterns, short decimals, dyadic halves (ties go
 * to even), tiny and large magnitudes, both signs. */
static void test_fixed_matches_printf_random(void **state) {
    (void)state;
    uint64_t r = 88172645463325252ULL;
    long bad = 0;
    for (long i = 0; i < 300000; i++) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        double x;
        switch (i % 5) {
        case 0: memcpy(&x, &r, sizeof x); break;
        case 1: x = (double)(r % 100000000) / 1000.0; break;
        case 2: x = (double)(r % 1000000000) / 1e6 + (double)(r % 7) * 1e-7; break;
        case 3: x = ldexp((double)(r % 4096), -(int)(r % 30)); break;
        default: x = ((double)(r >> 11) / 9007199254740992.0) * pow(10, (int)(r % 16) - 6); break;
        }
        if (r & 1) x = -x;
        if (isnan(x)) continue;
        for (int d = 0; d <= 9; d += 3) {
            char a[512], b[512];
            opdb_py_fmt_fixed(a, sizeof a, x, d);
            snprintf(b, sizeof b, "%.*f", d, x);
            if (strcmp(a, b) != 0 && bad++ < 5) printf("x=%.17g d=%d: got %s, printf %s\n", x, d, a, b);
        }
    }
    assert_int_equal(bad, 0);
}

static void test_fixed_six_decimals(void **s) {
    (void)s;
    expect_fixed(12.0, 6, "12.000000");
    expect_fixed(1.632993161855452, 6, "1.632993");
    expect_fixed(0.0000005, 6, "0.000000"); /* binary value is below the half */
    expect_fixed(0.125, 2, "0.12");         /* exact tie: to even */
    expect_fixed(2.5, 0, "2");
    expect_fixed(1e20, 6, "100000000000000000000.000000");
}

static void test_fixed_nan_never_negative(void **s) {
    (void)s;
    expect_fixed(NAN, 6, "nan");
    expect_fixed(-NAN, 6, "nan");
    double v;
    assert_true(opdb_py_float("-nan", 4, &v));
    expect_fixed(v, 6, "nan");
}

static void test_fixed_negative_zero_and_inf(void **s) {
    (void)s;
    expect_fixed(-0.0, 6, "-0.000000");
    expect_fixed(-1e-9, 6, "-0.000000");
    expect_fixed(INFINITY, 6, "inf");
    expect_fixed(-INFINITY, 6, "-inf");
}

/* ---- opdb_py_fmt_repr ------------------------------------------------------ */

static void test_repr_integral_keeps_point_zero(void **s) {
    (void)s;
    expect_repr(1.0, "1.0");
    expect_repr(100.0, "100.0");
    expect_repr(0.0, "0.0");
    expect_repr(-0.0, "-0.0");
    expect_repr(1e15, "1000000000000000.0");
    expect_repr(9007199254740992.0, "9007199254740992.0");
}

static void test_repr_shortest_roundtrip(void **s) {
    (void)s;
    expect_repr(0.1, "0.1");
    expect_repr(0.1 + 0.2, "0.30000000000000004");
    expect_repr(123456789012345.6, "123456789012345.6");
    expect_repr(1.4142135623730951, "1.4142135623730951");
    expect_repr(-1.5, "-1.5");
}

static void test_repr_exponent_thresholds(void **s) {
    (void)s;
    expect_repr(1e16, "1e+16");
    expect_repr(1.5e-05, "1.5e-05");
    expect_repr(0.0001, "0.0001");
    expect_repr(0.00001, "1e-05");
    expect_repr(1e100, "1e+100");
    expect_repr(1.7976931348623157e308, "1.7976931348623157e+308");
    expect_repr(5e-324, "5e-324");
    expect_repr(1.2345e-7, "1.2345e-07");
}

static void test_repr_inf_nan(void **s) {
    (void)s;
    expect_repr(INFINITY, "inf");
    expect_repr(-INFINITY, "-inf");
    expect_repr(NAN, "nan");
}

static void test_repr_shortest_even_when_not_nearest(void **s) {
    (void)s;
    /* Powers of two have a narrower rounding interval below them; Python's
     * repr finds a 16-digit string that round-trips even though the nearest
     * 16-digit decimal does not (values checked with CPython 3.11). */
    expect_repr(ldexp(1.0, -24), "5.960464477539063e-08");
    expect_repr(ldexp(1.0, -44), "5.684341886080802e-14");
    expect_repr(ldexp(1.0, 89), "6.189700196426902e+26");
}

static void test_repr_roundtrips_random_doubles(void **s) {
    (void)s;
    char buf[64];
    rng_state = 99;
    for (int it = 0; it < 20000; it++) {
        uint64_t u = ((uint64_t)rng() << 32) ^ rng() ^ ((uint64_t)rng() << 11);
        double x;
        memcpy(&x, &u, sizeof x);
        if (isnan(x) || isinf(x)) continue;
        opdb_py_fmt_repr(buf, sizeof buf, x);
        double back = strtod(buf, NULL);
        if (memcmp(&back, &x, sizeof x) != 0) {
            print_error("repr %s does not round-trip %a\n", buf, x);
            fail();
        }
        /* at most 17 significant digits, always a '.' or an exponent */
        assert_true(strchr(buf, '.') || strchr(buf, 'e'));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_plain_decimals),
        cmocka_unit_test(test_float_trailing_tab_and_spaces),
        cmocka_unit_test(test_float_underscores_between_digits),
        cmocka_unit_test(test_float_exponent_forms),
        cmocka_unit_test(test_float_point_without_digits_on_one_side),
        cmocka_unit_test(test_float_negative_zero_keeps_sign),
        cmocka_unit_test(test_float_inf_and_nan_words),
        cmocka_unit_test(test_float_overflow_and_underflow),
        cmocka_unit_test(test_float_very_long_digit_strings),
        cmocka_unit_test(test_float_nineteen_twenty_digit_mantissas),
        cmocka_unit_test(test_float_unicode_whitespace_around),
        cmocka_unit_test(test_float_zero_length_span_not_nul_terminated),
        cmocka_unit_test(test_float_rejects_empty_and_blank),
        cmocka_unit_test(test_float_rejects_bad_underscores),
        cmocka_unit_test(test_float_rejects_hex_and_incomplete),
        cmocka_unit_test(test_float_rejects_junk),
        cmocka_unit_test(test_float_fast_path_matches_general),
        cmocka_unit_test(test_float_padded_matches_plain),
        cmocka_unit_test(test_float_rejects_ascii_separator_controls),
        cmocka_unit_test(test_float_rejects_embedded_nul),
        cmocka_unit_test(test_float_or_zero_on_failure),
        cmocka_unit_test(test_float_random_decimals_match_strtod),
        cmocka_unit_test(test_int_accepts_python_forms),
        cmocka_unit_test(test_int_accepts_int64_min),
        cmocka_unit_test(test_int_rejects_non_integers),
        cmocka_unit_test(test_int_rejects_ascii_separator_controls),
        cmocka_unit_test(test_int_rejects_overflow),
        cmocka_unit_test(test_fixed_six_decimals),
        cmocka_unit_test(test_fixed_matches_printf_random),
        cmocka_unit_test(test_fixed_nan_never_negative),
        cmocka_unit_test(test_fixed_negative_zero_and_inf),
        cmocka_unit_test(test_repr_integral_keeps_point_zero),
        cmocka_unit_test(test_repr_shortest_roundtrip),
        cmocka_unit_test(test_repr_exponent_thresholds),
        cmocka_unit_test(test_repr_inf_nan),
        cmocka_unit_test(test_repr_shortest_even_when_not_nearest),
        cmocka_unit_test(test_repr_roundtrips_random_doubles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
