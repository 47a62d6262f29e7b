/* Static composites: an op that runs a fixed list of kernels (sub_kernels).
 * The compute kernels give one nearest match among them (not a sum), each
 * `hcom_` kernel adds a communication part whose message is the matmul's
 * output (MC2); under sequence parallelism a variant may replace a
 * communication kernel (an all-reduce becoming a reduce-scatter of the
 * per-rank output). Any part that misses makes the whole op a MISS. */
#include <string.h>

#include "opdb/json_writer.h"
#include "opdb/pystr.h"
#include "query/comm.h"

typedef struct cspec {
    const char *kernel;
    bool per_rank, tp_group, alpha_beta;
} cspec;

static bool is_f8_or_byte(int dt) {
    return dt == QDT_I8 || dt == QDT_U8 || dt == QDT_F8E4M3 || dt == QDT_F8E5M2;
}

/* The sequence-parallel variant applied to the specs: 0 ok, 1 answered (miss or error set). */
static int sp_variant(q_ctx *c, const q_entry *e, cspec *cs, size_t ncs) {
    const qv *rv = qv_get(e->v, "runtime_comm_variants");
    if (qv_truthy(rv) && rv->kind != QV_DICT) {
        q_error(c, "bad_mapping", "operator_mappings.%s.runtime_comm_variants is not a mapping", e->name);
        return 1;
    }
    const qv *V = qv_get(rv, "sequence_parallel");
    if (!qv_truthy(V)) return 0;
    const qv *src = qv_get(V, "source_kernel_type"), *k = qv_get(V, "kernel_type"),
             *mode = qv_get(V, "message_bytes_mode"), *grp = qv_get(V, "group_type"),
             *meth = qv_get(V, "interpolation_method");
    bool ok = V->kind == QV_DICT && src && src->kind == QV_STR && k && k->kind == QV_STR &&
              strncmp(k->s, "hcom_", 5) == 0;
    /* an absent key takes its default; a key present with null does not */
    bool per_rank = false, tp_group = false, ab = true;
    if (ok && mode) {
        if (qv_is_str(mode, "per_rank_output")) per_rank = true;
        else ok = qv_is_str(mode, "full_output");
    }
    if (ok && grp && grp->kind != QV_NULL) {
        if (qv_is_str(grp, "tensor_parallel")) tp_group = true;
        else ok = false;
    }
    if (ok && meth) {
        if (qv_is_str(meth, "bracket_linear")) ab = false;
        else ok = qv_is_str(meth, "alpha_beta");
    }
    if (!ok) {
        q_miss(c, "invalid_runtime_comm_variant");
        return 1;
    }
    bool any = false;
    for (size_t i = 0; i < ncs; i++)
        if (strcmp(cs[i].kernel, src->s) == 0) {
            cs[i].kernel = k->s;
            cs[i].per_rank = per_rank;
            cs[i].tp_group = tp_group;
            cs[i].alpha_beta = ab;
            any = true;
        }
    if (!any) {
        q_miss(c, "runtime_comm_variant_source_missing");
        return 1;
    }
    return 0;
}

/* One communication part: 0 hit (*o), 1 miss, -1 error set. */
static int comm_part(q_ctx *c, const cspec *s, q_comm_res *o) {
    const qv *args = c->q->args;
    memset(o, 0, sizeof *o);
    if (!args || args->n == 0) return 1;
    const qv *g = args->items[args->n - 1];
    if (g->kind != QV_LIST) return 1;
    int64_t n = (int64_t)g->n;
    if (s->tp_group && (c->cfg->tp == 0 || n != c->cfg->tp)) return 1;
    if (args->n < 2) return 1;
    const qv *a = args->items[0], *b = args->items[1];
    if (a->kind != QV_TENSOR || b->kind != QV_TENSOR) return 1;
    if (a->shape.rank == 0 || b->shape.rank == 0) {
        q_error(c, "bad_args", "the matmul input and weight of a communication part must have a dimension");
        return -1;
    }
    int64_t sz = is_f8_or_byte(a->dtype) ? 2 : (int64_t)q_dtype_size(a->dtype);
    int64_t B = a->shape.d[0] * b->shape.d[b->shape.rank - 1] * sz;
    if (s->per_rank) {
        if (n <= 1 || B % n != 0) return 1;
        B /= n;
    }
    int tier;
    if (q_comm_tier(c, g, &tier)) return -1;
    q_comm_csv(c, s->kernel, B, n, tier, s->alpha_beta, o);
    if (o->failed) return -1;
    return o->found ? 0 : 1;
}

