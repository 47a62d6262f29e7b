/* Candidate storage and template expansion (docs/GRID.md §5): the Cartesian
 * product of a pattern's iterators (last fastest), model N/K pairs,
 * constraints, and shape templates evaluated per combination. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "grid/grid_internal.h"

void grid_cands_free(grid_cands *cs) {
    for (size_t i = 0; i < cs->nover; i++) free(cs->over[i].val);
    free(cs->c), free(cs->pool), free(cs->over);
    memset(cs, 0, sizeof *cs);
}

void grid_cands_clear(grid_cands *cs) {
    for (size_t i = 0; i < cs->nover; i++) free(cs->over[i].val);
    cs->n = cs->npool = cs->nover = 0;
}

void grid_cands_reserve(grid_cands *cs, size_t ncands, size_t npool) {
    if (cs->sink) {
        cs->expect += ncands;
        return;
    }
    if (cs->n + ncands > cs->cap) cs->c = opdb_xrealloc(cs->c, (cs->cap = cs->n + ncands) * sizeof *cs->c);
    if (cs->npool + npool > cs->poolcap) cs->pool = opdb_xrealloc(cs->pool, (cs->poolcap = cs->npool + npool) * sizeof *cs->pool);
}

static void pool_push(grid_cands *cs, int64_t v) {
    OPDB_ALLOC_GROW(cs->pool, cs->npool + 1, cs->poolcap);
    cs->pool[cs->npool++] = v;
}

void grid_cands_add(grid_cands *cs, const grid_shape *in, int nin, const grid_shape *out, int nout,
                    const grid_over *over, int nover) {
    if (nover > GRID_MAX_OVER) { /* a generator's bug: each passes a fixed, smaller count */
        opdb_warn("internal error: %d overrides in one candidate", nover);
        abort();
    }
    if (cs->sink) {
        cs->n++;
        cs->sink(cs->sink_ctx, in, nin, out, nout, over, nover);
        return;
    }
    OPDB_ALLOC_GROW(cs->c, cs->n + 1, cs->cap);
    grid_cand *c = &cs->c[cs->n++];
    c->off = cs->npool;
    c->nin = (uint16_t)nin;
    c->nout = (uint16_t)nout;
    for (int i = 0; i < nin + nout; i++) {
        const grid_shape *s = i < nin ? &in[i] : &out[i - nin];
        pool_push(cs, s->nd);
        for (int d = 0; d < s->nd; d++) pool_push(cs, s->d[d]);
    }
    c->over_off = (uint32_t)cs->nover;
    c->nover = (uint16_t)nover;
    for (int i = 0; i < nover; i++) {
        OPDB_ALLOC_GROW(cs->over, cs->nover + 1, cs->overcap);
        cs->over[cs->nover].col = over[i].col;
        cs->over[cs->nover++].val = opdb_xstrdup(over[i].val);
    }
}

void grid_cands_get(const grid_cands *cs, size_t i, grid_shape *in, int *nin, grid_shape *out, int *nout) {
    const grid_cand *c = &cs->c[i];
    const int64_t *p = cs->pool + c->off;
    *nin = c->nin;
    *nout = c->nout;
    for (int s = 0; s < c->nin + c->nout; s++) {
        grid_shape *d = s < c->nin ? &in[s] : &out[s - c->nin];
        d->nd = (int)*p++;
        for (int k = 0; k < d->nd; k++) d->d[k] = *p++;
    }
}

typedef struct env {
    const char *names[GRID_MAX_VARS];
    int64_t vals[GRID_MAX_VARS];
    size_t n;
} env;

static void vars_repr(const env *e, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "{");
    for (size_t i = 0; i < e->n && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s'%s': %lld", i ? ", " : "", e->names[i], (long long)e->vals[i]);
    if (n < cap) snprintf(out + n, cap - n, "}");
}

static int eval_fail(const opdb_grid_config *cfg, int line, const char *text, const env *e, const char *msg,
                     opdb_err *err) {
    char vars[512];
    vars_repr(e, vars, sizeof vars);
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%d: Failed to eval expression '%s' with vars %s: %s", cfg->name, line,
                     text, vars, msg);
}

static int eval_shape(const opdb_grid_config *cfg, const grid_pattern *p, const char *key, const grid_tmpl *t,
                      const env *e, bool negative_ok, grid_shape *out, opdb_err *err) {
    opdb_grid_vars v = {e->names, e->vals, e->n};
    out->nd = t->ndims;
    for (int d = 0; d < t->ndims; d++) {
        if (!t->dims[d].expr) {
            out->d[d] = t->dims[d].lit;
        } else {
            char msg[256];
            double f;
            bool fl;
            if (opdb_grid_expr_eval(t->dims[d].expr, &v, &out->d[d], &f, &fl, msg, sizeof msg))
                return eval_fail(cfg, t->line, t->text, e, msg, err);
        }
        /* no tensor has a negative extent: such a row could never be replayed */
        if (out->d[d] < 0 && !negative_ok) {
            char vars[512];
            vars_repr(e, vars, sizeof vars);
            return opdb_fail(err, OPDB_ERR_RUNTIME,
                             "%s:%d: pattern '%s' %s shape '%s' has dimension %lld with vars %s: a dimension cannot "
                             "be negative (--reference-quirks writes it)",
                             cfg->name, t->line, p->name ? p->name : "?", key, t->text, (long long)out->d[d], vars);
        }
    }
    return 0;
}

