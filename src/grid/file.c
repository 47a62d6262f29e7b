/* The per-file pipeline of `opdb grid` (grid.md §2, §7, §9): candidates,
 * sampling, slot alignment, absent-slot clearing, memory filter, dedup,
 * order, atomic rewrite; and the per-model coverage of a file.
 *
 * Speed: a theory row differs from its template only in its shape cells
 * and overrides, so a candidate is signed from those cells alone (never
 * built as a full row), a kept row holds just its two rendered shape cells
 * and sort key, and the constant cells are CSV-encoded once per file. */
#include <stdlib.h>
#include <string.h>
#include "grid/grid_file.h"
#include "grid/grid_rows.h"
#include "grid/grid_table.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/signature.h"

void grid_stem_of(const char *path, char *out, size_t cap) {
    const char *b = opdb_path_basename(path);
    size_t n = strlen(b);
    if (n >= 4 && !strcmp(b + n - 4, ".csv")) n -= 4;
    snprintf(out, cap, "%.*s", (int)n, b);
}

/* The override columns a pattern's rows carry (for the up-front check). */
static size_t override_cols(const grid_pattern *p, const char **cols) {
    size_t n = 0;
    if (!p->generator) {
        for (int i = 0; i < 4; i++)
            if (p->over[i]) cols[n++] = grid_override_cols[i];
    } else if (!strcmp(p->generator, "dispatch_ffn_combine")) {
        cols[n++] = OPDB_COL_EP_SIZE;
    } else if (!strcmp(p->generator, "split_qkv_rmsnorm_rope")) {
        for (int i = 0; i < 4; i++) cols[n++] = grid_override_cols[i];
    } else if (!strcmp(p->generator, "fused_attention")) {
        cols[n++] = grid_override_cols[0];
        cols[n++] = grid_override_cols[1];
    }
    return n;
}

/* ---- a set of signature strings; cleared, not freed, between files so
 * that its memory is touched once per run (page faults cost as much as the
 * work here) */
typedef struct sigset {
    opdb_hindex ix;
    opdb_strbuf bytes; /* the keys back to back */
    size_t *off;
    uint32_t *len;
    size_t n, cap;
} sigset;

static void sigset_init(sigset *s) {
    memset(s, 0, sizeof *s);
    opdb_sb_init(&s->bytes);
}

static void sigset_clear(sigset *s) {
    if (s->ix.nslots) memset(s->ix.slot, 0, s->ix.nslots * sizeof *s->ix.slot);
    s->ix.n = 0;
    opdb_sb_clear(&s->bytes);
    s->n = 0;
}

static void sigset_free(sigset *s) {
    opdb_hindex_free(&s->ix);
    opdb_sb_free(&s->bytes);
    free(s->off);
    free(s->len);
}

static bool sigset_has_h(const sigset *s, const opdb_strbuf *k, uint64_t h) {
    uint32_t idx;
    for (opdb_hprobe p = opdb_hindex_probe(&s->ix, h); opdb_hprobe_next(&p, &idx);)
        if (s->len[idx] == k->n && !memcmp(s->bytes.p + s->off[idx], k->p, k->n)) return true;
    return false;
}

static bool sigset_has(const sigset *s, const opdb_strbuf *k) {
    return s->n && sigset_has_h(s, k, opdb_hash_bytes(k->p, k->n, 0));
}

/* Adds k; false when it was there already. */
static bool sigset_add(sigset *s, const opdb_strbuf *k) {
    uint64_t h = opdb_hash_bytes(k->p, k->n, 0);
    if (sigset_has_h(s, k, h)) return false;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->off = opdb_xrealloc(s->off, s->cap * sizeof *s->off);
        s->len = opdb_xrealloc(s->len, s->cap * sizeof *s->len);
    }
    s->off[s->n] = s->bytes.n;
    s->len[s->n] = (uint32_t)k->n;
    opdb_sb_add(&s->bytes, k->p, k->n);
    opdb_hindex_add(&s->ix, h, (uint32_t)s->n);
    s->n++;
    return true;
}

