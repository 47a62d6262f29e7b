/* One database CSV: load, merge aggregated rows, prune, rewrite if changed
 * (docs/UPDATE.md §2.2-2.5). Safe to run for different files on
 * different threads. */
#ifndef OPDB_UPDATE_UPDATE_CSV_H
#define OPDB_UPDATE_UPDATE_CSV_H

#include "update/op_summary.h"
#include "update/update_result.h"

/* Messages the reference prints while merging ([WARN] lines) go to log. */
int update_csv(const opdb_update_opts *o, const char *path, const agg_row *const *merge, size_t nmerge,
               const agg_row *const *match, size_t nmatch, update_result *res, opdb_strbuf *log, opdb_err *err);

#endif
