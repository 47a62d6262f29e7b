/* Welch's t-test and the regularized incomplete beta function behind its
 * p-value (continued fraction, modified Lentz). */
#include <math.h>

#include "opdb/diff.h"

/* The continued fraction of I_x(a, b), converging fast for x < (a+1)/(a+b+2). */
static double betacf(double a, double b, double x) {
    const double tiny = 1e-300, eps = 1e-16;
    double qab = a + b, qap = a + 1.0, qam = a - 1.0;
    double c = 1.0, d = 1.0 - qab * x / qap;
    if (fabs(d) < tiny) d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 10000; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1.0 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1.0 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < eps) break;
    }
    return h;
}

/* lgamma(a + b) - lgamma(a) without the cancellation of two huge values
 * when a is large (many degrees of freedom): Stirling's series. */
static double lgamma_step(double a, double b) {
    if (a < 100) return lgamma(a + b) - lgamma(a);
    double c = a + b;
    return (a - 0.5) * log1p(b / a) + b * log(c) - b + (1.0 / (12 * c) - 1.0 / (12 * a)) -
           (1.0 / (360 * c * c * c) - 1.0 / (360 * a * a * a));
}

/* log B(a, b) */
static double lbeta(double a, double b) {
    return a >= b ? lgamma(b) - lgamma_step(a, b) : lgamma(a) - lgamma_step(b, a);
}

double opdb_betainc(double a, double b, double x) {
    if (!(a > 0) || !(b > 0) || isnan(x)) return NAN;
    if (x <= 0) return 0.0;
    if (x >= 1) return 1.0;
    double lbt = a * log(x) + b * log1p(-x) - lbeta(a, b);
    double bt = exp(lbt);
    /* the fraction converges on the side nearer 0; use the symmetry on the other */
    if (x < (a + 1.0) / (a + b + 2.0)) return bt * betacf(a, b, x) / a;
    return 1.0 - bt * betacf(b, a, 1.0 - x) / b;
}

double opdb_t_two_sided_p(double t, double df) {
    if (isnan(t) || !(df > 0)) return NAN;
    if (isinf(t)) return 0.0;
    double x = df / (df + t * t);
    double p = opdb_betainc(df / 2.0, 0.5, x);
    return p > 1.0 ? 1.0 : p;
}

double opdb_welch_p(double n1, double m1, double v1, double n2, double m2, double v2, double *t_out, double *df_out) {
    double a = v1 / n1, b = v2 / n2, t, df, p;
    if (a + b == 0) {
        t = m1 == m2 ? 0.0 : (m2 > m1 ? INFINITY : -INFINITY);
        df = n1 + n2 - 2;
        p = m1 == m2 ? 1.0 : 0.0;
    } else {
        t = (m2 - m1) / sqrt(a + b);
        df = (a + b) * (a + b) / (a * a / (n1 - 1) + b * b / (n2 - 1));
        p = opdb_t_two_sided_p(t, df);
    }
    if (t_out) *t_out = t;
    if (df_out) *df_out = df;
    return p;
}
