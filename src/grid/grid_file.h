/* One run of `opdb grid` and its per-file pipeline (docs/GRID.md §2): shared by
 * run.c (discovery, summary, plan) and file.c (candidates to rows). */
#ifndef OPDB_GRID_FILE_H
#define OPDB_GRID_FILE_H

#include "grid/grid_opmap.h"

typedef struct grid_file_result {
    const char *skip_reason; /* NULL: processed */
    size_t candidates, after_memory, after_dedup, appended;
} grid_file_result;

/* Coverage of one target model for one operator CSV (opdb only): the
 * model's distinct shapes within the memory budget, split into measured (a
 * row with a valid duration exists), pending (a row exists, none with a
 * duration: e.g. theory rows not yet replayed) and new. */
typedef struct grid_cov {
    const grid_model *model;
    char *op, *file;
    size_t shapes, measured, pending, fresh;
} grid_cov;

typedef struct grid_scratch grid_scratch;

typedef struct grid_run {
    const opdb_grid_opts *o;
    opdb_grid_config *cfg;
    grid_opmap opmap;
    const grid_model *models[16];
    size_t nmodels; /* target models (0: none given) */
    const grid_model *all[16];
    size_t nall;    /* target models or every preset */
    opdb_pyrandom rng;
    uint64_t budget;
    bool coverage;  /* fill cov for model-driven patterns */
    grid_cov *cov;
    size_t ncov, covcap;
    grid_scratch *scratch; /* file.c's buffers, reused from file to file */
    bool simple;           /* the simple path (OPDB_GRID_SIMPLE=1): pool, string
                            * dedup set, full sort, cell-by-cell writer; tests compare the two */
} grid_run;

/* The per-file pipeline; res gets the plan counts (and nothing is written
 * with o->plan). */
int grid_file_process(grid_run *R, const char *path, grid_file_result *res, opdb_err *err);
void grid_scratch_free(grid_run *R);
/* opdb's default: the columns a file's rows need exist (before any rewrite). */
int grid_file_precheck(grid_run *R, const char *path, opdb_err *err);
/* Kernel type of a CSV path: its file name without `.csv`. */
void grid_stem_of(const char *path, char *out, size_t cap);

#endif
