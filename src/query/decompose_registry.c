/* The ops rebuilt from their arguments, by name: a leaf the mapping's plans
 * read without reaching the decomposers themselves. */
#include <string.h>

#include "query/decompose.h"

static const struct {
    const char *name;
    q_dkind kind;
} k_registry[] = {
    {"tensor_cast.multihead_latent_attention.default", DK_MLA},
    {"tensor_cast.multihead_latent_attention_quant.default", DK_MLA_QUANT},
    {"tensor_cast.mla_sparse_attention.default", DK_SPARSE},
    {"tensor_cast.mla_sparse_attention_quant.default", DK_SPARSE_QUANT},
    {"tensor_cast.mlapo.default", DK_MLAPO},
    {"tensor_cast.mlapo_quant.default", DK_MLAPO_QUANT},
    {"tensor_cast.dsa_indexer.default", DK_DSA},
};

int q_decomposer_kind(const char *name) {
    for (size_t i = 0; i < sizeof k_registry / sizeof k_registry[0]; i++)
        if (strcmp(name, k_registry[i].name) == 0) return (int)k_registry[i].kind;
    return -1;
}

bool q_is_decomposer(const char *name) { return q_decomposer_kind(name) >= 0; }
