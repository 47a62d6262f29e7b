/* The operator database schema in one place (src/db/schema.c): the base
 * columns every CSV starts with, the duration columns and the signature
 * cells (spec update-and-report.md §2.2; the 25 hardware metric names are
 * opdb_metric_names in opdb/ingest.h). */
#ifndef OPDB_SCHEMA_H
#define OPDB_SCHEMA_H

#ifdef __cplusplus
extern "C" {
#endif

#define OPDB_COL_OP_STATE "OP State"
#define OPDB_COL_ACCEL_CORE "Accelerator Core"
#define OPDB_COL_INPUT_SHAPES "Input Shapes"
#define OPDB_COL_INPUT_DTYPES "Input Data Types"
#define OPDB_COL_INPUT_FORMATS "Input Formats"
#define OPDB_COL_OUTPUT_SHAPES "Output Shapes"
#define OPDB_COL_OUTPUT_DTYPES "Output Data Types"
#define OPDB_COL_OUTPUT_FORMATS "Output Formats"
#define OPDB_COL_EP_SIZE "EP Size"

/* durations: the MicroBench one (and its legacy name), the profiled ones */
#define OPDB_COL_MB_DUR "Average Duration(us)"
#define OPDB_COL_LEGACY_MB_DUR "MicroBench Duration(us)"
#define OPDB_COL_PROF_AVG_DUR "Profiling Average Duration(us)"
#define OPDB_COL_PROF_MEDIAN_DUR "Profiling Median Duration(us)"
#define OPDB_COL_PROF_STD_DUR "Profiling Std Duration(us)"
/* opdb's default-mode parse also writes these, so a later parse can merge
 * rows exactly (count, sum, sum of squares, min, max); not --reference-quirks */
#define OPDB_COL_PROF_COUNT "Profiling Count"
#define OPDB_COL_PROF_MIN_DUR "Profiling Min Duration(us)"
#define OPDB_COL_PROF_MAX_DUR "Profiling Max Duration(us)"
#define OPDB_COL_PROF_SUM_DUR "Profiling Sum Duration(us)"
#define OPDB_COL_PROF_SUMSQ_DUR "Profiling Sum Squares(us^2)"
#define OPDB_COL_KERNEL_NAMES "Kernel Names"

#define OPDB_NBASE_COLS 8
/* OP State .. Output Formats, in file order */
extern const char *const opdb_base_cols[OPDB_NBASE_COLS];

#define OPDB_NSIG_CELLS 6
/* The cells a row's signature reads, in opdb_sig_cells order. */
extern const char *const opdb_sig_cell_cols[OPDB_NSIG_CELLS];

#ifdef __cplusplus
}
#endif
#endif
