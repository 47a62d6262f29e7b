/* Per-model coverage of one operator CSV for `opdb grid` (opdb only): each
 * target model's distinct shapes within the memory budget, counted as
 * measured, pending or new before any row is added (grid_cov). */
#include <stdlib.h>
#include <string.h>
#include "grid/file_ctx.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"

/* A row with a valid `Average Duration(us)` or `Profiling Average
 * Duration(us)` (docs/FORMAT.md §3.3). */
static bool measured_row(const opdb_span *row, const int dur[2]) {
    for (int i = 0; i < 2; i++)
        if (dur[i] >= 0 && opdb_py_float_or_zero(row[dur[i]].p, row[dur[i]].n) > 0) return true;
    return false;
}

int grid_file_coverage(fctx *F, const grid_pattern *p, opdb_err *err) {
    grid_run *R = F->R;
    int dur[2] = {grid_table_col(&F->t, OPDB_COL_MB_DUR), grid_table_col(&F->t, OPDB_COL_PROF_AVG_DUR)};
    grid_sigset done;
    grid_sigset_init(&done);
    for (size_t r = 0; r < F->t.nrows; r++) {
        if (!measured_row(F->t.rows[r], dur)) continue;
        grid_fctx_sign_row(F, F->t.rows[r], &F->key);
        grid_sigset_add(&done, &F->key);
    }
    int rc = 0;
    prow *r = opdb_xmalloc(sizeof *r);
    for (size_t m = 0; m < R->nmodels && !rc; m++) {
        bool again = false; /* one line per model, however often it was named */
        for (size_t k = 0; k < m; k++) again |= R->models[k] == R->models[m];
        if (again) continue;
        grid_cands cs = {0};
        const grid_model *one[1] = {R->models[m]};
        if (!(rc = grid_fctx_generate(F, p, one, 1, true, &cs, err))) {
            if (R->ncov == R->covcap) R->cov = opdb_xrealloc(R->cov, (R->covcap = R->covcap ? R->covcap * 2 : 16) * sizeof *R->cov);
            grid_cov *cv = &R->cov[R->ncov++];
            memset(cv, 0, sizeof *cv);
            cv->model = R->models[m];
            cv->op = opdb_xstrdup(F->kt);
            cv->file = opdb_xstrdup(F->path);
            grid_sigset shapes;
            grid_sigset_init(&shapes);
            for (size_t ci = 0; ci < cs.n; ci++) {
                grid_fctx_prepare(F, &cs, ci, r);
                if (grid_fctx_over_budget(F, r)) continue;
                grid_fctx_sign(F, r);
                if (!grid_sigset_add(&shapes, &F->key)) continue;
                cv->shapes++;
                if (grid_sigset_has(&done, &F->key)) cv->measured++;
                else if (grid_fctx_seen_has(F, &F->key)) cv->pending++;
                else cv->fresh++;
            }
            grid_sigset_free(&shapes);
        }
        grid_cands_free(&cs);
    }
    free(r);
    grid_sigset_free(&done);
    return rc;
}
