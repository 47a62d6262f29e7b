/* The opaque MLAPO regime: quantized MLAPO without sequence parallelism
 * runs as one fused mla_preprocess kernel. Its rows carry the kernel's
 * runtime parameters; a row answers when those parameters and its 22 input
 * and 5 output tensors are exactly the layout the parameters imply, and
 * token counts between two measured rows are interpolated linearly. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"
#include "query/comm.h"
#include "query/decompose.h"

static const char *const k_int[8] = {"num_tokens",   "hidden_size",      "local_num_heads",  "q_lora_rank",
                                     "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "block_size"};
static const char *const k_str[3] = {"cache_mode", "quant_mode", "weight_format"};
static const char *const k_bool[2] = {"enable_inner_out", "weight_quantized"};
enum { P_T, P_H, P_HEADS, P_QR, P_L, P_NOPE, P_ROPE, P_BS };

int q_spec_mlapo_preprocess(q_ctx *c, const qv *O, q_specs *out) {
    const qv *A = c->q->args, *ok = qv_get(O, "opaque_kernel");
    if (!ok || ok->kind != QV_DICT) return 0;
    static const int idx[5] = {8, 10, 11, 12, 13};
    int64_t v[5];
    for (int i = 0; i < 5; i++)
        if ((size_t)idx[i] >= A->n || !qv_as_int(A->items[idx[i]], &v[i]) || v[i] <= 0) return 0;
    const qv *h = A->items[0], *qa = A->items[3], *qb = A->items[5], *kva = A->items[6];
    if (qa->kind != QV_TENSOR || qb->kind != QV_TENSOR || kva->kind != QV_TENSOR || qa->dtype != QDT_I8 ||
        qb->dtype != QDT_I8 || kva->dtype != QDT_I8)
        return 0;
    const qv *kt = qv_get(ok, "kernel_type"), *mode = qv_get(ok, "query_mode");
    q_spec *s = q_spec_add(c, out, kt && kt->kind == QV_STR ? kt->s : "mla_preprocess_0_mix_aic",
                           !mode || qv_is_str(mode, "mlapo_preprocess") ? QSPEC_MLAPO_PREPROCESS : QSPEC_COMPUTE);
    s->dtype = q_dtype_prof(h->dtype);
    int64_t iv[8] = {h->shape.d[0], h->shape.d[1], v[0], v[4], v[3], v[1], v[2], 128};
    for (int i = 0; i < 7; i++) s->pre_int[i] = iv[i], s->pre_int_set[i] = true;
    /* block size and the fixed layout fields: the mapping may override them (null: unknown) */
    const qv *bs = qv_get(ok, "block_size");
    s->pre_int[P_BS] = 128;
    s->pre_int_set[P_BS] = !bs || qv_as_int(bs, &s->pre_int[P_BS]);
    static const char *const defs[3] = {"krope_ctkv", "per_tensor_quant_asymm", "FRACTAL_NZ"};
    for (int i = 0; i < 3; i++) {
        const qv *x = qv_get(ok, k_str[i]);
        s->pre_str[i] = !x ? defs[i] : x->kind == QV_STR ? x->s : NULL;
    }
    for (int i = 0; i < 2; i++) {
        const qv *x = qv_get(ok, k_bool[i]);
        s->pre_bool[i] = (int8_t)(!x ? 1 : x->kind == QV_NULL ? -1 : qv_truthy(x));
    }
    return 0;
}

/* ---- the query */

static bool cell_str(const db_cell *cell, char *buf, size_t cap, opdb_span *out) {
    if (cell->kind == DBC_NA) return false;
    opdb_span t = opdb_py_strip(db_cell_text(cell, buf, cap));
    if (!t.n) return false;
    *out = t;
    return true;
}

static bool span_ieq(opdb_span a, const char *w) {
    size_t n = strlen(w);
    if (a.n != n) return false;
    for (size_t i = 0; i < n; i++)
        if ((a.p[i] | (a.p[i] >= 'A' && a.p[i] <= 'Z' ? 0x20 : 0)) != w[i]) return false;
    return true;
}

static bool seq(const char *s, uint32_t n, const char *w) { return strlen(w) == n && memcmp(s, w, n) == 0; }

static bool shape_is(q_shape s, int n, ...) {
    if ((int)s.rank != n) return false;
    va_list ap;
    va_start(ap, n);
    bool ok = true;
    for (int i = 0; i < n; i++)
        if (s.d[i] != va_arg(ap, int64_t)) ok = false;
    va_end(ap);
    return ok;
}