/* ---- one file */
typedef struct fctx {
    grid_run *R;
    const char *path;
    char kt[1024];
    grid_table t;
    const opdb_span *tmpl;
    int c_in, c_out;
    int sc[OPDB_NSIG_CELLS];     /* the signature's columns (-1: absent) */
    int attr_col[4];              /* dtypes/formats columns */
    uint64_t tmpl_absent[4];      /* slots whose template dtype/format entry is absent */
    int kin, kout;                /* the template's slot counts */
    int isz[GRID_MAX_SLOTS * 2], osz[GRID_MAX_SLOTS * 2], nisz, nosz;
    opdb_strbuf inb, outb, key;
} fctx;

/* A candidate ready to sign: slots aligned and absent slots cleared (§7.1). */
typedef struct prow {
    grid_shape in[GRID_MAX_SLOTS], out[GRID_MAX_SLOTS];
    int nin, nout;
    const grid_over *ov;
    int nov;
} prow;

static void prepare(const fctx *F, const grid_cands *cs, size_t ci, prow *r) {
    grid_cands_get(cs, ci, r->in, &r->nin, r->out, &r->nout);
    for (; r->nin < F->kin && r->nin < GRID_MAX_SLOTS; r->nin++) r->in[r->nin].nd = 0;
    for (; r->nout < F->kout && r->nout < GRID_MAX_SLOTS; r->nout++) r->out[r->nout].nd = 0;
    r->ov = cs->over + cs->c[ci].over_off;
    r->nov = cs->c[ci].nover;
    for (int a = 0; a < 4; a++) {
        grid_shape *s = a < 2 ? r->in : r->out;
        int n = a < 2 ? r->nin : r->nout;
        const char *ov = NULL;
        for (int k = 0; k < r->nov; k++) /* the last override of a column wins */
            if (!strcmp(r->ov[k].col, grid_override_cols[a])) ov = r->ov[k].val;
        if (ov) {
            grid_clear_absent(s, n, opdb_span_cstr(ov));
        } else if (F->attr_col[a] >= 0) {
            for (int i = 0; i < n && i < 64; i++)
                if (F->tmpl_absent[a] >> i & 1) s[i].nd = 0;
        }
    }
}

static bool over_budget(const fctx *F, const prow *r) {
    uint64_t b = F->R->budget;
    return b && grid_row_bytes(r->in, r->nin, r->out, r->nout, F->isz, F->nisz, F->osz, F->nosz) > b;
}

/* F->key = the signature the built row would have (its shape cells in
 * F->inb / F->outb). */
static void sign(fctx *F, const prow *r) {
    opdb_sb_clear(&F->inb);
    grid_shape_cell(&F->inb, r->in, r->nin);
    opdb_sb_clear(&F->outb);
    if (F->c_out >= 0) grid_shape_cell(&F->outb, r->out, r->nout);
    opdb_span cell[OPDB_NSIG_CELLS];
    for (int i = 0; i < OPDB_NSIG_CELLS; i++) cell[i] = F->sc[i] >= 0 ? F->tmpl[F->sc[i]] : opdb_span_make("", 0);
    cell[0] = opdb_span_make(F->inb.p ? F->inb.p : "", F->inb.n);
    if (F->c_out >= 0) cell[3] = opdb_span_make(F->outb.p ? F->outb.p : "", F->outb.n);
    for (int k = 0; k < r->nov; k++)
        for (int i = 1; i < OPDB_NSIG_CELLS; i++)
            if (i != 3 && F->sc[i] >= 0 && !strcmp(r->ov[k].col, opdb_sig_cell_cols[i])) cell[i] = opdb_span_cstr(r->ov[k].val);
    opdb_sig_cells c = {cell[0], cell[1], cell[2], cell[3], cell[4], cell[5]};
    opdb_signature(&c, F->kt, &F->key);
}

