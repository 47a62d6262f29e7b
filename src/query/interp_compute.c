/* Wrapper paths of compute ops: the matmul family on (M, K, N) with 1-D to
 * 3-D axis groups, and generic compute on the first input's leading dim or
 * the output's element count. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opdb/pystr.h"
#include "query/interp_internal.h"

static const char *const k_batched[] = {"BatchMatMulV2", "BatchMatMulNd", "TransposeBatchMatMul",
                                        "QuantBatchMatmulV3", NULL};

static bool in_list(const char *s, const char *const *l) {
    for (; *l; l++)
        if (strcmp(s, *l) == 0) return true;
    return false;
}

static bool span_is(opdb_span s, const char *c) { return s.n == strlen(c) && memcmp(s.p, c, s.n) == 0; }

/* dkey: relaxed kernels (q_relaxed_kernel, asked once per key) see DT_BF16 and FLOAT as one class */
static void kb_dkey(ip_kb *k, bool relaxed, const char *s, size_t n) {
    if (relaxed && ((n == 7 && memcmp(s, "DT_BF16", 7) == 0) || (n == 5 && memcmp(s, "FLOAT", 5) == 0)))
        ip_kb_str(k, "FLOAT_GROUP", 11);
    else ip_kb_str(k, s, n);
}

/* nz(s) into d (s unchanged when rank < 4) */
static q_shape nz_into(q_shape s, int64_t *d) {
    if (s.rank < 4 || s.rank > 16) return s;
    uint32_t r = s.rank;
    for (uint32_t k = 0; k + 4 < r; k++) d[k] = s.d[k];
    d[r - 4] = s.d[r - 4] * s.d[r - 1];
    d[r - 3] = s.d[r - 3] * s.d[r - 2];
    return (q_shape){d, r - 2};
}

static bool is_nz(opdb_span f) { return span_is(f, "FRACTAL_NZ"); }

typedef struct mnk_t {
    int64_t M, K, N;
    q_shape bl, br;
} mnk_t;

static bool mnk(const char *kt, q_shape l, q_shape r, mnk_t *o) {
    if (!in_list(kt, k_batched)) {
        if (l.rank >= 3 && l.d[0] == 1) l.d++, l.rank--;
        if (r.rank >= 3 && r.d[0] == 1) r.d++, r.rank--;
    }
    if (l.rank < 2 || r.rank < 2) return false;
    o->M = l.d[l.rank - 2];
    o->K = l.d[l.rank - 1];
    if (r.d[r.rank - 2] == o->K) o->N = r.d[r.rank - 1];
    else if (r.d[r.rank - 1] == o->K) o->N = r.d[r.rank - 2];
    else return false;
    o->bl = (q_shape){l.d, l.rank - 2};
    o->br = (q_shape){r.d, r.rank - 2};
    return true;
}

static void kb_batch(ip_kb *k, const mnk_t *m) {
    ip_kb_field(k, "batch_dims");
    ip_kb_open(k);
    ip_kb_shape(k, m->bl);
    ip_kb_shape(k, m->br);
    ip_kb_close(k);
}

/* ------------------------------------------------------------ matmul points */
typedef struct mm_params {
    bool has_n;
    int64_t N;
    bool quantized;
} mm_params;

_Static_assert(sizeof(mm_params) <= sizeof(((ip_index *)0)->params), "kept with the index");

static size_t cut(size_t n, const mm_params *p) { return p->has_n ? q_slice_n(n, p->N) : n; }

