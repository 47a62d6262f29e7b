/* opdb bench's row loop: one row (a database row or a grid row) planned,
 * prepared, measured and journaled, with per-operator status. */
#ifndef OPDB_REPLAY_BENCH_ROWS_H
#define OPDB_REPLAY_BENCH_ROWS_H

#include <stdint.h>

#include "opdb/bench.h"
#include "opdb/progress.h"
#include "replay/bench_journal.h"

enum { ST_SUCCESS, ST_FAILED, ST_SKIPPED };

typedef struct op_status {
    char *op;                 /* CSV stem */
    int kind;                 /* ST_* once decided; ST_SUCCESS by default */
    char *reason;             /* skip reason / first failure */
    long measured, failed, skipped, reused;
    long consecutive;         /* failed rows in a row (circuit breaker) */
    long unmeasured;          /* merge of MPI ranks: rows no rank's journal holds (the rank died) */
} op_status;

/* Samples of one row signature from the earlier passes (--rounds). */
typedef struct row_samples {
    char *key;
    double *v;
    size_t n, cap;
} row_samples;

typedef struct bench_ctx {
    const opdb_bench_opts *o;
    opdb_backend *b;
    bench_journal j;
    size_t nloaded;           /* journal records from an earlier run (--resume) */
    op_status *st;
    size_t nst;
    bool stop;                /* --fail-fast tripped */
    opdb_strbuf sig;
    char backend_cell[400];   /* MicroBench Backend: description + timer overhead */
    int width;                /* of stderr's terminal, 80 when not one: [OK] lines fit it */
    int round, nrounds;       /* the pass (1-based) and how many; only the last one journals */
    opdb_measure_opts m;      /* the stop rule of one pass (budgets divided by nrounds) */
    row_samples *acc;         /* samples of the earlier passes, by row signature */
    size_t nacc, capacc;
    opdb_hindex acc_ix;
    long unconverged;         /* rows measured without meeting the stop rule (last pass) */
    long planned;             /* --plan: rows listed */
    long modelled;            /* --plan: rows estimated by the model, not piloted (over the pilot budget) */
    double plan_lo_s, plan_hi_s; /* --plan: estimated time, every row converging / every row timing out */
    long ordinal;             /* rows met in this pass (MPI sharding: row i belongs to rank i % count) */
    bench_journal *shards;    /* merge of MPI ranks: rank r's journal */
    size_t budget;            /* bytes of buffers one row may need (opdb_bench_memory_budget) */
    bool counting;            /* a pass that only counts the rows, for the progress line */
    uint64_t total, started;  /* rows of all passes, and rows begun so far */
    opdb_progress prog;
    char *writeback_json;     /* --json: the write-back report as JSON (malloc'd), NULL before it */
} bench_ctx;

/* A line of the run's own on err_out (opdb: stderr): setup, per-row outcomes. */
void bench_say(const bench_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A row as named cells. */
typedef struct bench_row {
    const char *csv;          /* file name for messages ("Add.csv") */
    long line;                /* row number (first data row = 2) */
    const char *const *name;
    const char *const *val;
    int n;
} bench_row;

const char *bench_row_cell(const bench_row *r, const char *col); /* "" when absent */
op_status *bench_status(bench_ctx *c, const char *op);
void bench_skip_op(bench_ctx *c, op_status *s, const char *reason);
/* Benchmarks one row of CSV stem `stem` with operator def (journal, status,
 * messages). In a pass before the last (round < nrounds) it only measures
 * and keeps the samples, which the last pass adds to its own. */
int bench_one_row(bench_ctx *c, const char *stem, const opdb_op_def *def, const bench_row *r, opdb_err *err);

void bench_samples_free(bench_ctx *c);

const char *bench_row_cell_cb(const opdb_replay_row *row, const char *col); /* row->ctx is a bench_row */
/* Refuses a planned row whose buffers do not fit the memory budget, before any is allocated. */
int bench_check_budget(const bench_ctx *c, const opdb_op_problem *p, opdb_err *err);
/* --plan: one row piloted and listed with its estimated time (bench_plan.c);
 * repeat: an earlier row had its signature (the run reuses that measurement). */
void bench_plan_row(bench_ctx *c, const opdb_op_def *def, const char *stem, const bench_row *r, const char *const *cells,
                    bool repeat);

#endif
