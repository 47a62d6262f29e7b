/* FusedInferAttentionScore (docs/REPLAY-OPS.md §2.5, 31 input slots): query,
 * key, value (+ query/key rope), causal mask per sparse mode, per-batch
 * sequence lengths, paged KV through a block table. Layouts: 3-D query TND
 * (or BSH), 4-D query with rope BNSD/BSND; outputs may be re-laid (_NBSD,
 * _NTD). Lengths live in p->aux: q lengths, kv lengths, blocks per batch. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "replay/cpu/attention.h"
#include "replay/cpu/kernels.h"
#include "replay/ops/even_split.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

#define NSLOTS 31
enum { S_Q = 0, S_K = 1, S_V = 2, S_MASK = 4, S_QLEN = 5, S_KVLEN = 6, S_TABLE = 14, S_QROPE = 24, S_KROPE = 25 };
enum { L_TND, L_BSND, L_BNSD, L_NTD, L_NBSD };
enum { P_B, P_N, P_NKV, P_D, P_DR, P_DV, P_SPARSE, P_BS, P_W, P_QL, P_OL, P_TOTAL, P_MASK, P_SKV, P_COPIES };
enum { MASK_NONE, MASK_CAUSAL, MASK_ZERO };

static const char *const K = "FusedInferAttentionScore";

static int layout_code(const char *s, size_t n) {
    static const char *const names[] = {"TND", "BSH", "BSND", "BNSD", "NTD", "NBSD"};
    static const int codes[] = {L_TND, L_BSND, L_BSND, L_BNSD, L_NTD, L_NBSD};
    for (int i = 0; i < 6; i++)
        if (strlen(names[i]) == n && memcmp(s, names[i], n) == 0) return codes[i];
    return -1;
}

/* "1,2,3" (brackets and spaces tolerated) -> values; 0 when blank, -1 on junk. */
static int int_list(const opdb_replay_row *row, const char *col, int64_t *out, int max, int *n, opdb_err *err) {
    const char *p = row->cell(row, col);
    *n = 0;
    while (*p) {
        while (*p == ' ' || *p == '[' || *p == ']' || *p == '"' || *p == ',') p++;
        if (!*p) break;
        const char *e = p;
        while (*e && *e != ',' && *e != ']' && *e != ' ' && *e != '"') e++;
        long long v;
        if (!opdb_py_int(p, (size_t)(e - p), &v))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s is not a list of integers", K, col);
        if (*n == max) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s holds more than %d values", K, col, max);
        out[(*n)++] = v;
        p = e;
    }
    return 0;
}

/* Per-batch lengths from cumulative ends (TND) or as given. */
static int lengths_from(const int64_t *v, int n, bool cumulative, int64_t *out, const char *what, opdb_err *err) {
    for (int i = 0; i < n; i++) {
        out[i] = cumulative ? v[i] - (i ? v[i - 1] : 0) : v[i];
        if (out[i] < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: negative %s length", K, what);
    }
    return 0;
}

static int read_slots(const opdb_replay_row *row, opdb_row_slots *s, bool *raw, opdb_err *err) {
    opdb_row_slots_read(row, false, s);
    const char *rawc = row->cell(row, OPDB_COL_RT_RAW_SHAPES);
    opdb_span rs = opdb_py_strip_chars(opdb_py_strip(opdb_span_cstr(rawc ? rawc : "")), "\"");
    *raw = rs.n > 0;
    if (*raw) s->n_shape = opdb_replay_split(rawc, true, s->shape, OPDB_MAX_TENSORS);
    if (s->n_shape > NSLOTS)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects at most %d input shape slots, got %zu", K, NSLOTS, s->n_shape);
    for (; s->n_shape < NSLOTS; s->n_shape++) s->shape[s->n_shape][0] = '\0';
    if (s->n_dt != NSLOTS || s->n_fmt != NSLOTS)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects exactly %d input slots in Input Data Types and Input Formats, got %zu and %zu",
                         K, NSLOTS, s->n_dt, s->n_fmt);
    return 0;
}

