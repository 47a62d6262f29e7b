/* PyTorch profiler (Kineto) traces -> per-operator groups
 * (docs/ingest-formats.md §3).
 *
 * kn_read (kineto.c): one streaming pass over the JSON through the yajl trace
 * reader turns every operator, launch and device event into a 32-byte record
 * pushed into an external sort (ext_sort.h), on one thread unless the call
 * asks for the pipeline (opdb_trace_read_serial); the joins (device -> launch by
 * correlation, launch -> innermost operator by thread and time, device
 * events -> calls) are then merges of sorted record streams. Memory: the
 * sorts' buffers (KN_SORT_BUDGET each, at most five at once, plus 8 KiB per run
 * being merged, at most XS_MAX_RUNS), the operators
 * open at one point of time on one thread, and one entry per distinct group,
 * kernel name and thread; never the trace's size.
 *
 * kn_read_simple (kineto_simple.c): the simple path kept to check it, two
 * passes over the JSON holding one record per device event in memory. Both
 * fill the same groups (the differential test compares them). */
#ifndef OPDB_INGEST_KINETO_H
#define OPDB_INGEST_KINETO_H

#include <stdbool.h>
#include <stdint.h>
#include "opdb/core.h"
#include "opdb/ingest.h"
#include "ingest/table_merge.h"
#include "opdb/trace_reader.h"

typedef struct kn_group {
    const char *name, *dims, *types;  /* key: operator name, Input Dims / Input type as rendered */
    char *shapes_cell, *dtypes_cell;  /* the Ascend-style cells */
    uint64_t first_call;              /* (file number << 40) | operator's event index: group order */
    uint64_t count;
    double sum, sumsq, min, max, median;
    double *durs;                     /* per-call times: the simple path only */
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
    size_t sort_budget;               /* bytes per sort buffer (KN_SORT_BUDGET; opdb_parse_opts.kineto_sort_bytes) */
    void *medians;                    /* xsort of (group, call time): the exact medians */
    bool finished;                    /* medians computed */
    bool simple;                      /* filled by kn_read_simple: medians from durs */
    bool read_simple;                 /* kn_read takes the simple path (opdb_parse_opts.kineto_simple) */
    /* diagnostics over the run */
    unsigned long long device_events, no_launch, no_operator, calls, calls_without_dims;
    unsigned long long bad_durations;   /* device events skipped: duration negative, not finite or overflowing */
    unsigned long long bad_ops;         /* CPU operator events skipped: ts or dur negative or not finite */
} kn_agg;

void kn_agg_init(kn_agg *a);
void kn_agg_free(kn_agg *a);

/* Bytes each record sort may hold in memory before it spills to a temp file. */
#define KN_SORT_BUDGET (256u << 10) /* small enough to stay in the CPU caches while records arrive */

/* Reads one trace into a. Returns 0 when read, 1 when the file is not a
 * usable PyTorch trace (why: one line saying what it is and what to do),
 * -1 on error (err names the file). */
int kn_read(kn_agg *a, const char *path, char *why, size_t cap, opdb_err *err);

/* The simple path (see above); same contract as kn_read. */
int kn_read_simple(kn_agg *a, const char *path, char *why, size_t cap, opdb_err *err);

/* Computes every group's median (called by kn_write_tables; idempotent). */
int kn_finish(kn_agg *a, opdb_err *err);

/* ---- shared by both readers (kineto_common.c) */
uint32_t kn_group_of(kn_agg *a, opdb_strbuf *key, const char *name, const char *dims, const char *types);
uint32_t kn_kname(kn_agg *a, const char *name);
void kn_add_kname(kn_group *g, uint32_t k);
/* One operator call of group gi (op_seq: its operator's index in the file) took dur. */
int kn_add_call(kn_agg *a, uint32_t gi, uint64_t op_seq, double dur, opdb_err *err);
/* The reader's verdict when a file held no usable device events (1 + why) or was not a trace. */
int kn_verdict(kn_agg *a, int rc, const char *path, unsigned long long events, unsigned long long cpu_ops,
               unsigned long long devices_before, char *why, size_t cap, opdb_err *err);
bool kn_cat_is(const char *cat, const char *const *names);
bool kn_num_of(const opdb_trace_field *f, double *out);
/* A device event's duration: absent reads as 0; present, it must be a finite
 * number >= 0, else false and the event is counted in a->bad_durations. */
bool kn_dur_of(kn_agg *a, const opdb_trace_field *f, double *out);
/* A CPU operator's interval: ts finite, dur absent (0) or finite and >= 0;
 * else false and the event is counted in a->bad_ops. */
bool kn_op_interval(kn_agg *a, const opdb_trace_field *ts, const opdb_trace_field *dur, double *t, double *d);
bool kn_int_of(const opdb_trace_field *f, int64_t *out);
const char *kn_text_of(const opdb_trace_field *f);
extern const char *const kn_device_cats[], *const kn_runtime_cats[], *const kn_op_cats[];

/* Writes one table per operator under outdir (atomically, replacing or merging through w), appending to
 * res->tables. used/nused: file names already written by this run. */
int kn_write_tables(kn_agg *a, const char *outdir, tbl_writer *w, opdb_parse_result *res, opdb_err *err);

#endif
