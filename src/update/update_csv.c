/* See update_csv.h.  One CSV's run: load (db/lazy_table.c, row_patch.c),
 * index and merge (db/row_index.c, csv_merge.c), decide which rows to keep
 * and whether the file changed, write (csv_write.c).  Rows keep the
 * reference's dict semantics (db/dict_row.h); a row is "dirty" when a
 * written column changes, so change detection needs no second rendering. */
#include "update/update_csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/fs.h"
#include "opdb/ingest.h"
#include "opdb/pystr.h"
#include "opdb/signature.h"
#include "update/csv_merge.h"
#include "update/csv_write.h"
#include "update/db_columns.h"

static void result_names(update_result *res, const char *path) {
    memset(res, 0, sizeof *res);
    res->path = opdb_xstrdup(path);
    res->name = opdb_xstrdup(opdb_path_basename(path));
    size_t nl = strlen(res->name);
    res->stem = opdb_xstrdup(res->name);
    if (nl > 4 && strcmp(res->name + nl - 4, ".csv") == 0) res->stem[nl - 4] = '\0';
}

/* A DispatchFFNCombine file without EP Size borrows the single incoming value. */
static void legacy_ep_size(merge_ctx *m, opdb_strvec *cols, const agg_row *const *merge, size_t nmerge,
                           const agg_row *const *match, size_t nmatch) {
    opdb_strvec eps = {0};
    for (size_t i = 0; i < nmerge + nmatch; i++) {
        const agg_row *r = i < nmerge ? merge[i] : match[i - nmerge];
        char vb[400];
        opdb_span e = opdb_py_strip(opdb_span_cstr(agg_get(r, OPDB_COL_EP_SIZE, vb)));
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)e.n, e.p);
        if (e.n && opdb_strvec_find(&eps, buf) < 0) opdb_strvec_push(&eps, buf);
    }
    if (eps.n == 1) {
        opdb_strvec_push(cols, OPDB_COL_EP_SIZE);
        int id = db_ks_add(&m->f->ks, OPDB_COL_EP_SIZE);
        for (size_t r = 0; r < m->f->n; r++) db_drow_set(row_mut(m->f, r), &m->f->ks, id, opdb_span_cstr(eps.v[0]));
        opdb_sb_addf(m->log, "[WARN] %s has no EP Size column; using incoming EP Size=%s for legacy row matching.\n",
                     m->res->name, eps.v[0]);
    }
    opdb_strvec_free(&eps);
}

/* A table update would otherwise merge into and rewrite: refused when it is
 * not a database table (random bytes, another CSV) or ends inside a quote,
 * so that its garbage is never kept as rows.  An empty file is a new table. */
static int check_table(const char *path, const db_lazy_table *f, opdb_err *err) {
    if (f->fields.n && opdb_strvec_find(&f->fields, OPDB_COL_INPUT_SHAPES) < 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: not a database table: the header has no %s column", path,
                         OPDB_COL_INPUT_SHAPES);
    for (size_t i = 1; i < f->fields.n; i++) /* DictReader keeps the last of two same-named cells: say so */
        for (size_t k = 0; k < i; k++)
            if (strcmp(f->fields.v[i], f->fields.v[k]) == 0) {
                opdb_warn("%s:1: column '%s' appears twice in the header: the last one is used", path, f->fields.v[i]);
                k = i;
            }
    if (f->unterminated_line)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s:%llu: unterminated quoted field (the quote never closes before the end of the file)", path,
                         f->unterminated_line);
    return 0;
}

/* The simple path (opts.eager; opdb sets it for OPDB_UPDATE_EAGER=1): every row read by
 * the exact tokenizer into a dict row and rendered again on write; no lazy
 * rows, patches, splices or copies.  Tests run both paths and compare. */
static bool eager_rows(const opdb_update_opts *o) {
    return o->eager;
}

