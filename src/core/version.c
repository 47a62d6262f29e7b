/* See opdb/version.h. The feature words and the revision are compile
 * definitions set by CMakeLists.txt once every optional part was looked for;
 * the revision header is rewritten at build time only when it changes. */
#include "opdb/version.h"

#include "opdb_build_revision.h"

#ifndef OPDB_FEATURE_CUDA
#define OPDB_FEATURE_CUDA "no"
#endif
#ifndef OPDB_FEATURE_MPI
#define OPDB_FEATURE_MPI "no"
#endif
#ifndef OPDB_FEATURE_NCCL
#define OPDB_FEATURE_NCCL "no"
#endif
#ifndef OPDB_FEATURE_OPENMP
#define OPDB_FEATURE_OPENMP "no"
#endif

const char *opdb_version(void) { return OPDB_VERSION_STRING; }

const char *opdb_build_revision(void) { return OPDB_BUILD_REVISION; }

/* SQLite and qhull are required at configure time: always in the build. */
const char *opdb_build_features(void) {
    return "CUDA=" OPDB_FEATURE_CUDA " MPI=" OPDB_FEATURE_MPI " NCCL=" OPDB_FEATURE_NCCL
           " SQLite=yes OpenMP=" OPDB_FEATURE_OPENMP " qhull=yes";
}