void q_path_composite(q_ctx *c, const q_entry *e) {
    c->r->path = "composite";
    const qv *S = qv_get(e->v, "sub_kernels");
    if (!qv_truthy(S)) {
        q_miss(c, "no_sub_kernels");
        return;
    }
    if (S->kind != QV_LIST) {
        q_error(c, "bad_mapping", "operator_mappings.%s.sub_kernels is not a list", e->name);
        return;
    }
    for (size_t i = 0; i < S->n; i++)
        if (S->items[i]->kind != QV_STR) {
            q_error(c, "bad_mapping", "operator_mappings.%s.sub_kernels holds a non-string", e->name);
            return;
        }
    int64_t N = 0;
    bool has_n = false;
    const qv *tc = qv_get(e->v, "tc_input_count");
    if (tc && tc->kind != QV_NULL) {
        if (!qv_as_int(tc, &N)) {
            q_error(c, "bad_mapping", "operator_mappings.%s.tc_input_count is not an integer", e->name);
            return;
        }
        has_n = true;
    }
    q_tins X = q_tensor_inputs(c, c->q->args);
    if (has_n) X.n = q_slice_n(X.n, N);
    const char **Kc = opdb_arena_alloc(c->a, S->n * sizeof *Kc);
    cspec *cs = opdb_arena_alloc(c->a, S->n * sizeof *cs);
    size_t nkc = 0, ncs = 0;
    for (size_t i = 0; i < S->n; i++) {
        const char *k = S->items[i]->s;
        if (strncmp(k, "hcom_", 5) == 0) cs[ncs++] = (cspec){k, false, false, true};
        else Kc[nkc++] = k;
    }
    q_set_kernels(c, Kc, nkc);
    if (nkc == 0) {
        q_miss(c, "csv_not_found");
        return;
    }
    /* one nearest match over every compute kernel: the first listed wins ties */
    q_scan s;
    const char *reason;
    if (!q_find_compute(c, Kc, nkc, &X, N, has_n, false, &s, &reason)) {
        if (!s.failed) q_miss(c, reason);
        return;
    }
    q_explain_scan(c, &s);
    if (c->cfg->sp && sp_variant(c, e, cs, ncs)) return;
    double comm = 0.0;
    bool interp = false;
    opdb_strbuf xs;
    opdb_sb_init(&xs);
    q_sub *parts = opdb_arena_alloc(c->a, (ncs ? ncs : 1) * sizeof *parts);
    for (size_t i = 0; i < ncs; i++) {
        q_comm_res o;
        int rc = comm_part(c, &cs[i], &o);
        if (c->explain) {
            opdb_sb_adds(&xs, i ? ", {\"kernel\": " : "{\"kernel\": ");
            opdb_json_quote(&xs, cs[i].kernel);
            opdb_sb_adds(&xs, ", \"latency_us\": ");
            if (rc == 0) {
                char buf[40];
                opdb_sb_add(&xs, buf, opdb_py_fmt_repr(buf, sizeof buf, o.lat));
            } else {
                opdb_sb_adds(&xs, "null");
            }
            opdb_sb_adds(&xs, rc == 0 ? (o.interp ? ", \"source\": \"INTERPOLATED\"" : ", \"source\": \"MEASURED\"")
                                      : ", \"source\": \"MISS\"");
            if (o.tab) {
                opdb_sb_adds(&xs, ", \"explain\": {\"comm\": ");
                q_comm_explain(&o, &xs);
                opdb_sb_addc(&xs, '}');
            }
            opdb_sb_addc(&xs, '}');
        }
        if (rc < 0) {
            opdb_sb_free(&xs);
            return;
        }
        if (rc > 0) {
            if (c->explain) {
                opdb_sb_adds(&c->r->extra, ", \"sub_kernels\": [");
                opdb_sb_add(&c->r->extra, xs.p, xs.n);
                opdb_sb_addc(&c->r->extra, ']');
            }
            opdb_sb_free(&xs);
            q_miss(c, "comm_sub_kernel_miss");
            return;
        }
        comm += o.lat;
        interp |= o.interp;
        parts[i].kernel = cs[i].kernel;
        parts[i].us = o.lat;
    }
    if (c->explain && ncs) {
        opdb_sb_adds(&c->r->extra, ", \"sub_kernels\": [");
        opdb_sb_add(&c->r->extra, xs.p, xs.n);
        opdb_sb_addc(&c->r->extra, ']');
    }
    opdb_sb_free(&xs);
    double compute = s.best.lat;
    q_hit(c, interp ? QS_INTERPOLATED : QS_MEASURED, compute + comm, ncs ? 0.9 : 0.8, NULL, s.tab->kernel);
    q_add_sub(c, s.tab->kernel, q_round2(compute));
    for (size_t i = 0; i < ncs; i++) q_add_sub(c, parts[i].kernel, q_round2(parts[i].us));
}