/* Slot dtype sizes and absent-attribute masks from the template (§7.1, §9). */
static void file_roles(fctx *F) {
    grid_table *t = &F->t;
    F->tmpl = t->rows[0];
    F->c_in = grid_table_col(t, OPDB_COL_INPUT_SHAPES);
    F->c_out = grid_table_col(t, OPDB_COL_OUTPUT_SHAPES);
    for (int i = 0; i < OPDB_NSIG_CELLS; i++) F->sc[i] = grid_table_col(t, opdb_sig_cell_cols[i]);
    for (int a = 0; a < 4; a++) {
        F->attr_col[a] = grid_table_col(t, grid_override_cols[a]);
        grid_shape probe[64];
        for (int i = 0; i < 64; i++) probe[i].nd = 1;
        if (F->attr_col[a] >= 0) grid_clear_absent(probe, 64, F->tmpl[F->attr_col[a]]);
        F->tmpl_absent[a] = 0;
        for (int i = 0; i < 64; i++)
            if (probe[i].nd == 0) F->tmpl_absent[a] |= 1ull << i;
    }
    F->kin = grid_slot_count(F->tmpl[F->c_in]);
    F->kout = F->c_out >= 0 ? grid_slot_count(F->tmpl[F->c_out]) : 0;
    F->nisz = F->sc[1] >= 0 ? grid_dtype_sizes(F->tmpl[F->sc[1]], F->isz, GRID_MAX_SLOTS * 2) : 0;
    F->nosz = F->sc[4] >= 0 ? grid_dtype_sizes(F->tmpl[F->sc[4]], F->osz, GRID_MAX_SLOTS * 2) : 0;
}

static int generate(const fctx *F, const grid_pattern *p, const grid_model *const *models, size_t nmodels,
                    bool nk_models, grid_cands *cs, opdb_err *err) {
    const opdb_grid_opts *o = F->R->o;
    if (p->generator) {
        grid_generate(p->generator, F->R->cfg, models, nmodels, cs);
        return 0;
    }
    return grid_expand_template(F->R->cfg, p, nk_models ? models : NULL, nk_models ? nmodels : 0, !o->quirks, cs, err);
}

/* A row with a valid `Average Duration(us)` or `Profiling Average
 * Duration(us)` (spec README "complete"). */
static bool measured_row(const opdb_span *row, const int dur[2]) {
    for (int i = 0; i < 2; i++)
        if (dur[i] >= 0 && opdb_py_float_or_zero(row[dur[i]].p, row[dur[i]].n) > 0) return true;
    return false;
}

/* F->key = the signature of an existing row. */
static void sign_row(fctx *F, const opdb_span *row) {
    opdb_span e = opdb_span_make("", 0), c[OPDB_NSIG_CELLS];
    for (int i = 0; i < OPDB_NSIG_CELLS; i++) c[i] = F->sc[i] >= 0 ? row[F->sc[i]] : e;
    opdb_sig_cells sc = {c[0], c[1], c[2], c[3], c[4], c[5]};
    opdb_signature(&sc, F->kt, &F->key);
}

