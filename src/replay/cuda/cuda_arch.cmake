# Default GPU targets for the CUDA replay kernels (before enable_language /
# project): SASS for Turing (sm_75) and Ampere (sm_80, also runs on sm_86/89),
# SASS + PTX for Hopper (sm_90; the PTX is JIT-compiled on newer GPUs).
# Override with -DCMAKE_CUDA_ARCHITECTURES=native (or a list) at configure time.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 75-real 80-real 90)
endif()
# One CUDA runtime: the shared libcudart that CUDA::cudart names.
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
