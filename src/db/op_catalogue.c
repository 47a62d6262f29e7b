/* The operator catalogue: the operators opdb can replay and measure (the
 * names of the replay registry, src/replay/registry.c, without aliases).
 * It decides what `--ops` accepts and which database tables update and
 * bench touch; kept here, under both, so that update needs nothing of the
 * replay kernels.  The unit tests check it against the registry. */
#include <string.h>

#include "opdb/db.h"

const char *const opdb_op_catalogue[] = {
    "Add",
    "AddRmsNormBias",
    "ArgMaxV2",
    "AscendQuantV2",
    "BatchMatMulV2",
    "DispatchFFNCombine",
    "DynamicQuant",
    "FusedInferAttentionScore",
    "GatherV2",
    "GroupedMatmul",
    "GroupedMatmulSwigluQuant",
    "Index",
    "InterleaveRope",
    "KvRmsNormRopeCache",
    "LightningIndexer",
    "MaskedFill",
    "MatMulCommon",
    "MatMulV2",
    "MatMulV3",
    "MoeTokenPermute",
    "MoeTokenUnpermute",
    "PadV3",
    "QuantBatchMatmulV3",
    "RINGMLAPrefillBF16Kernel",
    "ReshapeAndCacheNdKernel",
    "RmsNorm",
    "ScatterNdUpdate",
    "Slice",
    "SoftmaxV2",
    "Sort",
    "SparseFlashAttention",
    "SwiGlu",
    "TensorMove",
    "Transpose",
    "TransposeBatchMatMul",
    "split_qkv_rmsnorm_rope_kernel",
};

const size_t opdb_op_catalogue_count = sizeof opdb_op_catalogue / sizeof opdb_op_catalogue[0];

bool opdb_is_replay_op(const char *name) {
    for (size_t i = 0; i < opdb_op_catalogue_count; i++)
        if (strcmp(opdb_op_catalogue[i], name) == 0) return true;
    return false;
}
