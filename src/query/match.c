/* The compute row matcher: does a row's input signature accept the query's
 * tensor inputs, and by which rule (identity, batch strip, transposes, block
 * padding, 3-D flattening)? */
#include <stdio.h>
#include <string.h>

#include "query/query_internal.h"

static bool in_set(const char *kt, const char *const *set) {
    for (; *set; set++)
        if (strcmp(kt, *set) == 0) return true;
    return false;
}

static const char *const k_matmul[] = {"MatMulV2", "MatMulV3", "MatMulCommon", "MatMul", "QuantBatchMatmulV3",
                                       "BatchMatMulV2", "TransposeBatchMatMul", "GroupedMatmul",
                                       "GroupedMatmulSwigluQuant", NULL};
static const char *const k_flatten[] = {"AscendQuantV2", "DynamicQuant", "RmsNorm", "AddRmsNormBias", "AddRmsNorm",
                                        "DispatchFFNCombine", NULL};
static const char *const k_merge[] = {"AscendQuantV2", "DynamicQuant", NULL};
static const char *const k_rope[] = {"ApplyRotaryPosEmb", "_triton_rope", "split_qkv_rmsnorm_rope_kernel", NULL};
static const char *const k_rac[] = {"ReshapeAndCacheNdKernel", "reshape_and_cache_200000000", NULL};

bool q_is_matmul(const char *kt) { return in_set(kt, k_matmul); }

unsigned q_kernel_flags(const char *kt) {
    return (in_set(kt, k_matmul) ? QK_MATMUL : 0) | (in_set(kt, k_flatten) ? QK_FLATTEN : 0) |
           (in_set(kt, k_merge) ? QK_MERGE : 0) | (in_set(kt, k_rope) ? QK_ROPE : 0) |
           (strcmp(kt, "SwiGlu") == 0 ? QK_SWIGLU : 0) | (in_set(kt, k_rac) ? QK_RAC : 0) |
           (strcmp(kt, "Index") == 0 ? QK_INDEX : 0) | (q_relaxed_kernel(kt) ? QK_RELAXED : 0);
}

/* storage for a normalised input list (at most 5 inputs come out of it) */
typedef struct norm_buf {
    q_tin v[5];
    int64_t d[5][8];
} norm_buf;

static bool fits(q_shape s) { return s.rank <= 8; }

