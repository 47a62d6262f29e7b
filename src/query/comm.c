/* Communication lookups (exact, bracket, alpha-beta, topology tiers).
 * Not implemented yet: every query is a MISS `unsupported:comm`, never a
 * guessed latency. */
#include "query/query_internal.h"

void q_path_comm(q_ctx *c, const q_entry *e) {
    (void)e;
    c->r->path = "communication";
    q_miss(c, "unsupported:comm");
}

void q_kernel_comm(q_ctx *c, const char *kernel, const qv *comm) {
    (void)kernel;
    (void)comm;
    c->r->path = "kernel";
    q_miss(c, "unsupported:comm");
}
