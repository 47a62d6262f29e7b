/* See opdb/schema.h: the arrays are expanded from its lists. */
#include "opdb/schema.h"

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
