# cmake -DSRC=<source dir> -DOUT=<header> -P build_revision.cmake
# Writes OUT defining OPDB_BUILD_REVISION ("git <hash>[-dirty]" or
# "unknown" outside a git checkout), touching it only when the text changes
# so that a build without a new revision recompiles nothing.
set(rev "unknown")
find_program(GIT_EXE git)
if(GIT_EXE)
  execute_process(COMMAND ${GIT_EXE} -C ${SRC} rev-parse --short=12 HEAD
    OUTPUT_VARIABLE hash RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND hash)
    set(rev "git ${hash}")
    execute_process(COMMAND ${GIT_EXE} -C ${SRC} status --porcelain --untracked-files=no
      OUTPUT_VARIABLE dirty RESULT_VARIABLE rc2 ERROR_QUIET)
    if(rc2 EQUAL 0 AND dirty)
      set(rev "${rev}-dirty")
    endif()
  endif()
endif()
set(text "#define OPDB_BUILD_REVISION \"${rev}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
