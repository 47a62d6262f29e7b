/* Runtime-vector attention targets: the row checks, the target's repr and
 * the vectors built from the query's sequence lengths. */
#include <string.h>

#include "opdb/pystr.h"
#include "query/attn_runtime.h"

static const char *const k_missing_cols[] = {"Runtime avg_seq_len", "Runtime block_size", "Runtime input_layout",
                                             "Runtime num_key_value_heads", "Runtime sparse_mode", "Runtime topk"};

char *q_rt_missing_text(q_ctx *c, unsigned bits) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    for (unsigned i = 0; i < 6; i++)
        if (bits & (1u << i)) {
            if (sb.n) opdb_sb_addc(&sb, ',');
            opdb_sb_adds(&sb, k_missing_cols[i]);
        }
    char *o = opdb_arena_strndup(c->a, sb.p ? sb.p : "", sb.n);
    opdb_sb_free(&sb);
    return o;
}

unsigned q_rt_columns(const db_table *t, q_rt_cols *k) {
    k->topk = db_table_col(t, "Runtime topk");
    k->bs = db_table_col(t, "Runtime block_size");
    k->ql = db_table_col(t, "Runtime actual_seq_lengths_values");
    k->kv = db_table_col(t, "Runtime actual_seq_lengths_kv_values");
    k->vb = db_table_col(t, "Runtime block_table_valid_blocks");
    k->heads = db_table_col(t, "Runtime num_heads");
    k->sbs = db_table_col(t, "Runtime sparse_block_size");
    k->valid = db_table_col(t, "Runtime sparse_indices_valid_count");
    k->cache_layout = db_table_col(t, "Runtime cache_layout");
    k->kv_mode = db_table_col(t, "Runtime kv_cache_mode");
    k->pattern = db_table_col(t, "Runtime sparse_indices_pattern");
    /* the required fields with a column of their own, in the target's order */
    if (db_table_col(t, "Runtime sparse_mode") < 0) return QRT_M_SPARSE;
    if (db_table_col(t, "Runtime num_key_value_heads") < 0) return QRT_M_KV;
    if (db_table_col(t, "Runtime input_layout") < 0) return QRT_M_LAYOUT;
    if (k->topk < 0) return QRT_M_TOPK;
    if (k->bs < 0) return QRT_M_BS;
    return 0;
}

bool q_rt_list_parse(opdb_arena *a, const char *p, size_t n, q_ivec *out) {
    out->set = false;
    out->n = 0;
    size_t cnt = 1;
    for (size_t i = 0; i < n; i++) cnt += p[i] == ',' || p[i] == ';';
    out->v = opdb_arena_alloc(a, cnt * sizeof *out->v);
    size_t i = 0;
    for (;;) {
        size_t k = i;
        while (k < n && p[k] != ',' && p[k] != ';') k++;
        long long v;
        if (!opdb_py_int(p + i, k - i, &v)) return false;
        out->v[out->n++] = v;
        if (k >= n) break;
        i = k + 1;
    }
    out->set = true;
    return true;
}

static bool ivec_eq(const q_ivec *a, const q_ivec *b) {
    return a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, a->n * sizeof *a->v) == 0);
}

/* an integer cell that must be set and equal: 1, 0, -1 fault */
static int int_eq(q_ctx *c, q_ktable *t, size_t row, int col, int64_t want, bool na_rejects) {
    const db_cell *x = db_table_cell(&t->t, row, col);
    if (x->kind == DBC_NA) return na_rejects ? 0 : 1;
    if (!na_rejects) {
        char buf[48];
        if (opdb_py_strip(db_cell_text(x, buf, sizeof buf)).n == 0) return 1;
    }
    int64_t v;
    if (!db_cell_pyint(x, &v)) return q_cell_fault(c, t, row, t->t.cols[col], "not an integer") < 0 ? -1 : 0;
    return v == want;
}