static void build_mm(ip_index *ix, const void *arg) {
    const mm_params *pp = arg;
    q_ktable *t = ix->tab;
    const char *kt = t->kernel;
    bool relaxed = q_relaxed_kernel(kt);
    int c_ofmt = db_table_col(&t->t, "Output Formats");
    for (size_t r = ix->r0; r < ix->r1; r++) {
        const q_row *rw = &t->rows[r];
        const q_list *idt = q_row_in_dt(t, rw), *ifm = q_row_in_fmt(t, rw), *odt = q_row_out_dt(t, rw);
        const uint32_t nout = q_row_nout(t, rw), nin = q_row_nin(t, rw);
        if (!q_row_shapes_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "cannot parse the shapes");
            continue;
        }
        size_t nC = cut(nin, pp), nD = cut(idt->n, pp), nF = cut(ifm->n, pp);
        if (nC < 2 || nD < nC || nF < nC) continue;
        int64_t d0[16], d1[16];
        q_shape L0 = q_row_in(t, rw, 0), L1 = q_row_in(t, rw, 1);
        if (is_nz(opdb_span_make(ifm->s[0], ifm->len[0]))) L0 = nz_into(L0, d0);
        if (is_nz(opdb_span_make(ifm->s[1], ifm->len[1]))) L1 = nz_into(L1, d1);
        mnk_t m;
        if (!mnk(kt, L0, L1, &m)) continue;
        double lat;
        bool alt;
        if (!ip_row_latency_at(t, &ix->latcols, r, &lat, &alt)) continue;
        size_t n = pp->has_n && pp->N ? (size_t)(pp->N < 0 ? 0 : pp->N) : nC;
        ip_kb k;
        ip_kb_init(&k);
        ip_kb_field(&k, "kernel_type");
        ip_kb_str(&k, kt, strlen(kt));
        ip_kb_field(&k, "input_count");
        ip_kb_num(&k, (double)n);
        ip_kb_field(&k, "input_dtypes");
        ip_kb_open(&k);
        for (size_t i = 0; i < n && i < nD; i++) kb_dkey(&k, relaxed, idt->s[i], idt->len[i]);
        ip_kb_close(&k);
        kb_batch(&k, &m);
        ip_kb_field(&k, "input_formats");
        ip_kb_open(&k);
        for (size_t i = 0; i < n && i < nF; i++) ip_kb_str(&k, ifm->s[i], ifm->len[i]);
        ip_kb_close(&k);
        if (pp->quantized) {
            if (!q_row_out_ok(rw)) {
                ip_add_fault(ix, (uint32_t)r, "Output Shapes", "cannot parse the shapes");
                continue;
            }
            opdb_span *of;
            uint32_t nof;
            ip_list(&ix->arena, t, r, c_ofmt, &of, &nof);
            if (!nout || odt->n != nout || nof != nout) continue;
            ip_kb_field(&k, "output_count");
            ip_kb_num(&k, nout);
            ip_kb_field(&k, "output_dtypes");
            ip_kb_open(&k);
            for (uint32_t i = 0; i < odt->n; i++) ip_kb_str(&k, odt->s[i], odt->len[i]);
            ip_kb_close(&k);
            ip_kb_field(&k, "output_formats");
            ip_kb_open(&k);
            for (uint32_t i = 0; i < nof; i++) ip_kb_str(&k, of[i].p, of[i].n);
            ip_kb_close(&k);
        }
        double ax[IP_MAXAX] = {(double)m.M, (double)m.K, (double)m.N, NAN, NAN};
        ip_add(ix, &k, ax, lat, alt, (uint32_t)r);
    }
}

const uint8_t ip_mm_groups[7][4] = {{1, 0}, {1, 1}, {1, 2}, {2, 0, 1}, {2, 0, 2}, {2, 1, 2}, {3, 0, 1, 2}};
const char *const ip_mm_axes[3] = {"M", "K", "N"};

static bool formats_all_nd(const ip_keys *K, size_t g) {
    static const char k_f[] = "\x1einput_formats\x1f(";
    const char *p = K->s + K->off[g], *end = K->s + K->off[g + 1];
    size_t n = sizeof k_f - 1;
    for (; p + n <= end; p++)
        if (memcmp(p, k_f, n) == 0) break;
    if (p + n > end) return true;
    p += n;
    while (p < end && *p != ')') {
        if (end - p < 4 || memcmp(p, "'ND\x1d", 4) != 0) return false;
        p += 4;
    }
    return true;
}

/* the groups of ix matching T in the order the query tries them: stably
 * sorted (all-ND formats first, then more points first) */