/* Mask slot (§2.5): (.., 2048, 2048) -> causal of bool/int8/uint8; else zeros. */
static int plan_mask(const opdb_replay_row *row, const opdb_row_slots *s, opdb_op_problem *p, int64_t sparse,
                     opdb_err *err) {
    opdb_tensor *m = &p->in[S_MASK];
    if (opdb_row_slot_present(s, S_MASK)) {
        if (opdb_row_slot_make(row, s, S_MASK, m, err)) return -1;
        const bool big = m->ndim >= 2 && m->dims[m->ndim - 1] == 2048 && m->dims[m->ndim - 2] == 2048;
        if (big && m->dtype != OPDB_DT_BOOL && m->dtype != OPDB_DT_I8 && m->dtype != OPDB_DT_U8)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: causal mask dtype %s is not bool, int8 or uint8", K,
                             opdb_dtype_name(m->dtype));
        p->iparam[P_MASK] = big ? MASK_CAUSAL : MASK_ZERO;
    } else if (sparse == 3) {
        int64_t d[2] = {2048, 2048};
        *m = opdb_plan_tensor(OPDB_DT_I8, 2, d);
        p->iparam[P_MASK] = MASK_CAUSAL;
    }
    return 0;
}

/* Batch from a length slot's element count; -1 when the slot is empty. */
static int64_t slot_batch(const opdb_row_slots *s, size_t i) {
    opdb_tensor t;
    opdb_err e = {0, ""};
    if (!opdb_row_slot_present(s, i) || opdb_replay_shape(s->shape[i], &t, &e)) return -1;
    return opdb_tensor_numel(&t);
}

/* Lengths without runtime values: a cumulative even split (each >= 1) of
 * t's tokens (TND), else t's sequence dim for each of its dims[0] == batch. */
static int default_lengths(const opdb_tensor *t, int64_t batch, bool cumulative, int seq_dim, int64_t *out,
                           const char *what, opdb_err *err) {
    if (cumulative) {
        int64_t ends[OPDB_MAX_AUX / 4];
        opdb_even_split(t->dims[0], batch, true, true, ends);
        return lengths_from(ends, (int)batch, true, out, what, err);
    }
    if (t->dims[0] != batch)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s batch %lld differs from %lld sequence lengths", K, what,
                         (long long)t->dims[0], (long long)batch);
    for (int64_t b = 0; b < batch; b++) out[b] = t->dims[seq_dim];
    return 0;
}

typedef struct fia_ctx {
    bool q3, paged, cum_q, cum_kv;
    int64_t block_size;
} fia_ctx;

static int plan_lengths(const opdb_replay_row *row, const opdb_row_slots *s, opdb_op_problem *p, const fia_ctx *c,
                        opdb_err *err) {
    const opdb_tensor *q = &p->in[S_Q], *k = &p->in[S_K];
    int64_t vals[OPDB_MAX_AUX / 4], *ql = p->aux;
    int n = 0;
    if (int_list(row, OPDB_COL_RT_ASL_VALUES, vals, OPDB_MAX_AUX / 4, &n, err)) return -1;
    int64_t batch;
    if (n) {
        batch = n;
        if (lengths_from(vals, n, c->cum_q, ql, "query", err)) return -1;
    } else {
        batch = slot_batch(s, S_QLEN);
        if (batch < 0) batch = c->q3 && c->cum_q ? 1 : q->dims[0];
        if (batch < 1 || batch > OPDB_MAX_AUX / 4)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: unsupported batch %lld", K, (long long)batch);
        if (default_lengths(q, batch, c->cum_q, p->iparam[P_QL] == L_BNSD ? 2 : 1, ql, "query", err)) return -1;
    }
    int64_t *kl = p->aux + batch;
    if (int_list(row, OPDB_COL_RT_ASLKV_VALUES, vals, OPDB_MAX_AUX / 4, &n, err)) return -1;
    if (n) {
        if (n != batch)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %d kv lengths for a batch of %lld", K, n, (long long)batch);
        if (lengths_from(vals, n, c->cum_kv, kl, "kv", err)) return -1;
    } else {
        int64_t kb = slot_batch(s, S_KVLEN);
        if (kb < 0) kb = batch;
        if (kb != batch)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %lld kv lengths for a batch of %lld", K, (long long)kb, (long long)batch);
        if (c->paged) {
            int64_t valid[OPDB_MAX_AUX / 4];
            int nv = 0;
            if (int_list(row, OPDB_COL_RT_BT_VALID, valid, OPDB_MAX_AUX / 4, &nv, err)) return -1;
            if (nv && nv != batch)
                return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %d valid-block counts for a batch of %lld", K, nv, (long long)batch);
            for (int64_t b = 0; b < batch; b++) kl[b] = (nv ? (valid[b] > 1 ? valid[b] : 1) : 1) * c->block_size;
        } else if (default_lengths(k, batch, c->cum_kv, p->iparam[P_QL] == L_BNSD ? 2 : 1, kl, "kv", err)) {
            return -1;
        }
    }
    p->iparam[P_B] = batch;
    p->naux = (int)(3 * batch);
    return 0;
}