static bool str_ok(q_ktable *t, size_t row, int col, const char *want) {
    if (col < 0) return true;
    const db_cell *x = db_table_cell(&t->t, row, col);
    if (x->kind == DBC_NA) return true;
    char buf[48];
    opdb_span s = opdb_py_strip(db_cell_text(x, buf, sizeof buf));
    return s.n == 0 || opdb_span_eq_cstr(s, want);
}

static bool list_ok(q_ctx *c, q_ktable *t, size_t row, int col, const q_ivec *want) {
    if (col < 0 || !want->set) return true;
    const db_cell *x = db_table_cell(&t->t, row, col);
    if (x->kind == DBC_NA) return true;
    char buf[48];
    opdb_span s = db_cell_text(x, buf, sizeof buf);
    q_ivec got;
    if (!q_rt_list_parse(c->a, s.p, s.n, &got)) return true;
    return ivec_eq(&got, want);
}

int q_rt_check(q_ctx *c, const q_attn_rt *rt, q_ktable *t, size_t row, const q_rt_cols *k) {
    int r;
    if (k->topk >= 0 && rt->topk.set && (r = int_eq(c, t, row, k->topk, rt->topk.v, true)) <= 0) return r;
    if (k->bs >= 0 && rt->block_size.set && (r = int_eq(c, t, row, k->bs, rt->block_size.v, true)) <= 0) return r;
    if (!list_ok(c, t, row, k->ql, &rt->ql) || !list_ok(c, t, row, k->kv, &rt->kv) ||
        !list_ok(c, t, row, k->vb, &rt->vb))
        return 0;
    if (k->heads >= 0 && (r = int_eq(c, t, row, k->heads, rt->num_heads, false)) <= 0) return r;
    if (rt->sparse_block) {
        if (k->sbs >= 0 && (r = int_eq(c, t, row, k->sbs, 1, false)) <= 0) return r;
        if (k->valid >= 0 && rt->valid_count.set && (r = int_eq(c, t, row, k->valid, rt->valid_count.v, false)) <= 0)
            return r;
    }
    if (!str_ok(t, row, k->cache_layout, "PA_BSND") || !str_ok(t, row, k->kv_mode, "paged")) return 0;
    if (rt->sparse_block && !str_ok(t, row, k->pattern, "uniform")) return 0;
    return 1;
}

/* the required fields that can be None, in sorted name order */
const char *q_rt_target_missing(q_ctx *c, const q_attn_rt *rt) {
    struct {
        const char *name;
        bool none, req;
    } f[] = {
        {"actual_seq_lengths_kv_values", !rt->kv.set, true},
        {"actual_seq_lengths_values", !rt->ql.set, true},
        {"avg_seq_len", !rt->avg.set, true},
        {"block_size", !rt->block_size.set, true},
        {"block_table_valid_blocks", !rt->vb.set, true},
        {"topk", !rt->topk.set, true},
    };
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].req && f[i].none) {
            if (sb.n) opdb_sb_addc(&sb, ',');
            opdb_sb_adds(&sb, f[i].name);
        }
    if (!sb.n) return NULL;
    char *o = q_sprintf(c, "semantic_context_missing:target:%s", sb.p);
    opdb_sb_free(&sb);
    return o;
}

static void repr_oint(opdb_strbuf *sb, const char *key, q_oint v) {
    opdb_sb_addf(sb, ", '%s': ", key);
    if (v.set) opdb_sb_addf(sb, "%lld", (long long)v.v);
    else opdb_sb_adds(sb, "None");
}

static void repr_ivec(opdb_strbuf *sb, const char *key, const q_ivec *v) {
    opdb_sb_addf(sb, ", '%s': ", key);
    if (!v->set) {
        opdb_sb_adds(sb, "None");
        return;
    }
    opdb_sb_addc(sb, '[');
    for (size_t i = 0; i < v->n; i++) opdb_sb_addf(sb, i ? ", %lld" : "%lld", (long long)v->v[i]);
    opdb_sb_addc(sb, ']');
}

