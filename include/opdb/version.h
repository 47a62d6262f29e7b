/* The library's version and what this build of it can do, at run time: a
 * program linked against libopdb.so may run with another build than the
 * one whose headers it was compiled with (OPDB_VERSION_STRING in api.h). */
#ifndef OPDB_VERSION_H
#define OPDB_VERSION_H

#include "opdb/api.h"

/* "MAJOR.MINOR.PATCH" of the library that is running. */
OPDB_API const char *opdb_version(void);
/* The source revision the library was built from: "git <hash>[-dirty]"
 * read when it was built, or "unknown" (not built from a git checkout). */
OPDB_API const char *opdb_build_revision(void);
/* The optional parts CMake found when the library was configured, one
 * "name=yes|no" word each, space separated, in a fixed order:
 * "CUDA=no MPI=yes NCCL=no SQLite=yes OpenMP=yes qhull=yes". */
OPDB_API const char *opdb_build_features(void);

#endif
