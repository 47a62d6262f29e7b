/* op_mapping.yaml metadata and generator resolution (docs/GRID.md §3). */
#ifndef OPDB_GRID_OPMAP_H
#define OPDB_GRID_OPMAP_H

#include "grid/grid_internal.h"
#include "opdb/fs.h"

typedef struct grid_opmeta {
    char *kernel_type;
    bool zero_cost, composite, communication;
    char *query_mode;
    char *alternates_of;
} grid_opmeta;

typedef struct grid_opmap {
    grid_opmeta *e;
    size_t n;
    bool present;
} grid_opmap;

int grid_opmap_load(const char *path, grid_opmap *m, opdb_err *err);
void grid_opmap_free(grid_opmap *m);
/* The pattern for kernel type kt, or NULL (no generator). */
const grid_pattern *grid_resolve(const opdb_grid_config *cfg, const grid_opmap *m, const char *kt);

#endif
