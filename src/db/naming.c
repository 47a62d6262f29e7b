/* Operator-type names to file names, as the reference sanitises them. */
#include <string.h>
#include "opdb/db.h"

char *opdb_sanitize_type_name(const char *type, size_t n) {
    if (n == 0) return opdb_xstrdup("UNKNOWN_TYPE");
    char *out = opdb_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)type[i];
        out[i] = (c < 0x20 || strchr("<>:\"/\\|?*", c)) ? '_' : (char)c;
    }
    out[n] = '\0';
    return out;
}
