/* See csv_merge.h. */
#include "update/csv_merge.h"

#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"
#include "opdb/signature.h"
#include "update/prefetch.h"

void sig_of_drow(const db_lazy_table *f, const db_drow *r, const ids *id, const char *op, opdb_strbuf *out,
                 bool display) {
    opdb_sig_cells c = db_lazy_sig_cells(f, r, &id->sig);
    if (display) opdb_signature_display(&c, out);
    else opdb_signature(&c, op, out);
}

void sig_of_agg(const agg_row *r, const char *op, opdb_strbuf *out, bool display) {
    opdb_sig_cells c = agg_sig_cells(r);
    if (display) opdb_signature_display(&c, out);
    else opdb_signature(&c, op, out);
}

int cmp_dup(const void *a, const void *b) {
    const dup_sig *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->sig, y->sig);
}

bool row_valid(const db_lazy_table *f, const db_drow *r, const ids *id) {
    opdb_span a = db_lazy_cell(f, r, id->mb_dur), p = db_lazy_cell(f, r, id->prof_avg);
    return opdb_py_float_or_zero(a.p, a.n) > 0 || opdb_py_float_or_zero(p.p, p.n) > 0;
}

static void add_gap(merge_ctx *m, const db_drow *t) {
    opdb_span mbs = db_lazy_cell(m->f, t, m->id.mb_dur), ps = db_lazy_cell(m->f, t, m->id.prof_avg);
    double mb = opdb_py_float_or_zero(mbs.p, mbs.n), prof = opdb_py_float_or_zero(ps.p, ps.n);
    if (!(mb > 0 && prof > 0)) return;
    /* only hotspots are reported (update_report.c): ratio outside [0.8, 1.2] */
    double ratio = mb / prof;
    if (!(ratio < 0.8 || ratio > 1.2)) return;
    update_result *r = m->res;
    OPDB_ALLOC_GROW(r->gaps, r->ngaps + 1, r->capgaps);
    sig_of_drow(m->f, t, &m->id, r->stem, &m->disp, true);
    gap *g = &r->gaps[r->ngaps++];
    g->op = opdb_xstrdup(r->stem);
    g->csv_name = opdb_xstrdup(r->name);
    g->sig = opdb_xstrdup(m->disp.p);
    g->mb = mb;
    g->prof = prof;
    g->diff = mb - prof < 0 ? prof - mb : mb - prof;
    g->ratio = ratio;
}

/* A key set's ids in this file's key space (rows of one aggregation share
 * a handful of key sets). */
static const kset_ids *kset_ids_of(merge_ctx *m, const agg_keyset *kset) {
    for (int k = 0; k < m->nkset; k++)
        if (m->kset[k]->kset == kset) return m->kset[k];
    db_keyspace *ks = &m->f->ks;
    kset_ids *lk = opdb_arena_alloc(&ks->arena, sizeof *lk);
    lk->kset = kset;
    for (int i = 0; i < kset->n; i++) lk->id[i] = db_ks_add(ks, kset->key[i]);
    lk->measured = opdb_arena_alloc(&ks->arena, (size_t)ks->cap * sizeof *lk->measured);
    for (int k = 0; k < ks->cap; k++) lk->measured[k] = -1;
    for (int i = kset->n - 1; i >= 0; i--)
        if (lk->id[i] >= 0 && (i == AGG_K_DUR || kset->num[i] > 0)) lk->measured[lk->id[i]] = i;
    lk->nsplice = 0; /* header columns: only a file read by the fast path has its rows spliced */
    for (int i = 0; m->f->colkey && i < m->f->nh && lk->nsplice < AGG_MAX_KEYS; i++) {
        int li = lk->measured[m->f->colkey[i]];
        if (li < 0) continue;
        lk->splice_col[lk->nsplice] = i;
        lk->splice_li[lk->nsplice++] = li;
    }
    if (m->nkset == MAX_KSETS) m->nkset--; /* forget one; the old one stays valid */
    m->kset[m->nkset++] = lk;
    return lk;
}

