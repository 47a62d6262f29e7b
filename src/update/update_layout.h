/* Column layout of a database CSV on rewrite (spec update-and-report.md §2.2). */
#ifndef OPDB_UPDATE_UPDATE_LAYOUT_H
#define OPDB_UPDATE_UPDATE_LAYOUT_H

#include "opdb/schema.h"
#include "update/update_result.h"

/* short names for the schema's duration columns (opdb/schema.h) */
#define MB_DUR OPDB_COL_MB_DUR
#define LEGACY_MB_DUR OPDB_COL_LEGACY_MB_DUR
#define PROF_AVG_DUR OPDB_COL_PROF_AVG_DUR

/* The 62-column layout of a new CSV. */
void layout_canonical(opdb_strvec *cols);
/* get_cols(fieldnames) for an existing file. */
void layout_existing(const opdb_strvec *fields, opdb_strvec *cols);
long opdb_strvec_find(const opdb_strvec *s, const char *x);

#endif