size_t ip_mm_matching(q_ctx *c, const ip_index *ix, const ip_kb *T, bool quantized, uint32_t **gip) {
    static const char *const extra_q[] = {"output_count", "output_dtypes", "output_formats", NULL};
    static const char *const extra[] = {"output_count", "output_dtypes", "output_formats", "input_formats", NULL};
    uint32_t *gi = opdb_arena_alloc(c->a, (ix->ng ? ix->ng : 1) * sizeof *gi);
    size_t ng = 0;
    *gip = gi;
    /* kept per index: the matched and sorted groups of a key text; the key
     * ends in a NUL and the mode, which no ip_groups_matching key does */
    bool keep = !T->over && !c->db->no_index;
    char mk[IP_KEYCAP + 2];
    size_t mkn = 0;
    if (keep) {
        memcpy(mk, T->s, T->n);
        mk[T->n] = 0;
        mk[T->n + 1] = quantized ? 'q' : 'm';
        mkn = T->n + 2;
        if (ip_gmemo_get(ix, mk, mkn, gi, &ng)) return ng;
    }
    const ip_keys *K = ip_group_keys(ix);
    for (size_t i = 0; i < ix->ng; i++)
        if (ip_key_match(T, K->s + K->off[i], K->off[i + 1] - K->off[i], NULL, quantized ? extra_q : extra))
            gi[ng++] = (uint32_t)i;
    /* stable insertion sort by (formats not all ND, fewer points) */
    for (size_t i = 1; i < ng; i++) {
        uint32_t x = gi[i];
        int fx = formats_all_nd(K, x) ? 0 : 1;
        size_t j = i;
        while (j > 0) {
            uint32_t y = gi[j - 1];
            int fy = formats_all_nd(K, y) ? 0 : 1;
            if (fy < fx || (fy == fx && ip_gn(ix, y) >= ip_gn(ix, x))) break;
            gi[j] = gi[j - 1];
            j--;
        }
        gi[j] = x;
    }
    if (keep) ip_gmemo_put(ix, mk, mkn, gi, ng);
    return ng;
}

/* the regime loop of one matmul kernel */
static bool mm_groups(q_ctx *c, ip_index *ix, const ip_kb *T, bool quantized, const double *tax, int64_t maxdim,
                      ip_out *out, ip_task *tk) {
    uint32_t *gi;
    size_t ng = ip_mm_matching(c, ix, T, quantized, &gi);
    memset(tk, 0, sizeof *tk);
    tk->ix = ix;
    tk->t = tax;
    tk->nax = 3;
    tk->groups = ip_mm_groups;
    tk->ngroups = 7;
    tk->maxdim = maxdim;
    tk->sqrt_axis = -1;
    ip_status last = {.n = 0};
    bool att = false;
    return ip_run_groups(c, tk, gi, ng, false, &last, &att, out);
}

