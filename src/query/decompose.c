/* Decomposed composites (dense MLA, MLAPO; sparse MLA and the DSA indexer
 * later). The registry is real, so dispatch picks this path for exactly the
 * right ops; the decomposition itself is not implemented yet: a MISS
 * `unsupported:decomposer`. */
#include <string.h>

#include "query/query_internal.h"

static const char *const k_registry[] = {
    "tensor_cast.multihead_latent_attention.default",
    "tensor_cast.multihead_latent_attention_quant.default",
    "tensor_cast.mla_sparse_attention.default",
    "tensor_cast.mla_sparse_attention_quant.default",
    "tensor_cast.mlapo.default",
    "tensor_cast.mlapo_quant.default",
    "tensor_cast.dsa_indexer.default",
};

bool q_is_decomposer(const char *name) {
    for (size_t i = 0; i < sizeof k_registry / sizeof k_registry[0]; i++)
        if (strcmp(name, k_registry[i]) == 0) return true;
    return false;
}

void q_path_decomposed(q_ctx *c, const q_entry *e) {
    (void)e;
    c->r->path = "decomposer";
    q_miss(c, "unsupported:decomposer");
}
