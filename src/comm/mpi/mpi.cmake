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
    add_executable(opdb-comm ${CMAKE_CURRENT_LIST_DIR}/opdb_comm_main.c ${CMAKE_CURRENT_LIST_DIR}/bench_ranks.c)
    target_compile_definitions(opdb-comm PRIVATE _GNU_SOURCE)
    target_include_directories(opdb-comm PRIVATE ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(opdb-comm PRIVATE opdb_static MPI::MPI_C)
    install(TARGETS opdb-comm RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/opdb)
  endif()
endif()
if(OPDB_HAVE_MPI)
  message(STATUS "opdb: MPI helper opdb-comm ON")
else()
  message(STATUS "opdb: MPI helper opdb-comm OFF (${opdb_mpi_why})")
endif()
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/cli/cmd_comm.c PROPERTIES COMPILE_DEFINITIONS
  "OPDB_COMM_HELPER_INSTALLED=\"${CMAKE_INSTALL_FULL_LIBEXECDIR}/opdb/opdb-comm\"")
