/* Attention lookups (FusedInferAttentionScore and kin): matched on the
 * normalised 3-D query shape, the average sequence length (within 16), the
 * runtime sparse mode, KV heads and layout, with padding both ways on the
 * token count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"
#include "query/attn_runtime.h"
#include "query/query_internal.h"

bool q_norm3(q_shape s, int64_t hd, int64_t out[3]) {
    if (s.rank == 3) {
        memcpy(out, s.d, 3 * sizeof *out);
        return true;
    }
    if (s.rank == 4 && s.d[2] == 1) {
        out[0] = s.d[0], out[1] = s.d[1], out[2] = s.d[3];
        return true;
    }
    if (s.rank == 2 && hd > 0 && s.d[1] % hd == 0) {
        out[0] = s.d[0], out[1] = s.d[1] / hd, out[2] = hd;
        return true;
    }
    return false;
}

bool q_avgseq(const qv *t, int64_t *out) {
    if (!t || t->kind != QV_TENSOR || !t->values || t->nvalues == 0) return false;
    float sum = 0;
    for (size_t i = 0; i < t->nvalues; i++) sum += (float)t->values[i];
    float mean = sum / (float)t->nvalues;
    if (!isfinite(mean) || fabsf(mean) >= 9.2e18f) return false;
    *out = (int64_t)mean;
    return true;
}

/* fia_q: the first shape of a cell, never a fault */
static bool fia_q(const db_cell *cell, int64_t d[8], q_shape *s) {
    char buf[48];
    opdb_span t = opdb_py_strip_chars(db_cell_text(cell, buf, sizeof buf), "\"");
    if (opdb_py_strip(t).n == 0) return false;
    size_t j = 0;
    while (j < t.n && t.p[j] != ';') j++;
    opdb_span f = opdb_py_strip(opdb_span_make(t.p, j));
    if (!f.n) return false;
    uint32_t r = 0;
    size_t i = 0;
    while (i <= f.n) {
        size_t k = i;
        while (k < f.n && f.p[k] != ',') k++;
        long long v;
        if (r >= 8 || !opdb_py_int(f.p + i, k - i, &v)) return false;
        d[r++] = v;
        i = k + 1;
    }
    s->d = d;
    s->rank = r;
    return true;
}

typedef struct akctx {          /* per kernel: columns, found on its first visited row */
    bool seen, dead;
    int c_avg, c_sparse, c_kv, c_layout, c_meta;
    unsigned rt_missing;        /* runtime target: the first required column absent */
    q_rt_cols rt;
} akctx;

typedef struct actx {
    const q_attn_target *tg;
    akctx *k;
    unsigned missing;            /* QRT_M_* bits of the columns found missing */
} actx;

static int chk_attn(q_ctx *c, void *arg, q_ktable *t, size_t kidx, size_t row, q_cand *out) {
    actx *a = arg;
    akctx *k = &a->k[kidx];
    const q_attn_target *tg = a->tg;
    if (!k->seen) {
        k->seen = true;
        k->c_avg = db_table_col(&t->t, "Runtime avg_seq_len");
        if (k->c_avg < 0) k->c_avg = db_table_col(&t->t, "avg_seq_len");
        if (k->c_avg < 0) {
            a->missing |= QRT_M_AVG;
            k->dead = true;
        } else if (t->c_in_shapes < 0) {
            k->dead = true;
        }
        k->c_sparse = db_table_col(&t->t, "Runtime sparse_mode");
        k->c_kv = db_table_col(&t->t, "Runtime num_key_value_heads");
        k->c_layout = db_table_col(&t->t, "Runtime input_layout");
        k->c_meta = db_table_col(&t->t, "Runtime metadata_completeness");
        if (tg->rt) k->rt_missing = q_rt_columns(&t->t, &k->rt);
    }
    if (k->dead) return 0;
    if (k->rt_missing) {
        a->missing |= k->rt_missing;
        return 0;
    }
    const db_cell *ac = db_table_cell(&t->t, row, k->c_avg);
    if (ac->kind == DBC_NA) return 0;
    int64_t A;
    if (!db_cell_pyint(ac, &A)) return q_cell_fault(c, t, row, t->t.cols[k->c_avg], "not an integer") < 0 ? -1 : 0;
    if (A < 0) return 0;
    int64_t cqd[8], c3[3];
    q_shape cq;
    if (!fia_q(db_table_cell(&t->t, row, t->c_in_shapes), cqd, &cq)) return 0;
    if (!q_norm3(cq, tg->q3[2], c3)) return 0;
    /* the row's first dtype, no relaxation */
    char buf[48];
    opdb_span dt = t->c_in_dt >= 0 ? db_cell_text(db_table_cell(&t->t, row, t->c_in_dt), buf, sizeof buf)
                                   : opdb_span_make("", 0);
    size_t j = 0;
    while (j < dt.n && dt.p[j] != ';') j++;
    opdb_span d0 = opdb_py_strip(opdb_span_make(dt.p, j));
    if (!tg->prof || !opdb_span_eq_cstr(d0, tg->prof)) return 0;
    if (c3[1] != tg->q3[1] || c3[2] != tg->q3[2]) return 0;
    int64_t v;
    if (k->c_sparse >= 0 && tg->has_sparse) {
        const db_cell *x = db_table_cell(&t->t, row, k->c_sparse);
        if (x->kind == DBC_NA) return 0;
        if (!db_cell_pyint(x, &v)) return q_cell_fault(c, t, row, "Runtime sparse_mode", "not an integer") < 0 ? -1 : 0;
        if (v != tg->sparse) return 0;
    }
    if (k->c_kv >= 0 && tg->has_kv) {
        const db_cell *x = db_table_cell(&t->t, row, k->c_kv);
        if (x->kind == DBC_NA) return 0;
        if (!db_cell_pyint(x, &v))
            return q_cell_fault(c, t, row, "Runtime num_key_value_heads", "not an integer") < 0 ? -1 : 0;
        if (v != tg->kv) return 0;
    }
    if (k->c_layout >= 0 && tg->layout) {
        opdb_span L = opdb_py_strip(db_cell_text(db_table_cell(&t->t, row, k->c_layout), buf, sizeof buf));
        if (L.n && !opdb_span_eq_cstr(L, tg->layout)) return 0;
    }
    if (tg->rt) {
        int r = q_rt_check(c, tg->rt, t, row, &k->rt);
        if (r <= 0) return r;
    }
    double gap = fabs((double)tg->avg - (double)A);
    if (gap > 16) return 0;
    int64_t tq = tg->q3[0], tc = c3[0];
    if (!(tq == tc || q_padded(tq, tc) || q_padded(tc, tq))) return 0;
    double penalty = 0.5;
    if (k->c_meta >= 0) {
        opdb_span m = db_table_cell(&t->t, row, k->c_meta)->kind == DBC_NA
                          ? opdb_span_make("", 0)
                          : opdb_py_strip(db_cell_text(db_table_cell(&t->t, row, k->c_meta), buf, sizeof buf));
        bool legacy = m.n == 6;
        for (size_t i = 0; legacy && i < 6; i++) legacy = (m.p[i] | 0x20) == "legacy"[i];
        if (m.n && !legacy) penalty = 0;
    }
    out->conf = 0.9;
    out->dist = gap + penalty + (!c->cfg->quirks && tq != tc ? 1 : 0);
    out->rule = "attention";
    return 1;
}

