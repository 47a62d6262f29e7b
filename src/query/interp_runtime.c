/* Wrapper path of paged-cache scatter writes: interpolation on the number of
 * tokens written, within a regime of the three dtypes, the whole cache shape,
 * the width of one update row and the input formats. */
#include <math.h>
#include <string.h>

#include "opdb/pystr.h"
#include "query/attn_runtime.h"
#include "query/decompose.h"
#include "query/interp_internal.h"

/* an update shape as (tokens, width): leading dims merged when rank > 2 */
static q_shape flat_update(opdb_arena *a, q_shape u) {
    if (u.rank <= 2) return u;
    int64_t *d = opdb_arena_alloc(a, 2 * sizeof *d);
    d[0] = 1;
    for (uint32_t i = 0; i + 1 < u.rank; i++) d[0] *= u.d[i];
    d[1] = u.d[u.rank - 1];
    q_shape s = {d, 2};
    return s;
}

static void scatter_key(ip_kb *k, const char *kt, const opdb_span *dt, q_shape cache, q_shape u, const opdb_span *fmt) {
    static const char *const names[3] = {"cache_dtype", "index_dtype", "update_dtype"};
    ip_kb_init(k);
    ip_kb_field(k, "kernel_type");
    ip_kb_str(k, kt, strlen(kt));
    for (int i = 0; i < 3; i++) {
        ip_kb_field(k, names[i]);
        ip_kb_str(k, dt[i].p, dt[i].n);
    }
    ip_kb_field(k, "full_cache_shape");
    ip_kb_shape(k, cache);
    ip_kb_field(k, "update_tail");
    q_shape tail = {u.d + (u.rank ? 1 : 0), u.rank ? u.rank - 1 : 0};
    ip_kb_shape(k, tail);
    ip_kb_field(k, "input_formats");
    ip_kb_open(k);
    for (int i = 0; i < 3; i++) ip_kb_str(k, fmt[i].p, fmt[i].n);
    ip_kb_close(k);
}

static void build_scatter(ip_index *ix, const void *arg) {
    (void)arg;
    q_ktable *t = ix->tab;
    for (size_t r = ix->r0; r < ix->r1; r++) {
        const q_row *rw = &t->rows[r];
        const q_list *idt = q_row_in_dt(t, rw), *ifm = q_row_in_fmt(t, rw);
        const uint32_t nin = q_row_nin(t, rw);
        if (!q_row_shapes_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "cannot parse the shapes");
            continue;
        }
        if (nin < 3 || idt->n < 3 || ifm->n < 3) continue;
        q_shape cache = q_row_in(t, rw, 0), u = flat_update(&ix->arena, q_row_in(t, rw, 2));
        if (!cache.rank || !u.rank) continue;
        double lat;
        bool alt;
        if (!ip_row_latency_at(t, &ix->latcols, r, &lat, &alt)) continue;
        opdb_span dt[3], fmt[3];
        for (int i = 0; i < 3; i++) {
            dt[i] = opdb_span_make(idt->s[i], idt->len[i]);
            fmt[i] = opdb_span_make(ifm->s[i], ifm->len[i]);
        }
        ip_kb k;
        scatter_key(&k, t->kernel, dt, cache, u, fmt);
        double ax[IP_MAXAX] = {(double)u.d[0], NAN, NAN, NAN, NAN};
        ip_add(ix, &k, ax, lat, alt, (uint32_t)r);
    }
}

static const uint8_t k_sc_groups[1][4] = {{1, 0}};
static const char *const k_sc_axes[] = {"tokens"};

ip_index *ip_scatter_index(const opdb_qdb *db, q_ktable *t) {
    return ip_index_get(db, t, "scatter", build_scatter, NULL, 0);
}

/* Interpolates over the kernels K for (cache, index, update) shapes with
 * profiler dtypes dts. true on success: the result set, or with lat given
 * *lat and *kernel; else *reason (NULL: an error result was set). */
