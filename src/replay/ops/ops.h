/* Every operator definition the registry lists (one line per operator,
 * kept in the order of src/replay/registry.c). */
#ifndef OPDB_REPLAY_OPS_H
#define OPDB_REPLAY_OPS_H

#include "opdb/replay.h"

extern const opdb_op_def opdb_op_Add;
extern const opdb_op_def opdb_op_AddRmsNormBias;
extern const opdb_op_def opdb_op_ArgMaxV2;
extern const opdb_op_def opdb_op_AscendQuantV2;
extern const opdb_op_def opdb_op_BatchMatMulV2;
extern const opdb_op_def opdb_op_DispatchFFNCombine;
extern const opdb_op_def opdb_op_DynamicQuant;
extern const opdb_op_def opdb_op_FusedInferAttentionScore;
extern const opdb_op_def opdb_op_GatherV2;
extern const opdb_op_def opdb_op_GroupedMatmul;
extern const opdb_op_def opdb_op_GroupedMatmulSwigluQuant;
extern const opdb_op_def opdb_op_Index;
extern const opdb_op_def opdb_op_InterleaveRope;
extern const opdb_op_def opdb_op_KvRmsNormRopeCache;
extern const opdb_op_def opdb_op_LightningIndexer;
extern const opdb_op_def opdb_op_MaskedFill;
extern const opdb_op_def opdb_op_MatMulCommon;
extern const opdb_op_def opdb_op_MatMulV2;
extern const opdb_op_def opdb_op_MatMulV3;
extern const opdb_op_def opdb_op_MoeTokenPermute;
extern const opdb_op_def opdb_op_MoeTokenUnpermute;
extern const opdb_op_def opdb_op_PadV3;
extern const opdb_op_def opdb_op_QuantBatchMatmulV3;
extern const opdb_op_def opdb_op_RINGMLAPrefillBF16Kernel;
extern const opdb_op_def opdb_op_ReshapeAndCacheNdKernel;
extern const opdb_op_def opdb_op_RmsNorm;
extern const opdb_op_def opdb_op_ScatterNdUpdate;
extern const opdb_op_def opdb_op_Slice;
extern const opdb_op_def opdb_op_SoftmaxV2;
extern const opdb_op_def opdb_op_Sort;
extern const opdb_op_def opdb_op_SparseFlashAttention;
extern const opdb_op_def opdb_op_SwiGlu;
extern const opdb_op_def opdb_op_TensorMove;
extern const opdb_op_def opdb_op_Transpose;
extern const opdb_op_def opdb_op_TransposeBatchMatMul;
extern const opdb_op_def opdb_op_split_qkv_rmsnorm_rope_kernel;

#endif
