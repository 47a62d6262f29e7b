/* Whether this process was started by an MPI launcher, from the variables
 * the launchers set (OpenMPI, MPICH/Intel MPI hydra, MVAPICH), so that
 * `opdb bench` can hand itself to the MPI helper without touching MPI. */
#include <stdlib.h>

#include "opdb/comm.h"

static int env_int(const char *name) {
    const char *v = opdb_setting(name);
    if (!v || !*v) return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < 0 || x > 1 << 24 ? -1 : (int)x;
}

int opdb_mpi_launch(int *rank, int *size) {
    static const char *const vars[][2] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},
        {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        int r = env_int(vars[i][0]), n = env_int(vars[i][1]);
        if (n >= 1 && r >= 0 && r < n) {
            *rank = r;
            *size = n;
            return n;
        }
    }
    *rank = 0;
    *size = 1;
    return 0;
}
