/* RINGMLAPrefillBF16Kernel (docs/REPLAY-OPS.md §2.5): MLA prefill attention of one
 * ring step. q = (q_nope | q_rope) (Tq, H, Dn + Dr), k = (k_nope | k_rope)
 * (Tk, H, Dn + Dr), value (Tk, H, Dv), scale 1/sqrt(Dn + Dr). First ring (no
 * prefix state): causal (query i sees keys j <= i + Tk - Tq), fresh output and
 * lse. With the prefix output/lse (slots 13, 14): no mask (the reference's
 * first successful attempt), and the result is merged with the prefix by
 * log-sum-exp weights. Outputs: attention (Tq, H, Dv) and lse (H, Tq) fp32.
 * Row parsing (docs/REPLAY-OPS.md §2.5): optional slots (blank, UNDEFINED, DT_UNDEFINED, N/A,
 * NA, NULL are absent), >= 5 slots; output shape from out0 or slot 13; lse
 * shape from out1, slot 14 or (heads, q_len). Keys are streamed in chunks
 * with an online softmax. */
#include <math.h>
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

enum { QN, QR, KN, KR, VAL, PO, PLSE };
enum { P_TQ, P_TK, P_H, P_DN, P_DR, P_DV, P_PREFIX };
#define RING_CHUNK 256

static bool absent_token(const char *s) {
    static const char *const none[] = {"", "UNDEFINED", "DT_UNDEFINED", "N/A", "NA", "NULL"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (strcmp(s, none[i]) == 0) return true;
    return false;
}

/* Slot i as a tensor when present (dtype: its own, else dt0 of the inputs);
 * ndim 0 when absent. */
static int optional_slot(const opdb_row_slots *s, const opdb_row_slots *in, size_t i, opdb_tensor *t, opdb_err *err) {
    memset(t, 0, sizeof *t);
    if (i >= s->n_shape || absent_token(s->shape[i])) return 0;
    const char *dt = i < s->n_dt && !absent_token(s->dt[i]) ? s->dt[i] : in->n_dt ? in->dt[0] : "";
    return opdb_replay_make(s->shape[i], "ND", dt, false, t, err);
}

static int ring_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    opdb_row_slots in, out;
    opdb_row_slots_read(row, false, &in);
    opdb_row_slots_read(row, true, &out);
    if (in.n_shape < 5)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "RINGMLAPrefillBF16Kernel expects at least 5 input slots, got %zu",
                         in.n_shape);
    for (size_t i = 0; i < 5; i++) {
        if (optional_slot(&in, &in, i, &p->in[i], err)) return -1;
        if (p->in[i].ndim == 0)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "RINGMLAPrefillBF16Kernel: required input slot %zu is absent", i);
    }
    opdb_tensor o0, o1, prefix_o, prefix_lse;
    if (optional_slot(&out, &in, 0, &o0, err) || optional_slot(&out, &in, 1, &o1, err) ||
        optional_slot(&in, &in, 13, &prefix_o, err) || optional_slot(&in, &in, 14, &prefix_lse, err))
        return -1;
    const opdb_tensor *qn = &p->in[QN];
    for (int i = 0; i < 5; i++)
        if (p->in[i].ndim != 3 || opdb_plan_need_float(row, &p->in[i], "q/k/v", err))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "RINGMLAPrefillBF16Kernel: q, k and v slots must be (tokens, heads, dim)");
    int64_t tq = qn->dims[0], h = qn->dims[1], tk = p->in[KN].dims[0], dn = qn->dims[2], dr = p->in[QR].dims[2];
    int64_t dv = p->in[VAL].dims[2];
    bool agree = p->in[QR].dims[0] == tq && p->in[KR].dims[0] == tk && p->in[VAL].dims[0] == tk &&
                 p->in[KN].dims[2] == dn && p->in[KR].dims[2] == dr;
    for (int i = 1; i < 5; i++) agree = agree && p->in[i].dims[1] == h;
    if (!agree || dn + dr > OPDB_VEC_ROPE_MAX || dv > OPDB_VEC_ROPE_MAX)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "RINGMLAPrefillBF16Kernel: q/k/v shapes do not agree (or dims above %d)",
                         OPDB_VEC_ROPE_MAX);
    opdb_tensor outt = o0.ndim ? o0 : prefix_o;
    if (outt.ndim == 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "RINGMLAPrefillBF16Kernel: no output shape (out0 or slot 13)");
    int64_t lse_dims[2] = {h, tq};
    opdb_tensor lse = o1.ndim ? o1 : prefix_lse.ndim ? prefix_lse : opdb_plan_tensor(OPDB_DT_F32, 2, lse_dims);
    bool prefix = prefix_o.ndim && prefix_lse.ndim;
    if (opdb_tensor_numel(&outt) != tq * h * dv || opdb_tensor_numel(&lse) != h * tq ||
        (prefix && (opdb_tensor_numel(&prefix_o) != tq * h * dv || opdb_tensor_numel(&prefix_lse) != h * tq)))
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "RINGMLAPrefillBF16Kernel: output/lse shapes must hold %lld x %lld x %lld and %lld x %lld values",
                         (long long)tq, (long long)h, (long long)dv, (long long)h, (long long)tq);
    if (opdb_plan_need_float(row, &outt, "output", err)) return -1;
    lse.dtype = OPDB_DT_F32;
    p->nin = 5;
    if (prefix) {
        p->in[PO] = prefix_o;
        p->in[PLSE] = prefix_lse;
        p->in[PLSE].dtype = OPDB_DT_F32;
        p->nin = 7;
    }
    p->nout = 2;
    p->out[0] = outt;
    p->out[1] = lse;
    int64_t ip[] = {tq, tk, h, dn, dr, dv, prefix};
    memcpy(p->iparam, ip, sizeof ip);
    p->fparam[0] = 1.0 / sqrt((double)(dn + dr));
    double pairs = prefix ? (double)tq * (double)tk : (double)tq * (double)tk - (double)tq * (double)(tq - 1) / 2.0;
    p->flops = 2.0 * pairs * (double)h * (double)(dn + dr + dv);
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