/* Block table (B, W): row r needs max(1, ceil(len/bs)) blocks, at most W. */
static int plan_table(const opdb_replay_row *row, const opdb_row_slots *s, opdb_op_problem *p, opdb_err *err) {
    opdb_tensor *t = &p->in[S_TABLE];
    if (opdb_row_slot_make(row, s, S_TABLE, t, err)) return -1;
    const int64_t batch = p->iparam[P_B], bs = p->iparam[P_BS];
    if (t->ndim != 2 || t->dims[0] != batch)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: block table %s needs %lld rows", K, s->shape[S_TABLE], (long long)batch);
    if (t->dtype != OPDB_DT_I32 && t->dtype != OPDB_DT_I64)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: block table dtype %s is not an integer index type", K,
                         opdb_dtype_name(t->dtype));
    p->iparam[P_W] = t->dims[1];
    for (int64_t b = 0; b < batch; b++) {
        int64_t len = p->aux[batch + b], need = (len + bs - 1) / bs;
        if (need < 1) need = 1;
        if (need > t->dims[1])
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: kv length %lld needs %lld blocks, block table has %lld", K,
                             (long long)len, (long long)need, (long long)t->dims[1]);
        p->aux[2 * batch + b] = need;
    }
    return 0;
}

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    opdb_row_slots s;
    bool raw;
    memset(p, 0, sizeof *p);
    if (read_slots(row, &s, &raw, err)) return -1;
    p->nin = NSLOTS;
    opdb_tensor *q = &p->in[S_Q], *k = &p->in[S_K], *v = &p->in[S_V];
    if (opdb_row_slot_make(row, &s, S_Q, q, err) || opdb_row_slot_make(row, &s, S_K, k, err) ||
        opdb_row_slot_make(row, &s, S_V, v, err))
        return -1;
    int64_t sparse;
    if (!opdb_replay_cell_int(row, OPDB_COL_RT_SPARSE_MODE, &sparse)) sparse = opdb_row_slot_present(&s, S_MASK) ? 3 : 0;
    p->iparam[P_SPARSE] = sparse;
    if (plan_mask(row, &s, p, sparse, err)) return -1;
    const bool has_rope = opdb_row_slot_present(&s, S_QROPE);
    if (has_rope && (opdb_row_slot_make(row, &s, S_QROPE, &p->in[S_QROPE], err) ||
                     (opdb_row_slot_present(&s, S_KROPE) && opdb_row_slot_make(row, &s, S_KROPE, &p->in[S_KROPE], err))))
        return -1;
    fia_ctx c = {q->ndim == 3, opdb_row_slot_present(&s, S_TABLE), false, false, 0};
    int64_t heads, kv_heads;
    const char *lay_cell = row->cell(row, OPDB_COL_RT_INPUT_LAYOUT);
    opdb_span lay = opdb_py_strip(opdb_span_cstr(lay_cell ? lay_cell : ""));
    if (c.q3) {
        if (!lay.n) lay = opdb_span_cstr("TND");
        if (!opdb_replay_cell_int(row, OPDB_COL_RT_NUM_HEADS, &heads)) heads = q->dims[1];
        if (!opdb_replay_cell_int(row, OPDB_COL_RT_NUM_KV_HEADS, &kv_heads)) kv_heads = c.paged ? 1 : k->dims[1];
        p->fparam[0] = 1.0 / sqrt((double)q->dims[2]);
    } else if (q->ndim == 4 && has_rope) {
        if (!lay.n) lay = opdb_span_cstr("BNSD_NBSD");
        if (!opdb_replay_cell_int(row, OPDB_COL_RT_NUM_HEADS, &heads)) heads = q->dims[1];
        if (!opdb_replay_cell_int(row, OPDB_COL_RT_NUM_KV_HEADS, &kv_heads)) kv_heads = 1;
        p->fparam[0] = 1.0 / sqrt((double)(q->dims[3] + p->in[S_QROPE].dims[p->in[S_QROPE].ndim - 1]));
    } else {
        return opdb_fail(err, OPDB_ERR_RUNTIME, "Unsupported FusedInferAttentionScore shape pattern");
    }
    /* §2.5: valid row the reference keeps without replaying it */
    if (k->ndim == 3 && opdb_span_eq_cstr(lay, "TND") && kv_heads != k->dims[1] && !raw) {
        opdb_fail(err, OPDB_ERR_RUNTIME,
                  "not replayable exactly: 3-D key with TND layout, kv heads %lld != key[1] %lld and no raw input shapes",
                  (long long)kv_heads, (long long)k->dims[1]);
        return OPDB_PLAN_SKIP;
    }
    const char *us = memchr(lay.p, '_', lay.n);
    int ql = layout_code(lay.p, us ? (size_t)(us - lay.p) : lay.n);
    int ol = us ? layout_code(us + 1, lay.n - (size_t)(us + 1 - lay.p)) : ql;
    const size_t qn = us ? (size_t)(us - lay.p) : lay.n;
    const bool q_ok = c.q3 ? (qn == 3 && (!memcmp(lay.p, "TND", 3) || !memcmp(lay.p, "BSH", 3)))
                           : (qn == 4 && (!memcmp(lay.p, "BSND", 4) || !memcmp(lay.p, "BNSD", 4)));
    if (!q_ok || ol < 0 || (ql == L_TND) != (ol == L_TND || ol == L_NTD))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: layout %.*s is not supported for a %d-D query", K, (int)lay.n, lay.p, q->ndim);
    if (heads < 1 || kv_heads < 1 || heads % kv_heads)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %lld heads do not group over %lld kv heads", K, (long long)heads,
                         (long long)kv_heads);
    c.cum_q = ql == L_TND;
    c.cum_kv = c.cum_q && !c.paged;
    p->iparam[P_QL] = ql, p->iparam[P_OL] = ol, p->iparam[P_N] = heads, p->iparam[P_NKV] = kv_heads;
    /* head dims: the last dim, divided by the heads when they share it (BSH, paged 3-D) */
    const int64_t qlast = q->dims[q->ndim - 1], klast = k->dims[k->ndim - 1], vlast = v->dims[v->ndim - 1];
    const bool q_shared = c.q3 && ql == L_BSND, kv_shared = (c.paged && k->ndim == 3) || (!c.paged && q_shared);
    const int64_t d = q_shared ? qlast / heads : qlast;
    p->iparam[P_D] = d;
    p->iparam[P_DV] = kv_shared ? vlast / kv_heads : vlast;
    if ((kv_shared ? klast / kv_heads : klast) != d || (q_shared && qlast % heads) || (kv_shared && klast % kv_heads))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: query head dim %lld and key %s do not match (%lld/%lld heads)", K,
                         (long long)d, s.shape[S_K], (long long)heads, (long long)kv_heads);
    if (has_rope) {
        const opdb_tensor *qr = &p->in[S_QROPE];
        p->iparam[P_DR] = q_shared ? qr->dims[qr->ndim - 1] / heads : qr->dims[qr->ndim - 1];
    }
    if (c.paged) {
        int64_t bs;
        c.block_size = k->ndim == 3 ? k->dims[1] : k->ndim == 4 ? k->dims[2] : 0;
        if (opdb_replay_cell_int(row, OPDB_COL_RT_BLOCK_SIZE, &bs) && bs > 0) c.block_size = bs;
        if (c.block_size < 1 || (k->ndim != 3 && k->ndim != 4))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: paged key %s has no block size", K, s.shape[S_K]);
        p->iparam[P_BS] = c.block_size;
        p->iparam[P_TOTAL] = k->dims[0];
    } else if (!c.q3 || ql != L_TND) {
        if (k->ndim != q->ndim)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: key %s does not follow the query layout", K, s.shape[S_K]);
        p->iparam[P_SKV] = ql == L_BNSD ? k->dims[2] : k->dims[1];
    }
    if (plan_lengths(row, &s, p, &c, err)) return -1;
    const int64_t batch = p->iparam[P_B];
    int64_t qsum = 0, ksum = 0, qmax = 0;
    for (int64_t b = 0; b < batch; b++) {
        qsum += p->aux[b], ksum += p->aux[batch + b];
        qmax = p->aux[b] > qmax ? p->aux[b] : qmax;
    }
    if (c.cum_q ? qsum > q->dims[0] : qmax > (ql == L_BNSD ? q->dims[2] : q->dims[1]))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: query lengths exceed the query %s", K, s.shape[S_Q]);
    if (c.paged) {
        if (plan_table(row, &s, p, err)) return -1;
    } else {
        for (int64_t b = 0; b < batch; b++)
            if (!c.cum_kv && p->aux[batch + b] > p->iparam[P_SKV])
                return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: kv length %lld exceeds the key %s", K,
                                 (long long)p->aux[batch + b], s.shape[S_K]);
        if (c.cum_kv && ksum > k->dims[0])
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: kv lengths exceed the key %s", K, s.shape[S_K]);
    }
    /* outputs: attention out in the output layout, lse (f32) when slot 1 is requested */
    opdb_tensor *o = &p->out[0];
    const int64_t dv = p->iparam[P_DV], T = q->dims[0], S = ql == L_BNSD ? q->dims[2] : c.q3 ? 0 : q->dims[1];
    int64_t od[4];
    switch (ol) {
    case L_TND: od[0] = T, od[1] = heads, od[2] = dv; break;
    case L_NTD: od[0] = heads, od[1] = T, od[2] = dv; break;
    case L_BSND: od[0] = T, od[1] = c.q3 ? q->dims[1] : S, od[2] = heads, od[3] = dv; break; /* BSH: 3-D below */
    case L_BNSD: od[0] = T, od[1] = heads, od[2] = c.q3 ? q->dims[1] : S, od[3] = dv; break;
    default: od[0] = heads, od[1] = T, od[2] = c.q3 ? q->dims[1] : S, od[3] = dv; break;
    }
    *o = opdb_plan_tensor(q->dtype, (ol == L_TND || ol == L_NTD) ? 3 : 4, od);
    if (c.q3 && ol == L_BSND) o->ndim = 3, o->dims[2] = heads * dv;
    p->nout = 1;
    opdb_row_slots os;
    opdb_row_slots_read(row, true, &os);
    if (os.n_shape >= 2 && opdb_row_slot_present(&os, 1)) {
        int64_t ld[4] = {T, heads, c.cum_q ? 1 : (ql == L_BNSD ? q->dims[2] : q->dims[1]), 1}; /* (T,N,1) / (B,N,S,1) */
        p->out[1] = opdb_plan_tensor(OPDB_DT_F32, c.cum_q ? 3 : 4, ld);
        p->nout = 2;
    }
    const int64_t dr = p->iparam[P_DR], es = (int64_t)opdb_dtype_size(q->dtype);
    double pairs = 0;
    for (int64_t b = 0; b < batch; b++) pairs += (double)p->aux[b] * (double)p->aux[batch + b];
    p->flops = 2.0 * (double)heads * pairs * (double)(d + dr + dv);
    p->bytes = (double)(qsum * heads * (d + dr) * es + ksum * kv_heads * (d + dr + dv) * es) + (double)opdb_tensor_bytes(o);
    opdb_attention a;
    memset(&a, 0, sizeof a);
    a.batch = batch, a.d = d, a.dr = dr, a.dv = dv, a.kv_len = p->aux + batch;
    /* one scratch copy per CPU thread of the running backend (1 when none) */
    p->iparam[P_COPIES] = opdb_cpu_threads();
    p->workspace_bytes = opdb_attention_workspace(&a, (int)p->iparam[P_COPIES]);
    return 0;
}

