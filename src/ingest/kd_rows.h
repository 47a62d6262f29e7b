/* One kernel launch, decoded: the worker-side half of `opdb parse`. */
#ifndef OPDB_INGEST_KD_ROWS_H
#define OPDB_INGEST_KD_ROWS_H

#include <stdbool.h>
#include <stdint.h>
#include "ingest/columns.h"

enum {
    KD_ROW_NA_SHAPES = 1,  /* Input or Output Shapes is N/A: not aggregated */
    KD_ROW_BAD_DURATION = 2, /* Duration(us) is not a number (default mode: nor finite and >= 0) */
    KD_ROW_FIA = 4,        /* Type is FusedInferAttentionScore */
    KD_ROW_BAD_METRIC = 8, /* default mode: a non-finite or negative metric, counted as 0 */
};

typedef struct kd_row {
    opdb_span type, in, out;   /* stripped; type after kernel-name aliasing */
    opdb_span desc[KD_NDESC];  /* stripped descriptive cells */
    opdb_span dur_text;        /* the Duration(us) cell, for messages */
    double duration;
    double metric[OPDB_NMETRICS];
    uint64_t hash;             /* of (type, in, out) */
    uint64_t rec_off;          /* file offset of the record (for line numbers) */
    uint32_t flags;
    uint32_t group;            /* group index + 1 if a worker already found it, else 0 */
} kd_row;

typedef struct kd_rows {
    kd_row *v;
    size_t n, cap;
} kd_rows;

/* Decodes one record. `quirks`: a non-numeric duration counts as 0. */
void kd_row_extract(kd_row *r, const kd_colmap *L, const opdb_field *f, int nf, bool quirks);

uint64_t kd_key_hash(opdb_span type, opdb_span in, opdb_span out);

/* Python's _is_na_shape: strip, strip '"', upper() == "N/A". */
bool kd_is_na_shape(opdb_span s);

#define KD_FIA_TYPE "FusedInferAttentionScore"

#endif