/* Coverage of each target model for this file (before any row is added). */
static int file_coverage(fctx *F, const grid_pattern *p, const sigset *seen, opdb_err *err) {
    grid_run *R = F->R;
    int dur[2] = {grid_table_col(&F->t, OPDB_COL_MB_DUR), grid_table_col(&F->t, OPDB_COL_PROF_AVG_DUR)};
    sigset done;
    sigset_init(&done);
    for (size_t r = 0; r < F->t.nrows; r++) {
        if (!measured_row(F->t.rows[r], dur)) continue;
        sign_row(F, F->t.rows[r]);
        sigset_add(&done, &F->key);
    }
    int rc = 0;
    prow *r = opdb_xmalloc(sizeof *r);
    for (size_t m = 0; m < R->nmodels && !rc; m++) {
        bool again = false; /* one line per model, however often it was named */
        for (size_t k = 0; k < m; k++) again |= R->models[k] == R->models[m];
        if (again) continue;
        grid_cands cs = {0};
        const grid_model *one[1] = {R->models[m]};
        if (!(rc = generate(F, p, one, 1, true, &cs, err))) {
            if (R->ncov == R->covcap) R->cov = opdb_xrealloc(R->cov, (R->covcap = R->covcap ? R->covcap * 2 : 16) * sizeof *R->cov);
            grid_cov *cv = &R->cov[R->ncov++];
            memset(cv, 0, sizeof *cv);
            cv->model = R->models[m];
            cv->op = opdb_xstrdup(F->kt);
            cv->file = opdb_xstrdup(F->path);
            sigset shapes;
            sigset_init(&shapes);
            for (size_t ci = 0; ci < cs.n; ci++) {
                prepare(F, &cs, ci, r);
                if (over_budget(F, r)) continue;
                sign(F, r);
                if (!sigset_add(&shapes, &F->key)) continue;
                cv->shapes++;
                if (sigset_has(&done, &F->key)) cv->measured++;
                else if (sigset_has(seen, &F->key)) cv->pending++;
                else cv->fresh++;
            }
            sigset_free(&shapes);
        }
        grid_cands_free(&cs);
    }
    free(r);
    sigset_free(&done);
    return rc;
}

/* ---- kept rows: their rendered shape cells and sort key */
typedef struct krow {
    size_t cand, order;
    size_t sk_off, in_off, out_off; /* into the scratch's keys / cells while rows are added */
    const int64_t *sk;    /* [nslots, (nd, dims...)...] of the inputs */
    const char *in, *out; /* shape cell values (without CSV quoting) */
    uint32_t nin_b, nout_b;
} krow;

/* Buffers one run reuses for every file (cleared, never shrunk). */
struct grid_scratch {
    sigset seen;
    grid_cands cs;
    size_t *order, ordercap;
    krow *rows;
    krow **sorted;
    size_t rowcap;
    opdb_strbuf cells;   /* kept rows' shape cells back to back */
    int64_t *keys;       /* kept rows' sort keys back to back */
    size_t nkeys, keycap;
    prow pr;
};

void grid_scratch_free(grid_run *R) {
    grid_scratch *S = R->scratch;
    if (!S) return;
    sigset_free(&S->seen);
    grid_cands_free(&S->cs);
    free(S->order);
    free(S->rows);
    free(S->sorted);
    opdb_sb_free(&S->cells);
    free(S->keys);
    free(S);
    R->scratch = NULL;
}

static grid_scratch *scratch_of(grid_run *R) {
    if (!R->scratch) {
        R->scratch = opdb_xcalloc(1, sizeof *R->scratch);
        sigset_init(&R->scratch->seen);
        opdb_sb_init(&R->scratch->cells);
    }
    grid_scratch *S = R->scratch;
    sigset_clear(&S->seen);
    grid_cands_clear(&S->cs);
    opdb_sb_clear(&S->cells);
    S->nkeys = 0;
    return S;
}

static size_t sort_key(grid_scratch *S, const prow *r) {
    size_t n = 1;
    for (int i = 0; i < r->nin; i++) n += 1 + (size_t)r->in[i].nd;
    if (S->nkeys + n > S->keycap) {
        S->keycap = (S->nkeys + n) * 2;
        S->keys = opdb_xrealloc(S->keys, S->keycap * sizeof *S->keys);
    }
    size_t off = S->nkeys;
    int64_t *p = S->keys + off;
    *p++ = r->nin;
    for (int i = 0; i < r->nin; i++) {
        *p++ = r->in[i].nd;
        for (int d = 0; d < r->in[i].nd; d++) *p++ = r->in[i].d[d];
    }
    S->nkeys += n;
    return off;
}

/* grid_cmp_inputs over two sort keys (§7.5). */
static int cmp_keys(const int64_t *a, const int64_t *b) {
    int64_t na = *a++, nb = *b++;
    for (int64_t i = 0; i < na && i < nb; i++) {
        int64_t da = *a++, db = *b++;
        for (int64_t d = 0; d < da && d < db; d++)
            if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
        if (da != db) return da < db ? -1 : 1;
        a += da, b += db;
    }
    return na < nb ? -1 : na > nb;
}