/* the row's tensors are exactly the layout of token count t */
static bool layout_ok(const q_ktable *tab, const q_row *r, const int64_t *p, const char *dt, const char *wf, int64_t t) {
    int64_t H = p[P_H], heads = p[P_HEADS], qr = p[P_QR], L = p[P_L], nope = p[P_NOPE], rope = p[P_ROPE], bs = p[P_BS];
    int64_t F = qr + L + rope, Qo = heads * (nope + rope), nb = (t + bs - 1) / bs;
    const q_list *idt = q_row_in_dt(tab, r), *ifm = q_row_in_fmt(tab, r);
    if (q_row_nin(tab, r) != 22 || idt->n != 22 || ifm->n != 22 || q_row_nout(tab, r) != 5 || q_row_out_dt(tab, r)->n != 5)
        return false;
    q_shape in[22], o[5];
    for (int i = 0; i < 22; i++) in[i] = q_row_in(tab, r, i);
    for (int i = 0; i < 5; i++) o[i] = q_row_out(tab, r, i);
    bool ok = shape_is(in[0], 2, t, H) && shape_is(in[1], 4, (int64_t)1, H / 32, F, (int64_t)32) &&
              shape_is(in[2], 1, F) && shape_is(in[3], 1, qr) && shape_is(in[4], 1, qr) &&
              shape_is(in[5], 4, (int64_t)1, qr / 32, Qo, (int64_t)32) && shape_is(in[6], 1, Qo) &&
              shape_is(in[7], 1, L) && shape_is(in[8], 2, t, rope) && shape_is(in[9], 2, t, rope) &&
              shape_is(in[10], 3, heads, nope, L) && shape_is(in[11], 4, nb, bs, (int64_t)1, L) &&
              shape_is(in[12], 4, nb, bs, (int64_t)1, rope) && shape_is(in[13], 1, t) &&
              shape_is(in[14], 1, (int64_t)1) && shape_is(in[15], 1, (int64_t)1) && shape_is(in[16], 1, F) &&
              shape_is(in[17], 1, (int64_t)1) && shape_is(in[18], 1, (int64_t)1) && shape_is(in[19], 1, Qo) &&
              shape_is(in[20], 1, (int64_t)1) && shape_is(in[21], 1, (int64_t)1);
    ok = ok && shape_is(o[0], 3, t, heads, L) && q_shape_eq(o[1], in[11]) && shape_is(o[2], 3, t, heads, rope) &&
         q_shape_eq(o[3], in[12]) && shape_is(o[4], 2, t, qr);
    if (!ok) return false;
    if (!seq(idt->s[0], idt->len[0], dt)) return false;
    for (int i = 1; i <= 5; i += 4) {
        if (!seq(idt->s[i], idt->len[i], "DT_INT8") && !seq(idt->s[i], idt->len[i], "INT8")) return false;
        if (!seq(ifm->s[i], ifm->len[i], wf)) return false;
    }
    return true;
}

typedef struct pcand {
    int64_t t;
    double lat;
    const char *kernel;
} pcand;

