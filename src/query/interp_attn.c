/* Wrapper path of attention ops: interpolation on the average sequence
 * length, batch, heads and head dim (1 to 3 of them), within a regime of
 * dtype, sparse mode, KV heads, layout and quant mode; the token count is
 * never interpolated (it must match, block padding allowed), and the
 * sequence axis can be compared on its square root. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "query/interp_internal.h"

enum { AX_Q, AX_SEQ, AX_HEADS, AX_HD, AX_BATCH };
static const char *const k_at_axes[] = {"q_tokens", "seq", "heads", "head_dim", "batch"};
const char *const *const ip_attn_axes = k_at_axes;

/* every combination of 1-3 of (seq, batch, heads, head_dim), in combination order */
const uint8_t ip_attn_groups[14][4] = {
    {1, AX_SEQ},           {1, AX_BATCH},           {1, AX_HEADS},          {1, AX_HD},
    {2, AX_SEQ, AX_BATCH}, {2, AX_SEQ, AX_HEADS},   {2, AX_SEQ, AX_HD},     {2, AX_BATCH, AX_HEADS},
    {2, AX_BATCH, AX_HD},  {2, AX_HEADS, AX_HD},    {3, AX_SEQ, AX_BATCH, AX_HEADS},
    {3, AX_SEQ, AX_BATCH, AX_HD}, {3, AX_SEQ, AX_HEADS, AX_HD}, {3, AX_BATCH, AX_HEADS, AX_HD}};

/* what the index knows of its table's columns */
enum { AT_USABLE = 1, AT_LAYOUT = 2, AT_QUANT = 4 };

static void build_attn(ip_index *ix, const void *arg) {
    (void)arg;
    q_ktable *t = ix->tab;
    const db_table *d = &t->t;
    int c_avg = db_table_col(d, "Runtime avg_seq_len");
    if (c_avg < 0) c_avg = db_table_col(d, "avg_seq_len");
    int c_sp = db_table_col(d, "Runtime sparse_mode"), c_kv = db_table_col(d, "Runtime num_key_value_heads");
    int c_lay = db_table_col(d, "Runtime input_layout"), c_qm = db_table_col(d, "Runtime quant_mode");
    int c_b = db_table_col(d, "Runtime batch_size");
    ix->flags = (c_lay >= 0 ? AT_LAYOUT : 0) | (c_qm >= 0 ? AT_QUANT : 0);
    if (c_avg < 0 || t->c_in_shapes < 0) return;
    ix->flags |= AT_USABLE;
    for (size_t r = ix->r0; r < ix->r1; r++) {
        const q_row *rw = &t->rows[r];
        const q_list *idt = q_row_in_dt(t, rw);
        const uint32_t nin = q_row_nin(t, rw);
        int64_t a;
        if (!ip_intcell(db_table_cell(d, r, c_avg), &a) || a < 0) continue;
        if (!q_row_shapes_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "cannot parse the shapes");
            continue;
        }
        if (!nin) continue;
        q_shape q = q_row_in(t, rw, 0);
        bool from_k = nin >= 2 && q_row_in(t, rw, 1).rank;
        if (!from_k && q.rank == 0) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "the query shape is ()");
            continue;
        }
        int64_t chd = from_k ? q_row_in(t, rw, 1).d[q_row_in(t, rw, 1).rank - 1] : q.d[q.rank - 1];
        int64_t c3[3];
        if (!q_norm3(q, chd, c3)) continue;
        if (!idt->n) continue;
        double lat;
        bool alt;
        if (!ip_row_latency_at(t, &ix->latcols, r, &lat, &alt)) continue;
        double ax[IP_MAXAX] = {(double)c3[0], (double)a, (double)c3[1], (double)c3[2], NAN};
        int64_t b;
        if (c_b >= 0) {
            if (ip_intcell(db_table_cell(d, r, c_b), &b)) ax[AX_BATCH] = (double)b;
        } else if (q.rank == 4 && q.d[2] == 1) {
            ax[AX_BATCH] = (double)q.d[0];
        }
        ip_kb k;
        ip_kb_init(&k);
        ip_kb_field(&k, "kernel_type");
        ip_kb_str(&k, t->kernel, strlen(t->kernel));
        ip_kb_field(&k, "dtype");
        ip_kb_str(&k, idt->s[0], idt->len[0]);
        int64_t v;
        if (c_sp >= 0) {
            ip_kb_field(&k, "sparse_mode");
            ip_kb_num(&k, ip_intcell(db_table_cell(d, r, c_sp), &v) ? (double)v : -1);
        }
        if (c_kv >= 0) {
            ip_kb_field(&k, "kv_heads");
            ip_kb_num(&k, ip_intcell(db_table_cell(d, r, c_kv), &v) ? (double)v : -1);
        }
        char buf[48];
        opdb_span s;
        if (c_lay >= 0 && ip_strcell(db_table_cell(d, r, c_lay), buf, sizeof buf, &s)) {
            ip_kb_field(&k, "input_layout");
            ip_kb_str(&k, s.p, s.n);
        }
        if (c_qm >= 0 && ip_strcell(db_table_cell(d, r, c_qm), buf, sizeof buf, &s)) {
            ip_kb_field(&k, "quant_mode");
            ip_kb_str(&k, s.p, s.n);
        }
        ip_add(ix, &k, ax, lat, alt, (uint32_t)r);
    }
}