static int cmp_krow(const void *x, const void *y) {
    const krow *a = *(krow *const *)x, *b = *(krow *const *)y;
    int c = cmp_keys(a->sk, b->sk);
    return c ? c : (a->order < b->order ? -1 : a->order > b->order); /* stable */
}

/* A shape cell value `"d,d;d"` as CSV: quoted, its quotes doubled. It
 * holds only digits, '-', ',', ';' and the two quotes, so that is all. */
static void put_shape_cell(opdb_strbuf *out, const char *v, size_t n) {
    if (!n) return;
    opdb_sb_adds(out, "\"\"\"");
    opdb_sb_add(out, v + 1, n - 2);
    opdb_sb_adds(out, "\"\"\"");
}

/* Header + original rows + new rows, via a temp file and rename. */
static int write_file(fctx *F, const grid_cands *cs, krow **rows, size_t nnew, const char *zero, opdb_err *err) {
    grid_table *t = &F->t;
    opdb_atomic_file af;
    if (opdb_atomic_open(&af, F->path, err)) return -1;
    opdb_span *hdr = opdb_xmalloc(t->ncols * sizeof *hdr);
    for (size_t i = 0; i < t->ncols; i++) hdr[i] = opdb_span_cstr(t->header[i]);
    opdb_csv_write_record(&af.buf, hdr, t->ncols);
    free(hdr);
    int rc = 0;
    for (size_t r = 0; r < t->nrows && !rc; r++) {
        opdb_csv_write_record(&af.buf, t->rows[r], t->ncols);
        if (af.buf.n > (1u << 20)) rc = opdb_atomic_flush(&af);
    }
    /* constant cells, CSV-encoded once: cst[i] .. cst[i+1] in cbuf */
    opdb_strbuf cbuf;
    opdb_sb_init(&cbuf);
    size_t *cst = opdb_xmalloc((t->ncols + 1) * sizeof *cst);
    int *ovk = opdb_xmalloc(t->ncols * sizeof *ovk); /* override index + 1 per column, for the current row */
    for (size_t i = 0; i < t->ncols; i++) {
        cst[i] = cbuf.n;
        ovk[i] = 0;
        if (zero[i]) opdb_sb_addc(&cbuf, '0');
        else opdb_csv_write_cell(&cbuf, F->tmpl[i].p, F->tmpl[i].n);
    }
    cst[t->ncols] = cbuf.n;
    const char *cb = cbuf.p ? cbuf.p : "";
    for (size_t r = 0; r < nnew && !rc; r++) {
        const krow *k = rows[r];
        const grid_cand *c = &cs->c[k->cand];
        const grid_over *ov = cs->over + c->over_off;
        for (int j = 0; j < c->nover; j++) {
            int col = grid_table_col(t, ov[j].col);
            if (col >= 0) ovk[col] = j + 1;
        }
        for (size_t i = 0; i < t->ncols; i++) {
            if (i) opdb_sb_addc(&af.buf, ',');
            if (ovk[i]) opdb_csv_write_cell(&af.buf, ov[ovk[i] - 1].val, strlen(ov[ovk[i] - 1].val));
            else if ((int)i == F->c_in) put_shape_cell(&af.buf, k->in, k->nin_b);
            else if ((int)i == F->c_out) put_shape_cell(&af.buf, k->out, k->nout_b);
            else opdb_sb_add(&af.buf, cb + cst[i], cst[i + 1] - cst[i]);
        }
        opdb_sb_add(&af.buf, "\r\n", 2);
        for (int j = 0; j < c->nover; j++) {
            int col = grid_table_col(t, ov[j].col);
            if (col >= 0) ovk[col] = 0;
        }
        if (af.buf.n > (1u << 20)) rc = opdb_atomic_flush(&af);
    }
    free(cst);
    free(ovk);
    opdb_sb_free(&cbuf);
    if (rc) {
        opdb_atomic_abort(&af);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: write failed", F->path);
    }
    return opdb_atomic_commit(&af, err);
}

