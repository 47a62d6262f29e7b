/* Reading a small side file (JSON documents) whole. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "opdb/fs.h"

int opdb_read_file(const char *path, opdb_strbuf *out, opdb_err *err) {
    opdb_sb_clear(out);
    FILE *f = fopen(path, "rb");
    if (!f) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot open: %s", path, strerror(errno));
    char buf[1 << 16];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) opdb_sb_add(out, buf, k);
    bool failed = ferror(f);
    fclose(f);
    opdb_sb_add(out, "", 0); /* a buffer (with its NUL) even for an empty file */
    if (failed) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    return 0;
}
