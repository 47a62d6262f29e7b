/* Mapping entry plans: the route an entry takes and what its compute target
 * reads (kernel lists, tc_input_count, the degenerate-BMM kernel, the TP
 * projection rule), worked out once when the mapping is loaded instead of by
 * a dozen dict lookups per query. The rules are the per-query reading's;
 * whatever would make that reading word an error, or depends on the query's
 * inputs beyond what is kept here, stays unplanned and is read per query. */
#include <string.h>

#include "query/query_internal.h"

q_route q_entry_route(const char *name, const qv *v, const char **zero_kernel) {
    *zero_kernel = NULL;
    if (qv_truthy(qv_get(v, "composite"))) return q_is_decomposer(name) ? QR_DECOMPOSED : QR_COMPOSITE;
    if (qv_is_str(qv_get(v, "category"), "communication")) return QR_COMM;
    const qv *mode = qv_get(v, "query_mode");
    if (qv_is_str(mode, "attention_special")) return QR_ATTENTION;
    if (qv_is_str(mode, "elementwise")) return QR_ELEMENTWISE;
    if (qv_is_str(mode, "moe_fused")) return QR_MOE_FUSED;
    if (qv_is_str(mode, "mtp_projection")) return QR_MTP_PROJECTION;
    if (qv_truthy(qv_get(v, "zero_cost"))) {
        const qv *kt = qv_get(v, "kernel_type");
        /* the key's value as it is (even null); "" when the key is absent */
        *zero_kernel = !kt ? "" : kt->kind == QV_STR ? kt->s : NULL;
        return QR_ZERO_COST;
    }
    if (qv_truthy(qv_get(v, "accepted_miss"))) return QR_ACCEPTED_MISS;
    return QR_COMPUTE;
}

static void add(opdb_arena *a, q_plan *p, const char *s, uint32_t *cap) {
    for (size_t i = 0; i < p->nk; i++)
        if (strcmp(p->k[i], s) == 0) return;
    if (p->nk == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 4;
        const char **n = opdb_arena_alloc(a, nc * sizeof *n);
        if (p->nk) memcpy(n, p->k, p->nk * sizeof *n);
        p->k = n;
        *cap = nc;
    }
    p->k[p->nk++] = s;
}

/* q_entry_kernels's lists, unless it would set an error */
static void kernels(opdb_arena *a, const qv *v, q_plan *p) {
    const qv *kt = qv_get(v, "kernel_type"), *alt = qv_get(v, "alternate_kernel_types");
    if (qv_truthy(kt) && kt->kind != QV_STR) return;
    bool alts = alt && alt->kind != QV_NULL;
    if (alts && alt->kind != QV_LIST) return;
    for (size_t i = 0; alts && i < alt->n; i++)
        if (alt->items[i]->kind != QV_STR) return;
    uint32_t cap = 0;
    if (qv_truthy(kt)) add(a, p, kt->s, &cap);
    p->nk0 = p->nk;
    for (size_t i = 0; alts && i < alt->n; i++) add(a, p, alt->items[i]->s, &cap);
    p->kernels_ok = true;
}

uint8_t q_tp_read(opdb_arena *a, const qv *v, const int64_t **dv, size_t *dn) {
    const qv *rule = qv_get(v, "tp_linear_projection");
    if (!rule || rule->kind == QV_NULL) return Q_TP_NONE;
    const qv *axis = qv_get(rule, "shard_axis"), *dims = qv_get(rule, "logical_global_dims"),
             *oth = qv_get(rule, "otherwise");
    bool input = qv_is_str(axis, "input"), output = qv_is_str(axis, "output");
    /* an explicit null `otherwise` is not the default: Python's get() returns None */
    bool valid = rule->kind == QV_DICT && (input || output) && dims && dims->kind == QV_LIST && dims->n > 0 &&
                 (!oth || qv_is_str(oth, "physical_local"));
    for (size_t i = 0; valid && i < dims->n; i++)
        if (dims->items[i]->kind != QV_INT || dims->items[i]->i <= 0) valid = false;
    if (!valid) return Q_TP_INVALID;
    int64_t *d = opdb_arena_alloc(a, dims->n * sizeof *d);
    for (size_t i = 0; i < dims->n; i++) d[i] = dims->items[i]->i;
    *dv = d;
    *dn = dims->n;
    return input ? Q_TP_INPUT : Q_TP_OUTPUT;
}

void q_plan_make(opdb_arena *a, const char *name, const qv *v, q_plan *p) {
    memset(p, 0, sizeof *p);
    p->name = name;
    p->name_n = (uint32_t)strlen(name);
    p->v = v;
    if (v->kind != QV_DICT) return;
    p->dict = true;
    p->route = (uint8_t)q_entry_route(name, v, &p->zero_kernel);
    p->comm = qv_is_str(qv_get(v, "category"), "communication");
    kernels(a, v, p);
    if (!p->kernels_ok) return;
    const qv *tc = qv_get(v, "tc_input_count"), *byrank = qv_get(v, "kernel_types_by_input_rank");
    if (tc && tc->kind != QV_NULL) {
        if (!qv_as_int(tc, &p->N)) return;
        p->has_n = true;
    }
    /* the rank list is chosen by the inputs: read per query */
    if (byrank && byrank->kind != QV_NULL) return;
    const qv *deg = qv_get(v, "degenerate_bmm_kernel_type");
    p->deg = deg && deg->kind == QV_STR ? deg->s : NULL;
    p->tp = q_tp_read(a, v, &p->tp_dims, &p->tp_n);
    p->target_ok = true;
}