/* Copies the measured values of nr into t; returns whether Average
 * Duration(us) changed (compared stripped, as the reference). */
static bool apply(merge_ctx *m, db_drow *t, const agg_row *nr) {
    opdb_span old = opdb_py_strip(db_drow_at(t, m->id.mb_dur));
    char buf[400];
    opdb_span nv = agg_span(nr, AGG_K_DUR, buf);
    bool changed = !opdb_span_eq(old, opdb_py_strip(nv));
    put_measured(&m->f->ks, t, nr, kset_ids_of(m, nr->kset)->id);
    return changed;
}

/* apply() for a lazy row that has no patch yet and keeps MB_DUR: the new
 * duration goes into the kept cell, the rest is kept as a patch. */
static bool apply_lazy(merge_ctx *m, size_t ri, const agg_row *nr) {
    db_lazy_table *f = m->f;
    db_drow *t = &f->rows[ri];
    int slot = f->slot_of_key[m->id.mb_dur];
    char buf[400];
    opdb_span nv = agg_span(nr, AGG_K_DUR, buf);
    bool changed = !opdb_span_eq(opdb_py_strip(t->v[slot]), opdb_py_strip(nv));
    t->v[slot] = opdb_span_make(opdb_arena_strndup(&f->ks.arena, nv.p, nv.n), nv.n);
    if (f->patch[ri].nr) { /* keep the earlier measurement for replay and change detection */
        row_patch *earlier = opdb_arena_alloc(&f->ks.arena, sizeof *earlier);
        *earlier = f->patch[ri];
        f->patch[ri].prev = earlier;
    }
    f->patch[ri].nr = nr;
    f->patch[ri].lk = kset_ids_of(m, nr->kset);
    return changed;
}

/* A lazy row can take nr as a patch: it keeps MB_DUR, and any earlier
 * patch has nr's key set (so both set the same keys). */
static bool lazy_patchable(const merge_ctx *m, size_t ri, const agg_row *nr) {
    const db_lazy_table *f = m->f;
    return f->rows[ri].lazy && (!f->patch[ri].nr || f->patch[ri].nr->kset == nr->kset) &&
           m->id.mb_dur < f->header_keys && f->slot_of_key[m->id.mb_dur] >= 0;
}

/* Whether a lazy row's patches leave a written column other than it was read:
 * the reference compares the final row with its snapshot, so a later alias
 * that puts back the value read undoes an earlier change. */
static bool patch_changes(db_lazy_table *f, size_t ri) {
    const db_drow *row = &f->rows[ri];
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, f->buf + row->raw_off, row->raw_len);
    int nc = 0;
    size_t off;
    bool quote_after;
    if (opdb_csv_fast_skim(&t, f->scratch, f->nh, &nc, &off, &quote_after) <= 0) nc = 0;
    size_t np, k;
    const row_patch **order = patch_chain(&f->patch[ri], &np);
    /* the value read and the current value of each key, as after each db_drow_set */
    opdb_span *orig = np > 1 ? opdb_xcalloc((size_t)f->ks.cap + 1, sizeof *orig) : NULL;
    opdb_span *cur = opdb_xcalloc((size_t)f->ks.cap + 1, sizeof *cur);
    bool *known = opdb_xcalloc((size_t)f->ks.cap + 1, sizeof *known);
    opdb_arena vals;
    opdb_arena_init(&vals, 4096);
    bool changes = false; /* one patch: its first change settles it */
    for (k = 0; k < np && !changes; k++) {
        const row_patch *p = order[k];
        const agg_keyset *kset = p->nr->kset;
        for (int i = 0; i < kset->n && !changes; i++) {
            int id = p->lk->id[i];
            if (id < 0 || p->lk->measured[id] != i || !f->ks.is_col[id]) continue;
            if (!known[id]) {
                int col = id < f->header_keys ? f->col_of_key[id] : -1;
                cur[id] = opdb_span_make("", 0);
                if (col >= 0 && col < nc) {
                    char *d = opdb_arena_alloc(&vals, f->scratch[col].n + 1);
                    cur[id] = opdb_span_make(d, opdb_csv_unquote(f->scratch[col].p, f->scratch[col].n, d));
                }
                if (orig) orig[id] = cur[id];
                known[id] = true;
            }
            char buf[400];
            opdb_span v = agg_span(p->nr, i, buf);
            if (np == 1) changes = !opdb_span_eq(cur[id], v);
            cur[id] = opdb_span_make(opdb_arena_strndup(&vals, v.p, v.n), v.n);
        }
    }
    for (int id = 0; np > 1 && id <= f->ks.cap && !changes; id++) changes = known[id] && !opdb_span_eq(cur[id], orig[id]);
    opdb_arena_free(&vals);
    free(orig);
    free(known);
    free(cur);
    free(order);
    return changes;
}

