/* opdb check: open the database, hold out every row through the query
 * engine's interpolation (query/loo.h), gather the answers per cell, then
 * report and calibrate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/call.h"
#include "analysis/check_internal.h"
#include "opdb/fs.h"

static void check_defaults(opdb_check_options *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->format = OPDB_CHECK_TEXT;
    o->worst = 20;
}

OPDB_OPTS_INIT_SIZED(opdb_check_options, check_defaults)

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static char *dup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = opdb_xmalloc(n);
    memcpy(d, s, n);
    return d;
}

static void on_table(void *ctx, const q_loo_table *t) {
    ck_run *r = ctx;
    OPDB_ALLOC_GROW(r->tabs, r->ntabs + 1, r->captabs);
    ck_table *c = &r->tabs[r->ntabs++];
    c->t = *t;
    c->kernel = dup(t->kernel);
    c->file = dup(t->file);
    c->path = dup(t->path);
    c->t.kernel = c->kernel, c->t.file = c->file, c->t.path = c->path;
    size_t per = (CK_MAXGROUPS + 1) * 2;
    r->cells = opdb_xrealloc(r->cells, r->ntabs * per * sizeof *r->cells);
    memset(&r->cells[(r->ntabs - 1) * per], 0, per * sizeof *r->cells);
    if (t->covered) r->res->kernel_types++;
    else r->res->unchecked_types++;
}

static void on_row(void *ctx, const q_loo_case *k) {
    ck_run *r = ctx;
    size_t tab = r->ntabs - 1;
    ck_cell *c = ck_cell_at(r, tab, k->group, k->interior);
    c->rows++;
    if (k->recovered) {
        OPDB_ALLOC_GROW(c->err, c->n + 1, c->cap);
        c->err[c->n++] = (k->predicted - k->actual) / k->actual;
    }
    if (k->group >= 0) return;
    OPDB_ALLOC_GROW(r->ans, r->nans + 1, r->capans);
    ck_answer *a = &r->ans[r->nans++];
    memset(a, 0, sizeof *a);
    a->table = (uint32_t)tab;
    a->line = k->line;
    for (int i = 0; i < k->table->nax && i < Q_LOO_MAXAX; i++) a->coords[i] = k->coords[i];
    a->actual = k->actual;
    a->predicted = k->recovered ? k->predicted : NAN;
    a->dim = k->dim;
    a->bucket = k->recovered ? q_loo_bucket(k->spread) : -1;
    a->interior = k->interior;
    r->res->rows++;
    r->res->recovered += k->recovered;
}

static int check_run_call(const char *db_dir, const opdb_check_options *o, opdb_check_result *res, opdb_err *err) {
    opdb_check_options def;
    if (!o) {
        opdb_check_options_init(&def);
        o = &def;
    }
    opdb_check_result local;
    if (!res) res = &local;
    memset(res, 0, sizeof *res);
    res->median_error = res->coverage80 = res->coverage90 = NAN;
    opdb_qdb_opts qo;
    opdb_qdb_opts_init(&qo);
    qo.warn = o->warn;
    qo.warn_ctx = o->warn_ctx;
    /* a calibration is written for the tables it was computed from: the lock is taken
     * before they are read, so that no other writer's commit lands in between (or half
     * way through the reading) */
    int lock = -1;
    if (o->write_calibration && (lock = opdb_dir_lock(db_dir, err)) < 0) return -1;
    opdb_qdb *db = opdb_qdb_open(db_dir, &qo, err);
    if (!db) {
        if (lock >= 0) opdb_dir_unlock(lock);
        return -1;
    }
    ck_run r;
    memset(&r, 0, sizeof r);
    r.dir = db_dir;
    r.o = o;
    r.res = res;
    q_loo_cb cb = {on_table, on_row, &r};
    int rc = q_loo_run(db, &cb, err);
    if (rc == 0) {
        double *e = malloc((r.nans ? r.nans : 1) * sizeof *e);
        size_t n = 0;
        for (size_t i = 0; i < r.nans; i++)
            if (!isnan(r.ans[i].predicted)) e[n++] = fabs(r.ans[i].predicted - r.ans[i].actual) / r.ans[i].actual;
        if (n) {
            qsort(e, n, sizeof *e, cmp_d);
            res->median_error = ck_percentile(e, n, 0.5);
        }
        free(e);
        ck_coverage(&r);
        if (o->out) {
            if (o->format == OPDB_CHECK_JSON) ck_write_json(&r, o->out);
            else ck_write_text(&r, o->out);
        }
        if (o->html_path) rc = ck_write_html(&r, o->html_path, err);
        if (rc == 0 && o->write_calibration) rc = ck_write_calibration(&r, err);
    }
    for (size_t i = 0; i < r.ntabs; i++) {
        free(r.tabs[i].kernel);
        free(r.tabs[i].file);
        free(r.tabs[i].path);
    }
    for (size_t i = 0; i < r.ntabs * (CK_MAXGROUPS + 1) * 2; i++) free(r.cells[i].err);
    free(r.cells);
    free(r.tabs);
    free(r.ans);
    opdb_qdb_close(db);
    if (lock >= 0) opdb_dir_unlock(lock);
    return rc;
}

int opdb_check_run(const char *db_dir, const opdb_check_options *o, opdb_check_result *res, opdb_err *err) {
    opdb_call_scope saved = opdb_call_enter(NULL);
    OPDB_CALL_GUARD(saved, err);
    int rc = check_run_call(db_dir, o, res, err);
    opdb_call_leave(&saved);
    return rc;
}
