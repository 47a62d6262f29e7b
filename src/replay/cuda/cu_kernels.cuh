// The CUDA kernels, one per operator name; cu_table.cu indexes them.
#ifndef OPDB_CU_KERNELS_CUH
#define OPDB_CU_KERNELS_CUH

#include "cu_api.h"

#define OPDB_CU_KERNELS(X)                                                                   \
    X(Add) X(AddRmsNormBias) X(ArgMaxV2) X(AscendQuantV2) X(BatchMatMulV2) X(DynamicQuant)    \
    X(GatherV2) X(GroupedMatmul) X(Index) X(InterleaveRope) X(MaskedFill) X(MatMulCommon)     \
    X(MatMulV2) X(MatMulV3) X(PadV3) X(RmsNorm) X(ScatterNdUpdate) X(Slice) X(SoftmaxV2)      \
    X(Sort) X(SwiGlu) X(TensorMove) X(Transpose) X(TransposeBatchMatMul)

#define OPDB_CU_DECLARE(name) extern const opdb_cu_kernel opdb_cu_k_##name;
OPDB_CU_KERNELS(OPDB_CU_DECLARE)
#undef OPDB_CU_DECLARE

#endif
