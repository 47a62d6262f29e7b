/* Column layout of a database CSV on rewrite (spec update-and-report.md §2.2). */
#ifndef OPDB_UPDATE_UPDATE_LAYOUT_H
#define OPDB_UPDATE_UPDATE_LAYOUT_H

#include "update/update_db.h"

#define MB_DUR "Average Duration(us)"
#define LEGACY_MB_DUR "MicroBench Duration(us)"
#define PROF_AVG_DUR "Profiling Average Duration(us)"

extern const char *const update_base_cols[8];

/* The 62-column layout of a new CSV. */
void layout_canonical(strvec *cols);
/* get_cols(fieldnames) for an existing file. */
void layout_existing(const strvec *fields, strvec *cols);
long sv_index(const strvec *s, const char *x);

#endif
