/* Warnings of a handle: through the sink its options gave, else the
 * program's warning handler, as every other call. Its own object so that every part of the query core can warn
 * without reaching the loader. */
#include <stdarg.h>
#include <stdio.h>

#include "opdb/error.h"

#include "query/query_internal.h"

void q_warn(const opdb_qdb *db, const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    atomic_fetch_add(&((opdb_qdb *)db)->warned, 1); /* an atomic counter: the line memo files no answer that warned */
    if (db->warn) db->warn(db->warn_ctx, line);
    else opdb_warn("%s", line);
}
