/* round() as CPython's float.__round__ (Objects/floatobject.c double_round):
 * the correctly rounded decimal string of x at ndigits places, read back
 * with strtod. glibc's "%.Nf" rounds the exact binary value half-to-even,
 * which is what CPython's _Py_dg_dtoa mode 3 does. */
#include "opdb/pyround.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"

/* CPython's cut-offs: beyond these the answer is known without conversion. */
#define NDIGITS_MAX ((int)((DBL_MANT_DIG - DBL_MIN_EXP) * 0.30103))
#define NDIGITS_MIN (-(int)((DBL_MAX_EXP + 1) * 0.30103))
/* room for 309 integer digits and NDIGITS_MAX (323) decimals, or the exact
 * expansion of any double's integer part plus 1 decimal */
#define ROUND_BUF 1200

/* |x| rounded half-to-even to a multiple of 10^k, k >= 1, as decimal text. */
static void round_to_tens(char *out, size_t cap, double ax, int k) {
    char exact[ROUND_BUF];
    /* glibc prints the exact binary value given enough places (1074 at most
     * are non-zero), so ties are detected exactly. */
    char *buf = opdb_xmalloc(ROUND_BUF + 1100);
    snprintf(buf, ROUND_BUF + 1100, "%.1075f", ax);
    size_t nint = strcspn(buf, ".");
    const char *frac = buf + nint + 1;
    bool frac_nonzero = frac[strspn(frac, "0")] != '\0';
    if ((size_t)k > nint) { /* |x| < 10^(k-1): well below the half */
        snprintf(out, cap, "0");
        free(buf);
        return;
    }
    size_t nhead = nint - (size_t)k;
    const char *tail = buf + nhead;
    int up;
    if (tail[0] != '5') {
        up = tail[0] > '5';
    } else {
        bool rest = false;
        for (size_t j = 1; j < (size_t)k; j++) rest |= tail[j] != '0';
        if (rest || frac_nonzero) up = 1;
        else up = nhead > 0 && ((buf[nhead - 1] - '0') & 1); /* tie: to even */
    }
    /* head (+1 with carry) followed by k zeros */
    size_t n = 0;
    exact[n++] = '0'; /* room for a carry digit */
    memcpy(exact + n, buf, nhead);
    n += nhead;
    for (size_t j = n; up && j-- > 0;) {
        if (exact[j] == '9') {
            exact[j] = '0';
        } else {
            exact[j]++;
            up = 0;
        }
    }
    for (int j = 0; j < k; j++) exact[n++] = '0';
    exact[n] = '\0';
    snprintf(out, cap, "%s", exact);
    free(buf);
}

bool opdb_py_round(double x, int ndigits, double *out) {
    if (!isfinite(x) || x == 0.0 || ndigits > NDIGITS_MAX) {
        *out = x;
        return true;
    }
    if (ndigits < NDIGITS_MIN) {
        *out = 0.0 * x;
        return true;
    }
    char buf[ROUND_BUF];
    double r;
    if (ndigits >= 0) {
        opdb_py_fmt_fixed(buf, sizeof buf, x, ndigits);
        r = strtod(buf, NULL);
    } else {
        round_to_tens(buf, sizeof buf, fabs(x), -ndigits);
        r = strtod(buf, NULL);
        r = copysign(r, x); /* Python keeps the sign of zero: round(-4.0, -1) is -0.0 */
    }
    if (isinf(r)) return false;
    *out = r;
    return true;
}

double opdb_py_roundn(double x, int ndigits) {
    double r;
    return opdb_py_round(x, ndigits, &r) ? r : x;
}

bool opdb_py_round_int(double x, double *out) {
    if (!isfinite(x)) return false;
    double r = nearbyint(x); /* default rounding mode: ties to even */
    *out = r == 0.0 ? 0.0 : r;  /* an int has no negative zero */
    return true;
}