/* The one rule for whether a row differs from the file as read: a written
 * column set to another value (dirty) by one measurement, or a lazy row
 * whose patches leave one changed.  A dirty row measured twice or more may
 * have been put back (row_unsettled): the caller compares it with the file
 * (rows_differ_from_read).  Rows past norig are new (the caller counts them). */
bool row_changed(db_lazy_table *f, size_t r, size_t norig) {
    if (f->rows[r].dirty) return !row_unsettled(f, r, norig);
    return f->patch && r < norig && f->patch[r].nr && patch_changes(f, r);
}

bool row_unsettled(const db_lazy_table *f, size_t r, size_t norig) {
    return r < norig && f->rows[r].dirty && f->rows[r].nput > 1;
}

/* The value a written column had in the snapshot of row r, from the file
 * read again (g): the legacy duration stands in for Average Duration(us).
 * EP Size is left out: only the pre-snapshot fill sets it. */
static bool snapshot_differs(const db_lazy_table *f, const db_lazy_table *g, size_t r) {
    const db_drow *row = &f->rows[r], *was = &g->rows[r];
    for (int id = 0; id < f->ks.n; id++) {
        if (!f->ks.is_col[id] || strcmp(f->ks.name[id], OPDB_COL_EP_SIZE) == 0) continue;
        int gid = db_ks_find(&g->ks, f->ks.name[id]);
        if (gid < 0 && strcmp(f->ks.name[id], OPDB_COL_MB_DUR) == 0) gid = db_ks_find(&g->ks, OPDB_COL_LEGACY_MB_DUR);
        opdb_span before = gid >= 0 ? db_drow_at(was, gid) : opdb_span_make("", 0);
        if (!opdb_span_eq(db_drow_at(row, id), before)) return true;
    }
    return false;
}

bool rows_differ_from_read(const char *path, db_lazy_table *f, size_t norig) {
    db_lazy_table g;
    memset(&g, 0, sizeof g);
    opdb_err err = {0};
    bool differs = db_lazy_load(path, &g, true, &db_lazy_update_rules, NULL, &err) != 0 || g.n != norig;
    for (size_t r = 0; r < norig && !differs; r++)
        differs = row_unsettled(f, r, norig) && snapshot_differs(f, &g, r);
    db_lazy_free(&g);
    return differs;
}

/* The extra values measured for signature m->sig (opdb bench), if any. */
static void set_extras(merge_ctx *m, db_drow *t) {
    const opdb_update_extra *x = extra_find(&m->xi, m->sig.p);
    if (!x || x->drop || !x->values) return;
    for (size_t c = 0; c < m->o->nextra_cols; c++)
        if (x->values[c])
            db_drow_set(t, &m->f->ks, db_ks_add(&m->f->ks, m->o->extra_cols[c]), opdb_span_cstr(x->values[c]));
}

static bool has_extras(merge_ctx *m) {
    const opdb_update_extra *x = extra_find(&m->xi, m->sig.p);
    return x && !x->drop && x->values;
}

