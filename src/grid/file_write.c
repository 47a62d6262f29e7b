/* The file `opdb grid` rewrites (docs/GRID.md §9): header, original rows,
 * then the new rows, via a temp file and rename. A new row is the file's
 * constant row (the template with measurements zeroed, CSV-encoded once)
 * with its shape cells and overrides spliced in; the simple path writes it
 * cell by cell. */
#include <stdlib.h>
#include <string.h>
#include "grid/file_ctx.h"
#include "grid/grid_rows.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/schema.h"

/* What a new row holds in a column that is neither a shape nor an override. */
enum { GRID_CELL_COPY, GRID_CELL_ZERO, GRID_CELL_EMPTY };

/* A shape cell value `"d,d;d"` as CSV: quoted, its quotes doubled. It
 * holds only digits, '-', ',', ';' and the two quotes, so that is all. */
static void put_shape_cell(opdb_strbuf *out, const char *v, size_t n) {
    if (!n) return;
    opdb_sb_adds(out, "\"\"\"");
    opdb_sb_add(out, v + 1, n - 2);
    opdb_sb_adds(out, "\"\"\"");
}

/* A new row's cells that differ from the file's constant row. */
typedef struct varcell {
    int col;
    bool shape;
    const char *p;
    size_t n;
} varcell;

/* Sets column col's cell in the list sorted by column (replacing one). */
static int varcell_set(varcell *v, int n, varcell c) {
    int i = n;
    while (i > 0 && v[i - 1].col > c.col) i--;
    if (i > 0 && v[i - 1].col == c.col) {
        v[i - 1] = c;
        return n;
    }
    memmove(v + i + 1, v + i, (size_t)(n - i) * sizeof *v);
    v[i] = c;
    return n + 1;
}

/* The cells of kept row k that are not constant: overrides win over the
 * shape cells, the last override of a column over earlier ones. */
static int row_varcells(const fctx *F, const krow *k, varcell *v) {
    const grid_scratch *S = F->S;
    int n = 0;
    if (F->c_in >= 0) n = varcell_set(v, n, (varcell){F->c_in, true, S->cells.p + k->in_off, k->nin_b});
    if (F->c_out >= 0) n = varcell_set(v, n, (varcell){F->c_out, true, S->cells.p + out_off(k), k->nout_b});
    for (uint32_t j = 0; j < k->nov; j++) {
        const kov *o = &S->kov[k->ov_off + j];
        n = varcell_set(v, n, (varcell){o->col, false, S->cells.p + o->off, o->len});
    }
    return n;
}

/* Bytes written at a time: each page of the buffer is a page fault the
 * first time (about 20 us on the project's VMs), a write call costs less. */
#define GRID_WRITE_CHUNK (1u << 18)

/* Header + original rows + new rows, via a temp file and rename.  A new
 * row is the file's constant row (the template with measurements zeroed,
 * CSV-encoded once) with its variable cells spliced in. */
static int write_fast(fctx *F, krow **rows, size_t nnew, const char *zero, opdb_err *err) {
    grid_table *t = &F->t;
    opdb_atomic_file af;
    if (opdb_atomic_open(&af, F->path, err)) return -1;
    opdb_sb_reserve(&af.buf, GRID_WRITE_CHUNK + (1u << 16));
    opdb_span *hdr = opdb_xmalloc(t->ncols * sizeof *hdr);
    for (size_t i = 0; i < t->ncols; i++) hdr[i] = opdb_span_cstr(t->header[i]);
    opdb_csv_write_record(&af.buf, hdr, t->ncols);
    free(hdr);
    int rc = 0;
    for (size_t r = 0; r < t->nrows && !rc; r++) {
        opdb_csv_write_record(&af.buf, t->rows[r], t->ncols);
        if (af.buf.n > GRID_WRITE_CHUNK) rc = opdb_atomic_flush(&af);
    }
    /* the constant row: column i is line[beg[i] .. beg[i] + len[i]], cells joined by ',' */
    opdb_strbuf line;
    opdb_sb_init(&line);
    size_t *beg = opdb_xmalloc(t->ncols * 2 * sizeof *beg), *len = beg + t->ncols;
    for (size_t i = 0; i < t->ncols; i++) {
        if (i) opdb_sb_addc(&line, ',');
        beg[i] = line.n;
        if (zero[i] == GRID_CELL_ZERO) opdb_sb_addc(&line, '0');
        else if (zero[i] == GRID_CELL_COPY) opdb_csv_write_cell(&line, F->tmpl[i].p, F->tmpl[i].n);
        len[i] = line.n - beg[i];
    }
    const char *lp = line.p ? line.p : "";
    varcell v[2 + GRID_MAX_OVER];
    for (size_t r = 0; r < nnew && !rc; r++) {
        int nv = row_varcells(F, rows[r], v);
        size_t need = line.n + 2;
        for (int j = 0; j < nv; j++) need += 2 * v[j].n + 6; /* the most a cell can take */
        opdb_sb_reserve(&af.buf, need);
        size_t at = 0;
        for (int j = 0; j < nv; j++) {
            size_t b = beg[v[j].col];
            memcpy(af.buf.p + af.buf.n, lp + at, b - at);
            af.buf.n += b - at;
            if (v[j].shape && v[j].n) { /* put_shape_cell, into the room reserved */
                char *o = af.buf.p + af.buf.n;
                memcpy(o, "\"\"\"", 3);
                memcpy(o + 3, v[j].p + 1, v[j].n - 2);
                memcpy(o + 1 + v[j].n, "\"\"\"", 3);
                af.buf.n += v[j].n + 4;
            } else if (!v[j].shape) {
                opdb_csv_write_cell(&af.buf, v[j].p, v[j].n);
            }
            at = b + len[v[j].col];
        }
        memcpy(af.buf.p + af.buf.n, lp + at, line.n - at);
        memcpy(af.buf.p + af.buf.n + line.n - at, "\r\n", 2);
        af.buf.n += line.n - at + 2;
        af.buf.p[af.buf.n] = '\0';
        if (af.buf.n > GRID_WRITE_CHUNK) rc = opdb_atomic_flush(&af);
    }
    free(beg);
    opdb_sb_free(&line);
    if (rc) {
        opdb_atomic_abort(&af);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: write failed", F->path);
    }
    return opdb_atomic_commit(&af, err);
}

