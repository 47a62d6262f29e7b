/* The per-file pipeline of `opdb grid` (docs/GRID.md §2, §7, §9): a file's
 * candidates (file_cands.c) through the memory filter and dedup
 * (file_dedup.c, dedup_sets.c) into the kept rows, sampling, then their
 * order (file_sort.c) and the atomic rewrite (file_write.c); and the
 * per-model coverage of a file (file_coverage.c). file_ctx.h holds what
 * these parts share. *
 * Speed: a theory row differs from its template only in its shape cells
 * and overrides, so a candidate is signed from those cells alone (never
 * built as a full row), a kept row holds just its two rendered shape cells
 * and sort key, and the constant cells are CSV-encoded once per file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "grid/file_ctx.h"
#include "grid/grid_rows.h"
#include "opdb/fs.h"
#include "opdb/schema.h"

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

/* ---- the main pass's arrays: huge-page mappings (opdb_big_alloc), as a
 * 4 KiB page fault costs more here than the work on the rows it holds */
/* Address space only: pages are mapped as rows fill them, so a first size
 * that holds the largest usual file (50,653 rows) costs nothing more and
 * saves copying while arrays grow. */
#define GRID_BIG_FIRST ((size_t)16 << 20)

static void *big_grow(void *p, size_t *cap, size_t n, size_t elem) {
    if (n <= *cap) return p;
    size_t nc = *cap ? *cap : GRID_BIG_FIRST / elem;
    while (nc < n) nc *= 2;
    p = opdb_big_realloc(p, *cap * elem, nc * elem);
    *cap = nc;
    return p;
}
#define BIG_GROW(p, n, cap) ((p) = big_grow((p), &(cap), (n), sizeof *(p)))
#define BIG_FREE(p, cap) opdb_big_free((p), (cap) * sizeof *(p))

/* Slot dtype sizes and absent-attribute masks from the template (§7.1, §9). */
static void file_roles(fctx *F) {
    grid_table *t = &F->t;
    F->tmpl = t->rows[0];
    F->c_in = grid_table_col(t, OPDB_COL_INPUT_SHAPES);
    F->c_out = grid_table_col(t, OPDB_COL_OUTPUT_SHAPES);
    db_sig_cols_from_names(&F->sig, (const char *const *)t->header, t->ncols);
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
    F->nisz = F->sig.col[1] >= 0 ? grid_dtype_sizes(F->tmpl[F->sig.col[1]], F->isz, GRID_MAX_SLOTS * 2) : 0;
    F->nosz = F->sig.col[4] >= 0 ? grid_dtype_sizes(F->tmpl[F->sig.col[4]], F->osz, GRID_MAX_SLOTS * 2) : 0;
}

void grid_scratch_free(grid_run *R) {
    grid_scratch *S = R->scratch;
    if (!S) return;
    grid_hset_free_slots(&S->seen);
    grid_sigset_free(&S->seen_simple);
    grid_cands_free(&S->cs);
    free(S->order);
    BIG_FREE(S->rows, S->rowcap);
    BIG_FREE(S->kov, S->kovcap);
    BIG_FREE(S->cells.p, S->cells.cap);
    BIG_FREE(S->keys, S->keycap);
    BIG_FREE(S->ents, S->entcap);
    free(S);
    R->scratch = NULL;
}

static grid_scratch *scratch_of(grid_run *R) {
    if (!R->scratch) {
        R->scratch = opdb_xcalloc(1, sizeof *R->scratch);
        grid_sigset_init(&R->scratch->seen_simple);
    }
    grid_scratch *S = R->scratch;
    grid_hset_clear(&S->seen);
    grid_sigset_clear(&S->seen_simple);
    grid_cands_clear(&S->cs);
    S->cs.sink = NULL;
    S->cells.n = 0;
    S->nkeys = S->nkov = S->nrows_k = 0;
    return S;
}

