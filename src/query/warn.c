/* Warnings of a handle: through the sink its options gave, else one line on
 * stderr. Its own object so that every part of the query core can warn
 * without reaching the loader. */
#include <stdarg.h>
#include <stdio.h>

#include "query/query_internal.h"

void q_warn(const opdb_qdb *db, const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (db->warn) db->warn(db->warn_ctx, line);
    else fprintf(stderr, "opdb: warning: %s\n", line);
}