/* Binds (e) or unbinds (NULL) every expression of p to the env's names. */
static void bind_all(const grid_pattern *p, const env *e) {
    opdb_grid_vars v = {e ? e->names : NULL, e ? e->vals : NULL, e ? e->n : 0};
    for (size_t i = 0; i < p->nconstraints; i++) opdb_grid_expr_bind(p->constraints[i].e, e ? &v : NULL);
    for (size_t k = 0; k < 2; k++) {
        const grid_tmpl *t = k ? p->outputs : p->inputs;
        size_t n = k ? p->noutputs : p->ninputs;
        for (size_t i = 0; i < n; i++)
            for (int d = 0; d < t[i].ndims; d++)
                if (t[i].dims[d].expr) opdb_grid_expr_bind(t[i].dims[d].expr, e ? &v : NULL);
    }
}

static int emit(const opdb_grid_config *cfg, const grid_pattern *p, const env *e, bool check, grid_cands *out,
                opdb_err *err) {
    opdb_grid_vars v = {e->names, e->vals, e->n};
    for (size_t i = 0; check && i < p->nconstraints; i++) {
        char msg[256];
        int64_t r;
        double f;
        bool fl;
        if (opdb_grid_expr_eval(p->constraints[i].e, &v, &r, &f, &fl, msg, sizeof msg))
            return eval_fail(cfg, p->constraints[i].line, p->constraints[i].text, e, msg, err);
        if (fl ? f == 0.0 : r == 0) return 0;
    }
    grid_shape in[GRID_MAX_SLOTS], outs[GRID_MAX_SLOTS];
    for (size_t i = 0; i < p->ninputs; i++)
        if (eval_shape(cfg, p, "input", &p->inputs[i], e, out->negative_ok, &in[i], err)) return -1;
    for (size_t i = 0; i < p->noutputs; i++)
        if (eval_shape(cfg, p, "output", &p->outputs[i], e, out->negative_ok, &outs[i], err)) return -1;
    grid_over over[4];
    int nover = 0;
    for (int i = 0; i < 4; i++)
        if (p->over[i]) over[nover].col = grid_override_cols[i], over[nover++].val = p->over[i];
    grid_cands_add(out, in, (int)p->ninputs, outs, (int)p->noutputs, over, nover);
    return 0;
}

int grid_expand_template(const opdb_grid_config *cfg, const grid_pattern *p, const grid_model *const *models,
                         size_t nmodels, bool check_nk_constraints, grid_cands *out, opdb_err *err) {
    bool nk = p->model_nk_pairs && models;
    const grid_iter *its[GRID_MAX_VARS];
    size_t nits = 0;
    for (size_t i = 0; i < p->niters; i++)
        if (!nk || (strcmp(p->iters[i].var, "N") && strcmp(p->iters[i].var, "K"))) its[nits++] = &p->iters[i];
    if (p->model_nk_pairs && !nk)
        for (size_t i = 0; i < p->nfallback; i++) its[nits++] = &p->fallback[i];
    size_t npairs = 0;
    int64_t *pairs = nk ? grid_nk_pairs(models, nmodels, &npairs) : NULL;
    env e = {{0}, {0}, 0};
    /* constants first, then iterators (a dict updated in that order) */
    for (size_t i = 0; i < p->nconsts; i++) e.names[e.n] = p->const_names[i], e.vals[e.n++] = p->const_vals[i];
    size_t base = e.n;
    for (size_t i = 0; i < nits; i++) e.names[base + i] = its[i]->var;
    e.n = base + nits;
    if (nk) e.names[e.n] = "N", e.names[e.n + 1] = "K", e.n += 2;
    bind_all(p, &e); /* names resolved once, not per evaluation */
    /* room for every combination up front: no copying while the pool grows */
    size_t combos = nk ? npairs : 1, per = 0;
    bool overflow = false;
    for (size_t i = 0; i < nits; i++) {
        overflow = overflow || (combos && its[i]->n > SIZE_MAX / combos);
        combos = overflow ? 0 : combos * its[i]->n;
    }
    /* counted before anything is built: a huge product is refused at once */
    if (out->limit && (overflow || combos > out->limit)) {
        free(pairs);
        bind_all(p, NULL);
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s: pattern '%s' expands to more than %llu candidates (%s%zu); raise --max-candidates or "
                         "narrow its ranges",
                         cfg->name, p->name ? p->name : "?", out->limit, overflow ? "over " : "", overflow ? SIZE_MAX : combos);
    }
    for (size_t i = 0; i < p->ninputs; i++) per += 1 + (size_t)p->inputs[i].ndims;
    for (size_t i = 0; i < p->noutputs; i++) per += 1 + (size_t)p->outputs[i].ndims;
    if (combos && combos <= ((size_t)1 << 20)) grid_cands_reserve(out, combos, combos * per);
    size_t idx[GRID_MAX_VARS] = {0};
    int rc = 0;
    for (;;) {
        for (size_t i = 0; i < nits; i++) e.vals[base + i] = its[i]->vals[idx[i]];
        if (nk) {
            for (size_t k = 0; k < npairs && !rc; k++) {
                e.vals[base + nits] = pairs[2 * k];
                e.vals[base + nits + 1] = pairs[2 * k + 1];
                rc = emit(cfg, p, &e, check_nk_constraints, out, err);
            }
        } else {
            rc = emit(cfg, p, &e, true, out, err);
        }
        if (rc) break;
        size_t i = nits;
        while (i > 0 && ++idx[i - 1] == its[i - 1]->n) idx[--i] = 0;
        if (i == 0) break;
    }
    bind_all(p, NULL);
    free(pairs);
    return rc;
}