/* Strides of the tensors in units of one head's vector (see attention.h). */
static void views(const opdb_op_problem *p, opdb_attention *a) {
    const opdb_tensor *q = &p->in[S_Q], *k = &p->in[S_K];
    const int64_t n = a->heads, nkv = a->kv_heads, ql = p->iparam[P_QL], ol = p->iparam[P_OL];
    const int64_t b = q->dims[0], sq = q->ndim == 3 ? (ql == L_TND ? 0 : q->dims[1]) : ql == L_BNSD ? q->dims[2] : q->dims[1];
    const opdb_att_view tnd = {0, 1, n, true, false, 0, 0}, bsnd = {sq * n, 1, n, false, false, 0, 0},
                        bnsd = {n * sq, sq, 1, false, false, 0, 0};
    a->q = ql == L_TND ? tnd : ql == L_BNSD ? bnsd : bsnd;
    const opdb_att_view ntd = {0, q->dims[0], 1, true, false, 0, 0}, nbsd = {sq, b * sq, 1, false, false, 0, 0};
    a->out = ol == L_TND ? tnd : ol == L_NTD ? ntd : ol == L_BSND ? bsnd : ol == L_BNSD ? bnsd : nbsd;
    a->lse = ql == L_TND ? tnd : bnsd;
    const int64_t bs = p->iparam[P_BS], skv = p->iparam[P_SKV];
    if (p->in[S_TABLE].ndim) {
        const opdb_att_view bsh = {0, 1, 0, false, true, bs * nkv, nkv}, pbnsd = {0, bs, 0, false, true, nkv * bs, 1};
        a->kv = k->ndim == 3 ? bsh : pbnsd;
    } else {
        const opdb_att_view ktnd = {0, 1, nkv, true, false, 0, 0}, kbsnd = {skv * nkv, 1, nkv, false, false, 0, 0},
                            kbnsd = {nkv * skv, skv, 1, false, false, 0, 0};
        a->kv = ql == L_TND ? ktnd : ql == L_BNSD ? kbnsd : kbsnd;
    }
}

