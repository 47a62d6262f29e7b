/* opdb diff's statistics: the regularized incomplete beta function, the t
 * distribution's two-sided p-value and Welch's t-test, against values known
 * in closed form or from published t tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "opdb/diff.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void betainc_closed_forms(void **state) {
    (void)state;
    for (double x = 0.05; x < 1; x += 0.1) {
        NEAR(opdb_betainc(1, 1, x), x, 1e-14);                       /* uniform */
        NEAR(opdb_betainc(3.5, 1, x), pow(x, 3.5), 1e-14);           /* I_x(a,1) = x^a */
        NEAR(opdb_betainc(1, 2.5, x), 1 - pow(1 - x, 2.5), 1e-14);   /* I_x(1,b) = 1-(1-x)^b */
        NEAR(opdb_betainc(7, 7, 0.5), 0.5, 1e-14);                   /* symmetry */
        NEAR(opdb_betainc(2.5, 4, x) + opdb_betainc(4, 2.5, 1 - x), 1.0, 1e-14);
    }
    /* integer a, b: a binomial tail; I_0.3(2,3) = 6*.09*.49 + 4*.027*.7 + .3^4 */
    NEAR(opdb_betainc(2, 3, 0.3), 0.3483, 1e-14);
    assert_true(opdb_betainc(2, 3, 0) == 0.0);
    assert_true(opdb_betainc(2, 3, 1) == 1.0);
    assert_true(isnan(opdb_betainc(0, 3, 0.5)));
    /* large parameters (many degrees of freedom) still converge */
    NEAR(opdb_betainc(500, 500, 0.5), 0.5, 1e-12);
}

static void t_two_sided(void **state) {
    (void)state;
    /* df = 1 (Cauchy): p = 1 - 2 atan|t| / pi */
    NEAR(opdb_t_two_sided_p(1.0, 1), 0.5, 1e-14);
    NEAR(opdb_t_two_sided_p(2.0, 1), 1 - 2 * atan(2.0) / M_PI, 1e-14);
    /* df = 2: p = 1 - |t| / sqrt(2 + t^2) */
    NEAR(opdb_t_two_sided_p(-2.0, 2), 1 - 2 / sqrt(6.0), 1e-14);
    /* df = 4: p = 1 - (3/4) u (1 - t^2 / (12 (1 + t^2/4))), u = t / sqrt(1 + t^2/4) */
    double t = 3.0, u = t / sqrt(1 + t * t / 4);
    NEAR(opdb_t_two_sided_p(t, 4), 1 - 0.75 * u * (1 - t * t / (12 * (1 + t * t / 4))), 1e-14);
    /* published two-sided 5% critical values (t tables, 0.975 quantiles) */
    NEAR(opdb_t_two_sided_p(2.228138851986, 10), 0.05, 1e-11);
    NEAR(opdb_t_two_sided_p(2.042272456301, 30), 0.05, 1e-11);
    NEAR(opdb_t_two_sided_p(12.70620473617, 1), 0.05, 1e-11);
    NEAR(opdb_t_two_sided_p(1.959963984540, 1e9), 0.05, 1e-8); /* the normal limit */
    assert_true(opdb_t_two_sided_p(0.0, 5) == 1.0);
    assert_true(opdb_t_two_sided_p(INFINITY, 5) == 0.0);
    /* far tail: relative, not absolute, precision */
    double p = opdb_t_two_sided_p(40.0, 98);
    assert_true(p > 0 && p < 1e-60);
}

static void welch(void **state) {
    (void)state;
    double t, df;
    /* n 10, mean 20, var 4 against n 12, mean 22.5, var 9:
     * t = 2.5 / sqrt(0.4 + 0.75), df = 1.15^2 / (0.4^2/9 + 0.75^2/11) */
    double p = opdb_welch_p(10, 20.0, 4.0, 12, 22.5, 9.0, &t, &df);
    NEAR(t, 2.5 / sqrt(1.15), 1e-12);
    NEAR(df, 1.3225 / (0.16 / 9 + 0.5625 / 11), 1e-12);
    /* the diff oracle's independent power series gives 0.03078553670498374 */
    NEAR(p, 0.03078553670498374, 1e-12);
    /* swapping the samples flips t, not p */
    NEAR(opdb_welch_p(12, 22.5, 9.0, 10, 20.0, 4.0, &t, NULL), p, 1e-15);
    assert_true(t < 0);
    /* no spread: any difference is certain, none is none */
    assert_true(opdb_welch_p(5, 1.0, 0, 5, 1.5, 0, NULL, NULL) == 0.0);
    assert_true(opdb_welch_p(5, 1.0, 0, 5, 1.0, 0, NULL, NULL) == 1.0);
    /* equal means, any spread: p = 1 */
    NEAR(opdb_welch_p(30, 7.0, 2.0, 40, 7.0, 3.0, NULL, NULL), 1.0, 1e-15);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(betainc_closed_forms),
        cmocka_unit_test(t_two_sided),
        cmocka_unit_test(welch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
