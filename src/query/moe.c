/* moe_fused (DispatchFFNCombine): projection, EP matching, embedded compute
 * and communication. Not implemented yet: a MISS `unsupported:moe_fused`. */
#include "query/query_internal.h"

void q_path_moe_fused(q_ctx *c, const q_entry *e) {
    (void)e;
    c->r->path = "moe_fused";
    q_miss(c, "unsupported:moe_fused");
}