static bool scatter_core(q_ctx *c, const char *const *K, size_t nk, q_shape cache, q_shape upd, const char *const *dts,
                         const char *what, const char **reason, double *lat, const char **kernel) {
    q_shape u = flat_update(c->a, upd);
    opdb_span dt[3], fmt[3];
    for (int i = 0; i < 3; i++) {
        dt[i] = opdb_span_make(dts[i], strlen(dts[i]));
        fmt[i] = opdb_span_make("ND", 2);
    }
    ip_status last = {.n = 0};
    bool any = false;
    for (size_t i = 0; i < nk; i++) {
        const char *kt = K[i];
        q_ktable *t = q_table(c->db, kt);
        int st = atomic_load(&t->state);
        if (st == QT_FAILED) {
            q_error(c, "bad_csv", "%s", t->error);
            *reason = NULL;
            return false;
        }
        if (st != QT_OK) continue;
        ip_index *ix = ip_scatter_index(c->db, t);
        if (ip_faults(c, ix) < 0) {
            *reason = NULL;
            return false;
        }
        ip_kb T;
        scatter_key(&T, kt, dt, cache, u, fmt);
        double tax[IP_MAXAX] = {u.rank ? (double)u.d[0] : NAN, NAN, NAN, NAN, NAN};
        uint32_t *gi;
        size_t ng = ip_groups_matching(c, ix, &T, &gi);
        ip_task tk;
        ip_task_init(&tk, ix, tax, 1, k_sc_groups, 1, ip_maxdim(c, kt, NULL));
        ip_status st_k = {.n = 0};
        bool att = false;
        ip_out out;
        if (ip_run_groups(c, &tk, gi, ng, false, &st_k, &att, &out)) {
            if (lat) *lat = out.lat, *kernel = kt;
            else ip_success(c, &tk, &out, kt, k_sc_axes);
            return true;
        }
        last = st_k;
        any = att;
    }
    *reason = q_sprintf(c, "%s_interpolation_failed", what);
    if (any) *reason = ip_reason(&last, *reason);
    return false;
}

void ip_scatter_op(q_ctx *c, const q_entry *e) {
    const qv *A = c->q->args;
    const char *dts[3];
    bool ok = A && A->n >= 3;
    for (size_t i = 0; ok && i < 3; i++) ok = A->items[i]->kind == QV_TENSOR && (dts[i] = q_dtype_prof(A->items[i]->dtype));
    if (!ok) {
        q_miss(c, "scatter_nd_update_interpolation_failed");
        return;
    }
    const char **K;
    size_t nk;
    if (q_entry_kernels(c, e, true, &K, &nk)) return;
    q_set_kernels(c, K, nk);
    /* arguments are (update, cache, index); the key reads cache, index, update */
    const char *order[3] = {dts[1], dts[2], dts[0]};
    const char *reason;
    if (scatter_core(c, K, nk, A->items[1]->shape, A->items[0]->shape, order, "scatter_nd_update", &reason, NULL, NULL))
        return;
    if (reason) q_miss(c, reason);
}

bool ip_scatter_spec(q_ctx *c, const char *const *K, size_t nk, const q_spec *s, double *lat, const char **kernel,
                     const char **reason) {
    const char *dts[3];
    for (int i = 0; i < 3; i++) dts[i] = s->ndtypes ? s->dtypes[i] : s->dtype;
    if (s->nshapes < 3) {
        *reason = "scatter_cache_write_interpolation_failed";
        return false;
    }
    return scatter_core(c, K, nk, s->shapes[0], s->shapes[2], dts, "scatter_cache_write", reason, lat, kernel);
}

/* ------------------------------------------------------- runtime attention */

/* The workload of q tokens split by the cumulative query lengths cum over
 * requests with KV lengths kv: its phase and the token-weighted KV length. */
static bool workload(int64_t qt, const int64_t *cum, size_t nc, const int64_t *kv, size_t nkv, const char **phase,
                     double *eff) {
    if (!nc || nc != nkv || qt <= 0) return false;
    int64_t prev = 0;
    bool all_pre = true, all_dec = true, any = false;
    double sum = 0;
    for (size_t i = 0; i < nc; i++) {
        if (cum[i] < prev || cum[i] > qt) return false;
        int64_t ln = cum[i] - prev;
        prev = cum[i];
        sum += (double)ln * (double)kv[i];
        if (ln > 0) {
            if (kv[i] <= 0) return false;
            any = true;
            all_pre &= ln == kv[i];
            all_dec &= ln == 1;
        }
    }
    if (prev != qt || !any) return false;
    *phase = all_pre ? "prefill" : all_dec ? "decode" : "mixed";
    *eff = sum / (double)qt;
    return isfinite(*eff) && *eff > 0;
}

/* ints of a cell: a number gives itself; a text is split on `,` only */
static bool ints_cell(opdb_arena *a, const db_cell *x, int64_t **out, size_t *n) {
    if (x->kind == DBC_NA) return false;
    *n = 0;
    if (x->kind != DBC_TEXT) {
        *out = opdb_arena_alloc(a, sizeof **out);
        if (!ip_intcell(x, *out)) return false;
        *n = 1;
        return true;
    }
    char buf[48];
    opdb_span t = db_cell_text(x, buf, sizeof buf);
    size_t cap = 1;
    for (size_t i = 0; i < t.n; i++) cap += t.p[i] == ',';
    *out = opdb_arena_alloc(a, cap * sizeof **out);
    size_t i0 = 0;
    for (size_t i = 0; i <= t.n; i++)
        if (i == t.n || t.p[i] == ',') {
            opdb_span it = opdb_py_strip(opdb_span_make(t.p + i0, i - i0));
            i0 = i + 1;
            if (!it.n) continue;
            double v;
            if (!opdb_py_float(it.p, it.n, &v) || !isfinite(v) || v != floor(v) || fabs(v) > 9.2e18) return false;
            (*out)[(*n)++] = (int64_t)v;
        }
    return *n > 0;
}