/* the target key of a matmul kernel; false when the target cannot be built */
static bool mm_target(q_ctx *c, const q_entry *e, const char *kt, const q_tins *X, size_t n, bool quantized,
                      int64_t ndiv, ip_kb *T, double *tax) {
    if (X->n < 2) return false;
    bool relaxed = q_relaxed_kernel(kt);
    mnk_t m;
    if (quantized) {
        const qv *o = c->q->out;
        const qv *o0 = NULL;
        size_t nout = 0;
        const qv *const *outs = NULL;
        if (o && o->kind == QV_TENSOR) {
            o0 = o;
            outs = (const qv *const *)&o0;
            nout = 1;
        } else if (o && o->kind == QV_LIST && o->n > 0) {
            for (size_t i = 0; i < o->n; i++)
                if (o->items[i]->kind != QV_TENSOR) return false;
            outs = (const qv *const *)o->items;
            nout = o->n;
        } else {
            return false;
        }
        q_shape x0 = X->v[0].s, y0 = outs[0]->shape;
        if (x0.rank != 2 || y0.rank != 2 || x0.d[0] <= 0 || x0.d[1] <= 0 || y0.d[0] <= 0 || y0.d[1] <= 0 ||
            x0.d[0] != y0.d[0])
            return false;
        m.M = x0.d[0], m.K = x0.d[1], m.N = y0.d[1] / ndiv;
        m.bl = m.br = (q_shape){NULL, 0};
        const qv *fm = qv_get(e->v, "expected_input_formats");
        if (!fm || fm->kind != QV_LIST || fm->n != n) return false;
        ip_kb_init(T);
        ip_kb_field(T, "kernel_type");
        ip_kb_str(T, kt, strlen(kt));
        ip_kb_field(T, "input_count");
        ip_kb_num(T, (double)n);
        ip_kb_field(T, "input_dtypes");
        ip_kb_open(T);
        for (size_t i = 0; i < n && i < X->n; i++) {
            const char *p = X->v[i].prof ? X->v[i].prof : q_dtype_prof(X->v[i].dtype);
            if (!p) return false;
            kb_dkey(T, relaxed, p, strlen(p));
        }
        ip_kb_close(T);
        kb_batch(T, &m);
        ip_kb_field(T, "input_formats");
        ip_kb_open(T);
        for (size_t i = 0; i < n; i++) {
            if (fm->items[i]->kind != QV_STR) return false;
            opdb_span s = opdb_py_strip(opdb_span_make(fm->items[i]->s, fm->items[i]->n));
            if (!s.n) return false;
            ip_kb_str(T, s.p, s.n);
        }
        ip_kb_close(T);
        ip_kb_field(T, "output_count");
        ip_kb_num(T, (double)nout);
        ip_kb_field(T, "output_dtypes");
        ip_kb_open(T);
        for (size_t i = 0; i < nout; i++) {
            const char *p = q_dtype_prof(outs[i]->dtype);
            if (!p) return false;
            ip_kb_str(T, p, strlen(p));
        }
        ip_kb_close(T);
        ip_kb_field(T, "output_formats");
        ip_kb_open(T);
        for (size_t i = 0; i < nout; i++) ip_kb_str(T, "ND", 2);
        ip_kb_close(T);
    } else {
        if (!mnk(kt, X->v[0].s, X->v[1].s, &m)) return false;
        ip_kb_init(T);
        ip_kb_field(T, "kernel_type");
        ip_kb_str(T, kt, strlen(kt));
        ip_kb_field(T, "input_count");
        ip_kb_num(T, (double)n);
        ip_kb_field(T, "input_dtypes");
        ip_kb_open(T);
        for (size_t i = 0; i < X->n; i++) {
            const char *p = X->v[i].prof ? X->v[i].prof : q_dtype_prof(X->v[i].dtype);
            if (!p) return false;
            if (i < n) kb_dkey(T, relaxed, p, strlen(p));
        }
        ip_kb_close(T);
        kb_batch(T, &m);
    }
    tax[0] = (double)m.M, tax[1] = (double)m.K, tax[2] = (double)m.N, tax[3] = tax[4] = NAN;
    return !T->over;
}

/* kernel list and inputs of a wrapper compute target: the exact path's
 * (projected, rank list first) in the default mode, the plain list and the
 * unprojected inputs in the reference's; 1 when answered (miss/error set) */
static int wrapper_inputs(q_ctx *c, const q_entry *e, const char ***K, size_t *nk, q_tins *X, int64_t *N,
                          bool *has_n, bool *out_projected) {
    *out_projected = false;
    *N = 0;
    *has_n = false;
    if (!c->cfg->quirks) {
        q_tins X0 = q_tensor_inputs(c, c->q->args);
        if (q_compute_target(c, e, K, nk, X, N, has_n, true)) return 1;
        const qv *rule = qv_get(e->v, "tp_linear_projection");
        if (qv_is_str(qv_get(rule, "shard_axis"), "output") && X->n >= 2 && X0.n >= 2 && X->v[1].s.d != X0.v[1].s.d)
            *out_projected = true;
        return 0;
    }
    if (q_entry_kernels(c, e, true, K, nk)) return 1;
    const qv *v = qv_get(e->v, "tc_input_count");
    if (v && v->kind != QV_NULL) {
        if (!qv_as_int(v, N)) {
            q_error(c, "bad_mapping", "operator_mappings.%s.tc_input_count is not an integer", e->name);
            return 1;
        }
        *has_n = true;
    }
    *X = q_tensor_inputs(c, c->q->args);
    if (*has_n) X->n = q_slice_n(X->n, *N);
    return 0;
}

