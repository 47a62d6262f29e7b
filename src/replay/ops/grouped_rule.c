/* Shared GroupedMatmul* plan/fill pieces (see grouped_rule.h). */
#include <stdlib.h>
#include <string.h>
#include "replay/ops/even_split.h"
#include "replay/ops/grouped_rule.h"

int opdb_grouped_slot(const opdb_replay_row *row, const opdb_row_slots *s, size_t i, const char *dflt_dt,
                      opdb_tensor *t, opdb_err *err) {
    memset(t, 0, sizeof *t);
    if (!opdb_row_slot_present(s, i)) return 0;
    opdb_err local = {0, ""};
    const char *dt = i < s->n_dt && s->dt[i][0] ? s->dt[i] : dflt_dt;
    const char *fm = i < s->n_fmt && strcmp(s->fmt[i], "NULL") != 0 ? s->fmt[i] : "ND";
    if (opdb_replay_make(s->shape[i], fm, dt, false, t, &local))
        return opdb_fail(err, local.code, "%s slot %zu: %s", row->kernel_type, i, local.msg);
    return 0;
}

int opdb_grouped_list(const opdb_replay_row *row, const opdb_row_slots *s, size_t i, opdb_tensor *t, opdb_err *err) {
    if (!opdb_row_slot_present(s, i))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: group_list slot %zu is empty", row->kernel_type, i);
    opdb_tensor shape;
    if (opdb_replay_shape(s->shape[i], &shape, err)) return -1;
    memset(t, 0, sizeof *t);
    const char *dt = i < s->n_dt && s->dt[i][0] ? s->dt[i] : "DT_INT64";
    if (opdb_dtype_parse(dt, strlen(dt), &t->dtype, err)) return -1;
    if (shape.dims[0] < 1) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: group_list needs at least one group", row->kernel_type);
    t->ndim = 1;
    t->dims[0] = shape.dims[0];
    return 0;
}

int opdb_grouped_shapes(const opdb_replay_row *row, const opdb_tensor *x, const opdb_tensor *w,
                        const opdb_tensor *group_list, int64_t *m, int64_t *n, int64_t *k, opdb_err *err) {
    if (x->ndim < 1 || (w->ndim != 2 && w->ndim != 3))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects x (M,K) and weight (G,K,N) or (K,N)", row->kernel_type);
    *k = x->dims[x->ndim - 1];
    *m = 1;
    for (int i = 0; i + 1 < x->ndim; i++) *m *= x->dims[i];
    if (w->dims[w->ndim - 2] != *k)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: weight K=%lld does not match x K=%lld", row->kernel_type,
                         (long long)w->dims[w->ndim - 2], (long long)*k);
    *n = w->dims[w->ndim - 1];
    if (w->ndim == 3 && group_list->dims[0] > w->dims[0])
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %lld groups but the weight holds %lld experts", row->kernel_type,
                         (long long)group_list->dims[0], (long long)w->dims[0]);
    return 0;
}

int opdb_grouped_fill_op(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)seed;
    opdb_tensor *gl = &p->in[OPDB_GR_LIST];
    const int64_t g = gl->dims[0];
    int64_t *ends = malloc((size_t)g * sizeof *ends);
    if (!ends) return opdb_fail(err, OPDB_ERR_RUNTIME, "out of memory");
    opdb_even_split(p->iparam[0], g, true, false, ends);
    for (int64_t i = 0; i < g; i++) opdb_elem_set(gl->data, gl->dtype, (size_t)i, (double)ends[i]);
    free(ends);
    for (int j = OPDB_GR_WSCALE; j <= OPDB_GR_XSCALE; j++) {
        opdb_tensor *t = &p->in[j];
        if (!t->data) continue;
        for (int64_t i = 0; i < opdb_tensor_numel(t); i++) opdb_elem_set(t->data, t->dtype, (size_t)i, 1.0);
    }
    return 0;
}

float *opdb_grouped_compute(const opdb_op_problem *p, void *ws, opdb_grouped *g) {
    opdb_grouped v = {p->iparam[0], p->iparam[1], p->iparam[2], p->iparam[3]};
    *g = v;
    float *y = ws; /* the workspace starts with the fp32 result */
    opdb_grouped_run(g, &p->in[OPDB_GR_X], &p->in[OPDB_GR_W], &p->in[OPDB_GR_LIST], &p->in[OPDB_GR_WSCALE],
                     &p->in[OPDB_GR_XSCALE], y, ws);
    return y;
}

void opdb_grouped_account(opdb_op_problem *p, const opdb_grouped *g, double extra_flops) {
    p->iparam[0] = g->m, p->iparam[1] = g->n, p->iparam[2] = g->k, p->iparam[3] = g->groups;
    p->flops = 2.0 * (double)g->m * (double)g->n * (double)g->k + extra_flops;
    p->bytes = 0;
    for (int i = 0; i < p->nin; i++) p->bytes += (double)opdb_tensor_bytes(&p->in[i]);
    for (int i = 0; i < p->nout; i++) p->bytes += (double)opdb_tensor_bytes(&p->out[i]);
    p->workspace_bytes = opdb_grouped_workspace(g, &p->in[OPDB_GR_X], &p->in[OPDB_GR_W], &p->in[OPDB_GR_WSCALE],
                                                &p->in[OPDB_GR_XSCALE]);
}
