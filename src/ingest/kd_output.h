/* Aggregated groups -> one CSV per operator type, written atomically. */
#ifndef OPDB_INGEST_KD_OUTPUT_H
#define OPDB_INGEST_KD_OUTPUT_H

#include "ingest/fia_runtime.h"
#include "ingest/kd_aggregate.h"
#include "ingest/table_merge.h"
#include "opdb/progress.h"

/* Writes every type's table under outdir through w (replace or --merge).  quirks: two types that sanitise
 * to one name overwrite each other (the reference); otherwise the later one
 * becomes `<name>~2.csv`. *nfiles counts like the reference (one per type). */
int kd_write_tables(kd_agg *a, const fia_index *ix, const char *outdir, bool quirks, tbl_writer *w,
                    opdb_progress *pg, opdb_parse_result *res, opdb_err *err);

#endif