/* an index's signature: "tag|a|N|b" (a, b are 0 or 1), written without printf */
static void sig_of(char *b, const char *tag, int a, int64_t N, int f) {
    char t[24];
    size_t n = strlen(tag), m = 0;
    memcpy(b, tag, n);
    b[n++] = '|';
    b[n++] = (char)('0' + a);
    b[n++] = '|';
    uint64_t u = N < 0 ? 0 - (uint64_t)N : (uint64_t)N;
    do t[m++] = (char)('0' + u % 10); while ((u /= 10));
    if (N < 0) b[n++] = '-';
    while (m) b[n++] = t[--m];
    b[n++] = '|';
    b[n++] = (char)('0' + f);
    b[n] = 0;
}

/* the matmul kernels of K in order; false when none answered (nothing set).
 * policy: the kernel whose max_interpolation_dim applies (NULL: each its own) */
static bool mm_core(q_ctx *c, const q_entry *e, const char *const *K, size_t nk, const q_tins *Xp, int64_t N,
                    bool has_n, bool quantized, int64_t ndiv, const char *policy) {
    q_tins X = *Xp;
    /* the outcome map: the quantized target also reads the query's outputs and the entry's formats */
    ip_okey okey;
    bool keyed = !quantized && ip_okey_init(c, &okey, 'm');
    if (keyed) {
        ip_okey_str(&okey, policy);
        ip_okey_kernels(&okey, K, nk);
        ip_okey_tins(&okey, &X, N, has_n);
        ip_outcome oc;
        if (ip_omap_get(c, &okey, &oc)) {
            if (!oc.hit) return false;
            ip_outcome_replay(c, &oc, oc.kernel);
            return true;
        }
    }
    size_t n = has_n && N ? (size_t)(N < 0 ? 0 : N) : X.n;
    mm_params pp = {has_n, N, quantized};
    char sig[96];
    sig_of(sig, "mm", has_n, N, quantized);
    for (size_t i = 0; i < nk; i++) {
        if (!ip_in_matmul_plus(K[i])) continue;
        ip_kb T;
        double tax[IP_MAXAX];
        if (!mm_target(c, e, K[i], &X, n, quantized, ndiv, &T, tax)) continue;
        q_ktable *t = q_table(c->db, K[i]);
        int st = atomic_load(&t->state);
        if (st == QT_FAILED) {
            q_error(c, "bad_csv", "%s", t->error);
            return true;
        }
        if (st != QT_OK) continue;
        ip_index *ix = ip_index_get(c->db, t, sig, build_mm, &pp, sizeof pp);
        if (ip_faults(c, ix) < 0) return true;
        ip_out o;
        ip_task tk;
        if (mm_groups(c, ix, &T, quantized, tax, ip_maxdim(c, policy ? policy : K[i], NULL), &o, &tk)) {
            if (keyed) {
                ip_outcome oc;
                ip_success_outcome(c, &tk, &o, t->kernel, ip_mm_axes, i, &oc);
                oc.kernel = t->kernel; /* the handle's, as ip_success named it */
                ip_omap_put(c, &okey, &oc);
            } else {
                ip_success(c, &tk, &o, t->kernel, ip_mm_axes);
            }
            return true;
        }
    }
    if (keyed) ip_omap_put(c, &okey, &(ip_outcome){.hit = false});
    return false;
}

void ip_matmul(q_ctx *c, const q_entry *e, bool quantized) {
    const char **K;
    size_t nk;
    q_tins X;
    int64_t N;
    bool has_n, proj_out;
    if (wrapper_inputs(c, e, &K, &nk, &X, &N, &has_n, &proj_out)) return;
    q_set_kernels(c, K, nk);
    int64_t ndiv = proj_out && quantized && c->cfg->tp > 1 ? c->cfg->tp : 1;
    if (!mm_core(c, e, K, nk, &X, N, has_n, quantized, ndiv, NULL)) q_miss(c, "compute_multidim_interpolation_failed");
}

/* ---------------------------------------------------------- generic compute */
typedef struct gen_params {
    bool has_n;
    int64_t N;
    bool numel;          /* output_numel axis (else axis_0) */
} gen_params;