void q_rt_repr(opdb_strbuf *sb, const q_attn_target *tg) {
    const q_attn_rt *rt = tg->rt;
    opdb_sb_addf(sb, "{'q_shape_3d': (%lld, %lld, %lld)", (long long)tg->q3[0], (long long)tg->q3[1],
                 (long long)tg->q3[2]);
    repr_oint(sb, "avg_seq_len", rt->avg);
    opdb_sb_addf(sb, ", 'sparse_mode': %lld, 'num_kv_heads': %lld, 'num_heads': %lld", (long long)tg->sparse,
                 (long long)tg->kv, (long long)rt->num_heads);
    opdb_sb_adds(sb, ", 'input_layout': 'TND', 'cache_layout': 'PA_BSND', 'kv_cache_mode': 'paged'");
    repr_oint(sb, "topk", rt->topk);
    repr_oint(sb, "block_size", rt->block_size);
    opdb_sb_addf(sb, ", 'batch_size': %lld", (long long)rt->batch_size);
    repr_ivec(sb, "actual_seq_lengths_values", &rt->ql);
    repr_ivec(sb, "actual_seq_lengths_kv_values", &rt->kv);
    repr_ivec(sb, "block_table_valid_blocks", &rt->vb);
    if (rt->sparse_block) {
        opdb_sb_adds(sb, ", 'sparse_block_size': 1, 'sparse_indices_pattern': 'uniform'");
        repr_oint(sb, "sparse_indices_valid_count", rt->valid_count);
    }
    opdb_sb_adds(sb, ", 'required_context_fields': ['avg_seq_len', 'sparse_mode', 'num_kv_heads', 'num_heads', "
                     "'input_layout', 'cache_layout', 'kv_cache_mode', 'topk', 'block_size', "
                     "'actual_seq_lengths_values', 'actual_seq_lengths_kv_values', 'block_table_valid_blocks'");
    if (rt->sparse_block) {
        opdb_sb_adds(sb, ", 'sparse_block_size', 'sparse_indices_pattern'");
        if (rt->valid_count.set) opdb_sb_adds(sb, ", 'sparse_indices_valid_count'");
    }
    opdb_sb_addc(sb, ']');
    if (rt->has_blocks) repr_oint(sb, "active_cache_blocks", rt->active_blocks);
    opdb_sb_addc(sb, '}');
}

bool q_rt_ivals(opdb_arena *a, const qv *t, q_ivec *out) {
    memset(out, 0, sizeof *out);
    if (!t || t->kind != QV_TENSOR || !t->values) return false;
    out->v = opdb_arena_alloc(a, (t->nvalues ? t->nvalues : 1) * sizeof *out->v);
    for (size_t i = 0; i < t->nvalues; i++) out->v[i] = (int64_t)t->values[i];
    out->n = t->nvalues;
    out->set = true;
    return true;
}

bool q_rt_evensplit(opdb_arena *a, int64_t n, int64_t b, q_ivec *out) {
    memset(out, 0, sizeof *out);
    if (n <= 0 || b <= 0 || n < b) return false;
    int64_t q = n / b, r = n % b, acc = 0;
    out->v = opdb_arena_alloc(a, (size_t)b * sizeof *out->v);
    for (int64_t i = 0; i < b; i++) {
        acc += i < r ? q + 1 : q;
        out->v[out->n++] = acc;
    }
    out->set = true;
    return true;
}

/* Python floor division and modulo */
static int64_t fdiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