static bool is_model_driven(const grid_pattern *p) { return p->generator || p->model_nk_pairs; }

int grid_file_process(grid_run *R, const char *path, grid_file_result *res, opdb_err *err) {
    const opdb_grid_opts *o = R->o;
    memset(res, 0, sizeof *res);
    fctx *F = opdb_xcalloc(1, sizeof *F);
    F->R = R;
    F->path = path;
    grid_stem_of(path, F->kt, sizeof F->kt);
    const grid_pattern *p = grid_resolve(R->cfg, &R->opmap, F->kt);
    if (!p) {
        res->skip_reason = "no theory generator";
        free(F);
        return 0;
    }
    int rc = grid_table_load(path, !o->quirks, 0, &F->t, err);
    grid_table *t = &F->t;
    int c_in = rc ? -1 : grid_table_col(t, OPDB_COL_INPUT_SHAPES);
    if (rc || !t->header || c_in < 0 || t->nrows == 0) {
        if (!rc) res->skip_reason = !t->header ? "empty file" : c_in < 0 ? "no 'Input Shapes' column" : "no data rows";
        grid_table_free(t);
        free(F);
        return rc;
    }
    if (!strcmp(F->kt, "FusedInferAttentionScore"))
        for (int i = 0; i < 15; i++) grid_table_add_col(t, grid_fia_columns[i]);
    const char *need[8];
    size_t nneed = override_cols(p, need);
    for (size_t i = 0; i < nneed; i++)
        if (grid_table_col(t, need[i]) < 0) {
            opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: no '%s' column, which %s rows need; nothing written to this file",
                      path, need[i], p->name);
            grid_table_free(t);
            free(F);
            return -1;
        }
    file_roles(F);
    opdb_sb_init(&F->inb);
    opdb_sb_init(&F->outb);
    opdb_sb_init(&F->key);
    grid_scratch *S = scratch_of(R);
    sigset *seen = &S->seen;
    grid_cands *cs = &S->cs;
    prow *pr = &S->pr;
    for (size_t r = 0; r < t->nrows; r++) {
        sign_row(F, t->rows[r]);
        sigset_add(seen, &F->key);
    }
    krow **kept = NULL;
    char *zero = NULL;
    if (R->coverage && is_model_driven(p) && (rc = file_coverage(F, p, seen, err))) goto done;
    if ((rc = generate(F, p, R->nmodels ? R->models : R->all, R->nmodels ? R->nmodels : R->nall, R->nmodels > 0, cs,
                       err)))
        goto done;
    size_t cap = o->rows > 0 ? (size_t)o->rows : 0;
    size_t norder = cs->n;
    if (cs->n > S->ordercap) {
        S->ordercap = cs->n;
        S->order = opdb_xrealloc(S->order, S->ordercap * sizeof *S->order);
        S->rows = opdb_xrealloc(S->rows, S->ordercap * sizeof *S->rows);
        S->sorted = opdb_xrealloc(S->sorted, S->ordercap * sizeof *S->sorted);
    }
    opdb_hindex_reserve(&seen->ix, seen->n + cs->n);
    size_t *order = S->order;
    if (o->quirks && cap && cs->n > cap) {
        opdb_pyrandom_sample(&R->rng, cs->n, cap, order);
        norder = cap;
    } else {
        for (size_t i = 0; i < cs->n; i++) order[i] = i;
    }
    res->candidates = norder;
    size_t nnew = 0, dropped = 0;
    for (size_t oi = 0; oi < norder; oi++) {
        prepare(F, cs, order[oi], pr);
        if (over_budget(F, pr)) {
            dropped++;
            continue;
        }
        sign(F, pr);
        if (!sigset_add(seen, &F->key)) continue;
        krow *k = &S->rows[nnew++];
        k->cand = order[oi];
        k->order = oi;
        k->sk_off = sort_key(S, pr);
        k->in_off = S->cells.n;
        k->nin_b = (uint32_t)F->inb.n;
        opdb_sb_add(&S->cells, F->inb.p ? F->inb.p : "", F->inb.n);
        k->out_off = S->cells.n;
        k->nout_b = (uint32_t)F->outb.n;
        opdb_sb_add(&S->cells, F->outb.p ? F->outb.p : "", F->outb.n);
    }
    kept = S->sorted; /* the buffers stay put from here on */
    for (size_t i = 0; i < nnew; i++) {
        krow *k = &S->rows[i];
        k->sk = S->keys + k->sk_off;
        k->in = S->cells.p + k->in_off;
        k->out = S->cells.p + k->out_off;
        kept[i] = k;
    }
    res->after_memory = norder - dropped;
    res->after_dedup = nnew;
    if (dropped) {
        char b[64];
        grid_fmt_budget(R->budget, b, sizeof b);
        fflush(o->out);
        fprintf(stderr, "\n[MEMORY] %s: filtered %zu/%zu rows exceeding %s HBM budget\n", opdb_path_basename(path),
                dropped, norder, b);
    }
    if (!o->quirks && cap && nnew > cap) { /* opdb: sample among rows that will really be appended */
        size_t *pick = opdb_xmalloc(cap * sizeof *pick);
        opdb_pyrandom_sample(&R->rng, nnew, cap, pick);
        krow **sel = opdb_xmalloc(cap * sizeof *sel);
        for (size_t i = 0; i < cap; i++) sel[i] = kept[pick[i]], sel[i]->order = i;
        memcpy(kept, sel, cap * sizeof *sel);
        free(sel);
        free(pick);
        nnew = cap;
    }
    res->appended = nnew;
    if (nnew) qsort(kept, nnew, sizeof *kept, cmp_krow);
    if (!o->plan) {
        zero = opdb_xmalloc(t->ncols + 1);
        static const char *const copy_cols[] = {OPDB_COL_OP_STATE,      OPDB_COL_ACCEL_CORE,     OPDB_COL_INPUT_DTYPES,
                                                OPDB_COL_OUTPUT_DTYPES, OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_FORMATS,
                                                OPDB_COL_OUTPUT_SHAPES};
        for (size_t i = 0; i < t->ncols; i++) {
            bool copy = false;
            for (size_t k = 0; k < 7; k++) copy |= !strcmp(t->header[i], copy_cols[k]);
            zero[i] = !copy && (int)i != F->c_in && grid_zero_column(t->header[i]);
        }
        rc = write_file(F, cs, kept, nnew, zero, err);
    }
done:
    free(zero);
    opdb_sb_free(&F->key);
    opdb_sb_free(&F->inb);
    opdb_sb_free(&F->outb);
    grid_table_free(t);
    free(F);
    return rc;
}

int grid_file_precheck(grid_run *R, const char *path, opdb_err *err) {
    char kt[1024];
    grid_stem_of(path, kt, sizeof kt);
    const grid_pattern *p = grid_resolve(R->cfg, &R->opmap, kt);
    if (!p) return 0;
    const char *need[8];
    size_t nneed = override_cols(p, need);
    if (!nneed) return 0;
    grid_table t;
    int rc = grid_table_load(path, true, 1, &t, err);
    if (!rc && t.header && grid_table_col(&t, OPDB_COL_INPUT_SHAPES) >= 0 && t.nrows > 0) {
        if (!strcmp(kt, "FusedInferAttentionScore"))
            for (int i = 0; i < 15; i++) grid_table_add_col(&t, grid_fia_columns[i]);
        for (size_t i = 0; i < nneed && !rc; i++)
            if (grid_table_col(&t, need[i]) < 0)
                rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: no '%s' column, which %s rows need; no file was changed",
                               path, need[i], p->name);
    }
    grid_table_free(&t);
    return rc;
}