typedef struct rtvals {
    opdb_span dtype;
    const char *phase;
    int64_t head_dim, ints[5];   /* sparse_mode, kv_heads, topk, block_size, num_heads */
    opdb_span strs[3];           /* input_layout, cache_layout, kv_cache_mode */
    int64_t sbs, valid;
    opdb_span pattern;
} rtvals;

static const char *const k_rt_int_cols[5] = {"Runtime sparse_mode", "Runtime num_key_value_heads", "Runtime topk",
                                             "Runtime block_size", "Runtime num_heads"};
static const char *const k_rt_str_cols[3] = {"Runtime input_layout", "Runtime cache_layout", "Runtime kv_cache_mode"};

static void rt_key(ip_kb *k, const char *kt, const rtvals *v, bool sparse) {
    ip_kb_init(k);
    ip_kb_field(k, "kernel_type");
    ip_kb_str(k, kt, strlen(kt));
    ip_kb_field(k, "dtype");
    ip_kb_str(k, v->dtype.p, v->dtype.n);
    ip_kb_field(k, "phase");
    ip_kb_str(k, v->phase, strlen(v->phase));
    ip_kb_field(k, "query_rank");
    ip_kb_num(k, 3);
    ip_kb_field(k, "head_dim");
    ip_kb_num(k, (double)v->head_dim);
    ip_kb_field(k, "sparse_mode");
    ip_kb_num(k, (double)v->ints[0]);
    ip_kb_field(k, "kv_heads");
    ip_kb_num(k, (double)v->ints[1]);
    ip_kb_field(k, "input_layout");
    ip_kb_str(k, v->strs[0].p, v->strs[0].n);
    static const char *const names[3] = {"topk", "block_size", "num_heads"};
    for (int i = 0; i < 3; i++) {
        ip_kb_field(k, names[i]);
        ip_kb_num(k, (double)v->ints[2 + i]);
    }
    ip_kb_field(k, "cache_layout");
    ip_kb_str(k, v->strs[1].p, v->strs[1].n);
    ip_kb_field(k, "kv_cache_mode");
    ip_kb_str(k, v->strs[2].p, v->strs[2].n);
    if (sparse) {
        ip_kb_field(k, "sparse_block_size");
        ip_kb_num(k, (double)v->sbs);
        ip_kb_field(k, "sparse_indices_pattern");
        ip_kb_str(k, v->pattern.p, v->pattern.n);
        ip_kb_field(k, "sparse_indices_valid_count");
        ip_kb_num(k, (double)v->valid);
    }
}

static bool pos_int(const db_table *d, size_t r, int col, bool positive, int64_t *out) {
    return col >= 0 && ip_intcell(db_table_cell(d, r, col), out) && (!positive || *out > 0);
}

static void build_rt(ip_index *ix, const void *arg) {
    const bool sparse = *(const bool *)arg;
    q_ktable *t = ix->tab;
    const db_table *d = &t->t;
    int c_meta = db_table_col(d, "Runtime metadata_completeness"), c_ql = db_table_col(d, "Runtime actual_seq_lengths_values"),
        c_kv = db_table_col(d, "Runtime actual_seq_lengths_kv_values"), ci[5], cs[3];
    for (int i = 0; i < 5; i++) ci[i] = db_table_col(d, k_rt_int_cols[i]);
    for (int i = 0; i < 3; i++) cs[i] = db_table_col(d, k_rt_str_cols[i]);
    int c_sbs = db_table_col(d, "Runtime sparse_block_size"), c_pat = db_table_col(d, "Runtime sparse_indices_pattern"),
        c_valid = db_table_col(d, "Runtime sparse_indices_valid_count");
    char buf[48], sbuf[3][48], pbuf[48];
    for (size_t r = ix->r0; r < ix->r1; r++) {
        opdb_span m;
        if (c_meta >= 0 && !(ip_strcell(db_table_cell(d, r, c_meta), buf, sizeof buf, &m) && opdb_span_eq_cstr(m, "complete")))
            continue;
        const q_row *rw = &t->rows[r];
        const q_list *idt = q_row_in_dt(t, rw);
        const uint32_t nin = q_row_nin(t, rw);
        if (!q_row_shapes_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "cannot parse the shapes");
            continue;
        }
        if (!nin || !idt->n) continue;
        q_shape q = q_row_in(t, rw, 0);
        if (q.rank != 3 || q.d[0] <= 0 || q.d[1] <= 0 || q.d[2] <= 0) continue;
        int64_t *cum, *kv;
        size_t nc, nkv;
        if (c_ql < 0 || c_kv < 0 || !ints_cell(&ix->arena, db_table_cell(d, r, c_ql), &cum, &nc) ||
            !ints_cell(&ix->arena, db_table_cell(d, r, c_kv), &kv, &nkv))
            continue;
        rtvals v;
        memset(&v, 0, sizeof v);
        double eff;
        if (!workload(q.d[0], cum, nc, kv, nkv, &v.phase, &eff)) continue;
        v.dtype = opdb_span_make(idt->s[0], idt->len[0]);
        v.head_dim = q.d[2];
        bool ok = true;
        for (int i = 0; i < 5 && ok; i++) ok = pos_int(d, r, ci[i], i > 0, &v.ints[i]);
        for (int i = 0; i < 3 && ok; i++) ok = cs[i] >= 0 && ip_strcell(db_table_cell(d, r, cs[i]), sbuf[i], sizeof sbuf[i], &v.strs[i]);
        if (ok && sparse)
            ok = pos_int(d, r, c_sbs, true, &v.sbs) && c_pat >= 0 &&
                 ip_strcell(db_table_cell(d, r, c_pat), pbuf, sizeof pbuf, &v.pattern) &&
                 pos_int(d, r, c_valid, true, &v.valid);
        if (!ok) continue;
        double lat;
        bool alt;
        if (!ip_row_latency_at(t, &ix->latcols, r, &lat, &alt)) continue;
        ip_kb k;
        rt_key(&k, t->kernel, &v, sparse);
        double ax[IP_MAXAX] = {(double)q.d[0], eff, NAN, NAN, NAN};
        ip_add(ix, &k, ax, lat, alt, (uint32_t)r);
    }
}

