/* `opdb comm`: collective microbenchmarks (hcom_*.csv tables), the
 * reference's alpha-beta alignment validator with a fitted model, and
 * importers for nccl-tests / OSU logs. Nothing here links MPI: the
 * `opdb-comm` helper (src/comm/mpi/) runs the collectives and uses these
 * parts for the configuration list, the rows and the reports. */
#ifndef OPDB_COMM_H
#define OPDB_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "opdb/core.h"
#include "opdb/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opdb_comm_op {
    OPDB_COMM_ALL_REDUCE,
    OPDB_COMM_ALL_GATHER,
    OPDB_COMM_REDUCE_SCATTER,
    OPDB_COMM_ALL_TO_ALL,
    OPDB_COMM_BROADCAST,
    OPDB_COMM_NOPS
} opdb_comm_op;

/* "all_reduce", ...; the CSV kernel type "hcom_allReduce_" (file = type + ".csv"). */
OPDB_API const char *opdb_comm_op_name(opdb_comm_op op);
OPDB_API const char *opdb_comm_op_kernel(opdb_comm_op op);
/* nccl-tests' redop column ("sum" or "none") */
OPDB_API const char *opdb_comm_op_redop(opdb_comm_op op);
/* Parses an op name; -1 when unknown. */
OPDB_API int opdb_comm_op_parse(const char *name);
/* The op a file name or title speaks of ("all_reduce_perf", "allgather", "Alltoall"); -1 if none. */
OPDB_API int opdb_comm_op_parse_loose(const char *text);
/* nccl-tests' bus-bandwidth factor for n ranks: allreduce 2(n-1)/n,
 * allgather/reducescatter/alltoall (n-1)/n, broadcast 1. */
OPDB_API double opdb_comm_busbw_factor(opdb_comm_op op, int nranks);

typedef struct opdb_comm_dtype {
    const char *torch_name; /* "torch.bfloat16" */
    const char *label;      /* "DT_BF16" */
    const char *nccl_name;  /* "bfloat16" (nccl-tests' type column) */
    int size;               /* bytes per element */
} opdb_comm_dtype;
/* By torch name ("torch.bfloat16") or short name ("bfloat16"); NULL when unknown. */
OPDB_API const opdb_comm_dtype *opdb_comm_dtype_find(const char *name);
OPDB_API const opdb_comm_dtype *opdb_comm_dtype_default(void);

/* bf16 / fp16 <-> float (round to nearest even), for the 16-bit sum ops. */
OPDB_API float opdb_bf16_to_float(unsigned short h);
OPDB_API unsigned short opdb_float_to_bf16(float f);
OPDB_API float opdb_fp16_to_float(unsigned short h);
OPDB_API unsigned short opdb_float_to_fp16(float f);

/* ---- topology (docs/COMM.md §2) ---- */
#define OPDB_COMM_MAX_DIMS 8
typedef struct opdb_comm_grid {
    int ndim;
    long long dims[OPDB_COMM_MAX_DIMS];
} opdb_comm_grid;
/* Tier of the group ranks first..first+n-1 (outermost differing dimension). */
OPDB_API int opdb_comm_tier_of_range(const opdb_comm_grid *g, long long first, long long n);
/* Group for (nd, tier) anchored at rank 0: sets *base; -1 with msg when nd
 * exceeds the tier's span or tier is out of range. */
OPDB_API int opdb_comm_group(const opdb_comm_grid *g, long long nd, int tier, long long *base, char *msg, size_t cap);
/* "[48, 8, 2]" */
OPDB_API void opdb_comm_grid_repr(const opdb_comm_grid *g, char *buf, size_t cap);

/* ---- dispatch overhead table (docs/COMM.md §1) ---- */
typedef struct opdb_comm_overhead {
    opdb_comm_op op;
    long long num_devices;
    double us;
} opdb_comm_overhead;
typedef struct opdb_comm_overheads {
    opdb_comm_overhead *items;
    size_t n;
} opdb_comm_overheads;
/* The reference's table. */
OPDB_API void opdb_comm_overheads_default(opdb_comm_overheads *t);
/* A CSV file "op,num_devices,overhead_us" (header line optional) replaces the table. */
OPDB_API int opdb_comm_overheads_load(opdb_comm_overheads *t, const char *path, opdb_err *err);
OPDB_API double opdb_comm_overhead_of(const opdb_comm_overheads *t, opdb_comm_op op, long long nd);
OPDB_API void opdb_comm_overheads_free(opdb_comm_overheads *t);

/* ---- CSV rows (docs/COMM.md §3.5-3.6) ---- */
#define OPDB_COMM_CSV_HEADER                                                                                  \
    OPDB_COMM_COL_BYTES "," OPDB_COMM_COL_NDEV "," OPDB_COMM_COL_DTYPE "," OPDB_COMM_COL_TIER "," OPDB_COMM_COL_DUR \
                        "," OPDB_COMM_COL_BW
