/* `opdb comm bench`'s options (their defaults) and the configuration list
 * in the reference's order (docs/COMM.md §3.1-3.2). The flags are parsed by
 * the programs (src/cli/comm_bench_args.c), not here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/call.h"
#include "opdb/comm.h"
#include "opdb/pystr.h"

static void comm_bench_defaults(opdb_comm_bench_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->grid.ndim = 3;
    o->grid.dims[0] = 48, o->grid.dims[1] = 8, o->grid.dims[2] = 2;
    o->dtype = opdb_comm_dtype_default();
    o->warmup = 5;
    o->iters = 20;
    o->backend = "mpi";
}

OPDB_OPTS_INIT_SIZED(opdb_comm_bench_opts, comm_bench_defaults)

void opdb_comm_bench_opts_free(opdb_comm_bench_opts *o) {
    free(o->num_devices);
    free(o->tiers);
    free(o->bytes);
    opdb_comm_bench_opts_init(o);
}

opdb_comm_config *opdb_comm_configs(const opdb_comm_bench_opts *o, size_t *n, FILE *warn, opdb_err *err) {
    *n = 0;
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_comm_bench_opts", err)) return NULL;
    opdb_comm_config *c = NULL;
    size_t cnt = 0, cap = 0;
    for (size_t a = 0; a < o->nops; a++)
        for (size_t b = 0; b < o->nnum_devices; b++) {
            long long nd = o->num_devices[b];
            int auto_tier = opdb_comm_tier_of_range(&o->grid, 0, nd);
            size_t nt = o->tiers ? o->ntiers : 1;
            for (size_t t = 0; t < nt; t++) {
                int tier = o->tiers ? o->tiers[t] : auto_tier;
                long long base;
                char msg[512];
                if (opdb_comm_group(&o->grid, nd, tier, &base, msg, sizeof msg)) {
                    if (warn) fprintf(warn, "opdb comm bench: warning: skipping tier=%d, num_devices=%lld: %s\n", tier, nd, msg);
                    continue;
                }
                for (size_t m = 0; m < o->nbytes; m++) {
                    OPDB_ALLOC_GROW(c, cnt + 1, cap);
                    c[cnt++] = (opdb_comm_config){o->ops[a], o->bytes[m], nd, tier, base};
                }
            }
        }
    *n = cnt;
    return c;
}

/* Everything that decides which collectives run, with how many elements and
 * iterations, folded into one number; output paths are left out (only the
 * group's first rank writes). */
uint64_t opdb_comm_bench_fingerprint(const opdb_comm_bench_opts *o, const opdb_comm_config *c, size_t n) {
    uint64_t h = opdb_hash_bytes(&n, sizeof n, 17);
    for (size_t i = 0; i < n; i++) {
        long long v[5] = {(long long)c[i].op, c[i].bytes, c[i].nd, c[i].tier, c[i].base};
        h = opdb_hash_bytes(v, sizeof v, h);
    }
    long long w[6] = {o->warmup, o->iters, o->dtype ? o->dtype->size : 0, o->check, o->reference_quirks, 0};
    memcpy(&w[5], &o->time_budget_s, sizeof w[5]);
    h = opdb_hash_bytes(w, sizeof w, h);
    const char *names[2] = {o->dtype ? o->dtype->label : "", o->backend ? o->backend : ""};
    for (int i = 0; i < 2; i++) h = opdb_hash_bytes(names[i], strlen(names[i]) + 1, h);
    return h;
}
