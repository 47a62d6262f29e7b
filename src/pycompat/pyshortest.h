/* Internal to src/pycompat: the digits of repr(float) and the printf-based
 * formatter they are tested against. */
#ifndef OPDB_PYCOMPAT_PYSHORTEST_H
#define OPDB_PYCOMPAT_PYSHORTEST_H
#include <stddef.h>
#include <stdint.h>

/* For finite a > 0 (subnormals included): the decimal m * 10^e with the
 * fewest significant digits that reads back as a, the closest to a among
 * those (ties to an even m); m has no trailing zeros. */
void opdb_shortest_digits(double a, uint64_t *m, int *e);

/* repr(float) by snprintf("%.*e") and strtod, the slow reference the fast
 * opdb_py_fmt_repr is checked against; same contract. */
size_t opdb_py_fmt_repr_slow(char *buf, size_t cap, double x);

#endif
