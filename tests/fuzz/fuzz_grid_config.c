/* libFuzzer target: the grid configuration loader (YAML via libyaml, grids,
 * patterns, shape templates, expressions).  Any input must load or fail
 * with one error line naming the config, without crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/grid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    opdb_err err;
    opdb_err_clear(&err);
    opdb_grid_config *c = opdb_grid_config_load((const char *)data, size, "fuzz.yaml", &err);
    if (!c) {
        if (strncmp(err.msg, "fuzz.yaml:", 10) != 0 || strchr(err.msg, '\n')) abort();
        return 0;
    }
    opdb_grid_config_free(c);
    return 0;
}
