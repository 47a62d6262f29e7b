/* Internal types of the grid generator shared by the files of src/grid. */
#ifndef OPDB_GRID_INTERNAL_H
#define OPDB_GRID_INTERNAL_H

#include "opdb/core.h"
#include "opdb/grid.h"

#define GRID_MAX_DIMS 8
#define GRID_MAX_SLOTS 40
#define GRID_MAX_VARS 24
#define GRID_MAX_OVER 32 /* overrides per candidate (fused_attention gives 17) */

/* One dimension of a shape template: a literal or an expression. */
typedef struct grid_dim {
    int64_t lit;
    opdb_grid_expr *expr; /* NULL: literal */
} grid_dim;

typedef struct grid_tmpl {
    char *text;
    int line;
    int ndims;
    grid_dim dims[GRID_MAX_DIMS];
} grid_tmpl;

typedef struct grid_iter {
    char *var;
    int64_t *vals;
    size_t n;
} grid_iter;

typedef struct grid_expr_src {
    char *text;
    int line;
    opdb_grid_expr *e;
} grid_expr_src;

typedef struct grid_pattern {
    char *name;
    char *generator;          /* generator_function, or NULL for a template */
    grid_iter *iters, *fallback;
    size_t niters, nfallback;
    char **const_names;
    int64_t *const_vals;
    size_t nconsts;
    grid_expr_src *constraints;
    size_t nconstraints;
    grid_tmpl *inputs, *outputs;
    size_t ninputs, noutputs;
    bool model_nk_pairs;
    char *over[4];            /* input/output dtypes/formats overrides, joined by ';' (or NULL) */
} grid_pattern;

typedef struct grid_assign {
    char *kernel_type;
    char *pattern;
} grid_assign;

struct opdb_grid_config {
    char *name;               /* for error lines */
    char **grid_names;
    int64_t **grid_vals;
    size_t *grid_lens;
    size_t ngrids;
    grid_pattern *patterns;
    size_t npatterns;
    grid_assign *assigns;
    size_t nassigns;
};

extern const char *const grid_override_cols[4]; /* Input Data Types, Input Formats, Output Data Types, Output Formats */

const grid_pattern *grid_config_pattern(const opdb_grid_config *c, const char *name);
const char *grid_config_assignment(const opdb_grid_config *c, const char *kernel_type);
const int64_t *grid_config_grid(const opdb_grid_config *c, const char *name, size_t *n);

/* ---- model presets (docs/GRID.md §6.1) */
typedef struct grid_model {
    const char *key, *hf;
    int64_t hidden, inter, heads, kv_heads, head_dim, q_lora, kv_lora, qk_nope, qk_rope, experts, per_card,
        expert_inter, topk;
    int64_t tp[6], ep[6];
    int ntp, nep;
} grid_model;

extern const grid_model grid_presets[];
extern const size_t grid_npresets;
/* Preset for a user-given name (HF id or legacy short name), or NULL. */
const grid_model *grid_model_find(const char *name);
bool grid_model_is_mla(const grid_model *m);
/* Sorted unique (N,K) pairs of the models' matmuls; malloc'd, 2 per pair. */
int64_t *grid_nk_pairs(const grid_model *const *models, size_t n, size_t *npairs);

/* ---- candidates: shapes in one int64 pool, overrides as strings */
typedef struct grid_over {
    const char *col;
    char *val;
} grid_over;

typedef struct grid_cand {
    size_t off;       /* into pool: per slot [ndims, dims...], inputs then outputs */
    uint16_t nin, nout;
    uint32_t over_off; /* into the override list */
    uint16_t nover;
} grid_cand;

typedef struct grid_shape {
    int nd;
    int64_t d[GRID_MAX_DIMS];
} grid_shape;

/* Where candidates go instead of the pool when set (file.c's streaming
 * path): called once per candidate, in generation order. */
typedef void (*grid_cand_sink)(void *ctx, const grid_shape *in, int nin, const grid_shape *out, int nout,
                               const grid_over *over, int nover);

typedef struct grid_cands {
    grid_cand_sink sink; /* non-NULL: nothing is stored, n still counts */
    void *sink_ctx;
    size_t expect;       /* with a sink: candidates announced by grid_cands_reserve */
    unsigned long long limit; /* a template expanding to more is refused before expansion (0: none) */
    bool negative_ok;    /* --reference-quirks: a negative dimension is kept (else refused) */
    grid_cand *c;
    size_t n, cap;
    int64_t *pool;
    size_t npool, poolcap;
    grid_over *over;
    size_t nover, overcap;
} grid_cands;

void grid_cands_free(grid_cands *cs);
/* Room for ncands more candidates holding npool more pool values. */
void grid_cands_reserve(grid_cands *cs, size_t ncands, size_t npool);
/* Empties cs, keeping its memory. */
void grid_cands_clear(grid_cands *cs);
/* Appends one candidate: slots given as (ndims, dims) arrays. */
void grid_cands_add(grid_cands *cs, const grid_shape *in, int nin, const grid_shape *out, int nout,
                    const grid_over *over, int nover);
/* The shapes of candidate i back into arrays (room for GRID_MAX_SLOTS each). */
void grid_cands_get(const grid_cands *cs, size_t i, grid_shape *in, int *nin, grid_shape *out, int *nout);

/* Template expansion (§5); models NULL = no target models.  check_nk_constraints:
 * evaluate constraints in model N/K mode too (opdb's default). */
int grid_expand_template(const opdb_grid_config *cfg, const grid_pattern *p, const grid_model *const *models,
                         size_t nmodels, bool check_nk_constraints, grid_cands *out, opdb_err *err);
/* Generator functions (§6.2-6.5); false when the name is unknown. */
bool grid_generate(const char *generator, const opdb_grid_config *cfg, const grid_model *const *models,
                   size_t nmodels, grid_cands *out);

extern const char *const grid_fia_columns[15];

#endif
