/* What the parts of `opdb grid`'s per-file pipeline share: a file's context,
 * its candidates and kept rows, the run's reused buffers, and each part's
 * entry point. file.c is the pipeline (a file's candidates through the
 * memory filter and dedup into the kept rows, sampling); file_cands.c the
 * candidates; file_dedup.c their signatures and the set of those seen;
 * file_coverage.c the per-model coverage; file_sort.c the order of new rows;
 * file_write.c the rewritten file. */
#ifndef OPDB_GRID_FILE_CTX_H
#define OPDB_GRID_FILE_CTX_H

#include "db/sig_cells.h"
#include "grid/dedup_sets.h"
#include "grid/grid_file.h"
#include "grid/grid_table.h"
#include "opdb/schema.h"
#include "opdb/signature.h"

typedef struct fctx fctx;

/* A candidate ready to sign: slots aligned and absent slots cleared (§7.1),
 * overrides resolved to table columns. */
typedef struct prow {
    grid_shape in[GRID_MAX_SLOTS], out[GRID_MAX_SLOTS];
    int nin, nout;
    int nov;
    int ovcol[GRID_MAX_OVER];  /* table column (-1: not in the table) */
    int ovattr[GRID_MAX_OVER]; /* index into grid_override_cols (-1: another column) */
    opdb_span ovval[GRID_MAX_OVER];
} prow;

/* A kept row: its rendered shape cells (the output cell right after the
 * input cell) and overrides live in the scratch buffers (offsets: they grow
 * while rows are added).  The fast path sorts on the rendered input cell;
 * only the simple path keeps a sort key of integers (40 bytes in all:
 * the first touch of a page costs more here than the work on its rows). */
typedef struct krow {
    size_t order;
    size_t in_off;
    union {
        size_t off;        /* into the scratch's keys while rows are added */
        const int64_t *p;  /* [nslots, (nd, dims...)...] of the inputs, set once rows are all in */
    } sk;                  /* the simple path's sort key */
    uint32_t nin_b, nout_b;
    uint32_t ov_off, nov;  /* into the scratch's kov */
} krow;

static inline size_t out_off(const krow *k) { return k->in_off + k->nin_b; }

/* A kept row for the fast path's sort: the first two dims of its first
 * input inline (pre: it has them), which decide most comparisons, then its
 * rendered input cell (pre: the rest of it, after those two dims). */
typedef struct sortent {
    int64_t a, b;
    const char *in;
    uint32_t nin;  /* the cell's length; pre: how far before in the cell starts (non-zero either way) */
    uint32_t pos2; /* its place among the rows to sort * 2 + pre (32 bytes in all) */
} sortent;

typedef struct kov {
    int col;
    uint32_t off, len; /* the value in the scratch's cells */
} kov;

/* Buffers one run reuses for every file (cleared, never shrunk). */
struct grid_scratch {
    grid_hset seen;
    grid_sigset seen_simple; /* the simple path's set of signature strings */
    grid_cands cs;
    size_t *order, ordercap;
    krow *rows;
    size_t nrows_k, rowcap;
    kov *kov;
    size_t nkov, kovcap;
    struct {
        char *p;
        size_t n, cap;
    } cells;             /* kept rows' shape cells and override values back to back */
    sortent *ents;       /* the sort's entries, its merge buffer, then the kept rows' pointers */
    size_t entcap;
    int64_t *keys;       /* the simple path: kept rows' sort keys back to back */
    size_t nkeys, keycap;
    prow pr;
};

/* Override column names seen so far: the pointer to its table column and
 * grid_override_cols index (the producers pass the same few literals). */
typedef struct ovname {
    const char *name;
    int col, attr;
} ovname;

struct fctx {
    grid_run *R;
    grid_scratch *S;
    const char *path;
    char kt[1024];
    grid_table t;
    const opdb_span *tmpl;
    int c_in, c_out;
    db_sig_cols sig;              /* the signature's columns, by name */
    int attr_col[4];              /* dtypes/formats columns */
    uint64_t tmpl_absent[4];      /* slots whose template dtype/format entry is absent */
    int kin, kout;                /* the template's slot counts */
    int isz[GRID_MAX_SLOTS * 2], osz[GRID_MAX_SLOTS * 2], nisz, nosz;
    opdb_strbuf inb, outb, key, key2;
    ovname ovn[48];
    int novn;
    size_t ncand, dropped; /* candidates taken (streaming), over the budget */
    size_t expect;         /* candidates announced (0: unknown), to size the buffers once */
};

/* Candidates (file_cands.c): the pattern's candidates into cs; candidate ci
 * of the pool into r; a candidate's overrides, slot alignment and absent
 * slots (§7.1); whether r is over the memory budget. */
int grid_fctx_generate(const fctx *F, const grid_pattern *p, const grid_model *const *models, size_t nmodels,
                       bool nk_models, grid_cands *cs, opdb_err *err);
void grid_fctx_prepare(fctx *F, const grid_cands *cs, size_t ci, prow *r);
void grid_fctx_finish_prow(fctx *F, prow *r, const grid_over *ov, int nov);
bool grid_fctx_over_budget(const fctx *F, const prow *r);

/* Dedup (file_dedup.c): F->key = the signature r would have (its shape cells
 * rendered into F->inb / F->outb); *key = an existing row's signature;
 * whether a key (hashed h) is in the set of signatures seen (the file's rows
 * and the candidates kept so far); F->key added as ref's (a row, or nrows +
 * a kept row) unless there, false when it was. */
void grid_fctx_sign(fctx *F, const prow *r);
void grid_fctx_sign_row(const fctx *F, const opdb_span *row, opdb_strbuf *key);
bool grid_fctx_seen_has_h(fctx *F, const opdb_strbuf *key, uint64_t h);
bool grid_fctx_seen_has(fctx *F, const opdb_strbuf *key);
bool grid_fctx_seen_add(fctx *F, uint32_t ref);

/* Coverage of each target model for this file, before any row is added
 * (file_coverage.c). */
int grid_file_coverage(fctx *F, const grid_pattern *p, opdb_err *err);
/* The stable order of the new rows (file_sort.c). */
void grid_sort_rows(grid_scratch *S, bool simple, krow **rows, size_t n);
/* Header + original rows + new rows, via a temp file and rename (file_write.c). */
int grid_write_file(fctx *F, krow **rows, size_t nnew, opdb_err *err);

#endif