int update_csv(const opdb_update_opts *o, const char *path, const agg_row *const *merge, size_t nmerge,
               const agg_row *const *match, size_t nmatch, update_result *res, opdb_strbuf *log, opdb_err *err) {
    result_names(res, path);
    db_lazy_table f;
    memset(&f, 0, sizeof f);
    opdb_strvec cols = {0};
    merge_ctx m;
    memset(&m, 0, sizeof m);
    m.o = o;
    m.f = &f;
    m.res = res;
    m.log = log;
    opdb_sb_init(&m.sig);
    opdb_sb_init(&m.disp);
    char stem_norm[256];
    opdb_normalize_op_name(res->stem, strlen(res->stem), stem_norm, sizeof stem_norm);
    /* EP Size may still change (legacy_ep_size), and only DFC signatures read it */
    m.own_sig_reusable = strcmp(stem_norm, "DispatchFFNCombine") != 0;
    m.own_class = opdb_signature_class(res->stem);
    if (m.own_sig_reusable) {
        f.on_lazy_row = index_at_load;
        f.on_lazy_row_ctx = &m;
    }
    /* taken before reading: a change by another program from here on stops the run */
    opdb_file_id read_id;
    opdb_file_id_take(path, &read_id);
    bool exists = opdb_path_exists(path);
    if (exists) {
        if (update_load_table(path, &f, eager_rows(o), err)) {
            opdb_sb_free(&m.sig);
            opdb_sb_free(&m.disp);
            db_row_index_free(&m.si);
            db_lazy_free(&f);
            return -1;
        }
        if (!o->quirks && check_table(path, &f, err)) {
            opdb_sb_free(&m.sig);
            opdb_sb_free(&m.disp);
            db_row_index_free(&m.si);
            db_lazy_free(&f);
            return -1;
        }
        if (f.reread) { /* rows indexed before the anomaly are gone */
            db_row_index_free(&m.si);
            memset(&m.si, 0, sizeof m.si);
        }
        db_row_index_flush(&m.si); /* the last rows index_at_load queued */
        db_columns_of_file(&f.fields, &cols);
    } else {
        db_ks_init(&f.ks, 140);
        db_columns_new(&cols);
        for (size_t i = 0; i < nmerge; i++)
            for (int k = 0; k < agg_nkeys(merge[i]); k++)
                if (opdb_strvec_find(&cols, agg_key(merge[i], k)) < 0) opdb_strvec_push(&cols, agg_key(merge[i], k));
    }
    if (!o->quirks)
        for (size_t i = 0; i < o->nextra_cols; i++)
            if (opdb_strvec_find(&cols, o->extra_cols[i]) < 0) opdb_strvec_push(&cols, o->extra_cols[i]);
    for (size_t i = 0; i < cols.n; i++) db_ks_add(&f.ks, cols.v[i]);

    extra_index_build(&m.xi, o, res->stem);
    if (strcmp(stem_norm, "DispatchFFNCombine") == 0 && opdb_strvec_find(&cols, OPDB_COL_EP_SIZE) < 0)
        legacy_ep_size(&m, &cols, merge, nmerge, match, nmatch);
    for (size_t i = 0; i < cols.n; i++) f.ks.is_col[db_ks_add(&f.ks, cols.v[i])] = true;
    db_sig_cols_from_names(&m.id.sig, (const char *const *)f.ks.name, (size_t)f.ks.n);
    m.id.mb_dur = db_ks_add(&f.ks, MB_DUR);
    m.id.prof_avg = db_ks_add(&f.ks, PROF_AVG_DUR);
    m.id.legacy = db_ks_find(&f.ks, LEGACY_MB_DUR);

    for (size_t r = f.seen_lazy; r < f.n; r++) {
        sig_of_drow(&f, &f.rows[r], &m.id, res->stem, &m.sig, false);
        db_row_index_add(&m.si, &m.sig, r);
    }
    for (size_t i = 0; i < m.si.n; i++) {
        if (m.si.e[i].n < 2) continue;
        res->dups = opdb_xrealloc(res->dups, (res->ndups + 1) * sizeof *res->dups);
        sig_of_drow(&f, &f.rows[m.si.e[i].row0], &m.id, res->stem, &m.disp, true);
        res->dups[res->ndups].sig = opdb_xstrdup(m.disp.p);
        res->dups[res->ndups++].count = m.si.e[i].n;
    }
    if (res->ndups > 1) qsort(res->dups, res->ndups, sizeof *res->dups, cmp_dup);
    for (size_t r = 0; r < f.n; r++) {
        db_drow *row = &f.rows[r];
        /* (a file with the legacy column and no MB_DUR has no lazy rows) */
        if (!row->lazy && db_drow_has(row, m.id.legacy) && !db_drow_has(row, m.id.mb_dur))
            db_drow_link(row, &f.ks, m.id.mb_dur, row->v[m.id.legacy]);
        row->dirty = false; /* the snapshot for change detection is taken here */
    }
    size_t norig = f.n;

    merge_list(&m, merge, nmerge, true);
    merge_list(&m, match, nmatch, false);
    if (res->na_skipped)
        opdb_sb_addf(log, "[SKIP] %s: %lu profiled row(s) with N/A shapes not added (parse skips them too).\n", res->name,
                     res->na_skipped);

    bool *keep = opdb_xmalloc((f.n + 1) * sizeof *keep);
    bool changed = f.n != norig, unsettled = false;
    for (size_t r = 0; r < f.n; r++) {
        keep[r] = true;
        changed = changed || row_changed(&f, r, norig);
        unsettled = unsettled || row_unsettled(&f, r, norig);
        bool drop = false;
        if (m.xi.ndrop) {
            sig_of_drow(&f, &f.rows[r], &m.id, res->stem, &m.sig, false);
            const opdb_update_extra *x = extra_find(&m.xi, m.sig.p);
            drop = x && x->drop;
        }
        if (drop || (o->prune && !row_valid(&f, &f.rows[r], &m.id))) {
            keep[r] = false;
            changed = true;
            sig_of_drow(&f, &f.rows[r], &m.id, res->stem, &m.disp, true);
            opdb_strvec_push(&res->deleted, m.disp.p);
        }
    }
    /* rows measured more than once may have been put back as read */
    if (exists && !changed && unsettled) changed = rows_differ_from_read(path, &f, norig);
    int rc = 0;
    if (!exists || changed) {
        if (!exists) {
            char *dir = opdb_path_parent(path);
            rc = opdb_mkdirs(dir, err);
            free(dir);
        }
        opdb_atomic_file af;
        if (rc == 0) rc = opdb_atomic_open(&af, path, err);
        if (rc == 0) {
            opdb_atomic_expect(&af, &read_id);
            write_rows(&af, &cols, &f, keep);
            rc = opdb_atomic_commit(&af, err);
        }
    }
    free(keep);
    opdb_sb_free(&m.sig);
    opdb_sb_free(&m.disp);
    db_row_index_free(&m.si);
    extra_index_free(&m.xi);
    opdb_strvec_free(&cols);
    db_lazy_free(&f);
    return rc;
}
