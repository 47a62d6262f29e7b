/* `opdb grid`: theory shape grids appended to database CSVs (spec grid.md).
 * Python-compatible seeded sampling, a safe integer expression evaluator,
 * the YAML grid configuration, model presets and the per-file pipeline. */
#ifndef OPDB_GRID_H
#define OPDB_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "opdb/core.h"

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

/* ---- Expressions: a Python subset over named integers (grid.md §5.2). */
typedef struct opdb_grid_expr opdb_grid_expr;
/* The reason given for an expression the spec forbids ('.' or a dunder name);
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

/* ---- Configuration (grid.md §4). */
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
    const char *root;            /* resolved CSV root */
    const char *target_models;   /* comma list or NULL */
    const char *config_path;     /* NULL: built-in */
    long long rows;              /* <= 0: no cap */
    bool have_seed;
    long long seed;
    double max_hbm_gb;           /* <= 0: no budget */
    unsigned long long max_candidates; /* a template expanding to more is refused; 0: OPDB_GRID_MAX_CANDIDATES */
    bool quirks;                 /* --reference-quirks */
    bool plan, json;             /* --plan [--json]: report, write nothing */
    FILE *out;                   /* stdout lines */
} opdb_grid_opts;

/* Returns 0, or -1 with err set (one line). */
OPDB_API int opdb_grid_run(const opdb_grid_opts *o, opdb_err *err);

#ifdef __cplusplus
}
#endif
/* The model presets --target-models accepts: the HF id of preset i, NULL
 * past the last; known: a preset's HF id or short name, in any case and
 * without - _ . / or spaces. */
OPDB_API const char *opdb_grid_model_name(size_t i);
OPDB_API bool opdb_grid_model_known(const char *name);

#endif
