/* One database folder holds one device's measurements: parse warns (or,
 * with --strict, refuses) when the tables it writes come from another kind
 * of device than the tables already there (a GPU trace into an Ascend
 * database, or the reverse). */
#ifndef OPDB_INGEST_DEVICE_MIX_H
#define OPDB_INGEST_DEVICE_MIX_H

#include <stdbool.h>
#include "opdb/core.h"

/* writes_gpu / writes_ascend: what this run writes.  Returns 0 (a warning
 * printed if the folder mixes devices), or -1 with err set when strict. */
int device_mix_check(const char *outdir, bool writes_ascend, bool writes_gpu, bool strict, opdb_err *err);

#endif
