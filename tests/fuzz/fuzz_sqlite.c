/* libFuzzer target: the input is an Ascend SQLite export given to
 * `opdb parse` (src/ingest/ascend_db.c, read-only through SQLite): a
 * malformed database must be a clear error. */
#define FUZZ_FILE_NAME "msprof_0.db"
#include "fuzz_parse_file.h"

/* Always SQLite by content, so the input reaches the SQLite reader. */
static void fuzz_prefix(const uint8_t *data, size_t size, FILE *f) {
    if (size < 16 || memcmp(data, "SQLite format 3", 16) != 0) fwrite("SQLite format 3", 1, 16, f);
}
