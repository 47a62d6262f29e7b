/* The dedup of a file's rows and candidates for `opdb grid` (docs/GRID.md
 * §7): their signatures, signed from the shape cells and overrides alone
 * (a candidate is never built as a full row), and the set of those seen. */
#include <string.h>
#include "grid/file_ctx.h"
#include "grid/grid_rows.h"

/* *key = the signature of a theory row: the template's cells with the
 * given shape cells and overrides. */
static void sign_cells(const fctx *F, opdb_span in, opdb_span out, const int *ovcol, const opdb_span *ovval, int nov,
                       opdb_strbuf *key) {
    opdb_sig_cells c = db_sig_cells_from_row(&F->sig, F->tmpl, F->t.ncols);
    for (int k = 0; k < nov; k++) db_sig_cells_put(&F->sig, &c, ovcol[k], ovval[k]);
    c.in_shapes = in; /* the shapes are the candidate's own, whatever the overrides say */
    if (F->c_out >= 0) c.out_shapes = out;
    opdb_signature(&c, F->kt, key);
}

static opdb_span sb_span(const opdb_strbuf *b) { return opdb_span_make(b->p ? b->p : "", b->n); }

/* F->key = the signature the built row would have (its shape cells in
 * F->inb / F->outb). */
void grid_fctx_sign(fctx *F, const prow *r) {
    opdb_sb_clear(&F->inb);
    grid_shape_cell(&F->inb, r->in, r->nin);
    opdb_sb_clear(&F->outb);
    if (F->c_out >= 0) grid_shape_cell(&F->outb, r->out, r->nout);
    sign_cells(F, sb_span(&F->inb), sb_span(&F->outb), r->ovcol, r->ovval, r->nov, &F->key);
}

/* *key = the signature of an existing row. */
void grid_fctx_sign_row(const fctx *F, const opdb_span *row, opdb_strbuf *key) {
    opdb_sig_cells sc = db_sig_cells_from_row(&F->sig, row, F->t.ncols);
    opdb_signature(&sc, F->kt, key);
}

/* *key = the signature of kept row k (recomputed from what it keeps). */
static void sign_kept(const fctx *F, const krow *k, opdb_strbuf *key) {
    const grid_scratch *S = F->S;
    int col[GRID_MAX_OVER];
    opdb_span val[GRID_MAX_OVER];
    for (uint32_t j = 0; j < k->nov; j++) {
        const kov *v = &S->kov[k->ov_off + j];
        col[j] = v->col;
        val[j] = opdb_span_make(S->cells.p + v->off, v->len);
    }
    sign_cells(F, opdb_span_make(S->cells.p + k->in_off, k->nin_b), opdb_span_make(S->cells.p + out_off(k), k->nout_b),
               col, val, (int)k->nov, key);
}

bool grid_fctx_seen_has_h(fctx *F, const opdb_strbuf *key, uint64_t h) {
    const grid_hset *s = &F->S->seen;
    if (!s->n) return false;
    uint32_t tag = (uint32_t)(h >> 32);
    for (size_t j = grid_hset_pos(s, tag); s->s[j].ref1; j = (j + 1) & (s->nslots - 1)) {
        if (s->s[j].tag != tag) continue;
        uint32_t ref = s->s[j].ref1 - 1;
        if (ref < F->t.nrows) grid_fctx_sign_row(F, F->t.rows[ref], &F->key2);
        else sign_kept(F, &F->S->rows[ref - F->t.nrows], &F->key2);
        if (F->key2.n == key->n && !memcmp(F->key2.p, key->p, key->n)) return true;
    }
    return false;
}

/* Whether key (F->key or another buffer than F->key2) is in the set of
 * signatures seen: the file's rows and the candidates kept so far. */
bool grid_fctx_seen_has(fctx *F, const opdb_strbuf *key) {
    if (F->R->simple) return grid_sigset_has(&F->S->seen_simple, key);
    return grid_fctx_seen_has_h(F, key, opdb_hash_bytes(key->p, key->n, 0));
}

/* Adds F->key, the signature of ref (a row, or nrows + a kept row), unless
 * there; false when it was there. */
bool grid_fctx_seen_add(fctx *F, uint32_t ref) {
    if (F->R->simple) return grid_sigset_add(&F->S->seen_simple, &F->key);
    uint64_t h = opdb_hash_bytes(F->key.p, F->key.n, 0);
    if (grid_fctx_seen_has_h(F, &F->key, h)) return false;
    grid_hset_add(&F->S->seen, h, ref);
    return true;
}
