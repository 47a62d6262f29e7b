/* opdb bench's extra per-row values (opdb_update_extra) for one CSV, found
 * by row signature. */
#ifndef OPDB_UPDATE_UPDATE_EXTRA_H
#define OPDB_UPDATE_UPDATE_EXTRA_H

#include "opdb/core.h"
#include "opdb/update.h"

typedef struct extra_index {
    const opdb_update_extra **e;
    size_t n;
    size_t ndrop;
    opdb_hindex ix;
} extra_index;

/* The entries of o->extra whose csv_stem is stem. */
void extra_index_build(extra_index *x, const opdb_update_opts *o, const char *stem);
const opdb_update_extra *extra_find(const extra_index *x, const char *sig);
void extra_index_free(extra_index *x);

#endif
