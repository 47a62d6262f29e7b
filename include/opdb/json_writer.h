/* JSON text exactly as Python's json.dump(obj, f, indent=2) writes it:
 * one item per line, ": " after keys, "[]"/"{}" for empty containers,
 * floats in repr, NaN/Infinity bare, non-ASCII as \uXXXX, no final newline. */
#ifndef OPDB_JSON_WRITER_H
#define OPDB_JSON_WRITER_H

#include <stdbool.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPDB_JSON_MAX_DEPTH 64

typedef struct opdb_json {
    opdb_strbuf *out;
    int depth;
    bool empty[OPDB_JSON_MAX_DEPTH]; /* no item written yet at this level */
    bool after_key;
    bool raw_utf8;   /* json.dump(..., ensure_ascii=False): set after opdb_json_init */
    bool python_nan; /* NaN/Infinity written bare, as Python's json (--reference-quirks);
                        by default a non-finite float is written as null: strict JSON */
} opdb_json;

OPDB_API void opdb_json_init(opdb_json *j, opdb_strbuf *out);
OPDB_API void opdb_json_begin_object(opdb_json *j);
OPDB_API void opdb_json_end_object(opdb_json *j);
OPDB_API void opdb_json_begin_array(opdb_json *j);
OPDB_API void opdb_json_end_array(opdb_json *j);
OPDB_API void opdb_json_key(opdb_json *j, const char *key);
OPDB_API void opdb_json_string(opdb_json *j, const char *s);
OPDB_API void opdb_json_int(opdb_json *j, long long v);
OPDB_API void opdb_json_float(opdb_json *j, double v);
OPDB_API void opdb_json_bool(opdb_json *j, bool v);
OPDB_API void opdb_json_null(opdb_json *j);
/* A value already rendered as JSON text (e.g. a number kept verbatim). */
OPDB_API void opdb_json_raw(opdb_json *j, const char *text);

/* Appends s as a JSON string literal with ensure_ascii escaping. */
OPDB_API void opdb_json_quote(opdb_strbuf *out, const char *s);
/* The same with ensure_ascii=False: only `"`, `\\` and C0 controls escaped. */
OPDB_API void opdb_json_quote_utf8(opdb_strbuf *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
