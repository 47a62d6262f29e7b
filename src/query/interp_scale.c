/* Wrapper path of compute_scale ops (quantize with scales). */
#include "query/interp_internal.h"

void ip_scale(q_ctx *c, const q_entry *e) {
    (void)e;
    q_miss(c, "unsupported:interpolation_compute_scale");
}