static bool qtok_match(double t, double v) {
    int64_t a = (int64_t)t, b = (int64_t)v;
    return a == b || q_padded(a, b) || q_padded(b, a);
}

/* Python str() of a policy value, NULL when null/absent */
static const char *text_of(q_ctx *c, const qv *v) {
    if (!v || v->kind == QV_NULL) return NULL;
    switch (v->kind) {
    case QV_STR: return v->s;
    case QV_INT: return q_sprintf(c, "%lld", (long long)v->i);
    case QV_BOOL: return v->b ? "True" : "False";
    default: return NULL;
    }
}

/* the groups of ix whose key matches T (quant: T names a quant mode), in index order */
static size_t attn_matching(q_ctx *c, const ip_index *ix, const ip_kb *T, bool quant, uint32_t **gip) {
    const char *req[5] = {"sparse_mode", "kv_heads", "input_layout", NULL, NULL};
    if (quant && (ix->flags & AT_QUANT)) req[3] = "quant_mode";
    uint32_t *gi = opdb_arena_alloc(c->a, (ix->ng ? ix->ng : 1) * sizeof *gi);
    size_t ng = 0;
    const ip_keys *K = ip_group_keys(ix);
    for (size_t g = 0; g < ix->ng; g++)
        if (ip_key_match(T, K->s + K->off[g], K->off[g + 1] - K->off[g], req, NULL)) gi[ng++] = (uint32_t)g;
    *gip = gi;
    return ng;
}

/* the task of kernel kt over ix: every axis group, token counts matched with
 * block padding, the sequence axis on its square root when the policy says so */
static void attn_task(q_ctx *c, const char *kt, const ip_index *ix, ip_task *tk) {
    bool bad = false;
    const qv *ov = q_override(c->db->map.ov_int, kt, &bad);
    const qv *tr = qv_get(ov, "axis_transform");
    if (!tr || tr->kind == QV_NULL) tr = qv_get(ov, "shape_transform");
    bool sq = qv_is_str(tr, "sqrt") || qv_is_str(tr, "sqrt_seq");
    memset(tk, 0, sizeof *tk);
    tk->ix = ix;
    tk->nax = 5;
    tk->groups = ip_attn_groups;
    tk->ngroups = 14;
    tk->maxdim = ip_maxdim(c, kt, NULL);
    tk->match[AX_Q] = qtok_match;
    tk->sqrt_axis = sq ? AX_SEQ : -1;
}

/* The matched groups in order for target tax (its batch axis from has_batch
 * / batch, else from the group's points): true with *o on the first answer,
 * tk->t then pointing at gt (IP_MAXAX, the caller's) for the explain. */
/* Leave-one-out on a 1-D axis group A: of pts, the points the
 * interpolation's filter keeps at the nearest coordinates below, at and above
 * the target on a. The same answer as all of them (bounds, medians and the
 * candidate count come out alike) without merging a whole line per row. */
