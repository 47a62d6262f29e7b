/* FusedInferAttentionScore runtime columns taken from the profile itself
 * (docs/INGEST.md §1.1): an index from (input shapes, output shapes) to the
 * metadata of the first kernel row with that key. */
#ifndef OPDB_INGEST_FIA_RUNTIME_H
#define OPDB_INGEST_FIA_RUNTIME_H

#include <stdbool.h>
#include "opdb/core.h"

#define FIA_NRUNTIME 16
extern const char *const fia_runtime_columns[FIA_NRUNTIME];

typedef struct fia_meta {
    opdb_span in, out;            /* key */
    uint64_t hash;
    const char *cells[FIA_NRUNTIME]; /* values in column order */
} fia_meta;

typedef struct fia_index {
    fia_meta *v;
    size_t n, cap;
    opdb_hindex ix;
    opdb_arena arena;
} fia_index;

void fia_index_init(fia_index *ix);
void fia_index_free(fia_index *ix);
bool fia_index_has(const fia_index *ix, opdb_span in, opdb_span out);
const fia_meta *fia_index_get(const fia_index *ix, opdb_span in, opdb_span out);

/* Adds the key with metadata parsed from `source` (slot list text).  A
 * non-integer token: lenient -> that slot is absent (and *bad_token is set),
 * else an error. */
int fia_index_add(fia_index *ix, opdb_span in, opdb_span out, opdb_span source,
                  const char *source_profile, bool lenient, bool *bad_token, opdb_err *err);

/* Input Shapes of the FusedInferAttentionScore rows of an operator_details
 * file (rows with empty input or output shapes dropped), in order. */
typedef struct fia_op_rows {
    char **in;
    size_t n;
} fia_op_rows;
int fia_load_operator_rows(const char *path, fia_op_rows *rows, opdb_err *err);
void fia_op_rows_free(fia_op_rows *rows);

#endif
