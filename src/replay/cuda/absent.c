/* Built instead of the CUDA backend when opdb was configured without CUDA
 * (no toolkit found, or -DOPDB_CUDA=OFF): the backend exists by name and
 * says why it cannot be used. */
#include "opdb/replay.h"

#ifndef OPDB_CUDA_ABSENT_REASON
#define OPDB_CUDA_ABSENT_REASON "no CUDA toolkit found when opdb was configured"
#endif

opdb_backend *opdb_backend_cuda_create(const opdb_backend_opts *o, opdb_err *err) {
    (void)o;
    opdb_fail(err, OPDB_ERR_RUNTIME, "CUDA backend not built: " OPDB_CUDA_ABSENT_REASON);
    return NULL;
}
