# opdb_cuda_kernels: the .cu files of the CUDA replay backend as an object
# library. Shared by the main build (src/replay/cuda/cuda.cmake) and the
# stand-alone check project (tests/cuda/), which needs only the CUDA toolkit.
get_filename_component(OPDB_CUDA_ROOT ${CMAKE_CURRENT_LIST_DIR}/../../.. ABSOLUTE)
file(GLOB OPDB_CUDA_KERNEL_SOURCES CONFIGURE_DEPENDS ${OPDB_CUDA_ROOT}/src/replay/cuda/*.cu)
add_library(opdb_cuda_kernels OBJECT ${OPDB_CUDA_KERNEL_SOURCES})
target_include_directories(opdb_cuda_kernels PUBLIC ${OPDB_CUDA_ROOT}/include ${OPDB_CUDA_ROOT}/src)
set_target_properties(opdb_cuda_kernels PROPERTIES
  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON)
# Warnings of nvcc and of the host compiler; errors only where the project asks
# for them (OPDB_WERROR), so a GPU host's different toolchain still builds.
set(OPDB_CUDA_WARNINGS -Xcompiler=-Wall,-Wextra)
if(OPDB_WERROR)
  list(APPEND OPDB_CUDA_WARNINGS -Xcompiler=-Werror --Werror=all-warnings)
endif()
target_compile_options(opdb_cuda_kernels PRIVATE ${OPDB_CUDA_WARNINGS})
target_link_libraries(opdb_cuda_kernels PUBLIC CUDA::cudart CUDA::cublasLt)
