/* Writing a database CSV back (docs/UPDATE.md §2.5): each kept
 * row copied as read, spliced (a lazy row's bytes with its measured cells
 * replaced) or rendered from its dict row. */
#ifndef OPDB_UPDATE_CSV_WRITE_H
#define OPDB_UPDATE_CSV_WRITE_H

#include "update/row_patch.h"

/* Renders the kept rows (keep[r]) under the columns cols into af. */
void write_rows(opdb_atomic_file *af, const opdb_strvec *cols, db_lazy_table *f, const bool *keep);

#endif
