/* Python's round() on floats: the exact binary value rounded half-to-even
 * (CPython goes through its correctly rounded decimal conversion; ties are
 * only exact binary halves such as 0.125), never floor(x + 0.5). */
#ifndef OPDB_PYROUND_H
#define OPDB_PYROUND_H

#include "opdb/api.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* round(x, ndigits) for a float x: returns a double (sign of zero kept:
 * round(-0.04, 1) is -0.0). ndigits may be negative (round(1250.0, -2) is
 * 1200.0). Non-finite x comes back unchanged. Returns false only where
 * Python raises OverflowError (the rounded value does not fit a double). */
OPDB_API bool opdb_py_round(double x, int ndigits, double *out);

/* Convenience for the common finite case: round(x, ndigits), or x itself
 * where Python would raise. */
OPDB_API double opdb_py_roundn(double x, int ndigits);

/* round(x) with no ndigits: nearest integer, ties to even, as a double that
 * holds an integral value (Python returns an int, so -0.5 gives 0 and the
 * result has no negative zero). false for nan/inf (Python raises). */
OPDB_API bool opdb_py_round_int(double x, double *out);

#ifdef __cplusplus
}
#endif
#endif
