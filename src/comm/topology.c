/* Rank coordinates, tiers and groups on a hardware grid (docs/COMM.md §2). */
#include <stdio.h>

#include "opdb/comm.h"

static void coords(const opdb_comm_grid *g, long long rank, long long *c) {
    for (int d = g->ndim - 1; d >= 0; d--) {
        c[d] = rank % g->dims[d];
        rank /= g->dims[d];
    }
}

int opdb_comm_tier_of_range(const opdb_comm_grid *g, long long first, long long n) {
    if (n <= 1) return g->ndim - 1;
    long long a[OPDB_COMM_MAX_DIMS], b[OPDB_COMM_MAX_DIMS];
    coords(g, first, a);
    for (long long r = first + 1; r < first + n; r++) {
        coords(g, r, b);
        for (int d = 0; d < g->ndim; d++)
            if (a[d] != b[d]) {
                /* the outermost differing dimension over all members */
                int best = d;
                for (long long q = r + 1; q < first + n && best > 0; q++) {
                    coords(g, q, b);
                    for (int e = 0; e < best; e++)
                        if (a[e] != b[e]) {
                            best = e;
                            break;
                        }
                }
                return best;
            }
    }
    return g->ndim - 1;
}

void opdb_comm_grid_repr(const opdb_comm_grid *g, char *buf, size_t cap) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k, "[");
    for (int d = 0; d < g->ndim && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? ", " : "", g->dims[d]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

int opdb_comm_group(const opdb_comm_grid *g, long long nd, int tier, long long *base, char *msg, size_t cap) {
    char gs[256];
    opdb_comm_grid_repr(g, gs, sizeof gs);
    if (tier < 0 || tier >= g->ndim) {
        snprintf(msg, cap, "tier=%d is outside the grid_shape=%s", tier, gs);
        return -1;
    }
    long long span = 1;
    for (int d = tier; d < g->ndim; d++) span *= g->dims[d];
    if (nd > span) {
        snprintf(msg, cap, "num_devices=%lld exceeds span size %lld for tier=%d, grid_shape=%s", nd, span, tier, gs);
        return -1;
    }
    /* anchored at rank 0: every coordinate of the anchor is 0, so base is 0 */
    *base = 0;
    return 0;
}
