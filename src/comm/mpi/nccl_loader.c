/* Loads libopdb_comm_nccl.so for `opdb comm bench --backend nccl` (see
 * nccl_api.h): beside the opdb-comm helper (build tree), then the installed
 * plugin folder. Without the plugin in this build: the reason. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "comm/mpi/nccl_api.h"

#ifndef OPDB_COMM_NCCL_INSTALLED
#define OPDB_COMM_NCCL_INSTALLED ""
#endif

const opdb_comm_nccl_api *opdb_comm_nccl_load(char *msg, size_t cap) {
    char self[PATH_MAX], path[PATH_MAX + 64];
    const char *where[2] = {NULL, OPDB_COMM_NCCL_INSTALLED};
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k > 0) {
        self[k] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0', where[0] = self;
    }
    for (int i = 0; i < 2; i++) {
        if (!where[i] || !where[i][0]) continue;
        snprintf(path, sizeof path, "%s/%s", where[i], OPDB_COMM_NCCL_PLUGIN);
        if (access(path, R_OK)) continue;
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(msg, cap, "--backend nccl: cannot load %s: %s", path, dlerror());
            return NULL;
        }
        const opdb_comm_nccl_api *api = dlsym(h, "opdb_comm_nccl_plugin");
        if (!api || api->abi != OPDB_COMM_NCCL_ABI) {
            snprintf(msg, cap, "--backend nccl: %s was built for another opdb", path);
            dlclose(h);
            return NULL;
        }
        return api;
    }
    snprintf(msg, cap, "--backend nccl is not available in this build (no CUDA toolkit with NCCL was found when opdb "
                       "was configured); use --backend mpi");
    return NULL;
}