void q_query_mlapo_preprocess(q_ctx *c, const q_spec *s, q_spec_hit *h) {
    for (int i = 0; i < 8; i++)
        if (!s->pre_int_set[i]) goto missing;
    for (int i = 0; i < 3; i++)
        if (!s->pre_str[i]) goto missing;
    for (int i = 0; i < 2; i++)
        if (s->pre_bool[i] < 0) goto missing;
    const int64_t *p = s->pre_int;
    int64_t T = p[P_T];
    bool pos = T >= 1 && T <= 1024;
    for (int i = 1; i < 8; i++) pos = pos && p[i] > 0;
    if (!pos) {
        h->reason = "semantic_key_mismatch:mlapo_preprocess:num_tokens_out_of_range";
        return;
    }
    if (p[P_H] % 32 || p[P_QR] % 32) {
        h->reason = "semantic_key_mismatch:mlapo_preprocess:fractal_nz_alignment";
        return;
    }
    if (!s->dtype || strcmp(s->dtype, "DT_BF16") != 0) {
        h->reason = "semantic_key_mismatch:mlapo_preprocess:dtype";
        return;
    }
    const char *K[3] = {s->kernel, s->alt[0], s->alt[1]};
    size_t nk = 1 + s->nalt;
    pcand *cand = NULL;
    size_t nc = 0, capc = 0;
    char miss[1024] = "";
    char *names[32];
    size_t nmiss = 0;
    for (size_t k = 0; k < nk; k++) {
        q_ktable *t = q_table(c->db, K[k]);
        int st = atomic_load_explicit(&t->state, memory_order_acquire);
        if (st == QT_ABSENT) continue;
        if (st == QT_FAILED) {
            q_error(c, "bad_csv", "%s", t->error);
            h->failed = true;
            free(cand);
            return;
        }
        /* the columns a row needs: the runtime params, its completeness, the six tensor lists */
        int ci[8], cs[3], cb[2], cm;
        char col[64];
        bool have = true;
        const char *sig[6] = {"Input Shapes", "Input Data Types", "Input Formats",
                              "Output Shapes", "Output Data Types", "Output Formats"};
#define NEED(dst, name)                                                                                                \
    do {                                                                                                               \
        dst = db_table_col(&t->t, name);                                                                               \
        if (dst < 0) {                                                                                                 \
            have = false;                                                                                              \
            bool dup = false;                                                                                          \
            for (size_t m = 0; m < nmiss; m++) dup |= strcmp(names[m], name) == 0;                                     \
            if (!dup && nmiss < 32) names[nmiss++] = q_strdup(c, name);                                                \
        }                                                                                                              \
    } while (0)
        for (int i = 0; i < 8; i++) {
            snprintf(col, sizeof col, "Runtime %s", k_int[i]);
            NEED(ci[i], col);
        }
        for (int i = 0; i < 3; i++) {
            snprintf(col, sizeof col, "Runtime %s", k_str[i]);
            NEED(cs[i], col);
        }
        for (int i = 0; i < 2; i++) {
            snprintf(col, sizeof col, "Runtime %s", k_bool[i]);
            NEED(cb[i], col);
        }
        NEED(cm, "Runtime metadata_completeness");
        int csig;
        for (int i = 0; i < 6; i++) NEED(csig, sig[i]);
#undef NEED
        (void)csig;
        if (!have) continue;
        for (size_t r = 0; r < t->t.nrows; r++) {
            char buf[48];
            opdb_span v;
            if (!cell_str(db_table_cell(&t->t, r, cm), buf, sizeof buf, &v) || span_ieq(v, "legacy")) continue;
            int64_t rv[8];
            bool ok = true;
            for (int i = 0; i < 8 && ok; i++) ok = db_cell_pyint(db_table_cell(&t->t, r, ci[i]), &rv[i]);
            for (int i = 1; i < 8 && ok; i++) ok = rv[i] == p[i];
            for (int i = 0; i < 3 && ok; i++) {
                if (!cell_str(db_table_cell(&t->t, r, cs[i]), buf, sizeof buf, &v)) v = opdb_span_make("", 0);
                ok = opdb_span_eq_cstr(v, s->pre_str[i]);
            }
            for (int i = 0; i < 2 && ok; i++) {
                bool b = cell_str(db_table_cell(&t->t, r, cb[i]), buf, sizeof buf, &v) &&
                         (span_ieq(v, "true") || opdb_span_eq_cstr(v, "1"));
                ok = b == (s->pre_bool[i] == 1);
            }
            if (!ok) continue;
            const q_row *row = &t->rows[r];
            if (!q_row_shapes_ok(row) || !q_row_out_ok(row)) {
                if (q_cell_fault(c, t, r, "Input Shapes", "cannot parse the shapes") < 0) {
                    h->failed = true;
                    free(cand);
                    return;
                }
                continue;
            }
            const q_list *odt = q_row_out_dt(t, row);
            if (odt->n != 5) continue;
            bool outs = true;
            for (int i = 0; i < 5; i++) outs = outs && seq(odt->s[i], odt->len[i], s->dtype);
            /* output formats: every one ND */
            int cof = db_table_col(&t->t, "Output Formats");
            opdb_span of = opdb_py_strip_chars(opdb_py_strip(db_cell_text(db_table_cell(&t->t, r, cof), buf, sizeof buf)),
                                               "\"");
            size_t nf = 0, i0 = 0;
            for (size_t i = 0; i <= of.n && outs; i++)
                if (i == of.n || of.p[i] == ';') {
                    opdb_span it = opdb_py_strip(opdb_span_make(of.p + i0, i - i0));
                    i0 = i + 1;
                    if (!it.n) continue;
                    nf++;
                    outs = opdb_span_eq_cstr(it, "ND");
                }
            if (!outs || nf != 5 || !layout_ok(t, row, p, s->dtype, s->pre_str[2], rv[P_T])) continue;
            double lat;
            if (!q_plain_row_latency(t, r, &lat)) continue;
            OPDB_ALLOC_GROW(cand, nc + 1, capc);
            cand[nc].t = rv[P_T];
            cand[nc].lat = lat;
            cand[nc++].kernel = t->kernel;
        }
    }
    if (!nc) {
        if (nmiss) {
            /* sorted names */
            for (size_t i = 1; i < nmiss; i++)
                for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
                    char *x = names[j];
                    names[j] = names[j - 1];
                    names[j - 1] = x;
                }
            size_t o = 0;
            for (size_t i = 0; i < nmiss && o < sizeof miss - 1; i++)
                o += (size_t)snprintf(miss + o, sizeof miss - o, "%s%s", i ? "," : "", names[i]);
            h->reason = q_sprintf(c, "semantic_context_missing:csv:%s", miss);
        } else {
            h->reason = "semantic_key_mismatch:mlapo_preprocess";
        }
        free(cand);
        return;
    }
    const pcand *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < nc; i++) {
        const pcand *x = &cand[i];
        if (x->t == T) {
            h->hit = true;
            h->lat = x->lat;
            h->kernel = x->kernel;
            free(cand);
            return;
        }
        if (x->t < T && (!lo || x->t > lo->t)) lo = x;
        if (x->t > T && (!hi || x->t < hi->t)) hi = x;
    }
    if (!lo || !hi) {
        h->reason = "shape_mismatch:mlapo_preprocess:bounded_interpolation_only";
        free(cand);
        return;
    }
    h->hit = true;
    h->interp = true;
    h->lat = lo->lat + (double)(T - lo->t) / (double)(hi->t - lo->t) * (hi->lat - lo->lat);
    h->kernel = lo->kernel;
    free(cand);
    return;
missing:
    h->reason = "semantic_context_missing:target:mlapo_preprocess";
}
