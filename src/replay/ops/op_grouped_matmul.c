/* GroupedMatmul (docs/REPLAY-OPS.md §2.3, slots): x = slot0, weight = slot1,
 * scale = ones(slot3), group_list = even split over slot7[0] groups,
 * per-token scale = ones(slot8); rows of group g multiply weight[g]. */
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/ops/grouped_rule.h"
#include "replay/ops/ops.h"

enum { IN_X = OPDB_GR_X, IN_W = OPDB_GR_W, IN_SCALE = OPDB_GR_WSCALE, IN_PTS = OPDB_GR_XSCALE, IN_GL = OPDB_GR_LIST };

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    opdb_row_slots s, o;
    opdb_row_slots_read(row, false, &s);
    opdb_row_slots_read(row, true, &o);
    memset(p, 0, sizeof *p);
    p->nin = OPDB_GR_COUNT;
    if (!opdb_row_slot_present(&s, 0) || !opdb_row_slot_present(&s, 1))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "GroupedMatmul needs x (slot 0) and weight (slot 1)");
    opdb_err local = {0, ""};
    if (opdb_replay_make(s.shape[0], "ND", s.dt[0][0] ? s.dt[0] : "DT_BF16", false, &p->in[IN_X], &local))
        return opdb_fail(err, local.code, "GroupedMatmul slot 0: %s", local.msg);
    opdb_tensor *w = &p->in[IN_W];
    if (s.n_fmt > 1 && strcmp(s.fmt[1], "FRACTAL_NZ") == 0) { /* 3-D NZ weight: kept as given */
        if (opdb_replay_shape(s.shape[1], w, err)) return -1;
        if (w->ndim == 3) {
            if (opdb_dtype_parse(s.dt[1], strlen(s.dt[1]), &w->dtype, err)) return -1;
            w->nz = true;
        } else if (opdb_grouped_slot(row, &s, 1, "DT_BF16", w, err)) {
            return -1;
        }
    } else if (opdb_grouped_slot(row, &s, 1, "DT_BF16", w, err)) {
        return -1;
    }
    if (opdb_grouped_slot(row, &s, 3, "DT_FLOAT", &p->in[IN_SCALE], err) ||
        opdb_grouped_list(row, &s, 7, &p->in[IN_GL], err) ||
        opdb_grouped_slot(row, &s, 8, "DT_FLOAT", &p->in[IN_PTS], err))
        return -1;
    opdb_grouped g = {0, 0, 0, p->in[IN_GL].dims[0]};
    if (opdb_grouped_shapes(row, &p->in[IN_X], w, &p->in[IN_GL], &g.m, &g.n, &g.k, err)) return -1;
    opdb_dtype ot = p->in[IN_X].dtype == OPDB_DT_I8 ? OPDB_DT_BF16 : p->in[IN_X].dtype;
    for (size_t i = 0; i < o.n_dt; i++)
        if (o.dt[i][0]) {
            if (opdb_dtype_parse(o.dt[i], strlen(o.dt[i]), &ot, err)) return -1;
            break;
        }
    if (!opdb_dtype_is_float(ot))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "GroupedMatmul: unsupported output dtype %s", opdb_dtype_name(ot));
    int64_t od[2] = {g.m, g.n};
    p->out[0] = opdb_plan_tensor(ot, 2, od);
    p->nout = 1;
    opdb_grouped_account(p, &g, 0.0);
    return 0;
}

static int cpu_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)err;
    opdb_grouped g;
    const float *y = opdb_grouped_compute(p, ws, &g);
    opdb_from_f32(y, (opdb_tensor *)&p->out[0], (size_t)(g.m * g.n));
    return 0;
}

const opdb_op_def opdb_op_GroupedMatmul = {"GroupedMatmul", NULL, plan, opdb_grouped_fill_op, cpu_run, NULL};