static bool near_ok(const ip_task *tk, uint32_t p, int a) {
    const ip_index *ix = tk->ix;
    double lat = ip_lat(ix, p);
    if (ip_prow(ix, p) + 1 == tk->skip1 || isnan(ip_ax(ix, p, a)) || !isfinite(lat) || !(lat > 0)) return false;
    for (int k = 0; k < tk->nax; k++) {
        if (k == a || isnan(tk->t[k])) continue;
        double v = ip_ax(ix, p, k);
        if (isnan(v)) return false;
        if (tk->match[k] ? !tk->match[k](tk->t[k], v) : v != tk->t[k]) return false;
    }
    return true;
}

static size_t near_1d(const ip_task *tk, int a, const uint32_t *pts, size_t n, uint32_t *out) {
    const ip_index *ix = tk->ix;
    double t = tk->t[a], below = -INFINITY, above = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!near_ok(tk, pts[i], a)) continue;
        double v = ip_ax(ix, pts[i], a);
        if (v < t && v > below) below = v;
        if (v > t && v < above) above = v;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        double v = ip_ax(ix, pts[i], a);
        if ((v == below || v == t || v == above) && near_ok(tk, pts[i], a)) out[m++] = pts[i];
    }
    return m;
}

static bool attn_groups(q_ctx *c, ip_task *tk, const double *tax, double *gt, const uint32_t *gi, size_t ng,
                        bool has_batch, double batch, bool near, ip_status *last, bool *att, ip_out *o) {
    const ip_index *ix = tk->ix;
    for (size_t g = 0; g < ng; g++) {
        const uint32_t *gpts = ip_gpts(ix, gi[g]);
        uint32_t gn = ip_gn(ix, gi[g]);
        memcpy(gt, tax, IP_MAXAX * sizeof *gt);
        const uint32_t *pts = gpts;
        size_t n = gn;
        bool some_b = false, some_nob = false, same = true;
        double b0 = NAN;
        for (uint32_t j = 0; j < gn; j++) {
            if (ip_prow(ix, gpts[j]) + 1 == tk->skip1) continue; /* a held-out row is not in the table */
            double b = ip_ax(ix, gpts[j], AX_BATCH);
            if (isnan(b)) some_nob = true;
            else {
                if (!some_b) b0 = b;
                else if (b != b0) same = false;
                some_b = true;
            }
        }
        *att = true;
        if (some_b) {
            if (has_batch) {
                gt[AX_BATCH] = batch;
            } else if (some_nob) {
                uint32_t *sub = opdb_arena_alloc(c->a, gn * sizeof *sub);
                n = 0;
                for (uint32_t j = 0; j < gn; j++)
                    if (isnan(ip_ax(ix, gpts[j], AX_BATCH))) sub[n++] = gpts[j];
                pts = sub;
            } else if (same) {
                gt[AX_BATCH] = b0;
            } else {
                last->n = 0;
                last->s[last->n++] = "batch_axis_unconstrained";
                ip_attempt_set(c, ix, gi[g], -1, last);
                continue;
            }
        }
        tk->t = gt;
        if (near && tk->ngroups == 1 && tk->groups[0][0] == 1 && !isnan(gt[tk->groups[0][1]])) {
            uint32_t *sub = opdb_arena_alloc(c->a, (n ? n : 1) * sizeof *sub);
            n = near_1d(tk, tk->groups[0][1], pts, n, sub);
            pts = sub;
        }
        ip_status stt = {.n = 0};
        bool okk = ip_interpolate(c, tk, pts, n, &stt, o);
        *last = stt;
        if (okk) {
            ip_set_answer(o, ix, gi[g], -1);
            return true;
        }
        ip_attempt_set(c, ix, gi[g], -1, &stt);
    }
    return false;
}

/* The groups of one attention kernel for target tg: 1 answered (a hit or an
 * error set), 0 not (*reason says why). */