/* The signature of nr for this file is the one the aggregation computed:
 * its op's signature rules are the file's (MatMul aliases, say). */
static bool sig_reusable(merge_ctx *m, const agg_row *nr) {
    if (!m->own_sig_reusable || !nr->key_sig) return false;
    if (nr->key_op != m->class_op) { /* a group's op name is shared by its rows */
        m->class_op = nr->key_op;
        m->class_same = strcmp(nr->key_op, m->res->stem) == 0 || opdb_signature_class(nr->key_op) == m->own_class;
    }
    return m->class_same;
}

/* pre: the row's signature index hash when sig_reusable (merge_list). */
static void merge_row(merge_ctx *m, const agg_row *nr, bool allow_add, const uint64_t *pre) {
    const opdb_update_opts *o = m->o;
    update_result *res = m->res;
    db_lazy_table *f = m->f;
    if (!o->quirks && nr->no_numeric_sample) {
        /* Nothing measured (every sample non-numeric): keep old values, report it. */
        sig_of_agg(nr, res->stem, &m->disp, true);
        opdb_strvec_push(&res->no_sample, m->disp.p);
        return;
    }
    if (pre) {
        opdb_sb_clear(&m->sig);
        opdb_sb_add(&m->sig, nr->key_sig, nr->key_sig_len);
    } else {
        sig_of_agg(nr, res->stem, &m->sig, false);
    }
    db_row_entry *e = db_row_index_find(&m->si, m->sig.p, m->sig.n, pre ? *pre : db_row_index_hash(m->sig.p, m->sig.n));
    if (!e) {
        if (!o->quirks && allow_add && agg_has_na_shape(nr)) {
            res->na_skipped++; /* parse skips such rows: never a new row here either */
            return;
        }
        sig_of_agg(nr, res->stem, &m->disp, true);
        /* the reference lists an added row as missing too; opdb counts it once */
        bool adding = allow_add && !o->missing_only;
        if (allow_add) opdb_strvec_push(adding && !o->quirks ? &res->added_rows : &res->missing, m->disp.p);
        else opdb_sb_addf(m->log, "[WARN] match-only profiling row did not match %s: %s\n", res->name, m->disp.p);
        if (adding) {
            db_drow r = db_drow_new(&f->ks);
            char buf[400];
            const int *ids = kset_ids_of(m, nr->kset)->id;
            for (int i = 0; i < agg_nkeys(nr); i++) db_drow_set(&r, &f->ks, ids[i], agg_span(nr, i, buf));
            set_extras(m, &r);
            db_lazy_push_row(f, r);
            db_row_index_add(&m->si, &m->sig, f->n - 1);
            res->added++;
        }
        return;
    }
    /* The reference updates the first duplicate only; opdb updates them all,
     * counting per database row so "Rows updated" is rows really changed. */
    res->matched++;
    size_t ntargets = o->quirks ? 1 : e->n;
    for (size_t k = 0; k < ntargets; k++) {
        db_drow *t = &f->rows[db_row_entry_row(e, k)];
        bool can_update = !o->missing_only || !row_valid(f, t, &m->id);
        if (!can_update) {
            if (!allow_add) continue;
            res->unchanged++;
        } else {
            size_t ri = db_row_entry_row(e, k);
            if (lazy_patchable(m, ri, nr) && !has_extras(m)) {
                if (apply_lazy(m, ri, nr)) res->updated++;
            } else {
                t = row_mut(f, ri);
                if (apply(m, t, nr)) res->updated++;
                set_extras(m, t);
            }
            t = &f->rows[ri];
            if (t->nput < UINT8_MAX) t->nput++;
        }
        add_gap(m, t);
    }
}

/* merge_row over a list, with what each row will look up asked for from
 * memory a few rows ahead: the aggregated row, then its signature, then
 * the index slot and entry of that signature. */
