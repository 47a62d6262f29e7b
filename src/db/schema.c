/* See opdb/schema.h. */
#include "opdb/schema.h"

const char *const opdb_base_cols[OPDB_NBASE_COLS] = {
    OPDB_COL_OP_STATE,     OPDB_COL_ACCEL_CORE,    OPDB_COL_INPUT_SHAPES,   OPDB_COL_INPUT_DTYPES,
    OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_SHAPES, OPDB_COL_OUTPUT_DTYPES, OPDB_COL_OUTPUT_FORMATS};

const char *const opdb_sig_cell_cols[OPDB_NSIG_CELLS] = {OPDB_COL_INPUT_SHAPES,  OPDB_COL_INPUT_DTYPES,
                                                         OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_SHAPES,
                                                         OPDB_COL_OUTPUT_DTYPES, OPDB_COL_EP_SIZE};
