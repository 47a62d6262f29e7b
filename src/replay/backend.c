/* Backend selection by name (`opdb bench --backend cpu|cuda`). */
#include <string.h>
#include "core/call.h"
#include "opdb/replay.h"

static void backend_defaults(opdb_backend_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_backend_opts, backend_defaults)

opdb_backend *opdb_backend_create(const char *name, const opdb_backend_opts *o, opdb_err *err) {
    opdb_backend_opts defaults;
    opdb_backend_opts_init(&defaults);
    if (!o) o = &defaults;
    if (opdb_opts_check(o, o->size, sizeof *o, "opdb_backend_opts", err)) return NULL;
    if (name && strcmp(name, "cpu") == 0) return opdb_backend_cpu_create(o, err);
    if (name && strcmp(name, "cuda") == 0) return opdb_backend_cuda_create(o, err);
    opdb_fail(err, OPDB_ERR_USAGE, "unknown backend '%s' (expected cpu or cuda)", name ? name : "");
    return NULL;
}
