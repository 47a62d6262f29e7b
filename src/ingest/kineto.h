/* PyTorch profiler (Kineto) traces -> per-operator groups (spec
 * ingest-more.md §3).  Two streaming passes over the file through the yajl
 * trace reader: pass 1 pairs each device event with its launch (runtime
 * event of the same args.correlation); pass 2 finds, for every launch, the
 * innermost CPU operator on its thread.  What is kept between the passes is
 * one small record per device event; the trace's text is never held. */
#ifndef OPDB_INGEST_KINETO_H
#define OPDB_INGEST_KINETO_H

#include <stdbool.h>
#include <stdint.h>
#include "opdb/core.h"
#include "opdb/ingest.h"
#include "ingest/table_merge.h"

typedef struct kn_group {
    const char *name, *dims, *types;  /* key: operator name, Input Dims / Input type as rendered */
    char *shapes_cell, *dtypes_cell;  /* the Ascend-style cells */
    uint64_t first_call;              /* (file number << 40) | operator's event index: group order */
    uint64_t count;
    double sum, sumsq, min, max;
    double *durs;
    size_t ndurs, capdurs;
    uint32_t *knames;                 /* distinct kernel names, first-seen order */
    size_t nknames, capknames;
} kn_group;

typedef struct kn_agg {
    kn_group *g;
    size_t n, cap;
    opdb_hindex gix;
    char **names;                     /* interned kernel names */
    size_t nnames, capnames;
    opdb_hindex nix;
    opdb_arena arena;
    unsigned files;
    /* diagnostics over the run */
    unsigned long long device_events, no_launch, no_operator, calls, calls_without_dims;
} kn_agg;

void kn_agg_init(kn_agg *a);
void kn_agg_free(kn_agg *a);

/* Reads one trace into a. Returns 0 when read, 1 when the file is not a
 * usable PyTorch trace (why: one line saying what it is and what to do),
 * -1 on error (err names the file). */
int kn_read(kn_agg *a, const char *path, char *why, size_t cap, opdb_err *err);

/* Writes one table per operator under outdir (atomically, replacing or merging through w), appending to
 * res->tables. used/nused: file names already written by this run. */
int kn_write_tables(kn_agg *a, const char *outdir, tbl_writer *w, opdb_parse_result *res, opdb_err *err);

#endif