static size_t sort_key(grid_scratch *S, const prow *r) {
    size_t n = 1;
    for (int i = 0; i < r->nin; i++) n += 1 + (size_t)r->in[i].nd;
    BIG_GROW(S->keys, S->nkeys + n, S->keycap);
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

static void cells_add(grid_scratch *S, const char *p, size_t n) {
    BIG_GROW(S->cells.p, S->cells.n + n + 1, S->cells.cap); /* +1: never NULL once used */
    if (n) memcpy(S->cells.p + S->cells.n, p, n);
    S->cells.n += n;
}

/* Room for F->expect rows like r (its shape cells in F->inb / F->outb),
 * so that the buffers are not copied while they grow. */
static void reserve_like(fctx *F, const prow *r) {
    grid_scratch *S = F->S;
    size_t n = F->expect, nk = 1, nb = F->inb.n + F->outb.n;
    for (int i = 0; i < r->nin; i++) nk += 1 + (size_t)r->in[i].nd;
    for (int j = 0; j < r->nov; j++) nb += r->ovval[j].n;
    if (n > ((size_t)1 << 22) || nb > 4096) return; /* a guess only: never a huge one */
    grid_hset_reserve(&S->seen, n);
    BIG_GROW(S->rows, n, S->rowcap);
    if (F->R->simple) BIG_GROW(S->keys, n * nk, S->keycap);
    BIG_GROW(S->kov, n * (size_t)r->nov, S->kovcap);
    BIG_GROW(S->cells.p, n * (nb + nb / 4 + 8), S->cells.cap);
}

static void keep(fctx *F, const prow *r, size_t order);

/* One candidate (order: its place in the candidate order) through the
 * memory filter and dedup; kept when new. */
static void consider(fctx *F, const prow *r, size_t order) {
    if (grid_fctx_over_budget(F, r)) {
        F->dropped++;
        return;
    }
    grid_scratch *S = F->S;
    grid_fctx_sign(F, r);
    uint32_t ref = (uint32_t)(F->t.nrows + S->nrows_k);
    if (F->R->simple) {
        if (!grid_fctx_seen_add(F, ref)) return;
    } else {
        /* The set's slot is fetched while the row is kept on trust; a
         * duplicate (rare) takes it back. */
        if (!S->nrows_k && F->expect) reserve_like(F, r);
        grid_hset_reserve(&S->seen, 1);
        uint64_t h = opdb_hash_bytes(F->key.p, F->key.n, 0);
#if defined(__GNUC__)
        __builtin_prefetch(&S->seen.s[grid_hset_pos(&S->seen, (uint32_t)(h >> 32))]);
#endif
        size_t nkeys = S->nkeys, ncells = S->cells.n, nkov = S->nkov;
        keep(F, r, order);
        if (grid_fctx_seen_has_h(F, &F->key, h)) {
            S->nrows_k--, S->nkeys = nkeys, S->cells.n = ncells, S->nkov = nkov;
            return;
        }
        grid_hset_add(&S->seen, h, ref);
        return;
    }
    if (!S->nrows_k && F->expect) reserve_like(F, r);
    keep(F, r, order);
}

/* Appends r (signed: its shape cells in F->inb / F->outb) to the kept rows. */
static void keep(fctx *F, const prow *r, size_t order) {
    grid_scratch *S = F->S;
    BIG_GROW(S->rows, S->nrows_k + 1, S->rowcap);
    krow *k = &S->rows[S->nrows_k++];
    k->order = order;
    k->sk.off = F->R->simple ? sort_key(S, r) : 0;
    k->in_off = S->cells.n;
    k->nin_b = (uint32_t)F->inb.n;
    cells_add(S, F->inb.p, F->inb.n);
    k->nout_b = (uint32_t)F->outb.n;
    cells_add(S, F->outb.p, F->outb.n);
    k->ov_off = (uint32_t)S->nkov;
    k->nov = 0;
    for (int j = 0; j < r->nov; j++) {
        if (r->ovcol[j] < 0) continue; /* a column the file lacks: neither signed nor written */
        BIG_GROW(S->kov, S->nkov + 1, S->kovcap);
        kov *v = &S->kov[S->nkov++];
        v->col = r->ovcol[j];
        v->off = (uint32_t)S->cells.n;
        v->len = (uint32_t)r->ovval[j].n;
        cells_add(S, r->ovval[j].p, r->ovval[j].n);
        k->nov++;
    }
}

/* The streaming path's sink: a candidate straight from its generator. */
static void take(void *ctx, const grid_shape *in, int nin, const grid_shape *out, int nout, const grid_over *ov,
                 int nov) {
    fctx *F = ctx;
    prow *r = &F->S->pr;
    r->nin = nin < GRID_MAX_SLOTS ? nin : GRID_MAX_SLOTS;
    r->nout = nout < GRID_MAX_SLOTS ? nout : GRID_MAX_SLOTS;
    for (int i = 0; i < r->nin; i++) {
        r->in[i].nd = in[i].nd;
        memcpy(r->in[i].d, in[i].d, (size_t)in[i].nd * sizeof in[i].d[0]);
    }
    for (int i = 0; i < r->nout; i++) {
        r->out[i].nd = out[i].nd;
        memcpy(r->out[i].d, out[i].d, (size_t)out[i].nd * sizeof out[i].d[0]);
    }
    grid_fctx_finish_prow(F, r, ov, nov);
    if (!F->ncand) F->expect = F->S->cs.expect;
    consider(F, r, F->ncand++);
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
    opdb_sb_init(&F->key2);
    grid_scratch *S = F->S = scratch_of(R);
    grid_cands *cs = &S->cs;
    for (size_t r = 0; r < t->nrows; r++) {
        grid_fctx_sign_row(F, t->rows[r], &F->key);
        grid_fctx_seen_add(F, (uint32_t)r);
    }
    if (R->coverage && is_model_driven(p) && (rc = grid_file_coverage(F, p, err))) goto done;
    const grid_model *const *models = R->nmodels ? R->models : R->all;
    size_t nmodels = R->nmodels ? R->nmodels : R->nall;
    size_t cap = o->rows > 0 ? (size_t)o->rows : 0;
    /* The simple path and the reference's sampling (quirks with a row cap)
     * take every candidate first; otherwise each one goes straight through filter and dedup. */
    bool pooled = R->simple || (o->quirks && cap);
    size_t norder;
    if (pooled) {
        if ((rc = grid_fctx_generate(F, p, models, nmodels, R->nmodels > 0, cs, err))) goto done;
        norder = cs->n;
        if (cs->n > S->ordercap) {
            S->ordercap = cs->n;
            S->order = opdb_xrealloc(S->order, S->ordercap * sizeof *S->order);
        }
        size_t *order = S->order;
        if (o->quirks && cap && cs->n > cap) {
            opdb_pyrandom_sample(&R->rng, cs->n, cap, order);
            norder = cap;
        } else {
            for (size_t i = 0; i < cs->n; i++) order[i] = i;
        }
        F->expect = norder;
        for (size_t oi = 0; oi < norder; oi++) {
            grid_fctx_prepare(F, cs, order[oi], &S->pr);
            consider(F, &S->pr, oi);
        }
    } else {
        cs->sink = take;
        cs->sink_ctx = F;
        cs->expect = 0;
        rc = grid_fctx_generate(F, p, models, nmodels, R->nmodels > 0, cs, err);
        cs->sink = NULL;
        if (rc) goto done;
        norder = cs->n;
    }
    size_t nnew = S->nrows_k, dropped = F->dropped;
    res->candidates = norder;
    /* the sort's entries and merge buffer (2 * nnew), then the pointers */
    size_t nent = 2 * nnew + (nnew * sizeof(krow *) + sizeof *S->ents - 1) / sizeof *S->ents;
    BIG_GROW(S->ents, nent + 1, S->entcap);
    krow **kept = (krow **)(void *)(S->ents + 2 * nnew); /* the buffers stay put from here on */
    for (size_t i = 0; i < nnew; i++) {
        krow *k = &S->rows[i];
        if (R->simple) k->sk.p = S->keys + k->sk.off;
        kept[i] = k;
    }
    res->after_memory = norder - dropped;
    res->after_dedup = nnew;
    if (dropped) {
        char b[64];
        grid_fmt_budget(R->budget, b, sizeof b);
        fflush(o->out);
        if (o->err_out)
            fprintf(o->err_out, "\n[MEMORY] %s: filtered %zu/%zu rows exceeding %s HBM budget\n",
                    opdb_path_basename(path), dropped, norder, b);
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
    grid_sort_rows(S, R->simple, kept, nnew);
    if (!o->plan) rc = grid_write_file(F, kept, nnew, err);
done:
    opdb_sb_free(&F->key);
    opdb_sb_free(&F->key2);
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
