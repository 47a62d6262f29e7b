/* How pandas' default reader reads a table's text: NA spellings, integer,
 * float and bool literals, whether the file is UTF-8, and the names it gives
 * header cells. Shared by the table loader (db/table.c) and the simple twin
 * the tests compare it with, so both read cells by the same rules. */
#ifndef OPDB_DB_PANDAS_CELLS_H
#define OPDB_DB_PANDAS_CELLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opdb/core.h"

static inline bool db_is_sp(char c) { return c == ' ' || c == '\t'; }

/* One of pandas' default NA spellings (the empty cell included). */
bool db_is_na(const char *s, size_t n);
/* The bytes are valid UTF-8. */
bool db_utf8_valid(const unsigned char *p, size_t n);
/* An integer literal: optional spaces/tabs, sign, digits. 1 = int64 (*iv),
 * 2 = fits only uint64 (*uv), 0 = not an integer. */
int db_int_literal(const char *s, size_t n, int64_t *iv, uint64_t *uv);
/* A float literal (decimal with optional fraction/exponent, or
 * inf/infinity), read as strtod would; false when it is not one or overflows. */
bool db_float_literal(const char *s, size_t n, double *out);
/* 1 for True/TRUE/true, 0 for False/FALSE/false, -1 otherwise. */
int db_bool_literal(const char *s, size_t n);

/* Header names as pandas gives them: "Unnamed: C" for an empty one, and a
 * repeated name X renamed X.1, X.2, ... (a generated name already taken gets
 * its own suffix in turn). Add the columns in order. */
typedef struct db_col_namer {
    struct db_name_count *v;
    size_t n;
} db_col_namer;
void db_col_namer_init(db_col_namer *nm, size_t ncols);
/* Column c's name from its header text s[0..n), allocated in a. */
char *db_col_namer_add(db_col_namer *nm, opdb_arena *a, size_t c, const char *s, size_t n);
void db_col_namer_free(db_col_namer *nm);

#endif
