/* Python ast.literal_eval restricted to what the analysis tools feed it
 * (docs/ANALYSIS.md §1.3): lists, tuples, str, int, float, True/False/None.
 * Anything else (dicts, sets, complex, names, calls) is a parse failure. */
#ifndef OPDB_PYLITERAL_H
#define OPDB_PYLITERAL_H

#include <stdbool.h>
#include <stddef.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opdb_pylit_kind {
    OPDB_PYLIT_LIST,
    OPDB_PYLIT_TUPLE,
    OPDB_PYLIT_STR,
    OPDB_PYLIT_INT,
    OPDB_PYLIT_FLOAT,
    OPDB_PYLIT_BOOL,
    OPDB_PYLIT_NONE
} opdb_pylit_kind;

typedef struct opdb_pylit {
    opdb_pylit_kind kind;
    /* STR: decoded UTF-8 bytes (NUL-terminated; may contain NUL from "\0").
     * INT: Python str(int) of the value (decimal, '-' sign, no '_'), which
     *      is also correct when the value does not fit int64. */
    char *s;
    size_t n;
    long long i;           /* INT: value when fits_int64; BOOL: 0/1 */
    bool fits_int64;       /* INT only */
    double f;              /* FLOAT: value; INT: (double)value as float(int) */
    struct opdb_pylit **items; /* LIST/TUPLE elements */
    size_t nitems;
} opdb_pylit;

/* Parses text[0..n) as one literal. Returns the tree (free with
 * opdb_pylit_free) or NULL on failure; then, if given, *err_off receives the
 * byte offset of the problem and *err_msg a static description. */
OPDB_API opdb_pylit *opdb_pylit_parse(const char *text, size_t n, size_t *err_off, const char **err_msg);
OPDB_API void opdb_pylit_free(opdb_pylit *v);

/* true for INT or FLOAT (Python numbers; bool excluded). Sets *out. */
OPDB_API bool opdb_pylit_number(const opdb_pylit *v, double *out);

/* Appends Python str() of v: ints decimal, floats repr, True/False/None,
 * strings raw at top level and repr-quoted inside containers, "[a, b]",
 * "(a,)". */
OPDB_API void opdb_pylit_str(opdb_strbuf *sb, const opdb_pylit *v);
/* Appends Python repr() of v (as str(), but a top-level str is quoted). */
OPDB_API void opdb_pylit_repr(opdb_strbuf *sb, const opdb_pylit *v);

/* Appends Python repr() of the str s[0..n): 'text' (or "text" when it has '
 * and no "), with \\, the quote, \n, \r, \t and other C0 controls escaped. */
OPDB_API void opdb_py_repr_str(opdb_strbuf *sb, const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
