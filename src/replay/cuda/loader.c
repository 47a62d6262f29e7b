/* opdb_backend_cuda_create: the CUDA backend lives in a plugin module
 * (libopdb_cuda.so) loaded on first use, so that commands which never touch a
 * GPU do not map libcudart and cuBLASLt at start (about 200 MiB of resident
 * memory and a quarter of a second each). Where the plugin was not built,
 * the backend exists by name and says why it cannot be used. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/call.h"
#include "opdb/replay.h"

#ifndef OPDB_CUDA_ABSENT_REASON
#define OPDB_CUDA_ABSENT_REASON "no CUDA toolkit found when opdb was configured"
#endif

#ifdef OPDB_CUDA_PLUGIN_NAME

typedef opdb_backend *(*plugin_create_fn)(const opdb_backend_opts *, opdb_err *);

static void *g_plugin; /* kept loaded for the life of the process */

/* Candidates in order: the OPDB_CUDA_PLUGIN setting, beside the executable (build
 * tree), <exe>/../<libdir>/opdb (relocated install), the configured install
 * folder. The first that exists is loaded; its error is the one reported. */
static int candidate(int i, char *out, size_t cap) {
    const char *env = opdb_setting("OPDB_CUDA_PLUGIN");
    char exe[PATH_MAX];
    ssize_t n;
    switch (i) {
    case 0:
        if (!env || !*env) return 0;
        return snprintf(out, cap, "%s", env) < (int)cap;
    case 1:
    case 2:
        n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return 0;
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (!slash) return 0;
        *slash = '\0';
        if (i == 1) return snprintf(out, cap, "%s/%s", exe, OPDB_CUDA_PLUGIN_NAME) < (int)cap;
        return snprintf(out, cap, "%s/../%s/opdb/%s", exe, OPDB_CUDA_PLUGIN_LIBDIR, OPDB_CUDA_PLUGIN_NAME) < (int)cap;
    case 3:
        return snprintf(out, cap, "%s/opdb/%s", OPDB_CUDA_PLUGIN_FULL_LIBDIR, OPDB_CUDA_PLUGIN_NAME) < (int)cap;
    }
    return 0;
}

static int load_plugin(opdb_err *err) {
    if (g_plugin) return 0;
    char path[PATH_MAX];
    for (int i = 0; i < 4; i++) {
        if (!candidate(i, path, sizeof path) || access(path, R_OK) != 0) {
            if (i == 0 && opdb_setting("OPDB_CUDA_PLUGIN") && *opdb_setting("OPDB_CUDA_PLUGIN"))
                return opdb_fail(err, OPDB_ERR_RUNTIME, "CUDA backend: OPDB_CUDA_PLUGIN=%s: cannot read the file",
                                 opdb_setting("OPDB_CUDA_PLUGIN"));
            continue;
        }
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) return opdb_fail(err, OPDB_ERR_RUNTIME, "CUDA backend: cannot load %s: %s", path, dlerror());
        const char *const *abi = dlsym(h, "opdb_cuda_plugin_abi");
        if (!abi || strcmp(*abi, OPDB_CUDA_PLUGIN_ABI) != 0) {
            dlclose(h);
            return opdb_fail(err, OPDB_ERR_RUNTIME, "CUDA backend: %s was built for another opdb (expected %s)", path,
                             OPDB_CUDA_PLUGIN_ABI);
        }
        g_plugin = h;
        return 0;
    }
    return opdb_fail(err, OPDB_ERR_RUNTIME,
                     "CUDA backend: %s not found beside the opdb executable or in %s/opdb (set OPDB_CUDA_PLUGIN)",
                     OPDB_CUDA_PLUGIN_NAME, OPDB_CUDA_PLUGIN_FULL_LIBDIR);
}

opdb_backend *opdb_backend_cuda_create(const opdb_backend_opts *o, opdb_err *err) {
    if (o && opdb_opts_check(o, o->size, sizeof *o, "opdb_backend_opts", err)) return NULL;
    if (load_plugin(err)) return NULL;
    plugin_create_fn create;
    /* POSIX: a data pointer from dlsym is converted through memcpy. */
    void *sym = dlsym(g_plugin, "opdb_cuda_plugin_create");
    if (!sym) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "CUDA backend: the plugin has no opdb_cuda_plugin_create");
        return NULL;
    }
    memcpy(&create, &sym, sizeof create);
    return create(o, err);
}

#else

opdb_backend *opdb_backend_cuda_create(const opdb_backend_opts *o, opdb_err *err) {
    (void)o;
    opdb_fail(err, OPDB_ERR_RUNTIME, "CUDA backend not built: " OPDB_CUDA_ABSENT_REASON);
    return NULL;
}

#endif