static const uint8_t k_rt_groups[3][4] = {{1, 0}, {1, 1}, {2, 0, 1}};

bool ip_runtime_attention(q_ctx *c, const char *kt, const q_attn_target *tg, const char *dt, double *lat,
                          const char **reason) {
    static const bool k_true = true, k_false = false;
    bool sparse = strcmp(kt, "SparseFlashAttention") == 0;
    const char *path = sparse ? "sparse_attention" : "lightning_indexer";
    q_ktable *t = q_table(c->db, kt);
    int st = atomic_load(&t->state);
    if (st == QT_FAILED) {
        q_error(c, "bad_csv", "%s", t->error);
        *reason = NULL;
        return false;
    }
    if (st != QT_OK) {
        *reason = "csv_not_found";
        return false;
    }
    ip_index *ix = ip_index_get(c->db, t, sparse ? "rt1" : "rt0", build_rt, sparse ? &k_true : &k_false, sizeof(bool));
    if (ip_faults(c, ix) < 0) {
        *reason = NULL;
        return false;
    }
    const q_attn_rt *rt = tg->rt;
    rtvals v;
    memset(&v, 0, sizeof v);
    double eff = 0;
    bool ok = rt && dt && rt->ql.set && rt->kv.set &&
              workload(tg->q3[0], rt->ql.v, rt->ql.n, rt->kv.v, rt->kv.n, &v.phase, &eff) && tg->has_sparse &&
              tg->has_kv && rt->topk.set && rt->block_size.set && (!sparse || (rt->sparse_block && rt->valid_count.set));
    if (!ok) {
        *reason = q_sprintf(c, "%s_target_unextractable", path);
        return false;
    }
    v.dtype = opdb_span_make(dt, strlen(dt));
    v.head_dim = tg->q3[2];
    v.ints[0] = tg->sparse, v.ints[1] = tg->kv, v.ints[2] = rt->topk.v, v.ints[3] = rt->block_size.v;
    v.ints[4] = rt->num_heads;
    v.strs[0] = opdb_span_make("TND", 3);
    v.strs[1] = opdb_span_make("PA_BSND", 7);
    v.strs[2] = opdb_span_make("paged", 5);
    v.sbs = 1, v.pattern = opdb_span_make("uniform", 7), v.valid = rt->valid_count.v;
    ip_kb T;
    rt_key(&T, kt, &v, sparse);
    double tax[IP_MAXAX] = {(double)tg->q3[0], eff, NAN, NAN, NAN};
    uint32_t *gi;
    size_t ng = ip_groups_matching(c, ix, &T, &gi);
    ip_task tk;
    ip_task_init(&tk, ix, tax, 2, k_rt_groups, 3, ip_maxdim(c, kt, NULL));
    ip_status last = {.n = 0};
    bool att = false;
    ip_out out;
    if (ip_run_groups(c, &tk, gi, ng, false, &last, &att, &out)) {
        *lat = out.lat;
        return true;
    }
    *reason = ip_reason(att ? &last : NULL, q_sprintf(c, "%s_interpolation_failed", path));
    return false;
}
