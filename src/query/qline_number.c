/* A JSON number of a query line as its value: an integer where it is one
 * and fits int64 (Python's int), else the nearest double (Python's float);
 * shared by the query line readers. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "opdb/pystr.h"
#include "query/qline_fast.h"
#include "query/query_internal.h"

qv *q_json_number(opdb_arena *a, const char *s, size_t n) {
    bool is_int = true;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') is_int = false;
    qv *v = qv_new(a, QV_NULL);
    long long iv;
    if (is_int && n <= 18 && (s[0] != '-' || n > 1)) {
        /* a JSON integer of at most 18 characters fits in int64: its digits, read directly */
        size_t i = s[0] == '-';
        long long x = 0;
        for (; i < n; i++) x = x * 10 + (s[i] - '0');
        v->kind = QV_INT;
        v->i = s[0] == '-' ? -x : x;
    } else if (is_int && opdb_py_int(s, n, &iv)) {
        v->kind = QV_INT;
        v->i = iv;
    } else {
        /* Python floats; an integer beyond int64 is kept as the nearest float for
         * what reads it, and its digits for what writes it back (Python keeps an int) */
        v->kind = QV_FLOAT;
        if (!opdb_py_float(s, n, &v->f)) v->f = NAN;
        if (is_int) {
            v->s = opdb_arena_strndup(a, s, n);
            v->n = n;
        }
    }
    return v;
}
