/* Python round(): exact binary value, half-to-even. Expected strings are
 * CPython's repr(round(x, n)) / repr(round(x)). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opdb/pyround.h"
#include "opdb/pystr.h"

typedef struct {
    double x;
    int n;
    const char *want;
} round_case;

typedef struct {
    double x;
    const char *want; /* Python int */
} int_case;

static const round_case ncases[] = {
    {2.675, 2, "2.67"},
    {0.125, 2, "0.12"},
    {0.375, 2, "0.38"},
    {2.5, 0, "2.0"},
    {-0.5, 0, "-0.0"},
    {-0.04, 1, "-0.0"},
    {1.005, 2, "1.0"},
    {0.5, 0, "0.0"},
    {1.5, 0, "2.0"},
    {123.456, -1, "120.0"},
    {125.0, -1, "120.0"},
    {135.0, -1, "140.0"},
    {-125.0, -1, "-120.0"},
    {1234.5678, -2, "1200.0"},
    {1e+300, -299, "1e+300"},
    {-4.0, -1, "-0.0"},
    {5e-324, 323, "0.0"},
    {5e-324, 324, "5e-324"},
    {0.1, 1, "0.1"},
    {1e+16, 2, "1e+16"},
    {2.5e-05, 5, "3e-05"},
    {1.25, 1, "1.2"},
    {1.35, 1, "1.4"},
    {0.045, 2, "0.04"},
    {99.95, 1, "100.0"},
    {9.995, 2, "9.99"},
    {950.0, -2, "1000.0"},
    {1050.0, -2, "1000.0"},
    {5.0, -1, "0.0"},
    {15.0, -1, "20.0"},
    {4.5, -1, "0.0"},
    {0.3, -1, "0.0"},
    {9500000000000000.0, -16, "1e+16"},
    {1.5e+16, -16, "2e+16"},
    {-2.5, 0, "-2.0"},
    {1e-320, 320, "1e-320"},
    {-1e-05, 3, "-0.0"},
    {123456789.12345679, 4, "123456789.1235"},
    {0.0, 3, "0.0"},
    {-0.0, 1, "-0.0"},
    {3.4999999999999996, 0, "3.0"},
    {1e300, -400, "0.0"},
    {-1e300, -400, "-0.0"},
    {0.1, 400, "0.1"},
};
static const int_case icases[] = {
    {0.5, "0"},
    {1.5, "2"},
    {2.5, "2"},
    {-0.5, "0"},
    {-1.5, "-2"},
    {-2.5, "-2"},
    {3.5, "4"},
    {0.49999999999999994, "0"},
    {4503599627370497.0, "4503599627370497"},
    {-0.0, "0"},
    {1e+300, "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160"},
};

static void test_round_ndigits(void **st) {
    (void)st;
    int bad = 0;
    for (size_t k = 0; k < sizeof ncases / sizeof ncases[0]; k++) {
        double r = 12345;
        char buf[64];
        if (!opdb_py_round(ncases[k].x, ncases[k].n, &r)) {
            print_error("round(%.17g, %d) reported overflow\n", ncases[k].x, ncases[k].n);
            bad++;
            continue;
        }
        opdb_py_fmt_repr(buf, sizeof buf, r);
        if (strcmp(buf, ncases[k].want) != 0) {
            print_error("round(%.17g, %d) = %s, want %s\n", ncases[k].x, ncases[k].n, buf, ncases[k].want);
            bad++;
        }
        if (opdb_py_roundn(ncases[k].x, ncases[k].n) != r) bad++;
    }
    assert_int_equal(bad, 0);
}

static void test_round_ties_named_in_the_spec(void **st) {
    (void)st;
    assert_true(opdb_py_roundn(2.675, 2) == 2.67);  /* 2.67499999... in binary */
    assert_true(opdb_py_roundn(0.125, 2) == 0.12);  /* exact tie: to even */
    assert_true(opdb_py_roundn(0.375, 2) == 0.38);  /* exact tie: to even */
    double z = opdb_py_roundn(-0.5, 0);
    assert_true(z == 0.0 && signbit(z));
    z = opdb_py_roundn(-0.04, 1);
    assert_true(z == 0.0 && signbit(z));
}

static void test_round_int(void **st) {
    (void)st;
    int bad = 0;
    for (size_t k = 0; k < sizeof icases / sizeof icases[0]; k++) {
        double r;
        char buf[400];
        assert_true(opdb_py_round_int(icases[k].x, &r));
        snprintf(buf, sizeof buf, "%.0f", r);
        if (strcmp(buf, icases[k].want) != 0) {
            print_error("round(%.17g) = %s, want %s\n", icases[k].x, buf, icases[k].want);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
    double r;
    assert_false(opdb_py_round_int(NAN, &r));
    assert_false(opdb_py_round_int(INFINITY, &r));
}

static void test_round_non_finite_and_overflow(void **st) {
    (void)st;
    double r;
    assert_true(opdb_py_round(INFINITY, 2, &r) && isinf(r) && r > 0);
    assert_true(opdb_py_round(-INFINITY, -3, &r) && isinf(r) && r < 0);
    assert_true(opdb_py_round(NAN, 1, &r) && isnan(r));
    /* Python: OverflowError: rounded value too large to represent */
    assert_false(opdb_py_round(1.7976931348623157e308, -305, &r));
    assert_true(opdb_py_roundn(1.7976931348623157e308, -305) == 1.7976931348623157e308);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_ndigits),
        cmocka_unit_test(test_round_ties_named_in_the_spec),
        cmocka_unit_test(test_round_int),
        cmocka_unit_test(test_round_non_finite_and_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
