/* A file's candidates for `opdb grid` (docs/GRID.md §7.1, §9): generated
 * from the pattern, their overrides resolved to the table's columns, slots
 * aligned and absent slots cleared, then the memory filter. */
#include <string.h>
#include "grid/file_ctx.h"
#include "grid/grid_rows.h"

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
void grid_fctx_finish_prow(fctx *F, prow *r, const grid_over *ov, int nov) {
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
void grid_fctx_prepare(fctx *F, const grid_cands *cs, size_t ci, prow *r) {
    grid_cands_get(cs, ci, r->in, &r->nin, r->out, &r->nout);
    /* no pattern override: the list was never allocated (NULL + 0 is undefined) */
    grid_fctx_finish_prow(F, r, cs->c[ci].nover ? cs->over + cs->c[ci].over_off : NULL, cs->c[ci].nover);
}

bool grid_fctx_over_budget(const fctx *F, const prow *r) {
    uint64_t b = F->R->budget;
    return b && grid_row_bytes(r->in, r->nin, r->out, r->nout, F->isz, F->nisz, F->osz, F->nosz) > b;
}

int grid_fctx_generate(const fctx *F, const grid_pattern *p, const grid_model *const *models, size_t nmodels,
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
