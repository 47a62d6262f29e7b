/* `opdb bench`: replay a database's operator rows on this machine's CPU (or
 * a CUDA GPU), measure them (measure.h) and write the durations back through
 * the `opdb update` path (update.h). docs/REPLAY-OPS.md, docs/REPLAY.md. */
#ifndef OPDB_BENCH_H
#define OPDB_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "opdb/core.h"
#include "opdb/measure.h"
#include "opdb/replay.h"
#include "opdb/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Consecutive failed rows after which an operator's remaining rows are skipped. */
#define OPDB_BENCH_BREAKER 5

/* Columns opdb bench adds after the existing ones (default mode). */
OPDB_API extern const char *const opdb_bench_extra_cols[];
OPDB_API extern const size_t opdb_bench_nextra_cols;

typedef struct opdb_bench_opts {
    size_t size; /* sizeof(opdb_bench_opts), set by opdb_bench_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *db_dir;              /* database folder */
    const char *const *ops;          /* normalised selection; NULL/0 = all */
    size_t nops;
    bool missing_only;               /* --update-mode missing-only */
    opdb_measure_opts measure;
    bool fail_fast;                  /* stop at the first failed row */
    bool resume;                     /* reuse the journal of an unfinished run */
    bool drop_failed;                /* delete rows that failed to replay */
    bool quirks;                     /* --reference-quirks: no extra columns, failed rows deleted */
    const char *grid;                /* NULL, or "default": benchmark the built-in grid */
    const char *timestamp;           /* report stamp (NULL or "": now; opdb: $OPDB_REPORT_TIMESTAMP) */
    FILE *out;                       /* progress, status and report (stdout) */
    int rounds;                      /* > 1: interleaved passes over the rows (stop-rule mode only) */
    bool plan_only;                  /* --plan: list the rows that would run and their estimated time from a short
                                        pilot of each (bench_plan.c); write nothing */
    bool strict;                     /* --strict: nothing measured or an unconverged row makes the run fail */
    /* Replay across MPI ranks (src/comm/mpi/bench_ranks.c; `opdb bench` under mpirun). shard_count > 1 and
     * shard_rank in 0..count-1: this rank's share, the rows whose ordinal (walk order) % count == rank,
     * journaled into the file shard_path; no lock, no write-back. shard_rank == OPDB_BENCH_SHARD_MERGE:
     * nothing is measured; the journals shard_path/shard-<r>.csv are merged in row order and written back
     * under the lock, as one run would; rows that no journal holds stay unmeasured and are reported. */
    int shard_rank, shard_count;
    const char *shard_path;
    size_t max_memory;               /* --max-memory: bytes of buffers one row may need; 0 = 3/4 of the available memory */
    bool no_progress;                /* no progress line (drawn on stderr only when it is a terminal) */
    FILE *json;                      /* non-NULL: the run's (or plan's) summary as one JSON object here, the
                                        write-back report as JSON inside it (keys in docs/GUIDE.md) */
    struct opdb_bench_totals *totals;/* non-NULL: filled at the end of a run or plan */
    size_t plan_pilot_memory;        /* --plan: a row whose buffers need more is estimated by the model, not
                                        piloted; 0 = OPDB_BENCH_PILOT_MEMORY */
    FILE *err_out;                   /* the run's setup and per-row lines ([BENCH], [OK], [FAIL], [SKIP],
                                        [PRESERVE] ...) (opdb: stderr); NULL: none */
    long grid_limit;                 /* > 0: the built-in grid keeps at most this many rows per operator (tests;
                                        opdb: OPDB_BENCH_GRID_LIMIT) */
} opdb_bench_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_bench_opts_init_sized(opdb_bench_opts *o, size_t size);
#define opdb_bench_opts_init(o) opdb_bench_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

/* --plan's default pilot budget: a pilot allocates and fills the row's
 * buffers, so a row of gigabytes would make the plan as slow and as large as
 * the run it is meant to preview. */
#define OPDB_BENCH_PILOT_MEMORY ((size_t)256 << 20)

/* What a run did, for the caller's one-line summary. */
typedef struct opdb_bench_totals {
    long measured, failed, skipped, unconverged; /* rows */
    size_t operators;                /* operators with a status (measured, failed or skipped) */
    long planned;                    /* --plan: rows that would run */
    long modelled;                   /* --plan: of those, rows estimated by the model (over the pilot budget) */
    double plan_low_s, plan_high_s;  /* --plan: the estimated time */
} opdb_bench_totals;

/* The per-row buffer budget o->max_memory stands for (SIZE_MAX: unknown, no limit). */
OPDB_API size_t opdb_bench_memory_budget(const opdb_bench_opts *o);

#define OPDB_BENCH_SHARD_MERGE (-1)
/* "shard-<r>.csv": rank r's journal inside the merge folder. */
#define OPDB_BENCH_SHARD_FILE "shard-%d.csv"

/* Runs the benchmark on backend b. Returns 0 when every selected row was
 * measured or skipped, 1 when some row failed (results are still written
 * back), -1 with err set on an error that stopped the run. */
OPDB_API int opdb_bench_run(const opdb_bench_opts *o, opdb_backend *b, opdb_err *err);

/* `<data root>/<device, sanitised>/opdb_<backend>/<stack>` (malloc'd), data
 * root = data_root, else the OPDB_DATA_ROOT setting, else "data". */
OPDB_API char *opdb_bench_default_dir(const opdb_backend *b, const char *data_root);

/* The built-in grid: rows of LLM-typical shapes per operator. */
typedef struct opdb_grid_row {
    const char *op;                  /* catalogue name = CSV stem */
    const char *cell[OPDB_NBASE_COLS]; /* OP State .. Output Formats (opdb_base_cols order) */
} opdb_grid_row;

/* Rows of grid `name` ("default"; limit > 0 keeps the first `limit` rows of
 * each operator, for tests). Caller frees with opdb_grid_free. */
OPDB_API int opdb_grid_rows(const char *name, long limit, opdb_grid_row **rows, size_t *n, opdb_err *err);
OPDB_API void opdb_grid_free(opdb_grid_row *rows, size_t n);

#ifdef __cplusplus
}
#endif
#endif
