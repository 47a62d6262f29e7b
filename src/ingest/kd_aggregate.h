/* Groups of identical (type, input shapes, output shapes), in first-seen
 * order, with the running sums the reference keeps. */
#ifndef OPDB_INGEST_KD_AGGREGATE_H
#define OPDB_INGEST_KD_AGGREGATE_H

#include "ingest/kd_rows.h"

typedef struct kd_group {
    opdb_span type, in, out;
    opdb_span desc[KD_NDESC];   /* first non-empty value of each */
    uint64_t hash;
    uint64_t count;
    double sum, sumsq;
    double msum[OPDB_NMETRICS];
    uint32_t metrics_seen;      /* metrics that had a column for some row */
    double *durs;
    size_t ndurs, capdurs;
} kd_group;

typedef struct kd_agg {
    kd_group *g;
    size_t n, cap;
    uint32_t *slots;            /* open addressing: group index + 1, 0 = empty */
    size_t nslots;
    opdb_arena arena;
} kd_agg;

void kd_agg_init(kd_agg *a);
void kd_agg_free(kd_agg *a);
/* Adds one row (not N/A, valid duration) from a file whose metric columns
 * are `metrics_present`. */
void kd_agg_add(kd_agg *a, const kd_row *r, uint32_t metrics_present);

#endif