bool q_rt_rankzero(opdb_arena *a, const qv *seq, int64_t G, int64_t Lq, const qv *ql, bool strict, q_ivec *cum,
                   q_ivec *kvl) {
    memset(cum, 0, sizeof *cum);
    memset(kvl, 0, sizeof *kvl);
    q_ivec s, qv_;
    if (!q_rt_ivals(a, seq, &s) || s.n == 0) return false;
    bool ok = ql && ql->kind == QV_TENSOR && q_rt_ivals(a, ql, &qv_) && qv_.n == s.n;
    int64_t sum = 0;
    for (size_t i = 0; ok && i < qv_.n; i++) {
        ok = qv_.v[i] >= 0;
        sum += qv_.v[i];
    }
    if (!ok || sum != G) {
        if (strict && s.n > 1) return false;
        int64_t ss = 0;
        for (size_t i = 0; i < s.n; i++) ss += s.v[i];
        if (ss == G) {
            qv_ = s;
        } else {
            int64_t n = (int64_t)s.n, q = fdiv(G, n), r = G - q * n;
            qv_.v = opdb_arena_alloc(a, s.n * sizeof *qv_.v);
            qv_.n = s.n;
            for (int64_t i = 0; i < n; i++) qv_.v[i] = i < r ? q + 1 : q;
        }
    }
    cum->v = opdb_arena_alloc(a, s.n * sizeof *cum->v);
    kvl->v = opdb_arena_alloc(a, s.n * sizeof *kvl->v);
    int64_t gs = 0, lt = 0;
    for (size_t i = 0; i < s.n; i++) {
        int64_t ge = gs + qv_.v[i], le = ge < Lq ? ge : Lq, cc = le - gs > 0 ? le - gs : 0;
        lt += cc;
        cum->v[cum->n++] = lt;
        kvl->v[kvl->n++] = cc > 0 ? s.v[i] - (ge - le) : 0;
        gs = ge;
    }
    if (cum->v[cum->n - 1] != Lq) return false;
    cum->set = kvl->set = true;
    return true;
}

static int64_t ceil_div(int64_t a, int64_t b) { return -fdiv(-a, b); }

q_attn_rt *q_rt_sparse_params(q_ctx *c, int64_t wt, int64_t wh, const qv *seq, q_oint avg, q_oint topk, q_oint bs,
                              bool sb, const q_ivec *vec_cum, const q_ivec *vec_kv) {
    q_attn_rt *rt = opdb_arena_alloc(c->a, sizeof *rt);
    memset(rt, 0, sizeof *rt);
    rt->batch_size = q_numel(seq->shape);
    bool vec = vec_cum && vec_cum->set;
    if (vec) rt->kv = *vec_kv;
    else q_rt_ivals(c->a, seq, &rt->kv);
    if (vec) rt->ql = *vec_cum;
    else q_rt_evensplit(c->a, wt, rt->batch_size, &rt->ql);
    if (vec) {
        rt->avg.set = rt->kv.n > 0;
        if (rt->avg.set) {
            int64_t s = 0;
            for (size_t i = 0; i < rt->kv.n; i++) s += rt->kv.v[i];
            rt->avg.v = fdiv(s, (int64_t)rt->kv.n);
        }
    } else {
        rt->avg = avg;
    }
    if (rt->kv.set && bs.set && bs.v > 0) {
        rt->vb.v = opdb_arena_alloc(c->a, (rt->kv.n ? rt->kv.n : 1) * sizeof *rt->vb.v);
        for (size_t i = 0; i < rt->kv.n; i++) rt->vb.v[i] = ceil_div(rt->kv.v[i], bs.v);
        rt->vb.n = rt->kv.n;
        rt->vb.set = true;
    }
    rt->num_heads = wh;
    rt->topk = topk;
    rt->block_size = bs;
    rt->sparse_block = sb;
    if (sb && rt->kv.set && rt->kv.n && topk.set && topk.v > 0) {
        int64_t mx = rt->kv.v[0];
        for (size_t i = 1; i < rt->kv.n; i++)
            if (rt->kv.v[i] > mx) mx = rt->kv.v[i];
        rt->valid_count.set = true;
        rt->valid_count.v = topk.v < mx ? topk.v : mx;
    }
    return rt;
}
