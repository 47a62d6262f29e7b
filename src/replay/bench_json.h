/* `opdb bench --json`: the run's summary as one JSON object. */
#ifndef OPDB_REPLAY_BENCH_JSON_H
#define OPDB_REPLAY_BENCH_JSON_H

#include "replay/bench_rows.h"

/* The summary of a run (writeback: the write-back report's JSON text, or
 * NULL when nothing was written back) or, with --plan, of the plan. */
void bench_json(const bench_ctx *c, const char *writeback, opdb_strbuf *out);
/* Sums the per-operator statuses into o->totals when asked for. */
void bench_totals(const bench_ctx *c);

#endif