void merge_list(merge_ctx *m, const agg_row *const *rows, size_t n, bool allow_add) {
    /* stage distances, in rows behind the lead row i: each stage reads what
     * the one before asked for and asks for what the next one reads */
    enum {
        RING = MERGE_PF_RING, TO_SIG = MERGE_PF_TO_SIG, TO_SLOT = MERGE_PF_TO_SLOT, TO_ENTRY = MERGE_PF_TO_ENTRY,
        TO_ROW = MERGE_PF_TO_ROW, TO_CELL = MERGE_PF_TO_CELL, TO_MERGE = MERGE_PF_TO_MERGE
    };
    uint64_t hash[RING];
    bool reuse[RING];
    size_t row_of[RING]; /* the matching database row, when the probe found one (a hint) */
    const db_lazy_table *f = m->f;
    for (size_t i = 0; i < n + TO_MERGE; i++) {
        size_t k;
        if (i < n) __builtin_prefetch(rows[i]);
        if (i >= TO_SIG && (k = i - TO_SIG) < n && (reuse[k % RING] = sig_reusable(m, rows[k]))) {
            __builtin_prefetch(rows[k]->key_sig);
            __builtin_prefetch(rows[k]->key_sig + 64);
        }
        if (i >= TO_SLOT && (k = i - TO_SLOT) < n && reuse[k % RING]) {
            uint64_t h = hash[k % RING] = db_row_index_hash(rows[k]->key_sig, rows[k]->key_sig_len);
            if (m->si.ix.nslots) __builtin_prefetch(&m->si.ix.slot[h & (m->si.ix.nslots - 1)]);
        }
        if (i >= TO_ENTRY && (k = i - TO_ENTRY) < n) {
            row_of[k % RING] = SIZE_MAX;
            uint32_t idx;
            if (reuse[k % RING]) {
                opdb_hprobe pr = opdb_hindex_probe(&m->si.ix, hash[k % RING]);
                if (opdb_hprobe_next(&pr, &idx)) {
                    __builtin_prefetch(&m->si.e[idx]);
                    row_of[k % RING] = idx;
                }
            }
        }
        if (i >= TO_ROW && (k = i - TO_ROW) < n && row_of[k % RING] != SIZE_MAX) {
            const db_row_entry *e = &m->si.e[row_of[k % RING]];
            __builtin_prefetch(e->sig);
            __builtin_prefetch(e->sig + 64); /* signatures take ~80 bytes */
            row_of[k % RING] = e->row0 < f->n ? e->row0 : SIZE_MAX;
            if (row_of[k % RING] != SIZE_MAX) {
                __builtin_prefetch(&f->rows[e->row0]);
                if (e->row0 < f->npatch) __builtin_prefetch(&f->patch[e->row0]);
            }
        }
        if (i >= TO_CELL && (k = i - TO_CELL) < n && row_of[k % RING] != SIZE_MAX) {
            const db_drow *d = &f->rows[row_of[k % RING]];
            if (d->lazy) {
                __builtin_prefetch(d->v);
                __builtin_prefetch(f->buf + d->raw_off); /* its first cells */
                __builtin_prefetch(f->buf + d->raw_off + 64);
                __builtin_prefetch(f->buf + d->raw_off + 128);
            }
        }
        if (i >= TO_MERGE && (k = i - TO_MERGE) < n)
            merge_row(m, rows[k], allow_add, reuse[k % RING] ? &hash[k % RING] : NULL);
    }
}

/* A lazy row's signature as soon as it is read, from its kept cells (as
 * sig_of_drow would read them). */
void index_at_load(void *ctx, db_lazy_table *f, size_t r) {
    merge_ctx *m = ctx;
    if (r == 1) db_row_index_reserve(&m->si, f->cap / 2 + 16); /* f->cap: twice the rows the first one suggests */
    const db_drow *row = &f->rows[r];
    opdb_sig_cells c = db_sig_cells_from_row(&f->lazy_sig, row->v, DB_LAZY_NCELLS);
    opdb_signature(&c, m->res->stem, &m->sig);
    db_row_index_add_soon(&m->si, &m->sig, r);
}
