/* Inputs shared by `opdb m6` and `opdb shape-compare` (docs/ANALYSIS.md
 * §1, §3.3, §4.3): the forward-pass CSV read row by row with each tool's
 * number policy, the complete events of the TC trace, and a small table
 * from byte-string keys to dense indices in insertion order (the order
 * Python dicts iterate in, which fixes float summation order). */
#ifndef OPDB_ANALYSIS_M6_INPUT_H
#define OPDB_ANALYSIS_M6_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "opdb/core.h"
#include "opdb/csv.h"
#include "opdb/trace_reader.h"

/* What --reference-quirks does with a Start Time / Duration cell that
 * float() rejects: M6 skips the row, per-shape crashes (a fatal error). */
typedef enum m6_bad_policy { M6_BAD_SKIP, M6_BAD_FATAL } m6_bad_policy;

typedef struct m6_csv {
    opdb_csv_file c;
    const char *path;
    int col_type, col_start, col_dur, col_shapes;
    bool quirks;
    m6_bad_policy bad;
    unsigned long long skipped, first_skipped_line; /* default mode only */
} m6_csv;

typedef struct m6_row {
    opdb_span type;     /* stripped Type: non-empty, not ...AicpuKernel */
    opdb_span shapes;   /* raw Input Shapes cell ("" when missing) */
    double start, dur;
    unsigned long long line;
} m6_row;

/* "TC trace not found: P" / "Prof trace not found: P" (TC checked first). */
int m6_check_inputs(const char *tc_trace, const char *prof_trace, opdb_err *err);

/* Opens the CSV (a UTF-8 BOM is stripped) and finds its columns. */
int m6_csv_open(m6_csv *f, const char *path, bool quirks, m6_bad_policy bad, opdb_err *err);
/* Default mode: an error naming every column the tool needs that the CSV
 * lacks (Type, Start Time(us), Duration(us); Input Shapes when shapes);
 * the reference reads such a file as all zeros (kept by --reference-quirks). */
int m6_csv_require(const m6_csv *f, bool shapes, opdb_err *err);
/* The next usable row: 1, 0 at the end, -1 on an error. Rows with an empty
 * Type or a Type ending in AicpuKernel are passed over. Default mode: an
 * empty, non-numeric or non-finite start/duration skips the row (counted);
 * quirks: empty means 0 and an invalid value follows the policy. */
int m6_csv_next(m6_csv *f, m6_row *row, opdb_err *err);
/* Prints the one warning about skipped rows (if any) and closes. */
void m6_csv_close(m6_csv *f);

/* The de-duplication start key of an hcom row: the exact start time by
 * default; int(start) with --reference-quirks, where a non-finite start is
 * the reference's crash (error). */
int m6_hcom_start(const m6_csv *f, const m6_row *row, double *key, opdb_err *err);

/* ---- TC trace events. */
/* True for an event whose "ph" is the string "X". */
bool m6_is_complete(const opdb_trace_event *ev);
/* Python truthiness of a JSON value (absent = false). */
bool m6_truthy(const opdb_trace_field *f);
/* A dur that Python arithmetic accepts: absent = 0, ints (and bools) or
 * floats; anything else is an error naming the file and byte offset. */
typedef struct m6_num {
    bool is_int;   /* still a Python int (int + int stays exact) */
    long long i;
    double f;      /* the value as a float (float(int) when is_int) */
} m6_num;
int m6_event_dur(const opdb_trace_event *ev, const char *path, m6_num *out, opdb_err *err);
/* a += b with Python int/float promotion (int64 overflow becomes float). */
void m6_num_add(m6_num *a, m6_num b);
static inline m6_num m6_num_float(double v) {
    m6_num n = {false, 0, v};
    return n;
}

/* ---- Byte-string keys -> dense indices, insertion order. */
typedef struct m6_keys {
    opdb_hindex ix;
    opdb_arena arena;
    opdb_span *key;
    size_t n, cap;
} m6_keys;

void m6_keys_init(m6_keys *k);
void m6_keys_free(m6_keys *k);
/* Index of key p[0..n); *created tells whether it was added now. */
size_t m6_keys_get(m6_keys *k, const void *p, size_t n, bool *created);

#endif