static void describe(const opdb_op_problem *p, opdb_attention *a) {
    memset(a, 0, sizeof *a);
    a->batch = p->iparam[P_B], a->heads = p->iparam[P_N], a->kv_heads = p->iparam[P_NKV];
    a->d = p->iparam[P_D], a->dr = p->iparam[P_DR], a->dv = p->iparam[P_DV];
    a->sparse_mode = p->iparam[P_SPARSE], a->block_size = p->iparam[P_BS], a->table_w = p->iparam[P_W];
    a->scale = (float)p->fparam[0];
    a->q_len = p->aux, a->kv_len = p->aux + a->batch;
    views(p, a);
}

/* Block table rows: (cursor + j) mod total blocks for the blocks a row needs, 0 after. */
static int fill(opdb_op_problem *p, uint64_t seed, opdb_err *err) {
    (void)seed, (void)err;
    const int64_t batch = p->iparam[P_B];
    opdb_tensor *t = &p->in[S_TABLE], *m = &p->in[S_MASK];
    if (t->data) {
        const int64_t w = p->iparam[P_W], total = p->iparam[P_TOTAL];
        int64_t cursor = 0;
        for (int64_t b = 0; b < batch; b++) {
            const int64_t need = p->aux[2 * batch + b];
            for (int64_t j = 0; j < w; j++)
                opdb_elem_set(t->data, t->dtype, (size_t)(b * w + j), j < need ? (double)((cursor + j) % total) : 0.0);
            cursor += need;
        }
    }
    if (m->data && p->iparam[P_MASK] != MASK_NONE) {
        const int64_t cols = m->dims[m->ndim - 1], rows = m->dims[m->ndim - 2], n = opdb_tensor_numel(m);
        const bool causal = p->iparam[P_MASK] == MASK_CAUSAL;
        for (int64_t e = 0; e < n; e++) {
            const int64_t j = e % cols, i = (e / cols) % rows;
            opdb_elem_set(m->data, m->dtype, (size_t)e, causal && j > i ? 1.0 : 0.0);
        }
    }
    return 0;
}

static int cpu_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)err;
    opdb_attention a;
    describe(p, &a);
    opdb_att_tensors t = {&p->in[S_Q], &p->in[S_K], &p->in[S_V], &p->in[S_QROPE], &p->in[S_KROPE], &p->in[S_MASK],
                          &p->in[S_TABLE], (opdb_tensor *)&p->out[0], p->nout > 1 ? (opdb_tensor *)&p->out[1] : NULL};
    opdb_attention_run(&a, &t, ws, (int)p->iparam[P_COPIES]);
    return 0;
}

const opdb_op_def opdb_op_FusedInferAttentionScore = {"FusedInferAttentionScore", NULL, plan, fill, cpu_run, NULL};
