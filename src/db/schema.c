/* See opdb/schema.h: the arrays are expanded from its lists. */
#include "opdb/schema.h"

#include <string.h>

#include "opdb/pystr.h"

#define OPDB_SCHEMA_ITEM(name) name,

const char *const opdb_base_cols[OPDB_NBASE_COLS] = {OPDB_BASE_COL_LIST(OPDB_SCHEMA_ITEM)};

const char *const opdb_prof_dur_cols[OPDB_NPROF_DUR_COLS] = {OPDB_PROF_DUR_COL_LIST(OPDB_SCHEMA_ITEM)};

const char *const opdb_dur_cols[OPDB_NDUR_COLS] = {OPDB_COL_MB_DUR, OPDB_PROF_DUR_COL_LIST(OPDB_SCHEMA_ITEM)
                                                       OPDB_COL_LEGACY_MB_DUR};

const char *const opdb_metric_names[OPDB_NMETRICS] = {OPDB_METRIC_LIST(OPDB_SCHEMA_ITEM)};

const char *const opdb_sig_cell_cols[OPDB_NSIG_CELLS] = {OPDB_SIG_CELL_LIST(OPDB_SCHEMA_ITEM)};

const char *const opdb_key_cols[OPDB_NKEY_COLS] = {OPDB_BASE_COL_LIST(OPDB_SCHEMA_ITEM) OPDB_COL_EP_SIZE};

/* A list and its count must not drift apart. */
#define OPDB_SCHEMA_ONE(name) +1
_Static_assert(0 OPDB_BASE_COL_LIST(OPDB_SCHEMA_ONE) == OPDB_NBASE_COLS, "base columns");
_Static_assert(0 OPDB_PROF_DUR_COL_LIST(OPDB_SCHEMA_ONE) == OPDB_NPROF_DUR_COLS, "profiled durations");
_Static_assert(0 OPDB_METRIC_LIST(OPDB_SCHEMA_ONE) == OPDB_NMETRICS, "metric names");
_Static_assert(0 OPDB_SIG_CELL_LIST(OPDB_SCHEMA_ONE) == OPDB_NSIG_CELLS, "signature cells");

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
