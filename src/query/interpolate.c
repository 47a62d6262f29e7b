/* The interpolating wrapper, run when the exact answer is a MISS or PARTIAL
 * and interpolation is on: its own dispatch picks the path (matmul family,
 * generic compute, compute_scale, quantized matmul, elementwise, attention);
 * paths it cannot interpolate answer a MISS with the reason why. */
#include <string.h>

#include "query/interp_internal.h"

/* the text of compute_subcategory (Python str() of the value), NULL when null/absent */
static const char *subcategory(q_ctx *c, const qv *v) {
    if (!v || v->kind == QV_NULL) return NULL;
    switch (v->kind) {
    case QV_STR: return v->s;
    case QV_INT: return q_sprintf(c, "%lld", (long long)v->i);
    case QV_BOOL: return v->b ? "True" : "False";
    default: return "?";
    }
}

void q_interpolate(q_ctx *c, const q_entry *e) {
    c->r->stage = "interpolation";
    /* the outcome map's entry where this query's probes start (its slot fetched while the line was read) */
    if (c->q && !c->explain) ip_omap_prefetch_entry(c->db->ipmap, c->q->line_hash);
    if (!e || !e->v || e->v->kind == QV_NULL) {
        q_miss(c, "wrapper_unmapped");
        return;
    }
    const qv *v = e->v;
    /* an entry planned for the compute route is none of zero-cost, accepted miss, composite,
     * communication, moe_fused, attention_special or elementwise (its plan read those fields) */
    bool compute = e->p && e->p->route == QR_COMPUTE;
    if (!compute && (qv_truthy(qv_get(v, "zero_cost")) || qv_truthy(qv_get(v, "accepted_miss")))) {
        q_miss(c, "wrapper_not_applicable");
        return;
    }
    if (!compute && qv_truthy(qv_get(v, "composite"))) {
        /* static composites are never interpolated */
        if (q_is_decomposer(e->name)) ip_composite(c, e);
        else q_miss(c, "wrapper_interpolation_failed");
        return;
    }
    if (!compute && qv_is_str(qv_get(v, "category"), "communication")) {
        q_miss(c, "wrapper_communication_owned_by_base");
        return;
    }
    const qv *mode = qv_get(v, "query_mode");
    if (qv_is_str(mode, "moe_fused")) {
        ip_moe(c, e);
        return;
    }
    if (qv_is_str(mode, "attention_special")) {
        ip_attention(c, e);
        return;
    }
    if (qv_is_str(mode, "attention_lightning_indexer")) {
        q_miss(c, "runtime_attention_leaf_required");
        return;
    }
    if (qv_is_str(mode, "scatter_nd_update_mla")) {
        ip_scatter_op(c, e);
        return;
    }
    if (qv_is_str(mode, "elementwise")) {
        ip_elementwise(c, e);
        return;
    }
    const char *sub = subcategory(c, qv_get(v, "compute_subcategory"));
    if (sub && strcmp(sub, "compute_scale") == 0) {
        ip_scale(c, e);
        return;
    }
    if (sub && strcmp(sub, "quantized_matmul") == 0) {
        ip_matmul(c, e, true);
        return;
    }
    if (sub) {
        q_miss(c, "compute_subcategory_unknown");
        return;
    }
    const qv *kt = qv_get(v, "kernel_type");
    if (!qv_truthy(kt)) {
        q_miss(c, "compute_kernel_type_missing");
        return;
    }
    if (kt->kind == QV_STR && ip_in_matmul_plus(kt->s)) ip_matmul(c, e, false);
    else ip_generic(c, e);
}

void q_interpolate_kernel(q_ctx *c, const char *const *K, size_t nk, const q_tins *in, const q_tins *out,
                          q_kmatch how) {
    c->r->stage = "interpolation";
    if (how == QK_SHAPE && nk > 0) ip_kernel_shape(c, K, nk, in, out);
    else if (how == QK_ELEMENTWISE) ip_kernel_elementwise(c, K, nk, in, out);
    else ip_kernel_attention(c, K, nk, in, qv_get(c->q->kq, "attention"));
}
