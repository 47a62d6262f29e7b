/* The measurements update applies to a lazy row of a database table
 * (db/lazy_table.h), kept as patches instead of reading the row in full:
 * their values are spliced into the row's bytes when it is written, or set
 * again when the row is read in full (row_mut). */
#ifndef OPDB_UPDATE_ROW_PATCH_H
#define OPDB_UPDATE_ROW_PATCH_H

#include "db/lazy_table.h"
#include "update/op_summary.h"

/* A key set of aggregated rows in this file's key space: key ids, and for
 * every key id the key set position of the measured value apply() sets
 * there (Average Duration(us) and the metric means), else -1. */
typedef struct kset_ids {
    const agg_keyset *kset;
    int id[AGG_MAX_KEYS];
    int *measured;      /* ks.cap entries */
    /* the file's measured columns in order and each one's key set entry
     * (write_spliced) */
    int nsplice, splice_col[AGG_MAX_KEYS], splice_li[AGG_MAX_KEYS];
} kset_ids;

/* The measurement applied to a lazy row (db_lazy_table.patch, one per row
 * read lazily). */
typedef struct db_row_patch {
    const agg_row *nr;
    const kset_ids *lk;
    const struct db_row_patch *prev; /* measurements applied before (MatMul aliases), oldest last */
} row_patch;

/* A row's patches, oldest first (malloc'ed; *n of them). */
const row_patch **patch_chain(const row_patch *last, size_t *n);
/* Sets the measured values of nr (Average Duration(us) and the metric
 * means) in t. */
void put_measured(db_keyspace *ks, db_drow *t, const agg_row *nr, const int *ids);
/* The row with every cell (a lazy row is tokenized and its patches set again). */
db_drow *row_mut(db_lazy_table *f, size_t i);
/* db_lazy_load, with room for a patch per lazy row. */
int update_load_table(const char *path, db_lazy_table *f, bool eager, opdb_err *err);

#endif