/* the extra field and axis value from stripped inputs L and output shapes O */
static bool gen_axis(ip_kb *k, bool numel, const q_shape *L, size_t nL, const q_shape *O, size_t nO, double *ax) {
    if (!numel) {
        q_shape s0 = L[0];
        *ax = (double)s0.d[0];
        ip_kb_field(k, "shape_signature");
        ip_kb_open(k);
        ip_kb_shape(k, (q_shape){s0.d + 1, s0.rank - 1});
        ip_kb_open(k);
        for (size_t i = 1; i < nL; i++) ip_kb_shape(k, L[i]);
        ip_kb_close(k);
        ip_kb_close(k);
        return true;
    }
    if (nO != 1) return false;
    q_shape o = O[0];
    if (o.rank >= 3 && o.d[0] == 1) o.d++, o.rank--;
    *ax = (double)q_numel(o);
    ip_kb_field(k, "output_tail_shape");
    ip_kb_shape(k, o.rank ? (q_shape){o.d + 1, o.rank - 1} : o);
    return true;
}

_Static_assert(sizeof(gen_params) <= sizeof(((ip_index *)0)->params), "kept with the index");

static void gen_key_head(ip_kb *k, const char *kt, size_t n) {
    ip_kb_init(k);
    ip_kb_field(k, "kernel_type");
    ip_kb_str(k, kt, strlen(kt));
    ip_kb_field(k, "input_count");
    ip_kb_num(k, (double)n);
}

/* a key as written so far into d (its used bytes only: a key buffer is 2 KiB) */
static void kb_copy(ip_kb *d, const ip_kb *s) {
    memcpy(d->s, s->s, s->n + 1);
    d->n = s->n;
    d->over = s->over;
    d->nf = s->nf;
    memcpy(d->fo, s->fo, s->nf * sizeof *d->fo);
    d->depth = s->depth;
}

static void build_gen(ip_index *ix, const void *arg) {
    const gen_params *pp = arg;
    q_ktable *t = ix->tab;
    const char *kt = t->kernel;
    bool relaxed = q_relaxed_kernel(kt);
    mm_params cp = {pp->has_n, pp->N, false};
    /* a row's stripped shapes only make its key and axis: scratch, reused row after row */
    opdb_arena tmp;
    opdb_arena_init(&tmp, 1 << 12);
    ip_kb head;
    size_t head_n = SIZE_MAX;
    for (size_t r = ix->r0; r < ix->r1; r++) {
        const q_row *rw = &t->rows[r];
        const q_list *idt = q_row_in_dt(t, rw), *ifm = q_row_in_fmt(t, rw);
        const uint32_t nout = q_row_nout(t, rw), nin = q_row_nin(t, rw);
        if (!q_row_shapes_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "cannot parse the shapes");
            continue;
        }
        size_t nC = cut(nin, &cp), nD = cut(idt->n, &cp), nF = cut(ifm->n, &cp);
        if (!nC || nD < nC || nF < nC) continue;
        opdb_arena_reset(&tmp);
        q_shape *L = opdb_arena_alloc(&tmp, nC * sizeof *L);
        for (size_t i = 0; i < nC; i++) {
            q_shape s = q_row_in(t, rw, i);
            if (is_nz(opdb_span_make(ifm->s[i], ifm->len[i])) && s.rank >= 4 && s.rank <= 16) {
                int64_t *d = opdb_arena_alloc(&tmp, s.rank * sizeof *d);
                s = nz_into(s, d);
            }
            L[i] = q_strip(s);
        }
        if (L[0].rank == 0) continue;
        if (!q_row_out_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Output Shapes", "cannot parse the shapes");
            continue;
        }
        ip_kb k;
        /* the key's head (kernel and input count) is the previous row's when its count is */
        if (nC != head_n) {
            gen_key_head(&head, kt, nC);
            head_n = nC;
        }
        kb_copy(&k, &head);
        ip_kb_field(&k, "input_dtypes");
        ip_kb_open(&k);
        for (size_t i = 0; i < nC; i++) kb_dkey(&k, relaxed, idt->s[i], idt->len[i]);
        ip_kb_close(&k);
        double ax[IP_MAXAX] = {NAN, NAN, NAN, NAN, NAN};
        q_shape o0 = nout ? q_row_out(t, rw, 0) : (q_shape){NULL, 0}; /* the one it reads */
        if (!gen_axis(&k, pp->numel, L, nC, &o0, nout, &ax[0])) continue;
        double lat;
        bool alt;
        if (!ip_row_latency_at(t, &ix->latcols, r, &lat, &alt)) continue;
        ip_add(ix, &k, ax, lat, alt, (uint32_t)r);
    }
    opdb_arena_free(&tmp);
}