/* The layout normalisations of RoPE, SwiGlu and ReshapeAndCache kernels. */
static const q_tins *normalise(const q_tins *X, unsigned kf, size_t nC, norm_buf *nb, q_tins *out) {
    if ((kf & QK_ROPE) && X->n >= 2 && nC >= 2) {
        if (!fits(X->v[0].s) || !fits(X->v[1].s) || (X->n >= 4 && (!fits(X->v[2].s) || !fits(X->v[3].s)))) return X;
        const q_tin *Q = &X->v[0], *K = &X->v[1];
        const q_tin *src[2] = {K, Q};
        for (int k = 0; k < 2; k++) {
            q_tin t = *src[k];
            memcpy(nb->d[k], t.s.d, t.s.rank * sizeof(int64_t));
            if (t.s.rank == 4) {
                int64_t h = nb->d[k][1];
                nb->d[k][1] = nb->d[k][2];
                nb->d[k][2] = h;
            }
            t.s.d = nb->d[k];
            nb->v[k] = t;
        }
        size_t n = 2;
        if (X->n >= 4)
            for (int k = 2; k < 4; k++) {
                q_tin t = X->v[k];
                if (t.s.rank == 3) {
                    nb->d[k][0] = t.s.d[0];
                    nb->d[k][1] = t.s.d[1];
                    nb->d[k][2] = 1;
                    nb->d[k][3] = t.s.d[2];
                    t.s.d = nb->d[k];
                    t.s.rank = 4;
                }
                nb->v[n++] = t;
            }
        out->v = nb->v;
        out->n = n;
        return out;
    }
    if ((kf & QK_SWIGLU) && X->n == 2 && nC == 1) {
        q_shape s1 = q_strip(X->v[0].s), s2 = q_strip(X->v[1].s);
        if (s1.rank != s2.rank || s1.rank == 0 || !fits(s1) || X->v[0].dtype != X->v[1].dtype ||
            (X->v[0].prof && X->v[1].prof && strcmp(X->v[0].prof, X->v[1].prof) != 0))
            return X;
        for (uint32_t k = 0; k + 1 < s1.rank; k++)
            if (s1.d[k] != s2.d[k]) return X;
        memcpy(nb->d[0], s1.d, s1.rank * sizeof(int64_t));
        nb->d[0][s1.rank - 1] = s1.d[s1.rank - 1] + s2.d[s2.rank - 1];
        nb->v[0] = X->v[0];
        nb->v[0].s.d = nb->d[0];
        nb->v[0].s.rank = s1.rank;
        out->v = nb->v;
        out->n = 1;
        return out;
    }
    if ((kf & QK_RAC) && X->n == 4 && nC == 5) {
        const q_tin *k0 = &X->v[0], *k1 = &X->v[1], *k2 = &X->v[2];
        if (k0->s.rank != 2 || k1->s.rank != 2 || k2->s.rank < 2 || k2->s.d[0] != 2 || !fits(k2->s)) return X;
        for (int k = 0; k < 2; k++) {
            const q_tin *src = k ? k1 : k0;
            nb->d[k][0] = src->s.d[0];
            nb->d[k][1] = 1;
            nb->d[k][2] = src->s.d[1];
            nb->v[k] = *src;
            nb->v[k].s.d = nb->d[k];
            nb->v[k].s.rank = 3;
        }
        q_tin cache = *k2;
        cache.s.d = k2->s.d + 1;
        cache.s.rank = k2->s.rank - 1;
        nb->v[2] = cache;
        nb->v[3] = cache;
        nb->v[4] = X->v[3];
        out->v = nb->v;
        out->n = 5;
        return out;
    }
    return X;
}

static bool eq2(q_shape s, int64_t a, int64_t b) { return s.rank == 2 && s.d[0] == a && s.d[1] == b; }

