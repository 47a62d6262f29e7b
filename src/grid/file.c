/* The per-file pipeline of `opdb grid` (docs/GRID.md §2, §7, §9): candidates,
 * sampling, slot alignment, absent-slot clearing, memory filter, dedup,
 * order, atomic rewrite; and the per-model coverage of a file.
 *
 * Speed: a theory row differs from its template only in its shape cells
 * and overrides, so a candidate is signed from those cells alone (never
 * built as a full row), a kept row holds just its two rendered shape cells
 * and sort key, and the constant cells are CSV-encoded once per file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* ---- the dedup set of the main pass: hashes of signatures.  An entry
 * names an existing row (ref < nrows) or a kept candidate (ref - nrows)
 * whose signature is recomputed to compare on a hash match, which only a
 * duplicate (or a collision) gives: no key bytes are stored.  A slot is 8
 * bytes: the hash's top 32 bits (its place in the table is their top bits,
 * so the table can grow without the full hash) and ref + 1 (0: empty).
 * Each file sizes and clears just the slots it needs, at most half full:
 * the probes are cache misses, and a small table takes fewer of them. */
typedef struct hslot {
    uint32_t tag, ref1;
} hslot;

typedef struct hset {
    hslot *s;
    size_t cap;    /* slots allocated */
    size_t nslots; /* slots this file uses: 2^bits */
    int bits;
    size_t n;
} hset;

static inline size_t hset_pos(const hset *s, uint32_t tag) { return tag >> (32 - s->bits); }

static void hset_place(hset *s, uint32_t tag, uint32_t ref1) {
    size_t j = hset_pos(s, tag);
    while (s->s[j].ref1) j = (j + 1) & (s->nslots - 1);
    s->s[j].tag = tag, s->s[j].ref1 = ref1;
}

/* From 512 KiB (65,536 slots) a table is a mapping with huge pages: one
 * fault instead of 128 or more (each about 20 us on the project's VMs). */
#define HSET_HUGE_SLOTS ((size_t)1 << 16)

static hslot *hset_alloc_slots(size_t ns) {
    if (ns < HSET_HUGE_SLOTS) return opdb_xcalloc(ns, sizeof(hslot));
    size_t huge = (size_t)2 << 20, len = (ns * sizeof(hslot) + huge - 1) / huge * huge;
    char *p = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) opdb_die_oom(len);
    size_t head = (huge - (uintptr_t)p % huge) % huge; /* aligned, so that it can be one huge page */
    if (head) munmap(p, head);
    munmap(p + head + len, huge - head);
#ifdef MADV_HUGEPAGE
    (void)madvise(p + head, len, MADV_HUGEPAGE);
#endif
    return (hslot *)(void *)(p + head);
}

static void hset_free_slots(hset *s) {
    if (!s->s) return;
    size_t huge = (size_t)2 << 20;
    if (s->cap < HSET_HUGE_SLOTS) free(s->s);
    else munmap(s->s, (s->cap * sizeof *s->s + huge - 1) / huge * huge);
    s->s = NULL;
}

/* Uses 2^bits slots (<= 2^32), the entries kept. */
static void hset_resize(hset *s, int bits) {
    size_t ns = (size_t)1 << bits, nlive = 0;
    hslot *live = s->n ? opdb_xmalloc(s->n * sizeof *live) : NULL;
    for (size_t i = 0; i < s->nslots && nlive < s->n; i++)
        if (s->s[i].ref1) live[nlive++] = s->s[i];
    if (ns > s->cap) {
        hset_free_slots(s);
        s->s = hset_alloc_slots(ns);
        s->cap = ns;
    }
    memset(s->s, 0, ns * sizeof *s->s);
    s->nslots = ns;
    s->bits = bits;
    for (size_t i = 0; i < nlive; i++) hset_place(s, live[i].tag, live[i].ref1);
    free(live);
}

static void hset_clear(hset *s) {
    s->n = 0;
    hset_resize(s, 12);
}

/* Room for n more entries, at most half full. */
static void hset_reserve(hset *s, size_t n) {
    if ((s->n + n) * 2 > s->nslots) {
        int bits = s->bits + 1;
        while ((s->n + n) * 2 > (size_t)1 << bits && bits < 32) bits++;
        hset_resize(s, bits);
    }
}

