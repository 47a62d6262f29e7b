/* opdb bench's write-back: the journal as an msprof op_summary file plus the
 * MicroBench statistics, deletions and run status, merged by opdb_update_run
 * (the caller holds the database lock); the status summary on the output. */
#ifndef OPDB_REPLAY_BENCH_WRITEBACK_H
#define OPDB_REPLAY_BENCH_WRITEBACK_H

#include "opdb/fs.h"
#include "replay/bench_rows.h"

#define BENCH_WORK_DIR OPDB_BENCH_WORK_DIR /* inside the database folder */
#define BENCH_PROF_DIR "PROF_opdb_bench"

int bench_write_back(bench_ctx *c, const char *work, opdb_err *err);
/* Removes the work folder of a finished run (journal and op_summary file). */
void bench_remove_work(const char *work, const char *journal);

#endif
