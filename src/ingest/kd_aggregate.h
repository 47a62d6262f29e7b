/* Groups of identical (type, input shapes, output shapes), in first-seen
 * order, with the running sums the reference keeps.
 *
 * The key table is append-only and published with release/acquire atomics,
 * so worker threads can look a row's group up (kd_agg_probe) while the
 * caller's thread adds groups and accumulates; a row the probe misses is
 * looked up again, authoritatively, by kd_agg_add. */
#ifndef OPDB_INGEST_KD_AGGREGATE_H
#define OPDB_INGEST_KD_AGGREGATE_H

#include <stdatomic.h>
#include "core/pub_slots.h"
#include "ingest/kd_rows.h"

typedef struct kd_key {      /* immutable once published */
    opdb_span type, in, out;
    uint64_t hash;
    uint32_t index;          /* position in kd_agg.g */
} kd_key;

typedef struct kd_group {
    const kd_key *key;
    opdb_span desc[KD_NDESC];   /* first non-empty value of each */
    uint64_t count;
    double sum, sumsq;
    double msum[OPDB_NMETRICS];
    uint32_t metrics_seen;      /* metrics that had a column for some row */
    double *durs;
    size_t ndurs, capdurs;
    double mean, median, std, min, max; /* set by kd_agg_finish */
} kd_group;

typedef struct kd_agg {
    kd_group *g;
    size_t n, cap;
    _Atomic(opdb_pub_slots *) table; /* of kd_key */
    opdb_arena arena;
} kd_agg;

void kd_agg_init(kd_agg *a);
void kd_agg_free(kd_agg *a);
/* Any thread: the group index + 1 of the row's key if already known, else 0. */
uint32_t kd_agg_probe(const kd_agg *a, const kd_row *r);
/* Caller's thread: adds one row (not N/A, valid duration) from a file whose
 * metric columns are `metrics_present`. */
void kd_agg_add(kd_agg *a, const kd_row *r, uint32_t metrics_present);

/* Computes mean, median and std of every group (frees the durations). */
void kd_agg_finish(kd_agg *a, void (*tick)(void *ctx, size_t done), void *ctx);

#endif