static void hset_add(hset *s, uint64_t h, uint32_t ref) {
    hset_reserve(s, 1);
    hset_place(s, (uint32_t)(h >> 32), ref + 1);
    s->n++;
}

/* ---- one file */
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
 * only the reference path keeps a sort key of integers (40 bytes in all:
 * the first touch of a page costs more here than the work on its rows). */
typedef struct krow {
    size_t order;
    size_t in_off;
    union {
        size_t off;        /* into the scratch's keys while rows are added */
        const int64_t *p;  /* [nslots, (nd, dims...)...] of the inputs, set once rows are all in */
    } sk;                  /* the reference path's sort key */
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
    hset seen;
    sigset seen_ref; /* the reference path's set of signature strings */
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
    int64_t *keys;       /* the reference path: kept rows' sort keys back to back */
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
    int sc[OPDB_NSIG_CELLS];     /* the signature's columns (-1: absent) */
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

static void resolve_over(fctx *F, const char *name, int *col, int *attr) {
    for (int i = 0; i < F->novn; i++)
        if (F->ovn[i].name == name) {
            *col = F->ovn[i].col, *attr = F->ovn[i].attr;
            return;
        }
    *col = grid_table_col(&F->t, name);
    *attr = -1;
    for (int a = 0; a < 4; a++)
        if (!strcmp(name, grid_override_cols[a])) *attr = a;
    if (F->novn < 48) F->ovn[F->novn].name = name, F->ovn[F->novn].col = *col, F->ovn[F->novn++].attr = *attr;
}

/* r's overrides from the candidate's, then slot alignment and absent-slot
 * clearing (§7.1). */
static void finish_prow(fctx *F, prow *r, const grid_over *ov, int nov) {
    r->nov = nov; /* <= GRID_MAX_OVER (grid_cands_add) */
    for (int k = 0; k < r->nov; k++) {
        resolve_over(F, ov[k].col, &r->ovcol[k], &r->ovattr[k]);
        r->ovval[k] = opdb_span_cstr(ov[k].val);
    }
    for (; r->nin < F->kin && r->nin < GRID_MAX_SLOTS; r->nin++) r->in[r->nin].nd = 0;
    for (; r->nout < F->kout && r->nout < GRID_MAX_SLOTS; r->nout++) r->out[r->nout].nd = 0;
    for (int a = 0; a < 4; a++) {
        grid_shape *s = a < 2 ? r->in : r->out;
        int n = a < 2 ? r->nin : r->nout;
        int ov_k = -1;
        for (int k = 0; k < r->nov; k++) /* the last override of a column wins */
            if (r->ovattr[k] == a) ov_k = k;
        if (ov_k >= 0) {
            grid_clear_absent(s, n, r->ovval[ov_k]);
        } else if (F->attr_col[a] >= 0) {
            for (int i = 0; i < n && i < 64; i++)
                if (F->tmpl_absent[a] >> i & 1) s[i].nd = 0;
        }
    }
}

/* Candidate ci of the pool into r. */
static void prepare(fctx *F, const grid_cands *cs, size_t ci, prow *r) {
    grid_cands_get(cs, ci, r->in, &r->nin, r->out, &r->nout);
    /* no pattern override: the list was never allocated (NULL + 0 is undefined) */
    finish_prow(F, r, cs->c[ci].nover ? cs->over + cs->c[ci].over_off : NULL, cs->c[ci].nover);
}

static bool over_budget(const fctx *F, const prow *r) {
    uint64_t b = F->R->budget;
    return b && grid_row_bytes(r->in, r->nin, r->out, r->nout, F->isz, F->nisz, F->osz, F->nosz) > b;
}

/* *key = the signature of a theory row: the template's cells with the
 * given shape cells and overrides. */
static void sign_cells(const fctx *F, opdb_span in, opdb_span out, const int *ovcol, const opdb_span *ovval, int nov,
                       opdb_strbuf *key) {
    opdb_span cell[OPDB_NSIG_CELLS];
    for (int i = 0; i < OPDB_NSIG_CELLS; i++) cell[i] = F->sc[i] >= 0 ? F->tmpl[F->sc[i]] : opdb_span_make("", 0);
    cell[0] = in;
    if (F->c_out >= 0) cell[3] = out;
    for (int k = 0; k < nov; k++)
        for (int i = 1; i < OPDB_NSIG_CELLS; i++)
            if (i != 3 && F->sc[i] >= 0 && ovcol[k] == F->sc[i]) cell[i] = ovval[k];
    opdb_sig_cells c = {cell[0], cell[1], cell[2], cell[3], cell[4], cell[5]};
    opdb_signature(&c, F->kt, key);
}

static opdb_span sb_span(const opdb_strbuf *b) { return opdb_span_make(b->p ? b->p : "", b->n); }

/* F->key = the signature the built row would have (its shape cells in
 * F->inb / F->outb). */
static void sign(fctx *F, const prow *r) {
    opdb_sb_clear(&F->inb);
    grid_shape_cell(&F->inb, r->in, r->nin);
    opdb_sb_clear(&F->outb);
    if (F->c_out >= 0) grid_shape_cell(&F->outb, r->out, r->nout);
    sign_cells(F, sb_span(&F->inb), sb_span(&F->outb), r->ovcol, r->ovval, r->nov, &F->key);
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
    cs->limit = o->max_candidates ? o->max_candidates : OPDB_GRID_MAX_CANDIDATES;
    cs->negative_ok = o->quirks;
    return grid_expand_template(F->R->cfg, p, nk_models ? models : NULL, nk_models ? nmodels : 0, !o->quirks, cs, err);
}

/* A row with a valid `Average Duration(us)` or `Profiling Average
 * Duration(us)` (docs/FORMAT.md §3.3). */
static bool measured_row(const opdb_span *row, const int dur[2]) {
    for (int i = 0; i < 2; i++)
        if (dur[i] >= 0 && opdb_py_float_or_zero(row[dur[i]].p, row[dur[i]].n) > 0) return true;
    return false;
}

/* *key = the signature of an existing row. */
static void sign_row(const fctx *F, const opdb_span *row, opdb_strbuf *key) {
    opdb_span e = opdb_span_make("", 0), c[OPDB_NSIG_CELLS];
    for (int i = 0; i < OPDB_NSIG_CELLS; i++) c[i] = F->sc[i] >= 0 ? row[F->sc[i]] : e;
    opdb_sig_cells sc = {c[0], c[1], c[2], c[3], c[4], c[5]};
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

static bool seen_has_h(fctx *F, const opdb_strbuf *key, uint64_t h) {
    const hset *s = &F->S->seen;
    if (!s->n) return false;
    uint32_t tag = (uint32_t)(h >> 32);
    for (size_t j = hset_pos(s, tag); s->s[j].ref1; j = (j + 1) & (s->nslots - 1)) {
        if (s->s[j].tag != tag) continue;
        uint32_t ref = s->s[j].ref1 - 1;
        if (ref < F->t.nrows) sign_row(F, F->t.rows[ref], &F->key2);
        else sign_kept(F, &F->S->rows[ref - F->t.nrows], &F->key2);
        if (F->key2.n == key->n && !memcmp(F->key2.p, key->p, key->n)) return true;
    }
    return false;
}

/* Whether key (F->key or another buffer than F->key2) is in the set of
 * signatures seen: the file's rows and the candidates kept so far. */
static bool seen_has(fctx *F, const opdb_strbuf *key) {
    if (F->R->reference) return sigset_has(&F->S->seen_ref, key);
    return seen_has_h(F, key, opdb_hash_bytes(key->p, key->n, 0));
}

/* Adds F->key, the signature of ref (a row, or nrows + a kept row), unless
 * there; false when it was there. */
static bool seen_add(fctx *F, uint32_t ref) {
    if (F->R->reference) return sigset_add(&F->S->seen_ref, &F->key);
    uint64_t h = opdb_hash_bytes(F->key.p, F->key.n, 0);
    if (seen_has_h(F, &F->key, h)) return false;
    hset_add(&F->S->seen, h, ref);
    return true;
}

/* Coverage of each target model for this file (before any row is added). */
static int file_coverage(fctx *F, const grid_pattern *p, opdb_err *err) {
    grid_run *R = F->R;
    int dur[2] = {grid_table_col(&F->t, OPDB_COL_MB_DUR), grid_table_col(&F->t, OPDB_COL_PROF_AVG_DUR)};
    sigset done;
    sigset_init(&done);
    for (size_t r = 0; r < F->t.nrows; r++) {
        if (!measured_row(F->t.rows[r], dur)) continue;
        sign_row(F, F->t.rows[r], &F->key);
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
                else if (seen_has(F, &F->key)) cv->pending++;
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

void grid_scratch_free(grid_run *R) {
    grid_scratch *S = R->scratch;
    if (!S) return;
    hset_free_slots(&S->seen);
    sigset_free(&S->seen_ref);
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
        sigset_init(&R->scratch->seen_ref);
    }
    grid_scratch *S = R->scratch;
    hset_clear(&S->seen);
    sigset_clear(&S->seen_ref);
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
    hset_reserve(&S->seen, n);
    BIG_GROW(S->rows, n, S->rowcap);
    if (F->R->reference) BIG_GROW(S->keys, n * nk, S->keycap);
    BIG_GROW(S->kov, n * (size_t)r->nov, S->kovcap);
    BIG_GROW(S->cells.p, n * (nb + nb / 4 + 8), S->cells.cap);
}

static void keep(fctx *F, const prow *r, size_t order);

/* One candidate (order: its place in the candidate order) through the
 * memory filter and dedup; kept when new. */
static void consider(fctx *F, const prow *r, size_t order) {
    if (over_budget(F, r)) {
        F->dropped++;
        return;
    }
    grid_scratch *S = F->S;
    sign(F, r);
    uint32_t ref = (uint32_t)(F->t.nrows + S->nrows_k);
    if (F->R->reference) {
        if (!seen_add(F, ref)) return;
    } else {
        /* The set's slot is fetched while the row is kept on trust; a
         * duplicate (rare) takes it back. */
        if (!S->nrows_k && F->expect) reserve_like(F, r);
        hset_reserve(&S->seen, 1);
        uint64_t h = opdb_hash_bytes(F->key.p, F->key.n, 0);
#if defined(__GNUC__)
        __builtin_prefetch(&S->seen.s[hset_pos(&S->seen, (uint32_t)(h >> 32))]);
#endif
        size_t nkeys = S->nkeys, ncells = S->cells.n, nkov = S->nkov;
        keep(F, r, order);
        if (seen_has_h(F, &F->key, h)) {
            S->nrows_k--, S->nkeys = nkeys, S->cells.n = ncells, S->nkov = nkov;
            return;
        }
        hset_add(&S->seen, h, ref);
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
    k->sk.off = F->R->reference ? sort_key(S, r) : 0;
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
    finish_prow(F, r, ov, nov);
    if (!F->ncand) F->expect = F->S->cs.expect;
    consider(F, r, F->ncand++);
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
    int c = cmp_keys(a->sk.p, b->sk.p);
    return c ? c : (a->order < b->order ? -1 : a->order > b->order); /* stable */
}

static inline bool ent_less(const sortent *x, const sortent *y) {
    int c;
    if (x->pos2 & y->pos2 & 1) {
        if (x->a != y->a || x->b != y->b) return x->a != y->a ? x->a < y->a : x->b < y->b;
        c = grid_cmp_shape_cells_rest(x->in, y->in);
    } else {
        const char *xi = x->pos2 & 1 ? x->in - x->nin : x->in, *yi = y->pos2 & 1 ? y->in - y->nin : y->in;
        c = grid_cmp_shape_cells(xi, x->nin, yi, y->nin);
    }
    return c ? c < 0 : x->pos2 < y->pos2;
}

/* The fast path's qsort, for more rows than a sortent can number. */
static _Thread_local const char *g_cells;
static int cmp_krow_cells(const void *x, const void *y) {
    const krow *a = *(krow *const *)x, *b = *(krow *const *)y;
    int c = grid_cmp_shape_cells(g_cells + a->in_off, a->nin_b, g_cells + b->in_off, b->nin_b);
    return c ? c : (a->order < b->order ? -1 : a->order > b->order);
}

/* Merge sort of e[0..n) (tmp: room for n); the order tie-break makes every
 * key distinct, so any sort gives the stable order. */
static void sort_ents(sortent *e, sortent *tmp, size_t n) {
    sortent *src = e, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, o = lo;
            while (i < mid && j < hi) dst[o++] = ent_less(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        sortent *t = src;
        src = dst, dst = t;
    }
    if (src != e) memcpy(e, src, n * sizeof *e);
}

/* The stable sort of §7.5 (the reference path: qsort over the rows and
 * their integer keys).  rows[] come in increasing order, so a row's place
 * among them is its tie-break; they often come sorted already.  The
 * entries and merge buffer take the scratch's ents[0 .. 2n), below rows[]. */
static void sort_rows(grid_scratch *S, bool reference, krow **rows, size_t n) {
    if (reference) {
        if (n) qsort(rows, n, sizeof *rows, cmp_krow);
        return;
    }
    const char *cells = S->cells.p;
    size_t i = 1;
    while (i < n && grid_cmp_shape_cells(cells + rows[i - 1]->in_off, rows[i - 1]->nin_b, cells + rows[i]->in_off,
                                         rows[i]->nin_b) <= 0)
        i++;
    if (i >= n) return;
    if (n >= ((size_t)1 << 31)) { /* places do not fit a sortent */
        g_cells = cells;
        qsort(rows, n, sizeof *rows, cmp_krow_cells);
        return;
    }
    sortent *e = S->ents, *tmp = e + n;
    for (size_t j = 0; j < n; j++) {
        const krow *k = rows[j];
        const char *in = cells + k->in_off;
        int64_t lead[2];
        const char *rest = grid_shape_cell_lead2(in, k->nin_b, lead);
        bool pre = rest != NULL;
        e[j].a = pre ? lead[0] : 0, e[j].b = pre ? lead[1] : 0;
        e[j].in = pre ? rest : in;
        e[j].nin = pre ? (uint32_t)(rest - in) : k->nin_b; /* pre: how far in the rest starts */
        e[j].pos2 = (uint32_t)(j * 2 + pre);
    }
    sort_ents(e, tmp, n);
    krow **sorted = (krow **)(void *)tmp; /* the merge buffer is free again */
    for (size_t j = 0; j < n; j++) sorted[j] = rows[e[j].pos2 >> 1];
    memcpy(rows, sorted, n * sizeof *rows);
}

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

/* What a new row holds in a column that is neither a shape nor an override. */
enum { GRID_CELL_COPY, GRID_CELL_ZERO, GRID_CELL_EMPTY };

/* Header + original rows + new rows, via a temp file and rename.  A new
 * row is the file's constant row (the template with measurements zeroed,
 * CSV-encoded once) with its variable cells spliced in. */
static int write_file(fctx *F, krow **rows, size_t nnew, const char *zero, opdb_err *err) {
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

/* The reference path's writer: every new row cell by cell. */
static int write_file_ref(fctx *F, krow **rows, size_t nnew, const char *zero, opdb_err *err) {
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
        sign_row(F, t->rows[r], &F->key);
        seen_add(F, (uint32_t)r);
    }
    char *zero = NULL;
    if (R->coverage && is_model_driven(p) && (rc = file_coverage(F, p, err))) goto done;
    const grid_model *const *models = R->nmodels ? R->models : R->all;
    size_t nmodels = R->nmodels ? R->nmodels : R->nall;
    size_t cap = o->rows > 0 ? (size_t)o->rows : 0;
    /* The reference samples among all candidates, so it needs them all
     * first; otherwise each one goes straight through filter and dedup. */
    bool pooled = R->reference || (o->quirks && cap);
    size_t norder;
    if (pooled) {
        if ((rc = generate(F, p, models, nmodels, R->nmodels > 0, cs, err))) goto done;
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
            prepare(F, cs, order[oi], &S->pr);
            consider(F, &S->pr, oi);
        }
    } else {
        cs->sink = take;
        cs->sink_ctx = F;
        cs->expect = 0;
        rc = generate(F, p, models, nmodels, R->nmodels > 0, cs, err);
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
        if (R->reference) k->sk.p = S->keys + k->sk.off;
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
    sort_rows(S, R->reference, kept, nnew);
    if (!o->plan) {
        zero = opdb_xmalloc(t->ncols + 1);
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
            for (size_t k = 0; k < 5 && !o->quirks; k++) stat |= !strcmp(t->header[i], stat_cols[k]);
            zero[i] = stat ? GRID_CELL_EMPTY : !copy && (int)i != F->c_in && grid_zero_column(t->header[i]) ? GRID_CELL_ZERO
                                                                                                             : GRID_CELL_COPY;
        }
        rc = R->reference ? write_file_ref(F, kept, nnew, zero, err) : write_file(F, kept, nnew, zero, err);
    }
done:
    free(zero);
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
