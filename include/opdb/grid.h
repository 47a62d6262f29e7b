/* `opdb grid`: theory shape grids appended to database CSVs (docs/GRID.md).
 * Python-compatible seeded sampling, a safe integer expression evaluator,
 * the YAML grid configuration, model presets and the per-file pipeline. */
#ifndef OPDB_GRID_H
#define OPDB_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Python's random.Random: MT19937 seeded like random.seed(int). */
typedef struct opdb_pyrandom {
    uint32_t mt[624];
    int mti;
} opdb_pyrandom;

OPDB_API void opdb_pyrandom_seed(opdb_pyrandom *r, long long seed);  /* |seed| as Python */
OPDB_API void opdb_pyrandom_seed_entropy(opdb_pyrandom *r);
OPDB_API uint32_t opdb_pyrandom_getrandbits(opdb_pyrandom *r, int k);  /* 1 <= k <= 32 */
OPDB_API uint32_t opdb_pyrandom_randbelow(opdb_pyrandom *r, uint32_t n); /* n >= 1 */
/* random.sample(range(n), k) into out[k] (k <= n). */
OPDB_API void opdb_pyrandom_sample(opdb_pyrandom *r, size_t n, size_t k, size_t *out);

/* ---- Expressions: a Python subset over named integers (docs/GRID.md §5.2). */
typedef struct opdb_grid_expr opdb_grid_expr;
/* The reason given for an expression docs/GRID.md §5.2 forbids ('.' or a dunder name);
 * a configuration error reads "<config>:<line>: bad expression '<expr>': <reason>". */
#define OPDB_GRID_EXPR_FORBIDDEN "'.' and '__' names are not allowed"
/* Compiles text; NULL with msg (cap bytes) on a syntax/forbidden error. */
OPDB_API opdb_grid_expr *opdb_grid_expr_compile(const char *text, char *msg, size_t cap);
OPDB_API void opdb_grid_expr_free(opdb_grid_expr *e);
/* Variables by name. */
typedef struct opdb_grid_vars {
    const char *const *names;
    const int64_t *values;
    size_t n;
} opdb_grid_vars;
/* Evaluates; *is_float tells whether the result is a float (then *f is set,
 * *i = trunc). Returns 0, or -1 with msg set (division by zero, overflow,
 * unknown name, ...). */
OPDB_API int opdb_grid_expr_eval(const opdb_grid_expr *e, const opdb_grid_vars *v, int64_t *i, double *f, bool *is_float,
                        char *msg, size_t cap);
/* Resolves e's variable names to their indexes in v->names once, for the
 * evaluations that follow with that same names array and count (values may
 * change between them); any other vars are looked up by name.  NULL
 * unbinds: a caller that binds unbinds before its names array goes away. */
OPDB_API void opdb_grid_expr_bind(opdb_grid_expr *e, const opdb_grid_vars *v);

/* ---- Configuration (docs/GRID.md §4). */
typedef struct opdb_grid_config opdb_grid_config;
/* The built-in default (src/grid/grid_config.yaml). */
OPDB_API extern const char opdb_grid_default_config[];
OPDB_API extern const size_t opdb_grid_default_config_len;
/* Loads YAML text; `name` is used in error lines ("name:line: ..."). */
OPDB_API opdb_grid_config *opdb_grid_config_load(const char *text, size_t len, const char *name, opdb_err *err);
OPDB_API void opdb_grid_config_free(opdb_grid_config *c);

/* ---- A run over a database folder. */
#define OPDB_GRID_MAX_CANDIDATES 50000000ull
typedef struct opdb_grid_opts {
    size_t size; /* sizeof(opdb_grid_opts), set by opdb_grid_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *root;            /* resolved CSV root */
    const char *target_models;   /* comma list or NULL */
    const char *config_path;     /* NULL: built-in */
    long long rows;              /* <= 0: no cap */
    bool have_seed;
    long long seed;
    double max_hbm_gb;           /* <= 0: no budget */
    unsigned long long max_candidates; /* a template expanding to more is refused; 0: OPDB_GRID_MAX_CANDIDATES */
    bool quirks;                 /* --reference-quirks */
    bool plan, json;             /* --plan: report, write nothing; --json: the counts as JSON on out */
    FILE *out;                   /* stdout lines */
    struct opdb_grid_totals *totals; /* non-NULL: filled by a run that returns 0 */
    bool simple;                 /* the simple path (candidate pool, signature strings, qsort,
                                    cell-by-cell writer): the same bytes, for tests (opdb: OPDB_GRID_SIMPLE=1) */
    FILE *err_out;               /* the memory filter's "[MEMORY]" lines (opdb: stderr); NULL: none */
} opdb_grid_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_grid_opts_init_sized(opdb_grid_opts *o, size_t size);
#define opdb_grid_opts_init(o) opdb_grid_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

/* What a run appended (with --plan: would append). */
typedef struct opdb_grid_totals {
    size_t rows;                 /* rows appended */
    size_t files, files_appended;/* CSV files found, and those that gained rows */
} opdb_grid_totals;

/* Returns 0, or -1 with err set (one line). */
OPDB_API int opdb_grid_run(const opdb_grid_opts *o, opdb_err *err);

/* ---- Rows from query misses (docs/GRID.md "Rows from query misses"): each
 * `opdb query` MISS result that carries a request (kernel-level shape and
 * elementwise queries, default mode) becomes a theory row of its kernel's
 * table, laid out as grid rows are, deduplicated against the table and the
 * other requests, so that `opdb bench` can measure it. */
typedef struct opdb_grid_misses opdb_grid_misses;
OPDB_API opdb_grid_misses *opdb_grid_misses_new(void);
OPDB_API void opdb_grid_misses_free(opdb_grid_misses *m);
/* One result line (JSON text; blank lines are ignored); src and lineno name
 * it in errors. 0, or -1 with err: not a JSON object, a malformed request. */
OPDB_API int opdb_grid_misses_add(opdb_grid_misses *m, const char *line, size_t n, const char *src,
                                  unsigned long long lineno, opdb_err *err);
/* Every line of a results file (JSONL). */
OPDB_API int opdb_grid_misses_read(opdb_grid_misses *m, const char *path, opdb_err *err);

typedef struct opdb_grid_miss_opts {
    size_t size; /* sizeof(opdb_grid_miss_opts), set by opdb_grid_miss_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *root; /* the database folder whose tables get the rows */
    bool plan, json;  /* --plan [--json]: what would be added, nothing written */
    FILE *out;        /* the summary or the plan */
} opdb_grid_miss_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_grid_miss_opts_init_sized(opdb_grid_miss_opts *o, size_t size);
#define opdb_grid_miss_opts_init(o) opdb_grid_miss_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */
/* Under the folder lock, all tables or none. 0, or -1 with err set. */
OPDB_API int opdb_grid_from_misses(const opdb_grid_miss_opts *o, const opdb_grid_misses *m, opdb_err *err);

#ifdef __cplusplus
}
#endif
/* The model presets --target-models accepts: the HF id of preset i, NULL
 * past the last; known: a preset's HF id or short name, in any case and
 * without - _ . / or spaces. */
OPDB_API const char *opdb_grid_model_name(size_t i);
OPDB_API bool opdb_grid_model_known(const char *name);

#endif
