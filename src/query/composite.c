/* Static composites (a fixed sub_kernels list, MC2, sequence-parallel
 * variants). Not implemented yet: a MISS `unsupported:composite`. */
#include "query/query_internal.h"

void q_path_composite(q_ctx *c, const q_entry *e) {
    (void)e;
    c->r->path = "composite";
    q_miss(c, "unsupported:composite");
}
