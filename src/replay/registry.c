/* The operator registry: one line per operator, sorted by name (strcmp order,
 * checked by the unit tests). Add an operator with one line here and one in
 * src/replay/ops/ops.h. */
#include <string.h>
#include "opdb/signature.h"
#include "replay/ops/ops.h"

const opdb_op_def *const opdb_op_registry[] = {
    &opdb_op_Add,
    &opdb_op_AddRmsNormBias,
    &opdb_op_ArgMaxV2,
    &opdb_op_AscendQuantV2,
    &opdb_op_BatchMatMulV2,
    &opdb_op_DispatchFFNCombine,
    &opdb_op_DynamicQuant,
    &opdb_op_FusedInferAttentionScore,
    &opdb_op_GatherV2,
    &opdb_op_GroupedMatmul,
    &opdb_op_GroupedMatmulSwigluQuant,
    &opdb_op_Index,
    &opdb_op_InterleaveRope,
    &opdb_op_KvRmsNormRopeCache,
    &opdb_op_LightningIndexer,
    &opdb_op_MaskedFill,
    &opdb_op_MatMulCommon,
    &opdb_op_MatMulV2,
    &opdb_op_MatMulV3,
    &opdb_op_MoeTokenPermute,
    &opdb_op_MoeTokenUnpermute,
    &opdb_op_PadV3,
    &opdb_op_QuantBatchMatmulV3,
    &opdb_op_RINGMLAPrefillBF16Kernel,
    &opdb_op_ReshapeAndCacheNdKernel,
    &opdb_op_RmsNorm,
    &opdb_op_ScatterNdUpdate,
    &opdb_op_Slice,
    &opdb_op_SoftmaxV2,
    &opdb_op_Sort,
    &opdb_op_SparseFlashAttention,
    &opdb_op_SwiGlu,
    &opdb_op_TensorMove,
    &opdb_op_Transpose,
    &opdb_op_TransposeBatchMatMul,
    &opdb_op_split_qkv_rmsnorm_rope_kernel,
    NULL, /* end marker, not counted */
};

const size_t opdb_op_registry_count = sizeof opdb_op_registry / sizeof opdb_op_registry[0] - 1;

const opdb_op_def *opdb_op_find(const char *name) {
    char norm[256];
    if (!name) return NULL;
    opdb_normalize_op_name(name, strlen(name), norm, sizeof norm);
    for (size_t i = 0; i < opdb_op_registry_count; i++) {
        const opdb_op_def *op = opdb_op_registry[i];
        if (strcmp(op->name, norm) == 0) return op;
        for (const char *const *a = op->aliases; a && *a; a++)
            if (strcmp(*a, norm) == 0) return op;
    }
    return NULL;
}