static int attn_kernel(q_ctx *c, const char *kt, const ip_attn_tg *tg, const char **reason) {
    q_ktable *t = q_table(c->db, kt);
    int st = atomic_load(&t->state);
    if (st == QT_FAILED) {
        q_error(c, "bad_csv", "%s", t->error);
        return 1;
    }
    ip_index *ix = st == QT_OK ? ip_index_get(c->db, t, "attn", build_attn, NULL, 0) : NULL;
    if (!ix || !(ix->flags & AT_USABLE)) {
        *reason = "attention_index_unavailable";
        return 0;
    }
    if (ip_faults(c, ix) < 0) return 1;
    double tax[IP_MAXAX] = {NAN, NAN, NAN, NAN, NAN};
    tax[AX_Q] = (double)tg->q3[0], tax[AX_SEQ] = (double)tg->avg, tax[AX_HEADS] = (double)tg->q3[1],
    tax[AX_HD] = (double)tg->q3[2];
    ip_kb T;
    ip_kb_init(&T);
    ip_kb_field(&T, "kernel_type");
    ip_kb_str(&T, kt, strlen(kt));
    ip_kb_field(&T, "dtype");
    ip_kb_str(&T, tg->prof, strlen(tg->prof));
    if (tg->has_sparse) {
        ip_kb_field(&T, "sparse_mode");
        ip_kb_num(&T, (double)tg->sparse);
    }
    if (tg->has_kv) {
        ip_kb_field(&T, "kv_heads");
        ip_kb_num(&T, (double)tg->kv);
    }
    if (tg->layout) {
        ip_kb_field(&T, "input_layout");
        ip_kb_str(&T, tg->layout, strlen(tg->layout));
    }
    if (tg->quant) {
        ip_kb_field(&T, "quant_mode");
        ip_kb_str(&T, tg->quant, strlen(tg->quant));
    }
    uint32_t *gi;
    size_t ng = attn_matching(c, ix, &T, tg->quant != NULL, &gi);
    if (!ng) {
        *reason = "regime_key_unmatched";
        return 0;
    }
    ip_task tk;
    attn_task(c, kt, ix, &tk);
    ip_status last = {.n = 0};
    bool att = false;
    ip_out o;
    double gt[IP_MAXAX];
    if (attn_groups(c, &tk, tax, gt, gi, ng, tg->has_batch, tg->batch, false, &last, &att, &o)) {
        ip_success(c, &tk, &o, kt, k_at_axes);
        return 1;
    }
    *reason = ip_reason(att ? &last : NULL, "attention_candidate_group_failed");
    return 0;
}

int ip_attention_target(q_ctx *c, const char *const *K, size_t nk, const ip_attn_tg *tg, const char **reason) {
    for (size_t i = 0; i < nk; i++)
        if (attn_kernel(c, K[i], tg, reason)) return 1;
    return 0;
}

void ip_attention(q_ctx *c, const q_entry *e) {
    const char **K;
    size_t nk;
    if (q_entry_kernels(c, e, true, &K, &nk)) return;
    q_set_kernels(c, K, nk);
    const char *reason = "attention_candidate_group_failed";
    const qv *args = c->q->args;
    for (size_t i = 0; i < nk; i++) {
        const char *kt = K[i];
        q_ktable *t = q_table(c->db, kt);
        int st = atomic_load(&t->state);
        if (st == QT_FAILED) {
            q_error(c, "bad_csv", "%s", t->error);
            return;
        }
        ip_index *ix = st == QT_OK ? ip_index_get(c->db, t, "attn", build_attn, NULL, 0) : NULL;
        if (!ix || !(ix->flags & AT_USABLE)) {
            reason = "attention_index_unavailable";
            continue;
        }
        /* target */
        bool ok = args->n >= 7 && args->items[0]->kind == QV_TENSOR && args->items[6]->kind == QV_TENSOR;
        const qv *q = ok ? args->items[0] : NULL, *s = ok ? args->items[6] : NULL, *k = ok ? args->items[1] : NULL;
        ip_attn_tg tg;
        memset(&tg, 0, sizeof tg);
        if (ok) {
            int64_t hd = k->kind == QV_TENSOR && k->shape.rank >= 1 ? k->shape.d[k->shape.rank - 1] : 0;
            ok = q_norm3(q->shape, hd, tg.q3) && q_avgseq(s, &tg.avg) && (tg.prof = q_dtype_prof(q->dtype)) != NULL;
        }
        if (!ok) {
            if (ip_faults(c, ix) < 0) return;
            reason = "attention_target_unavailable";
            continue;
        }
        bool four = q->shape.rank == 4;
        tg.has_batch = four || s->shape.rank >= 1;
        tg.batch = four ? (double)q->shape.d[0] : (double)q_numel(s->shape);
        tg.layout = four ? "BNSD_NBSD" : "TND";
        tg.has_sparse = tg.has_kv = true;
        tg.sparse = four ? 0 : 3, tg.kv = -1;
        if (k->kind == QV_TENSOR && k->shape.rank >= 2) {
            if (four && k->shape.rank >= 4) tg.kv = k->shape.d[1];
            else tg.kv = k->shape.d[k->shape.rank - 2];
        }
        bool bad = false;
        const qv *ov = q_override(c->db->map.ov_int, kt, &bad);
        tg.quant = text_of(c, qv_get(ov, "quant_mode"));
        if (!tg.quant) tg.quant = text_of(c, qv_get(e->v, "quant_mode"));
        if (!tg.quant) tg.quant = text_of(c, qv_get(c->q->kwargs, "quant_mode"));
        if (attn_kernel(c, kt, &tg, &reason)) return;
    }
    q_miss(c, reason);
}

