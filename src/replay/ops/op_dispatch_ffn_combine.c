/* DispatchFFNCombine (docs/REPLAY-OPS.md §2.4): fused MoE dispatch -> expert FFN ->
 * combine over an expert-parallel group. The row is parsed and checked per
 * spec (exactly 7 input and 2 output slots per list, none empty; shapes
 * consistent) but there is no CPU kernel: it needs an EP group of devices. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

enum { X, W1, W2, EXPERT_IDX, SCALE1, SCALE2, PROBS, NIN };

/* Recorded shape and dtype as is (no FRACTAL_NZ expansion, §2.4). */
static int raw_tensor(const opdb_row_slots *s, size_t i, opdb_tensor *t, opdb_err *err) {
    memset(t, 0, sizeof *t);
    if (opdb_replay_shape(s->shape[i], t, err)) return -1;
    return opdb_dtype_parse(s->dt[i], strlen(s->dt[i]), &t->dtype, err);
}

static bool same_shape(const opdb_tensor *a, const opdb_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* scale: a 2-D recorded shape must equal (e, n); a 1-D one must hold e*n values. */
static int check_scale(const opdb_tensor *t, int64_t e, int64_t n, const char *name, opdb_err *err) {
    bool ok = t->ndim == 2 ? t->dims[0] == e && t->dims[1] == n : t->ndim == 1 && t->dims[0] == e * n;
    if (ok) return 0;
    char a[128];
    return opdb_fail(err, OPDB_ERR_RUNTIME, "DispatchFFNCombine: %s shape (%s) must be (%lld, %lld)", name,
                     opdb_plan_shape_str(t, a, sizeof a), (long long)e, (long long)n);
}

static int dfc_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    opdb_row_slots in, out;
    opdb_row_slots_read(row, false, &in);
    opdb_row_slots_read(row, true, &out);
    if (opdb_row_slots_expect(row, &in, NIN, false, err) || opdb_row_slots_expect(row, &out, 2, true, err)) return -1;
    for (size_t i = 0; i < NIN + 2; i++) {
        const opdb_row_slots *s = i < NIN ? &in : &out;
        size_t k = i < NIN ? i : i - NIN;
        if (!opdb_row_slot_present(s, k))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "DispatchFFNCombine: %s slot %zu is empty", i < NIN ? "input" : "output",
                             k);
        if (raw_tensor(s, k, i < NIN ? &p->in[k] : &p->out[k], err)) return -1;
    }
    const opdb_tensor *x = &p->in[X], *w1 = &p->in[W1], *w2 = &p->in[W2], *ids = &p->in[EXPERT_IDX];
    const opdb_tensor *etn = &p->out[1];
    if (x->ndim != 2 || w1->ndim != 3 || w2->ndim != 3)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "DispatchFFNCombine: x must be 2-D and w1, w2 3-D");
    int64_t m = x->dims[0], h = x->dims[1], e = w1->dims[0];
    if (w2->dims[0] != e || w2->dims[2] != h)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "DispatchFFNCombine: w2 must be (%lld, ., %lld)", (long long)e,
                         (long long)h);
    if (ids->ndim != 2 || ids->dims[0] != m || !same_shape(ids, &p->in[PROBS]))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "DispatchFFNCombine: expert_idx and probs must both be (%lld, topk)",
                         (long long)m);
    if (!same_shape(&p->out[0], x))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "DispatchFFNCombine: output shape must equal x");
    if (!((etn->ndim == 1 && etn->dims[0] == e) || (etn->ndim == 2 && etn->dims[0] == 1 && etn->dims[1] == e)))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "DispatchFFNCombine: expert_token_nums must be (%lld,) or (1, %lld)",
                         (long long)e, (long long)e);
    if (check_scale(&p->in[SCALE1], e, w1->dims[2], "scale1", err) || check_scale(&p->in[SCALE2], e, h, "scale2", err))
        return -1;
    p->in[SCALE2].dtype = p->in[SCALE1].dtype; /* both scales take dt[4] */
    p->in[EXPERT_IDX].dtype = OPDB_DT_I32;
    p->in[PROBS].dtype = OPDB_DT_F32;
    p->out[1].dtype = OPDB_DT_I32;
    p->nin = NIN;
    p->nout = 2;
    int64_t topk = ids->dims[1];
    p->iparam[0] = m, p->iparam[1] = h, p->iparam[2] = e, p->iparam[3] = w1->dims[2], p->iparam[4] = topk;
    p->flops = 2.0 * (double)(m * topk) * (double)h * (double)(w1->dims[2] + w2->dims[1]);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

const opdb_op_def opdb_op_DispatchFFNCombine = {
    .name = "DispatchFFNCombine",
    .plan = dfc_plan,
    .cpu_skip_reason = "needs an expert-parallel group of devices",
};
