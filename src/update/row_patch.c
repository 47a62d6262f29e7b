/* See row_patch.h. */
#include "update/row_patch.h"

#include <stdlib.h>

const row_patch **patch_chain(const row_patch *last, size_t *n) {
    size_t np = 0;
    for (const row_patch *p = last; p; p = p->prev) np++;
    const row_patch **order = opdb_xmalloc((np ? np : 1) * sizeof *order);
    size_t k = np;
    for (const row_patch *p = last; p; p = p->prev) order[--k] = p;
    *n = np;
    return order;
}

void put_measured(db_keyspace *ks, db_drow *t, const agg_row *nr, const int *ids) {
    char buf[400];
    db_drow_set(t, ks, ids[AGG_K_DUR], agg_span(nr, AGG_K_DUR, buf));
    for (int i = 0; i < agg_nkeys(nr); i++)
        if (nr->kset->num[i] > 0) /* the "MicroBench <metric>" means */
            db_drow_set(t, ks, ids[i], agg_span(nr, i, buf));
}

db_drow *row_mut(db_lazy_table *f, size_t i) {
    bool lazy = f->rows[i].lazy;
    db_drow *row = db_lazy_row_full(f, i);
    if (lazy && f->patch && f->patch[i].nr) { /* the measurements again, oldest first */
        size_t np;
        const row_patch **order = patch_chain(&f->patch[i], &np);
        for (size_t k = 0; k < np; k++) put_measured(&f->ks, row, order[k]->nr, order[k]->lk->id);
        free(order);
        f->patch[i].nr = NULL;
        f->patch[i].prev = NULL;
    }
    return row;
}

int update_load_table(const char *path, db_lazy_table *f, bool eager, opdb_err *err) {
    int rc = db_lazy_load(path, f, eager, &db_lazy_update_rules, NULL, err);
    if (rc == 0 && f->lazy_rows) {
        f->patch = opdb_xcalloc(f->n + 1, sizeof *f->patch);
        f->npatch = f->n;
    }
    return rc;
}
