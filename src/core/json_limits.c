/* JSON input limits (include/opdb/limits.h): what a hostile or broken JSON
 * file may cost before opdb refuses it, checked in linear time. */
#include <stdlib.h>
#include <string.h>

#include "opdb/limits.h"

static const struct {
    const char *env;
    unsigned long long def;
} k_limits[] = {
    {"OPDB_JSON_MAX_BYTES", 1ull << 30},
    {"OPDB_JSON_MAX_STRING", 64ull << 20},
    {"OPDB_JSON_MAX_EVENTS", (1ull << 31) - 1},
};

unsigned long long opdb_json_limit_get(opdb_json_limit which) {
    const char *v = opdb_setting(k_limits[which].env);
    char *end;
    unsigned long long x = v && *v ? strtoull(v, &end, 10) : 0;
    return x > 0 && *end == '\0' ? x : k_limits[which].def;
}

const char *opdb_json_limit_name(opdb_json_limit which) { return k_limits[which].env; }

int opdb_json_limits_check(const char *text, size_t n, const char *path, unsigned long long first_line, opdb_err *err) {
    unsigned long long max_bytes = opdb_json_limit_get(OPDB_JSON_LIMIT_BYTES);
    if (n > max_bytes)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: JSON input of %zu bytes is over the limit of %llu bytes (%s)", path, n,
                         max_bytes, opdb_json_limit_name(OPDB_JSON_LIMIT_BYTES));
    unsigned long long max_str = opdb_json_limit_get(OPDB_JSON_LIMIT_STRING), line = first_line;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (c == '\n') line++;
        else if (c == '[' || c == '{') {
            if (++depth > OPDB_JSON_READ_MAX_DEPTH)
                return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: JSON nested deeper than %d levels", path, line,
                                 OPDB_JSON_READ_MAX_DEPTH);
        } else if (c == ']' || c == '}') {
            depth -= depth > 0; /* the parser reports unbalanced brackets */
        } else if (c == '"') {
            size_t start = ++i;
            while (i < n && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
            if (i - start > max_str)
                return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: a JSON string longer than %llu bytes (%s)", path, line,
                                 max_str, opdb_json_limit_name(OPDB_JSON_LIMIT_STRING));
        }
    }
    return 0;
}
