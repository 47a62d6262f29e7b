/* The operator database schema in one place (docs/UPDATE.md §2.2,
 * docs/INGEST.md §1): the base columns every CSV starts with, the duration
 * columns, the 25 hardware metric names, the column-name prefixes and the
 * signature cells. The lists are also X-macros (OPDB_*_LIST(X) expands X(name)
 * once per name, in file order) so that programs which do not link libopdb,
 * the input generators in perf/, build their headers from the same names.
 * The arrays are defined in src/db/schema.c. */
#ifndef OPDB_SCHEMA_H
#define OPDB_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "opdb/api.h"

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
/* communication tables (hcom_*.csv as `comm import` writes them): the message
 * size, the group size, the topology tier and the measured time */
#define OPDB_COL_COMM_BYTES "message_bytes"
#define OPDB_COL_COMM_DEVICES "num_devices"
#define OPDB_COL_COMM_TIER "topology_tier"
#define OPDB_COL_COMM_DUR "Duration(us)"
/* opdb's default-mode parse also writes these, so a later parse can merge
 * rows exactly (count, sum, sum of squares, min, max); not --reference-quirks */
#define OPDB_COL_PROF_COUNT "Profiling Count"
#define OPDB_COL_PROF_MIN_DUR "Profiling Min Duration(us)"
#define OPDB_COL_PROF_MAX_DUR "Profiling Max Duration(us)"
#define OPDB_COL_PROF_SUM_DUR "Profiling Sum Duration(us)"
#define OPDB_COL_PROF_SUMSQ_DUR "Profiling Sum Squares(us^2)"
#define OPDB_COL_KERNEL_NAMES "Kernel Names"
/* opdb bench's 95% confidence interval of the median (default mode only) */
#define OPDB_COL_MB_CI_LOW "MicroBench CI Low(us)"
#define OPDB_COL_MB_CI_HIGH "MicroBench CI High(us)"

/* opdb bench's other measured values (default mode only), after the CI */
#define OPDB_COL_MB_MEDIAN_DUR "MicroBench Median Duration(us)"
#define OPDB_COL_MB_P20_DUR "MicroBench P20 Duration(us)"
#define OPDB_COL_MB_P80_DUR "MicroBench P80 Duration(us)"
#define OPDB_COL_MB_RSD "MicroBench RSD(%)"
#define OPDB_COL_MB_SAMPLES "MicroBench Samples"
#define OPDB_COL_MB_CACHE "MicroBench Cache"
#define OPDB_COL_MB_GFLOPS "MicroBench GFLOP/s"
#define OPDB_COL_MB_GBS "MicroBench GB/s"
#define OPDB_COL_MB_BACKEND "MicroBench Backend"
/* older MicroBench duration columns update drops on rewrite */
#define OPDB_COL_LEGACY_MB_TASK_DUR "MicroBench Task Duration(us)"
#define OPDB_COL_LEGACY_MB_KERNEL_DUR "MicroBench Kernel Duration(us)"

/* msprof op_summary columns read besides the base ones and EP Size (update
 * reads them; bench writes them for its write-back) */
#define OPDB_OPSUM_COL_OP_TYPE "OP Type"
#define OPDB_OPSUM_COL_TASK_TYPE "Task Type"
#define OPDB_OPSUM_COL_TASK_DUR "Task Duration(us)"

/* A metric m is stored as "MicroBench <m>" (measured by opdb bench) and
 * "Profiling Average <m>" (aggregated from profiles). */
#define OPDB_METRIC_MB_PREFIX "MicroBench "
#define OPDB_METRIC_PROF_PREFIX "Profiling Average "

/* OP State .. Output Formats, in file order */
#define OPDB_BASE_COL_LIST(X)                                                                              \
    X(OPDB_COL_OP_STATE) X(OPDB_COL_ACCEL_CORE) X(OPDB_COL_INPUT_SHAPES) X(OPDB_COL_INPUT_DTYPES)         \
    X(OPDB_COL_INPUT_FORMATS) X(OPDB_COL_OUTPUT_SHAPES) X(OPDB_COL_OUTPUT_DTYPES) X(OPDB_COL_OUTPUT_FORMATS)
#define OPDB_NBASE_COLS 8
OPDB_API extern const char *const opdb_base_cols[OPDB_NBASE_COLS];

/* The profiled durations parse writes after the base columns, in file order. */
#define OPDB_PROF_DUR_COL_LIST(X) X(OPDB_COL_PROF_AVG_DUR) X(OPDB_COL_PROF_MEDIAN_DUR) X(OPDB_COL_PROF_STD_DUR)
#define OPDB_NPROF_DUR_COLS 3
OPDB_API extern const char *const opdb_prof_dur_cols[OPDB_NPROF_DUR_COLS];

/* Every duration column a database row may carry (validate's order). */
#define OPDB_NDUR_COLS 5
OPDB_API extern const char *const opdb_dur_cols[OPDB_NDUR_COLS];

