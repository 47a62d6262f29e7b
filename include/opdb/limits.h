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

#ifdef __cplusplus
}
#endif
#endif
