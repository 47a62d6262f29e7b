/* See opdb/schema.h. */
#include "opdb/schema.h"

#include <string.h>

#include "opdb/pystr.h"

const char *const opdb_base_cols[OPDB_NBASE_COLS] = {
    OPDB_COL_OP_STATE,     OPDB_COL_ACCEL_CORE,    OPDB_COL_INPUT_SHAPES,   OPDB_COL_INPUT_DTYPES,
    OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_SHAPES, OPDB_COL_OUTPUT_DTYPES, OPDB_COL_OUTPUT_FORMATS};

const char *const opdb_sig_cell_cols[OPDB_NSIG_CELLS] = {OPDB_COL_INPUT_SHAPES,  OPDB_COL_INPUT_DTYPES,
                                                         OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_SHAPES,
                                                         OPDB_COL_OUTPUT_DTYPES, OPDB_COL_EP_SIZE};

bool opdb_shape_is_na(const char *p, size_t n) {
    opdb_span s = opdb_py_strip(opdb_span_make(p, n));
    p = s.p, n = s.n;
    while (n && p[0] == '"') p++, n--;
    while (n && p[n - 1] == '"') n--;
    return n == 3 && (p[0] == 'N' || p[0] == 'n') && p[1] == '/' && (p[2] == 'A' || p[2] == 'a');
}

bool opdb_op_type_is_bogus(const char *op) {
    opdb_span s = opdb_py_strip(opdb_span_make(op, strlen(op)));
    double d;
    return s.n == 0 || opdb_py_float(s.p, s.n, &d);
}