int q_match_row(q_ctx *c, const q_tins *X0, q_ktable *t, size_t row, int64_t N, bool has_n, bool normalise_x,
                q_match *m) {
    const q_row *rw = &t->rows[row];
    if (!q_row_shapes_ok(rw)) {
        char buf[48];
        opdb_span s = db_cell_text(db_table_cell(&t->t, row, t->c_in_shapes), buf, sizeof buf);
        char what[160];
        snprintf(what, sizeof what, "cannot parse \"%.*s\"", (int)(s.n > 100 ? 100 : s.n), s.p);
        return q_cell_fault(c, t, row, "Input Shapes", what) < 0 ? -1 : 0;
    }
    size_t nC = q_row_nin(t, rw), nD = q_row_in_dt(t, rw)->n, nF = q_row_in_fmt(t, rw)->n;
    if (has_n) {
        nC = q_slice_n(nC, N);
        nD = q_slice_n(nD, N);
        nF = q_slice_n(nF, N);
    }
    norm_buf nb;
    q_tins tmp;
    const unsigned kf = t->kflags;
    const q_tins *X = normalise_x && (kf & (QK_ROPE | QK_SWIGLU | QK_RAC)) ? normalise(X0, kf, nC, &nb, &tmp) : X0;
    if (X->n != nC) return 0;
    const char *rule = "identity";
    bool padded_any = false;
    m->n = 0;
    bool mm = kf & QK_MATMUL, flat = kf & QK_FLATTEN, merge = kf & QK_MERGE, index = kf & QK_INDEX;
    for (size_t i = 0; i < X->n; i++) {
        const q_tin *x = &X->v[i];
        const char *p = x->prof ? x->prof : q_dtype_prof(x->dtype);
        if (!p || i >= nD) return 0;
        size_t pn = strlen(p), dn = q_row_in_dt(t, rw)->len[i];
        if (!(pn == dn && memcmp(p, q_row_in_dt(t, rw)->s[i], dn) == 0)) {
            bool fp = (pn == 7 && memcmp(p, "DT_BF16", 7) == 0) || (pn == 5 && memcmp(p, "FLOAT", 5) == 0);
            bool fd = (dn == 7 && memcmp(q_row_in_dt(t, rw)->s[i], "DT_BF16", 7) == 0) || (dn == 5 && memcmp(q_row_in_dt(t, rw)->s[i], "FLOAT", 5) == 0);
            if (!((kf & QK_RELAXED) && fp && fd)) return 0;
        }
        q_shape cs = q_row_in(t, rw, i);
        int64_t nzd[64];
        if (i < nF && q_row_in_fmt(t, rw)->len[i] == 10 && memcmp(q_row_in_fmt(t, rw)->s[i], "FRACTAL_NZ", 10) == 0 && cs.rank >= 4 &&
            cs.rank <= 64) {
            uint32_t r = cs.rank;
            for (uint32_t k = 0; k + 4 < r; k++) nzd[k] = cs.d[k];
            nzd[r - 4] = cs.d[r - 4] * cs.d[r - 1];
            nzd[r - 3] = cs.d[r - 3] * cs.d[r - 2];
            cs.d = nzd;
            cs.rank = r - 2;
        }
        q_shape ts = x->s, s = q_strip(ts), cstrip = q_strip(cs);
        const char *ir;
        if (q_shape_eq(ts, cs)) {
            ir = "identity";
        } else if (q_shape_eq(s, cstrip) || q_shape_eq(s, cs)) {
            ir = rule = "batch_strip";
        } else if (index && ts.rank == 2 && cs.rank == 2 && ts.d[0] == 1 && cs.d[1] == 1 && ts.d[1] == cs.d[0]) {
            ir = rule = "singleton_axis_transpose";
        } else if (mm && i >= 1 && cs.rank == 2 && eq2(s, cs.d[1], cs.d[0])) {
            ir = rule = "transpose";
        } else if (mm && i >= 1 && s.rank == 3 && cs.rank == 3 && s.d[0] == cs.d[0] && s.d[1] == cs.d[2] &&
                   s.d[2] == cs.d[1]) {
            ir = rule = "batched_transpose";
        } else if (q_padmatch(s, cs)) {
            ir = "padding";
            if (strcmp(rule, "identity") == 0) rule = "padding";
            padded_any = true;
        } else if (q_padmatch(s, cstrip)) {
            ir = "batch_strip+padding";
            if (strcmp(rule, "identity") == 0 || strcmp(rule, "batch_strip") == 0) rule = "batch_strip+padding";
            padded_any = true;
        } else {
            const q_shape *g = s.rank == 3 ? &s : ts.rank == 3 ? &ts : NULL;
            if (!flat || cs.rank != 2 || !g) return 0;
            int64_t fd[2] = {g->d[0] * g->d[1], g->d[2]}, md[2] = {g->d[0], g->d[1] * g->d[2]};
            q_shape f = {fd, 2}, mg = {md, 2};
            if (q_shape_eq(f, cs)) {
                ir = rule = "flatten_3d";
            } else if (q_padmatch(f, cs)) {
                ir = rule = "flatten_3d+padding";
                padded_any = true;
            } else if (merge && q_shape_eq(mg, cs)) {
                ir = rule = "merge_last_dims";
            } else if (merge && q_padmatch(mg, cs)) {
                ir = rule = "merge_last_dims+padding";
                padded_any = true;
            } else {
                return 0;
            }
        }
        if (m->n < sizeof m->input_rules / sizeof m->input_rules[0]) m->input_rules[m->n++] = ir;
    }
    m->rule = rule;
    m->padded_any = padded_any;
    (void)c;
    return 1;
}