/* axis(kt): output_numel when the first of [kt, primary] with a non-empty
 * generic_compute mapping says so */
static bool gen_numel(q_ctx *c, const char *kt, const char *primary) {
    const char *ks[2] = {kt, primary};
    for (int i = 0; i < 2; i++) {
        if (!ks[i]) continue;
        bool bad = false;
        const qv *g = qv_get(q_override(c->db->map.ov_int, ks[i], &bad), "generic_compute");
        if (g && g->kind == QV_DICT && g->n > 0) return qv_is_str(qv_get(g, "axis"), "output_numel");
    }
    return false;
}

static const uint8_t k_gen_groups[1][4] = {{1, 0}};
static const char *const k_gen_axes0[] = {"axis_0"};
static const char *const k_gen_axes1[] = {"output_numel"};

/* generic compute over K with inputs X and output shapes O (nO of them) */
static void gen_core(q_ctx *c, const char *const *K, size_t nk, q_tins X, int64_t N, bool has_n,
                     const char *primary, const q_shape *O, size_t nO, const char *policy) {
    ip_okey okey;
    bool keyed = ip_okey_init(c, &okey, 'g');
    if (keyed) {
        ip_okey_str(&okey, primary);
        ip_okey_str(&okey, policy);
        ip_okey_kernels(&okey, K, nk);
        ip_okey_tins(&okey, &X, N, has_n);
        /* the output count and the first output (the element count axis) */
        uint32_t no = (uint32_t)nO;
        ip_okey_add(&okey, &no, sizeof no);
        if (nO) ip_okey_shape(&okey, O[0]);
        ip_outcome oc;
        if (ip_omap_get(c, &okey, &oc)) {
            ip_outcome_replay(c, &oc, oc.hit ? K[oc.kidx] : NULL);
            return;
        }
    }
    const char *reason = "candidate_group_failed";
    for (size_t i = 0; i < nk; i++) {
        const char *kt = K[i];
        bool numel = gen_numel(c, kt, primary), relaxed = q_relaxed_kernel(kt);
        /* target */
        ip_kb T;
        double tax[IP_MAXAX] = {NAN, NAN, NAN, NAN, NAN};
        bool ok = X.n > 0;
        q_shape *S = opdb_arena_alloc(c->a, (X.n ? X.n : 1) * sizeof *S);
        if (ok) {
            gen_key_head(&T, kt, X.n);
            ip_kb_field(&T, "input_dtypes");
            ip_kb_open(&T);
            for (size_t j = 0; ok && j < X.n; j++) {
                const char *p = X.v[j].prof ? X.v[j].prof : q_dtype_prof(X.v[j].dtype);
                if (!p) ok = false;
                else kb_dkey(&T, relaxed, p, strlen(p));
                S[j] = q_strip(X.v[j].s);
            }
            ip_kb_close(&T);
            if (ok && S[0].rank == 0) ok = false;
        }
        if (ok) ok = gen_axis(&T, numel, S, X.n, O, nO, &tax[0]) && !T.over;
        if (!ok) {
            reason = "compute_target_unavailable";
            continue;
        }
        q_ktable *t = q_table(c->db, kt);
        int st = atomic_load(&t->state);
        if (st == QT_FAILED) {
            q_error(c, "bad_csv", "%s", t->error);
            return;
        }
        if (st != QT_OK) {
            reason = "compute_csv_not_found";
            continue;
        }
        gen_params gp = {has_n, N, numel};
        char sig[96];
        sig_of(sig, "gen", has_n, N, numel);
        ip_index *ix = ip_index_get(c->db, t, sig, build_gen, &gp, sizeof gp);
        if (ip_faults(c, ix) < 0) return;
        uint32_t *gi;
        size_t ng = ip_groups_matching(c, ix, &T, &gi);
        if (!ng) {
            q_attempt(c, kt, "no_candidate_group");
            reason = "regime_key_unmatched";
            continue;
        }
        ip_task tk;
        ip_task_init(&tk, ix, tax, 1, k_gen_groups, 1, ip_maxdim(c, policy ? policy : kt, NULL));
        ip_status last = {.n = 0};
        bool att = false;
        ip_out o;
        if (ip_run_groups(c, &tk, gi, ng, false, &last, &att, &o)) {
            const char *const *axes = numel ? k_gen_axes1 : k_gen_axes0;
            if (keyed) {
                ip_outcome oc;
                ip_success_outcome(c, &tk, &o, kt, axes, i, &oc);
                ip_omap_put(c, &okey, &oc);
            } else {
                ip_success(c, &tk, &o, kt, axes);
            }
            return;
        }
        reason = ip_reason(att ? &last : NULL, "candidate_group_failed");
    }
    q_miss(c, reason);
    if (keyed) ip_omap_put(c, &okey, &(ip_outcome){.hit = false, .reason = reason});
}

