/* Python-compatible string and number semantics that byte-compatibility
 * with the reference tools depends on: str.strip(), float(), "%.6f". */
#ifndef OPDB_PYSTR_H
#define OPDB_PYSTR_H

#include <stdbool.h>
#include <stddef.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* str.strip() with no argument: strips Python whitespace (ASCII and the
 * Unicode White_Space code points, UTF-8 encoded). */
OPDB_API opdb_span opdb_py_strip_any(opdb_span s);
static inline opdb_span opdb_py_strip(opdb_span s) {
    /* most cells start and end with printable ASCII: nothing to strip */
    if (s.n && (unsigned)(unsigned char)s.p[0] - 0x21u < 0x5fu && (unsigned)(unsigned char)s.p[s.n - 1] - 0x21u < 0x5fu)
        return s;
    return opdb_py_strip_any(s);
}
/* The whitespace float() and int() ignore around a number: like str.strip()
 * but without the ASCII separators \x1c-\x1f. */
OPDB_API opdb_span opdb_py_strip_number(opdb_span s);
/* str.strip(chars) for a set of ASCII characters. */
OPDB_API opdb_span opdb_py_strip_chars(opdb_span s, const char *chars);

/* Python float(): returns true and sets *out on success; false on any failure
 * (hex floats, empty, junk).  Surrounding whitespace is allowed, so is `_`
 * between digits, inf/infinity/nan in any case. Correctly rounded. */
OPDB_API bool opdb_py_float(const char *p, size_t n, double *out);
/* opdb_py_float for text followed by at least 16 readable bytes (p[0..n+16)
 * may be read; the bytes past n never change the result). */
OPDB_API bool opdb_py_float_padded(const char *p, size_t n, double *out);
/* opdb_py_float without its vector path for short decimals: the portable
 * twin the tests compare it with. */
OPDB_API bool opdb_py_float_portable(const char *p, size_t n, double *out);

/* The reference's parse_float: float() or 0.0 on failure. */
static inline double opdb_py_float_or_zero(const char *p, size_t n) {
    double v;
    return opdb_py_float(p, n, &v) ? v : 0.0;
}

/* Python int() on a token (strip, optional sign, digits with single `_`).
 * Returns false on failure or overflow of int64. */
OPDB_API bool opdb_py_int(const char *p, size_t n, long long *out);

/* Python f"{x:.6f}" (also "%.Nf"): nan -> "nan", never "-nan".
 * Writes into buf (at least 32 + digits bytes); returns length. */
OPDB_API size_t opdb_py_fmt_fixed(char *buf, size_t cap, double x, int decimals);

/* Python repr(float): shortest round-trip; returns length. With cap of at
 * least OPDB_PY_REPR_ROOM it is written straight into buf, whose bytes after
 * the text's NUL may then be overwritten too (up to the room); with less it
 * is cut as snprintf cuts. */
#define OPDB_PY_REPR_ROOM 40
OPDB_API size_t opdb_py_fmt_repr(char *buf, size_t cap, double x);

/* Python repr(int) of v (str() too): its decimal digits, '-' before a
 * negative one, two digits at a time. Writes at most 20 bytes and no NUL
 * into buf; returns the length. */
OPDB_API size_t opdb_py_fmt_int(char *buf, long long v);

/* Python str.lower() restricted to ASCII (other bytes kept). */
OPDB_API void opdb_ascii_lower(char *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
