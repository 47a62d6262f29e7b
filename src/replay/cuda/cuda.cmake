# Optional CUDA replay backend (opdb bench --backend cuda). Included by the
# top-level CMakeLists.txt once the opdb library targets exist.
#   -DOPDB_CUDA=AUTO (default): build it when a CUDA compiler and toolkit are found
#   -DOPDB_CUDA=ON: require it;  -DOPDB_CUDA=OFF: never build it
# Without it, loader.c makes opdb_backend_cuda_create fail with the reason.
set(OPDB_CUDA AUTO CACHE STRING "Build the CUDA replay backend: AUTO, ON or OFF")
set_property(CACHE OPDB_CUDA PROPERTY STRINGS AUTO ON OFF)
set(OPDB_HAVE_CUDA OFF)
set(opdb_cuda_absent "no CUDA toolkit found when opdb was configured")
if(OPDB_CUDA STREQUAL "OFF")
  set(opdb_cuda_absent "disabled with -DOPDB_CUDA=OFF when opdb was configured")
elseif(OPDB_CUDA STREQUAL "AUTO" AND (OPDB_SANITIZE OR OPDB_BUILD_FUZZ))
  # nvcc takes no sanitizer flags and the CUDA runtime does not run under ASan's default shadow layout.
  set(opdb_cuda_absent "not built in sanitizer/fuzz configurations (-DOPDB_CUDA=ON forces it)")
else()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    include(${CMAKE_CURRENT_LIST_DIR}/cuda_arch.cmake)
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cublasLt)
      set(OPDB_HAVE_CUDA ON)
    endif()
  endif()
  if(OPDB_CUDA STREQUAL "ON" AND NOT OPDB_HAVE_CUDA)
    message(FATAL_ERROR "OPDB_CUDA=ON but no CUDA compiler with cuBLASLt was found "
                        "(put nvcc on PATH or set CUDACXX / -DCMAKE_CUDA_COMPILER)")
  endif()
endif()

set(OPDB_CUDA_PLUGIN_ABI "opdb-${PROJECT_VERSION}")
target_sources(opdb_obj PRIVATE ${CMAKE_CURRENT_LIST_DIR}/loader.c)
if(OPDB_HAVE_CUDA)
  message(STATUS "opdb: CUDA replay backend ON (CUDA ${CUDAToolkit_VERSION}, archs ${CMAKE_CUDA_ARCHITECTURES})")
  include(${CMAKE_CURRENT_LIST_DIR}/kernels.cmake)
  # A plugin module loaded on first use (loader.c): commands that never touch
  # a GPU do not map libcudart/cuBLASLt. It resolves the few libopdb functions
  # it calls from the host (the opdb executable exports them, ENABLE_EXPORTS).
  add_library(opdb_cuda MODULE ${CMAKE_CURRENT_LIST_DIR}/backend_cuda.c $<TARGET_OBJECTS:opdb_cuda_kernels>)
  target_include_directories(opdb_cuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_compile_definitions(opdb_cuda PRIVATE OPDB_CUDA_PLUGIN_ABI="${OPDB_CUDA_PLUGIN_ABI}")
  target_link_libraries(opdb_cuda PRIVATE CUDA::cudart CUDA::cublasLt)
  # Beside the opdb executable in the build tree, where loader.c looks first.
  set_target_properties(opdb_cuda PROPERTIES PREFIX "lib" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
    C_VISIBILITY_PRESET hidden CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
  install(TARGETS opdb_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/opdb)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/loader.c PROPERTIES COMPILE_DEFINITIONS
    "OPDB_CUDA_PLUGIN_NAME=\"libopdb_cuda.so\";OPDB_CUDA_PLUGIN_ABI=\"${OPDB_CUDA_PLUGIN_ABI}\";OPDB_CUDA_PLUGIN_LIBDIR=\"${CMAKE_INSTALL_LIBDIR}\";OPDB_CUDA_PLUGIN_FULL_LIBDIR=\"${CMAKE_INSTALL_FULL_LIBDIR}\"")
  foreach(t opdb_static opdb_shared)
    target_link_libraries(${t} PUBLIC ${CMAKE_DL_LIBS})
  endforeach()
  if(OPDB_BUILD_TESTS)
    enable_testing()
    add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/tests/cuda ${CMAKE_CURRENT_BINARY_DIR}/tests/cuda)
  endif()
else()
  message(STATUS "opdb: CUDA replay backend OFF (${opdb_cuda_absent})")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/loader.c PROPERTIES
    COMPILE_DEFINITIONS "OPDB_CUDA_ABSENT_REASON=\"${opdb_cuda_absent}\"")
endif()