/* One (query, head): online softmax over the visible keys in chunks. */
static void ring_query(const opdb_op_problem *p, int64_t i, int64_t hd) {
    const int64_t *ip = p->iparam;
    int64_t tk = ip[P_TK], h = ip[P_H], dn = ip[P_DN], dr = ip[P_DR], dv = ip[P_DV];
    int64_t visible = ip[P_PREFIX] ? tk : i + tk - ip[P_TQ] + 1;
    visible = visible < 0 ? 0 : visible > tk ? tk : visible;
    float q[OPDB_VEC_ROPE_MAX], k[OPDB_VEC_ROPE_MAX], v[OPDB_VEC_ROPE_MAX], acc[OPDB_VEC_ROPE_MAX], s[RING_CHUNK];
    const opdb_tensor *in = p->in;
    opdb_vec_load(q, in[QN].data, in[QN].dtype, (size_t)((i * h + hd) * dn), (size_t)dn);
    opdb_vec_load(q + dn, in[QR].data, in[QR].dtype, (size_t)((i * h + hd) * dr), (size_t)dr);
    for (int64_t d = 0; d < dv; d++) acc[d] = 0.0f;
    float m = -INFINITY, l = 0.0f, scale = (float)p->fparam[0];
    for (int64_t c = 0; c < visible; c += RING_CHUNK) {
        int64_t n = visible - c < RING_CHUNK ? visible - c : RING_CHUNK;
        for (int64_t j = 0; j < n; j++) {
            int64_t row = (c + j) * h + hd;
            opdb_vec_load(k, in[KN].data, in[KN].dtype, (size_t)(row * dn), (size_t)dn);
            opdb_vec_load(k + dn, in[KR].data, in[KR].dtype, (size_t)(row * dr), (size_t)dr);
            s[j] = opdb_vec_dot(q, k, (size_t)(dn + dr)) * scale;
        }
        float cm = opdb_vec_max(s, (size_t)n, m);
        float rescale = m > -INFINITY ? expf(m - cm) : 0.0f;
        for (int64_t d = 0; d < dv; d++) acc[d] *= rescale;
        l *= rescale;
        m = cm;
        for (int64_t j = 0; j < n; j++) s[j] -= m;
        opdb_vec_exp(s, (size_t)n);
        l += opdb_vec_sum(s, (size_t)n);
        for (int64_t j = 0; j < n; j++) {
            opdb_vec_load(v, in[VAL].data, in[VAL].dtype, (size_t)(((c + j) * h + hd) * dv), (size_t)dv);
            for (int64_t d = 0; d < dv; d++) acc[d] += s[j] * v[d];
        }
    }
    float lse = l > 0.0f ? m + logf(l) : -INFINITY, inv = l > 0.0f ? 1.0f / l : 0.0f;
    for (int64_t d = 0; d < dv; d++) acc[d] *= inv;
    size_t orow = (size_t)((i * h + hd) * dv), lidx = (size_t)(hd * ip[P_TQ] + i);
    if (ip[P_PREFIX]) { /* merge with the previous ring steps by their log-sum-exp */
        float lp = ((const float *)in[PLSE].data)[lidx], mx = lp > lse ? lp : lse;
        float wp = mx > -INFINITY ? expf(lp - mx) : 0.0f, wn = mx > -INFINITY ? expf(lse - mx) : 0.0f;
        float tot = wp + wn;
        opdb_vec_load(v, in[PO].data, in[PO].dtype, orow, (size_t)dv);
        for (int64_t d = 0; d < dv; d++) acc[d] = tot > 0.0f ? (v[d] * wp + acc[d] * wn) / tot : 0.0f;
        lse = tot > 0.0f ? mx + logf(tot) : -INFINITY;
    }
    opdb_vec_store(p->out[0].data, p->out[0].dtype, orow, acc, (size_t)dv);
    ((float *)p->out[1].data)[lidx] = lse;
}

static int ring_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    const int64_t *ip = p->iparam;
    int64_t pairs = ip[P_TQ] * ip[P_H];
    OPDB_OMP_FOR(pairs * ip[P_TK] * (ip[P_DN] + ip[P_DR]))
    for (int64_t u = 0; u < pairs; u++) {
        OPDB_PIN();
        ring_query(p, u / ip[P_H], u % ip[P_H]);
    }
    return 0;
}

const opdb_op_def opdb_op_RINGMLAPrefillBF16Kernel = {
    .name = "RINGMLAPrefillBF16Kernel",
    .plan = ring_plan,
    .cpu_run = ring_run,
};
