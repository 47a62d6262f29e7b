/* Input limits checked in linear time before a parser that is slow on
 * hostile input (libyaml takes quadratic time on deep nesting). */
#ifndef OPDB_LIMITS_H
#define OPDB_LIMITS_H

#include <stddef.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPDB_YAML_MAX_DEPTH 256

/* Fails ("PATH:LINE: YAML nested deeper than MAX levels") when the text
 * nests flow collections ([ {) or block levels (indentation, "- " items)
 * deeper than max_depth.  One pass; quoted scalars and comments skipped. */
OPDB_API int opdb_yaml_depth_check(const char *text, size_t n, int max_depth, const char *path, opdb_err *err);

/* JSON input limits.  Defaults, each overridable by the
 * setting of its name (opdb_setting: opdb takes it from the environment
 * variable; a positive integer), for tight machines and tests:
 *   OPDB_JSON_MAX_BYTES   a JSON document read whole (aie, compare's
 *                         --nfwd-json, fia-fill metadata): 1 GiB
 *   OPDB_JSON_MAX_STRING  one string or key, in any JSON reader: 64 MiB
 *   OPDB_JSON_MAX_EVENTS  trace events in one trace: 2^31 - 1 (indices are 32-bit)
 * Nesting is limited to OPDB_JSON_READ_MAX_DEPTH levels everywhere. */
#define OPDB_JSON_READ_MAX_DEPTH 255
typedef enum { OPDB_JSON_LIMIT_BYTES, OPDB_JSON_LIMIT_STRING, OPDB_JSON_LIMIT_EVENTS } opdb_json_limit;
OPDB_API unsigned long long opdb_json_limit_get(opdb_json_limit which);
/* The setting (environment variable, for opdb) that sets a limit (for messages). */
OPDB_API const char *opdb_json_limit_name(opdb_json_limit which);

/* For a JSON text about to be parsed whole: fails ("PATH: JSON input of N
 * bytes is over the limit of M bytes (OPDB_JSON_MAX_BYTES)", "PATH:LINE: JSON
 * nested deeper than 255 levels", "PATH:LINE: a JSON string longer than M
 * bytes (OPDB_JSON_MAX_STRING)"; LINE counted from first_line: a JSON Lines
 * record passes its own).  One pass over the bytes. */
OPDB_API int opdb_json_limits_check(const char *text, size_t n, const char *path, unsigned long long first_line,
                                    opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
