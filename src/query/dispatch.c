/* Op-level dispatch: the op's mapping entry picks the lookup path; with
 * interpolation on, an exact MISS or PARTIAL goes to the wrapper, whose
 * answers the result cache keeps. */
#include <string.h>

#include "query/query_internal.h"

static void exact(q_ctx *c, const q_entry *e) {
    const char *zk = NULL;
    q_route r = e->p ? (q_route)e->p->route : q_entry_route(e->name, e->v, &zk);
    if (e->p) zk = e->p->zero_kernel;
    switch (r) {
    case QR_DECOMPOSED: q_path_decomposed(c, e); return;
    case QR_COMPOSITE: q_path_composite(c, e); return;
    case QR_COMM: q_path_comm(c, e); return;
    case QR_ATTENTION: q_path_attention(c, e); return;
    case QR_ELEMENTWISE: q_path_elementwise(c, e); return;
    case QR_MOE_FUSED: q_path_moe_fused(c, e); return;
    case QR_MTP_PROJECTION: q_path_mtp_projection(c, e); return;
    case QR_ZERO_COST:
        c->r->path = "zero_cost";
        q_hit(c, QS_MEASURED, 0.0, 1.0, "zero_cost", zk);
        return;
    case QR_ACCEPTED_MISS:
        c->r->path = "accepted_miss";
        q_hit(c, QS_MEASURED, 0.0, 1.0, "accepted_miss", "accepted_miss");
        return;
    case QR_COMPUTE: q_path_compute(c, e); return;
    }
}

/* category: communication */
static bool is_comm(const q_entry *e) {
    if (!e->v) return false;
    return e->p ? e->p->comm : qv_is_str(qv_get(e->v, "category"), "communication");
}

void q_dispatch(q_ctx *c) {
    const opdb_qdb *db = c->db;
    q_entry e = {c->q->op, NULL, NULL};
    if (db->map.ops_bad) {
        q_error(c, "bad_mapping", "operator_mappings is not a mapping");
        return;
    }
    const q_plan *p;
    e.v = q_op_find(db, e.name, &p);
    e.p = db->no_plan ? NULL : p;
    /* a path that scans rows: the map entry its first probe meets (the slot has
     * arrived while the line was read), fetched while the target is worked out */
    if (c->probe_hash && p &&
        (p->route == QR_COMPUTE || p->route == QR_MTP_PROJECTION))
        q_hitmap_prefetch_entry(db->hitmap, c->probe_hash);
    /* (a plan is a dict's) */
    if (!p && (!e.v || e.v->kind == QV_NULL)) {
        c->r->path = "unmapped";
        q_miss(c, "unmapped");
        e.v = NULL;
    } else if (!p) {
        q_error(c, "bad_mapping", "operator_mappings.%s is not a mapping", e.name);
        return;
    } else {
        exact(c, &e);
    }
    if (!c->cfg->interp || (c->r->src != QS_MISS && c->r->src != QS_PARTIAL)) return;
    /* a path not implemented yet says so; the wrapper's reason would hide it */
    if (c->r->src == QS_MISS && strncmp(c->r->miss, "unsupported:", 12) == 0) return;
    /* default mode: a communication op without its rank group keeps that reason */
    if (!c->cfg->quirks && c->r->src == QS_MISS && strcmp(c->r->miss, "insufficient_args") == 0 && is_comm(&e))
        return;
    /* The result cache keeps what follows the exact attempt: the wrapper's
     * answer. An exact answer costs less to recompute (the exact-hit map) than
     * to fetch, so only queries that reach the wrapper look in the cache, and
     * not communication ops either: the wrapper leaves them at once. */
    uint8_t key[1024];
    bool comm = is_comm(&e);
    size_t klen = !c->explain && c->db->cache && !comm ? q_cache_key(c->q, key, sizeof key) : 0;
    if (klen) {
        opdb_strbuf extra = c->r->extra, attempts = c->r->attempts;
        if (q_cache_get(c->db->cache, key, klen, c->a, c->r)) {
            c->r->extra = extra;
            c->r->attempts = attempts;
            return;
        }
    }
    /* the wrapper: its answer, or a MISS; the default mode keeps an exact PARTIAL it cannot better */
    /* (only a PARTIAL can be kept: only it is saved) */
    bool keep = !c->cfg->quirks && c->r->src == QS_PARTIAL;
    q_result saved;
    if (keep) saved = *c->r;
    q_interpolate(c, &e);
    if (c->r->src == QS_MISS && !c->r->miss[0]) c->r->miss = "wrapper_interpolation_failed";
    if (keep && (c->r->src == QS_MISS || c->r->src == QS_PARTIAL)) {
        opdb_strbuf extra = c->r->extra, attempts = c->r->attempts;
        *c->r = saved;
        c->r->extra = extra;
        c->r->attempts = attempts;
    }
    if (klen) q_cache_put(c->db->cache, key, klen, c->r);
}