bool q_attention_scan(q_ctx *c, const char *const *K, size_t nk, const q_attn_target *tg, q_scan *s,
                      const char **reason) {
    actx a = {tg, opdb_arena_alloc(c->a, (nk ? nk : 1) * sizeof(akctx)), 0};
    memset(a.k, 0, (nk ? nk : 1) * sizeof(akctx));
    q_scan_run(c, K, nk, QSCAN_NEAREST, chk_attn, &a, s);
    *reason = "";
    if (s->failed || s->found) return s->found;
    if (a.missing) *reason = q_sprintf(c, "semantic_context_missing:csv:%s", q_rt_missing_text(c, a.missing));
    else if (s->reason[0]) *reason = s->reason;
    else *reason = "shape_mismatch";
    return false;
}

void q_path_attention(q_ctx *c, const q_entry *e) {
    c->r->path = "attention";
    if (!qv_truthy(qv_get(e->v, "kernel_type"))) { q_miss(c, "unmapped"); return; }
    const qv *args = c->q->args;
    if (args->n < 7) { q_miss(c, "insufficient_args"); return; }
    const qv *q = args->items[0], *k = args->items[1], *sl = args->items[6];
    if (q->kind != QV_TENSOR) { q_miss(c, "query_not_tensor"); return; }
    q_attn_target tg;
    memset(&tg, 0, sizeof tg);
    tg.prof = q_dtype_prof(q->dtype);
    if (!tg.prof) { q_miss(c, "dtype_unmapped"); return; }
    int64_t hd = k->kind == QV_TENSOR && k->shape.rank >= 1 ? k->shape.d[k->shape.rank - 1] : 0;
    if (!q_norm3(q->shape, hd, tg.q3)) { q_miss(c, "q_shape_normalize_failed"); return; }
    if (sl->kind != QV_TENSOR) { q_miss(c, "missing_seq_lens"); return; }
    if (!q_avgseq(sl, &tg.avg)) { q_miss(c, "invalid_seq_lens"); return; }
    bool four = q->shape.rank == 4;
    tg.has_sparse = true;
    tg.sparse = c->cfg->quirks ? 3 : four ? 0 : 3;
    if (k->kind == QV_TENSOR && k->shape.rank >= 2) {
        tg.has_kv = true;
        tg.kv = !c->cfg->quirks && four && k->shape.rank >= 4 ? k->shape.d[1] : k->shape.d[k->shape.rank - 2];
    }
    tg.layout = q->shape.rank == 3 ? "TND" : four ? "BNSD_NBSD" : NULL;
    const char **K;
    size_t nk;
    if (q_entry_kernels(c, e, true, &K, &nk)) return;
    q_set_kernels(c, K, nk);
    q_scan s;
    const char *reason;
    if (!q_attention_scan(c, K, nk, &tg, &s, &reason)) {
        if (!s.failed) q_miss(c, reason);
        return;
    }
    q_explain_scan(c, &s);
    q_hit(c, QS_MEASURED, s.best.lat, 0.9, "attention", s.tab->kernel);
}