void ip_generic(q_ctx *c, const q_entry *e) {
    const char **K;
    size_t nk;
    q_tins X;
    int64_t N;
    bool has_n, proj_out;
    if (wrapper_inputs(c, e, &K, &nk, &X, &N, &has_n, &proj_out)) return;
    q_set_kernels(c, K, nk);
    const qv *ktv = qv_get(e->v, "kernel_type");
    const char *primary = ktv && ktv->kind == QV_STR ? ktv->s : NULL;
    q_shape O[1];
    size_t nO = 0;
    const qv *o = c->q->out;
    if (o && o->kind == QV_TENSOR) O[nO++] = o->shape;
    else if (o && o->kind == QV_LIST)
        for (size_t j = 0; j < o->n; j++)
            if (o->items[j]->kind == QV_TENSOR) {
                if (nO++ == 0) O[0] = o->items[j]->shape;
            }
    gen_core(c, K, nk, X, N, has_n, primary, O, nO, NULL);
}

void ip_kernel_shape(q_ctx *c, const char *const *K, size_t nk, const q_tins *in, const q_tins *out) {
    /* the CSV is cut to the number of given inputs, as for decomposer sub-kernels */
    int64_t N = (int64_t)in->n;
    if (ip_in_matmul_plus(K[0])) {
        if (!mm_core(c, NULL, K, nk, in, N, true, false, 1, NULL)) q_miss(c, "compute_multidim_interpolation_failed");
        return;
    }
    q_shape O[1];
    if (out->n) O[0] = out->v[0].s;
    gen_core(c, K, nk, *in, N, true, K[0], O, out->n, NULL);
}

int ip_spec_compute(q_ctx *c, const char *const *K, size_t nk, const q_tins *X, int64_t n) {
    q_tins Y = *X;
    Y.n = q_slice_n(Y.n, n);
    for (size_t i = 0; i < nk; i++) {
        const char *kt = K[i];
        if (ip_in_matmul_plus(kt)) {
            if (Y.n < 2) continue;
            if (mm_core(c, NULL, &K[i], 1, &Y, n, true, false, 1, K[0])) return 1;
            continue;
        }
        /* only the count-cut inputs' own axis: no outputs to count elements of */
        gen_core(c, &K[i], 1, Y, n, true, K[0], NULL, 0, K[0]);
        if (c->r->src != QS_MISS) return 1;
    }
    return 0;
}

ip_index *ip_mm_index(const opdb_qdb *db, q_ktable *t, int64_t n) {
    mm_params pp = {true, n, false};
    char sig[96];
    sig_of(sig, "mm", 1, n, 0);
    return ip_index_get(db, t, sig, build_mm, &pp, sizeof pp);
}

ip_index *ip_mmq_index(const opdb_qdb *db, q_ktable *t, int64_t n) {
    mm_params pp = {true, n, true};
    char sig[96];
    sig_of(sig, "mm", 1, n, 1);
    return ip_index_get(db, t, sig, build_mm, &pp, sizeof pp);
}

ip_index *ip_gen_index(const opdb_qdb *db, q_ktable *t, int64_t n, bool numel) {
    gen_params gp = {true, n, numel};
    char sig[96];
    sig_of(sig, "gen", 1, n, numel);
    return ip_index_get(db, t, sig, build_gen, &gp, sizeof gp);
}

bool ip_gen_numel(q_ctx *c, const char *kt) { return gen_numel(c, kt, kt); }