typedef struct opdb_comm_row {
    long long message_bytes, num_devices;
    const char *dtype_label;
    int tier;
    double duration_us;    /* already rounded and with the overhead */
    double bandwidth_gbps;
} opdb_comm_row;
/* The written row for a measured value (µs): round(value, 2), plus the overhead, rounded again. */
OPDB_API opdb_comm_row opdb_comm_make_row(long long bytes, long long nd, const char *label, int tier, double value_us,
                                 double overhead_us);
/* Appends "a,b,c,d,e,f\r\n" (floats as repr). */
OPDB_API void opdb_comm_row_format(opdb_strbuf *sb, const opdb_comm_row *r);
/* Appends rows to path (header first when the file does not exist), through
 * a temp file and rename under the folder lock. */
OPDB_API int opdb_comm_csv_append(const char *path, const opdb_comm_row *rows, size_t n, opdb_err *err);

/* ---- the benchmark configuration (docs/COMM.md §3.1-3.2 plus nccl-tests timing flags) ---- */
typedef struct opdb_comm_config {
    opdb_comm_op op;
    long long bytes, nd;
    int tier;         /* tier written in the CSV */
    long long base;   /* group = base .. base+nd-1 */
} opdb_comm_config;

typedef struct opdb_comm_bench_opts {
    size_t size; /* sizeof(opdb_comm_bench_opts), set by opdb_comm_bench_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_comm_op ops[OPDB_COMM_NOPS];
    size_t nops;
    long long *num_devices;
    size_t nnum_devices;
    int *tiers;             /* NULL: auto */
    size_t ntiers;
    opdb_comm_grid grid;
    const opdb_comm_dtype *dtype;
    long long *bytes;
    size_t nbytes;
    const char *output_dir;   /* --output-dir / --database-path */
    const char *output_csv;
    const char *json_path;    /* --json FILE ("-": stdout) */
    const char *overhead_path;
    const char *backend;      /* "mpi" (default) or "nccl" */
    long warmup, iters;
    double time_budget_s;     /* > 0 (--time-budget): iterations per size chosen to fill it, instead of -n */
    bool check, reference_quirks;
    bool num_devices_auto;    /* no --num-devices: num_devices[0] is to be the MPI world size */
} opdb_comm_bench_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_comm_bench_opts_init_sized(opdb_comm_bench_opts *o, size_t size);
#define opdb_comm_bench_opts_init(o) opdb_comm_bench_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

/* --time-budget: at most this many timed iterations per size. */
#define OPDB_COMM_BUDGET_MAX_ITERS 100000
/* Timed iterations that fill budget_s when one iteration takes iter_us
 * (the slowest rank's calibration): floor(budget / iter), at least 1, at most
 * OPDB_COMM_BUDGET_MAX_ITERS (also when an iteration took no measurable time). */
OPDB_API long opdb_comm_budget_iters(double budget_s, double iter_us);

/* The flags are parsed by the programs (src/cli/comm_bench_args.c). Frees
 * what the parser allocated (num_devices, tiers, bytes) and re-inits o. */
OPDB_API void opdb_comm_bench_opts_free(opdb_comm_bench_opts *o);
/* Configuration list in the reference's order; skipped (op, nd, tier) print
 * "opdb comm bench: warning: skipping ..." to warn (may be NULL). NULL with
 * err set (and *n 0) for options not made by opdb_comm_bench_opts_init. */
OPDB_API opdb_comm_config *opdb_comm_configs(const opdb_comm_bench_opts *o, size_t *n, FILE *warn, opdb_err *err);
/* A hash of what every MPI rank must agree on before the first collective:
 * the configurations (op, bytes, group), dtype, iterations, warm-up, time
 * budget, --check, backend. Ranks compare it at start so that a rank given
 * other flags fails at once instead of mismatching a collective. */
OPDB_API uint64_t opdb_comm_bench_fingerprint(const opdb_comm_bench_opts *o, const opdb_comm_config *c, size_t n);

/* ---- statistics and report lines ---- */
typedef struct opdb_comm_stats {
    double min, median, p90, max, mean; /* µs per iteration, max over ranks per iteration */
    double rank_min, rank_max;         /* per-rank mean: the spread over ranks */
} opdb_comm_stats;
/* Sorts v (n > 0) and fills min/median/p90/max/mean. */
OPDB_API void opdb_comm_stats_of(double *v, size_t n, opdb_comm_stats *s);
/* One nccl-tests row: "%12zu  %12zu  %8s  %6s  %6i  %7s  %6.2f  %6.2f  %5s  ..." */
OPDB_API void opdb_comm_nccl_line(opdb_strbuf *sb, opdb_comm_op op, const opdb_comm_dtype *dt, long long bytes, int nranks,
                         double oop_us, long long oop_wrong, double ip_us, long long ip_wrong);
/* The header block's two column lines. */
OPDB_API void opdb_comm_nccl_header(opdb_strbuf *sb);
/* nccl-tests' message size -> element count for op (bytes are per the nccl-tests convention). */
OPDB_API long long opdb_comm_count(opdb_comm_op op, long long bytes, const opdb_comm_dtype *dt, long long nd);

