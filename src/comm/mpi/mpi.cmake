# The opdb-comm helper (opdb comm bench): the only target linked with MPI,
# built when CMake's FindMPI finds it (-DOPDB_MPI=OFF skips it). `opdb`
# execs it, so opdb itself never maps libmpi.
option(OPDB_MPI "Build the opdb-comm MPI helper when MPI is found" ON)
set(OPDB_HAVE_MPI OFF)
set(opdb_mpi_why "MPI not found")
if(OPDB_SANITIZE_THREAD)
  # OpenMPI's runtime threads are not TSan-instrumented: every run would report its internals.
  set(opdb_mpi_why "not built under ThreadSanitizer")
elseif(OPDB_MPI)
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(OPDB_HAVE_MPI ON)
    add_executable(opdb-comm ${CMAKE_CURRENT_LIST_DIR}/opdb_comm_main.c ${CMAKE_CURRENT_LIST_DIR}/bench_ranks.c
      ${CMAKE_SOURCE_DIR}/src/cli/comm_bench_args.c
      ${CMAKE_CURRENT_LIST_DIR}/nccl_loader.c)
    target_compile_definitions(opdb-comm PRIVATE _GNU_SOURCE)
    target_include_directories(opdb-comm PRIVATE ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(opdb-comm PRIVATE opdb_static MPI::MPI_C ${CMAKE_DL_LIBS})
    install(TARGETS opdb-comm RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/opdb)
  endif()
endif()
# --backend nccl: a plugin module the helper dlopens only for that backend,
# built when the CUDA backend's toolkit is there and has NCCL.
set(opdb_nccl_why "no CUDA toolkit")
if(OPDB_HAVE_MPI AND OPDB_HAVE_CUDA)
  find_path(OPDB_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(OPDB_NCCL_LIB nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
    PATH_SUFFIXES lib lib64)
  if(OPDB_NCCL_INCLUDE AND OPDB_NCCL_LIB)
    add_library(opdb_comm_nccl MODULE ${CMAKE_CURRENT_LIST_DIR}/nccl_plugin.c)
    target_include_directories(opdb_comm_nccl PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
    target_include_directories(opdb_comm_nccl SYSTEM PRIVATE ${OPDB_NCCL_INCLUDE})
    target_link_libraries(opdb_comm_nccl PRIVATE CUDA::cudart ${OPDB_NCCL_LIB})
    set_target_properties(opdb_comm_nccl PROPERTIES PREFIX "lib" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
      C_VISIBILITY_PRESET hidden)
    install(TARGETS opdb_comm_nccl LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/opdb)
    set(opdb_nccl_why "")
  else()
    set(opdb_nccl_why "no NCCL in the CUDA toolkit")
  endif()
endif()
if(OPDB_HAVE_MPI)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/nccl_loader.c PROPERTIES COMPILE_DEFINITIONS
    "OPDB_COMM_NCCL_INSTALLED=\"${CMAKE_INSTALL_FULL_LIBDIR}/opdb\"")
  if(opdb_nccl_why)
    message(STATUS "opdb: MPI helper opdb-comm ON (--backend nccl OFF: ${opdb_nccl_why})")
  else()
    message(STATUS "opdb: MPI helper opdb-comm ON (--backend nccl ON: ${OPDB_NCCL_LIB})")
  endif()
else()
  message(STATUS "opdb: MPI helper opdb-comm OFF (${opdb_mpi_why})")
endif()
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/cli/cmd_comm.c PROPERTIES COMPILE_DEFINITIONS
  "OPDB_COMM_HELPER_INSTALLED=\"${CMAKE_INSTALL_FULL_LIBEXECDIR}/opdb/opdb-comm\"")
