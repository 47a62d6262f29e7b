/* What both a run and --plan need of a row: its cells and the memory budget check. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "replay/bench_rows.h"

const char *bench_row_cell(const bench_row *r, const char *col) {
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->name[i], col) == 0) return r->val[i];
    return "";
}

const char *bench_row_cell_cb(const opdb_replay_row *row, const char *col) {
    return bench_row_cell(row->ctx, col);
}

/* Refuses a planned row whose buffers do not fit the memory budget, before any is allocated. */
int bench_check_budget(const bench_ctx *c, const opdb_op_problem *p, opdb_err *err) {
    size_t need = opdb_problem_buffer_bytes(p);
    if (need <= c->budget) return 0;
    char size[64];
    if (need == SIZE_MAX) snprintf(size, sizeof size, "more than 2^64 bytes");
    else snprintf(size, sizeof size, "%zu bytes (%.1f GiB)", need, (double)need / (1u << 30));
    if (c->o->max_memory)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "its buffers need %s, more than --max-memory %zu bytes", size, c->budget);
    return opdb_fail(err, OPDB_ERR_RUNTIME, "its buffers need %s, more than the memory budget of %zu bytes (3/4 of the "
                     "memory available; --max-memory sets it)", size, c->budget);
}