/* ---- MPI launch (no MPI needed) ---- */
/* The world size when an MPI launcher (mpirun/mpiexec of OpenMPI, MPICH,
 * MVAPICH) started this process, with *rank and *size set; 0 otherwise
 * (rank 0 of 1). Read from the launcher's variables, as settings (opdb_setting). */
OPDB_API int opdb_mpi_launch(int *rank, int *size);

/* ---- alignment validator (docs/COMM.md §5) and the fitted model ---- */
typedef struct opdb_comm_validate_totals {
    size_t tables, rows, bad;
    int pass, warn, fail;
} opdb_comm_validate_totals;
typedef struct opdb_comm_validate_opts {
    size_t size; /* sizeof(opdb_comm_validate_opts), set by opdb_comm_validate_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *csv_dir;
    double tolerance;
    bool verbose, reference_quirks, json, strict;
    opdb_comm_validate_totals *totals; /* non-NULL: the counts, set when the tables were read */
} opdb_comm_validate_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_comm_validate_opts_init_sized(opdb_comm_validate_opts *o, size_t size);
#define opdb_comm_validate_opts_init(o) opdb_comm_validate_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */
/* Prints the report (or JSON) to out; bad rows to err_out. Returns the exit
 * code: 0 all OK, 1 any FAIL (or bad row), -1 with err set on a fatal error. */
OPDB_API int opdb_comm_validate(const opdb_comm_validate_opts *o, FILE *out, FILE *err_out, opdb_err *err);
/* The α-β prediction in µs for a tier (0-2). */
OPDB_API double opdb_comm_predict_us(opdb_comm_op op, long long bytes, long long n, int tier);

/* Least-squares t = alpha + beta*m over points (m, t); r2 = 1 - SSres/SStot. */
typedef struct opdb_comm_fit {
    size_t n;
    double alpha_us, beta_us_per_byte, r2, med_rel_res, max_rel_res;
} opdb_comm_fit;
OPDB_API void opdb_comm_fit_points(const double *m, const double *t, size_t n, opdb_comm_fit *f);

/* ---- log importers (nccl-tests, OSU) ---- */
typedef struct opdb_comm_log_row {
    long long size;           /* the log's size column (bytes) */
    double oop_us, ip_us;     /* < 0: absent */
    long long oop_wrong, ip_wrong; /* -1: not a #wrong count (N/A, old float error column) */
} opdb_comm_log_row;
/* The most devices a group may have (a log's rank numbers, --num-devices):
 * beyond it a number is taken for a typo or a corrupt log, not a machine. */
#define OPDB_COMM_MAX_DEVICES 1048576
typedef struct opdb_comm_log {
    char format[16];          /* "nccl-tests" / "osu" */
    char title[128];          /* OSU test title */
    char type[16];            /* nccl-tests type column */
    int op;                   /* -1 unknown */
    long long nranks;         /* 0 unknown; max rank of the '#  Rank' lines + 1 */
    long long distinct_ranks; /* distinct ranks of those lines: nranks is a device count only when they agree */
    int hosts;                /* distinct hosts of the '#  Rank' lines */
    bool osu_bandwidth;       /* OSU column is MB/s, not µs */
    bool osu_collective;      /* OSU title names a collective */
    opdb_comm_log_row *rows;
    size_t n;
    char failure[256];        /* the run's failure line, "" if none */
} opdb_comm_log;
/* Parses an nccl-tests or OSU log held in memory (no files written). Returns
 * 0, or -1 with err set when the text is neither. */
OPDB_API int opdb_comm_log_parse(const char *text, size_t len, opdb_comm_log *log, opdb_err *err);
OPDB_API void opdb_comm_log_free(opdb_comm_log *log);

typedef struct opdb_comm_import_opts {
    size_t size; /* sizeof(opdb_comm_import_opts), set by opdb_comm_import_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *output_dir;
    int op;                   /* -1: from the log or its file name */
    long long num_devices;    /* 0: from the log */
    const opdb_comm_dtype *dtype; /* NULL: from the log, else the default */
    int tier;                 /* -1: 0 when the ranks span hosts, else 1 */
    int time_half;            /* 0 as bench (all_reduce in place, others out of place), 1 oop, 2 ip */
    const opdb_comm_overheads *overheads; /* NULL: none added */
} opdb_comm_import_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_comm_import_opts_init_sized(opdb_comm_import_opts *o, size_t size);
#define opdb_comm_import_opts_init(o) opdb_comm_import_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */
typedef struct opdb_comm_import_result {
    size_t rows, skipped, wrong_rows;
    char summary[512];
} opdb_comm_import_result;
/* Imports one log into output_dir/<kernel>.csv; -1 with a one-line reason in err when refused. */
OPDB_API int opdb_comm_import_file(const opdb_comm_import_opts *o, const char *path, opdb_comm_import_result *res,
                          opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
