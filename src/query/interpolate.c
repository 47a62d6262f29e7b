/* The interpolating wrapper, run when the exact answer is a MISS or PARTIAL
 * and interpolation is on. Its own dispatch answers the cases that never
 * interpolate; interpolation itself is not implemented yet: a MISS
 * `unsupported:interpolation`, never a guessed latency. */
#include "query/query_internal.h"

void q_interpolate(q_ctx *c, const q_entry *e) {
    c->r->stage = "interpolation";
    if (!e || !e->v || e->v->kind == QV_NULL) {
        q_miss(c, "wrapper_unmapped");
        return;
    }
    if (qv_truthy(qv_get(e->v, "zero_cost")) || qv_truthy(qv_get(e->v, "accepted_miss"))) {
        q_miss(c, "wrapper_not_applicable");
        return;
    }
    if (!qv_truthy(qv_get(e->v, "composite")) && qv_is_str(qv_get(e->v, "category"), "communication")) {
        q_miss(c, "wrapper_communication_owned_by_base");
        return;
    }
    q_miss(c, "unsupported:interpolation");
}

void q_interpolate_kernel(q_ctx *c) {
    c->r->stage = "interpolation";
    q_miss(c, "unsupported:interpolation");
}