/* The simple path's writer: every new row cell by cell. */
static int write_simple(fctx *F, krow **rows, size_t nnew, const char *zero, opdb_err *err) {
    grid_table *t = &F->t;
    opdb_atomic_file af;
    if (opdb_atomic_open(&af, F->path, err)) return -1;
    opdb_span *hdr = opdb_xmalloc(t->ncols * sizeof *hdr);
    for (size_t i = 0; i < t->ncols; i++) hdr[i] = opdb_span_cstr(t->header[i]);
    opdb_csv_write_record(&af.buf, hdr, t->ncols);
    free(hdr);
    for (size_t r = 0; r < t->nrows; r++) opdb_csv_write_record(&af.buf, t->rows[r], t->ncols);
    const grid_scratch *S = F->S;
    for (size_t r = 0; r < nnew; r++) {
        const krow *k = rows[r];
        for (size_t i = 0; i < t->ncols; i++) {
            if (i) opdb_sb_addc(&af.buf, ',');
            const kov *ov = NULL;
            for (uint32_t j = 0; j < k->nov; j++)
                if (S->kov[k->ov_off + j].col == (int)i) ov = &S->kov[k->ov_off + j];
            if (ov) opdb_csv_write_cell(&af.buf, S->cells.p + ov->off, ov->len);
            else if ((int)i == F->c_in) put_shape_cell(&af.buf, S->cells.p + k->in_off, k->nin_b);
            else if ((int)i == F->c_out) put_shape_cell(&af.buf, S->cells.p + out_off(k), k->nout_b);
            else if (zero[i] == GRID_CELL_ZERO) opdb_sb_addc(&af.buf, '0');
            else if (zero[i] == GRID_CELL_COPY) opdb_csv_write_cell(&af.buf, F->tmpl[i].p, F->tmpl[i].n);
        }
        opdb_sb_add(&af.buf, "\r\n", 2);
    }
    return opdb_atomic_commit(&af, err);
}

int grid_write_file(fctx *F, krow **rows, size_t nnew, opdb_err *err) {
    const grid_table *t = &F->t;
    bool quirks = F->R->o->quirks;
    char *zero = opdb_xmalloc(t->ncols + 1);
    static const char *const copy_cols[] = {OPDB_COL_OP_STATE,      OPDB_COL_ACCEL_CORE,     OPDB_COL_INPUT_DTYPES,
                                            OPDB_COL_OUTPUT_DTYPES, OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_FORMATS,
                                            OPDB_COL_OUTPUT_SHAPES};
    /* opdb: a theory row was never profiled, so it carries no sample count or sums
     * (a copied count would make a later parse --merge divide real sums by it) */
    static const char *const stat_cols[] = {OPDB_COL_PROF_COUNT, OPDB_COL_PROF_MIN_DUR, OPDB_COL_PROF_MAX_DUR,
                                            OPDB_COL_PROF_SUM_DUR, OPDB_COL_PROF_SUMSQ_DUR};
    for (size_t i = 0; i < t->ncols; i++) {
        bool copy = false, stat = false;
        for (size_t k = 0; k < 7; k++) copy |= !strcmp(t->header[i], copy_cols[k]);
        for (size_t k = 0; k < 5 && !quirks; k++) stat |= !strcmp(t->header[i], stat_cols[k]);
        zero[i] = stat ? GRID_CELL_EMPTY : !copy && (int)i != F->c_in && grid_zero_column(t->header[i]) ? GRID_CELL_ZERO
                                                                                                         : GRID_CELL_COPY;
    }
    int rc = F->R->simple ? write_simple(F, rows, nnew, zero, err) : write_fast(F, rows, nnew, zero, err);
    free(zero);
    return rc;
}