/* an integer field of the kernel-level attention object; false when absent or not an integer */
static bool att_int(const qv *att, const char *name, int64_t *v) {
    const qv *x = qv_get(att, name);
    return x && x->kind != QV_NULL && qv_as_int(x, v);
}

void ip_kernel_attention(q_ctx *c, const char *const *K, size_t nk, const q_tins *in, const qv *att) {
    ip_attn_tg tg;
    memset(&tg, 0, sizeof tg);
    if (in->n < 1 || !q_norm3(in->v[0].s, 0, tg.q3) || !att_int(att, "avg_seq_len", &tg.avg)) {
        q_miss(c, "attention_target_unavailable");
        return;
    }
    tg.prof = in->v[0].prof ? in->v[0].prof : q_dtype_prof(in->v[0].dtype);
    if (!tg.prof) {
        q_miss(c, "attention_target_unavailable");
        return;
    }
    tg.has_sparse = att_int(att, "sparse_mode", &tg.sparse);
    tg.has_kv = att_int(att, "num_kv_heads", &tg.kv);
    int64_t b;
    if (att_int(att, "batch_size", &b)) tg.has_batch = true, tg.batch = (double)b;
    const qv *lay = qv_get(att, "input_layout");
    if (lay && lay->kind == QV_STR && lay->n) tg.layout = lay->s;
    else if (tg.has_sparse && (tg.sparse == 0 || tg.sparse == 3)) tg.layout = tg.sparse == 0 ? "BNSD_NBSD" : "TND";
    const char *reason = "attention_candidate_group_failed";
    if (!ip_attention_target(c, K, nk, &tg, &reason)) q_miss(c, reason);
}

/* ------------------------------------------------------------ leave-one-out */
ip_index *ip_attn_index(const opdb_qdb *db, q_ktable *t) {
    ip_index *ix = ip_index_get(db, t, "attn", build_attn, NULL, 0);
    return ix && (ix->flags & AT_USABLE) ? ix : NULL;
}

size_t ip_attn_loo_groups(q_ctx *c, const ip_index *ix, uint32_t g, uint32_t **gi) {
    ip_kb T;
    ip_group_kb(ix, g, &T);
    size_t n;
    return attn_matching(c, ix, &T, ip_kb_get(&T, "quant_mode", &n) != NULL, gi);
}

bool ip_attn_loo(q_ctx *c, const ip_index *ix, uint32_t pi, const uint32_t *gi, size_t ngi, const uint8_t (*G)[4],
                 size_t ng, ip_status *last, bool *att, ip_out *o) {
    ip_task tk;
    attn_task(c, ix->tab->kernel, ix, &tk);
    tk.skip1 = ip_prow(ix, pi) + 1;
    double tax[IP_MAXAX], gt[IP_MAXAX], pax[IP_MAXAX];
    ip_point_axes(ix, pi, pax);
    memcpy(tax, pax, sizeof tax);
    bool has_b = !isnan(pax[AX_BATCH]);
    tax[AX_BATCH] = NAN;
    /* each matched group, each axis group in order (the query's order), one at a time:
     * a 1-D one on the points near the row only */
    for (size_t g = 0; g < ngi; g++)
        for (size_t a = 0; a < ng; a++) {
            tk.groups = &G[a];
            tk.ngroups = 1;
            if (attn_groups(c, &tk, tax, gt, &gi[g], 1, has_b, pax[AX_BATCH], true, last, att, o)) return true;
        }
    return false;
}
