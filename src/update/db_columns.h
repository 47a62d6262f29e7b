/* The columns of a database CSV, in order, on rewrite (docs/UPDATE.md §2.2). */
#ifndef OPDB_UPDATE_DB_COLUMNS_H
#define OPDB_UPDATE_DB_COLUMNS_H

#include "opdb/schema.h"
#include "update/update_result.h"

/* short names for the schema's duration columns (opdb/schema.h) */
#define MB_DUR OPDB_COL_MB_DUR
#define LEGACY_MB_DUR OPDB_COL_LEGACY_MB_DUR
#define PROF_AVG_DUR OPDB_COL_PROF_AVG_DUR

/* The 62 columns of a new CSV. */
void db_columns_new(opdb_strvec *cols);
/* get_cols(fieldnames) for an existing file. */
void db_columns_of_file(const opdb_strvec *fields, opdb_strvec *cols);

#endif
