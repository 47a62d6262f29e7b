/* Backend selection by name (`opdb bench --backend cpu|cuda`). */
#include <string.h>
#include "opdb/replay.h"

opdb_backend *opdb_backend_create(const char *name, const opdb_backend_opts *o, opdb_err *err) {
    opdb_backend_opts defaults = {0, false, 0, 0, 0, false};
    if (!o) o = &defaults;
    if (name && strcmp(name, "cpu") == 0) return opdb_backend_cpu_create(o, err);
    if (name && strcmp(name, "cuda") == 0) return opdb_backend_cuda_create(o, err);
    opdb_fail(err, OPDB_ERR_USAGE, "unknown backend '%s' (expected cpu or cuda)", name ? name : "");
    return NULL;
}
