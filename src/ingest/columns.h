/* Which input column feeds which role, after header aliasing. */
#ifndef OPDB_INGEST_COLUMNS_H
#define OPDB_INGEST_COLUMNS_H

#include <stdbool.h>
#include <stdint.h>
#include "opdb/csv.h"
#include "opdb/ingest.h"

enum kd_role {
    KD_TYPE,
    KD_IN_SHAPES,
    KD_OUT_SHAPES,
    KD_DURATION,
    KD_OP_STATE, /* the six descriptive columns, in output order */
    KD_ACCEL_CORE,
    KD_IN_DTYPES,
    KD_IN_FORMATS,
    KD_OUT_DTYPES,
    KD_OUT_FORMATS,
    KD_METRIC0,
    KD_NROLES = KD_METRIC0 + OPDB_NMETRICS
};
#define KD_NDESC 6

extern const char *const kd_role_names[KD_NROLES];

typedef struct kd_colmap {
    int col[KD_NROLES];      /* column index, or -1 when absent */
    int max_col;             /* highest column index any role needs */
    uint32_t metrics_present; /* bit i: metric i has a column */
} kd_colmap;

/* Maps header cells to roles. Without quirks, alias names (msprof
 * op_summary headers) stand in for absent canonical names. */
void kd_colmap_build(kd_colmap *L, const opdb_field *hdr, int n, bool use_aliases);

/* Names of the required columns that are missing, sorted, ", "-joined into
 * buf; returns how many are missing. quirks: the reference's full list. */
int kd_colmap_missing(const kd_colmap *L, bool quirks, char *buf, size_t cap);

#endif