/* The 25 hardware metrics of kernel_details / op_summary, in file order. */
#define OPDB_METRIC_LIST(X)                                                                                   \
    X("aicore_time(us)") X("aic_total_cycles") X("aic_mac_time(us)") X("aic_mac_ratio") X("aic_scalar_time(us)") \
    X("aic_scalar_ratio") X("aic_mte1_time(us)") X("aic_mte1_ratio") X("aic_mte2_time(us)") X("aic_mte2_ratio")  \
    X("aic_fixpipe_time(us)") X("aic_fixpipe_ratio") X("aic_icache_miss_rate") X("aiv_time(us)")                  \
    X("aiv_total_cycles") X("aiv_vec_time(us)") X("aiv_vec_ratio") X("aiv_scalar_time(us)")                       \
    X("aiv_scalar_ratio") X("aiv_mte2_time(us)") X("aiv_mte2_ratio") X("aiv_mte3_time(us)") X("aiv_mte3_ratio")   \
    X("aiv_icache_miss_rate") X("cube_utilization(%)")
#define OPDB_NMETRICS 25
OPDB_API extern const char *const opdb_metric_names[OPDB_NMETRICS];

/* The cells a row's signature reads, in opdb_sig_cells order. */
#define OPDB_SIG_CELL_LIST(X)                                                                             \
    X(OPDB_COL_INPUT_SHAPES) X(OPDB_COL_INPUT_DTYPES) X(OPDB_COL_INPUT_FORMATS) X(OPDB_COL_OUTPUT_SHAPES) \
    X(OPDB_COL_OUTPUT_DTYPES) X(OPDB_COL_EP_SIZE)
#define OPDB_NSIG_CELLS 6
OPDB_API extern const char *const opdb_sig_cell_cols[OPDB_NSIG_CELLS];

/* A row's identity cells as bench reads and writes them: the base columns
 * and EP Size. */
#define OPDB_NKEY_COLS (OPDB_NBASE_COLS + 1)
OPDB_API extern const char *const opdb_key_cols[OPDB_NKEY_COLS];

/* FusedInferAttentionScore runtime columns (docs/INGEST.md §1.1, docs/GRID.md
 * §6.5): parse takes them from the profile, fia-fill back-fills them, grid
 * writes them for generated rows and replay reads them. Each user keeps its
 * own order (the reference's), built from these names. */
#define OPDB_COL_RT_PREFIX "Runtime "
#define OPDB_COL_RT_SOURCE "Runtime source_profile"
#define OPDB_COL_RT_ASL_SHAPE "Runtime actual_seq_lengths_shape"
#define OPDB_COL_RT_ASL_VALUES "Runtime actual_seq_lengths_values"
#define OPDB_COL_RT_ASLKV_SHAPE "Runtime actual_seq_lengths_kv_shape"
#define OPDB_COL_RT_ASLKV_VALUES "Runtime actual_seq_lengths_kv_values"
#define OPDB_COL_RT_AVG_SEQ_LEN "Runtime avg_seq_len"
#define OPDB_COL_RT_BT_SHAPE "Runtime block_table_shape"
#define OPDB_COL_RT_BT_VALID "Runtime block_table_valid_blocks"
#define OPDB_COL_RT_NUM_HEADS "Runtime num_heads"
#define OPDB_COL_RT_NUM_KV_HEADS "Runtime num_key_value_heads"
#define OPDB_COL_RT_SPARSE_MODE "Runtime sparse_mode"
#define OPDB_COL_RT_INPUT_LAYOUT "Runtime input_layout"
#define OPDB_COL_RT_BLOCK_SIZE "Runtime block_size"
#define OPDB_COL_RT_ATTN_STATE "Runtime attn_state"
#define OPDB_COL_RT_KV_CACHE_MODE "Runtime kv_cache_mode"
#define OPDB_COL_RT_COMPLETENESS "Runtime metadata_completeness"
#define OPDB_COL_RT_RAW_SHAPES "Runtime operator_input_shapes_raw"

/* The hcom_*.csv tables opdb comm writes (docs/COMM.md §3.5), in file order. */
#define OPDB_COMM_COL_BYTES "message_bytes"
#define OPDB_COMM_COL_NDEV "num_devices"
#define OPDB_COMM_COL_DTYPE "dtype"
#define OPDB_COMM_COL_TIER "topology_tier"
#define OPDB_COMM_COL_DUR "Duration(us)"
#define OPDB_COMM_COL_BW "bandwidth_gbps"

/* A shape cell that stands for "no shape": stripped of whitespace, then of
 * '"', it reads N/A in any case (docs/INGEST.md §1: parse skips such rows;
 * update's default mode does not add them either). */
OPDB_API bool opdb_shape_is_na(const char *p, size_t n);

/* An OP Type that cannot name an operator table: empty, or a number
 * (msprof writes 0 for some launches). */
OPDB_API bool opdb_op_type_is_bogus(const char *op);

#ifdef __cplusplus
}
#endif
#endif
