/* Per-(kernel type, shape) comparison of a TC trace against a forward-pass
 * CSV (docs/ANALYSIS.md §3): predicted and measured time and counts per key,
 * the relative error, written as CSV. */
#ifndef OPDB_SHAPE_COMPARE_H
#define OPDB_SHAPE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "opdb/core.h"
#include "opdb/pyliteral.h"
#include "opdb/trace_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_shapecmp_opts {
    size_t size; /* sizeof(opdb_shapecmp_opts), set by opdb_shapecmp_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *tc_trace;    /* Chrome trace (.json / .json.gz, object or bare array) */
    const char *prof_trace;  /* forward-pass kernel_details CSV */
    const char *output;      /* CSV path; NULL or "": CSV on stdout */
    bool quirks;             /* --reference-quirks */
} opdb_shapecmp_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_shapecmp_opts_init_sized(opdb_shapecmp_opts *o, size_t size);
#define opdb_shapecmp_opts_init(o) opdb_shapecmp_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

/* Shape key normalisation (§3.1) of s[0..n) into out (cleared first):
 * `[[1, 4096], [4096, 4096]]` -> `1,4096;4096,4096`, `"4096,4096"` -> `4096,4096`.
 * A list with an element that is not iterable (`[1, 4096]`) crashes the
 * reference: -1 with quirks; by default a list of scalars is one shape
 * (`1,4096`) and a scalar inside a list of shapes renders as itself. */
OPDB_API int opdb_shape_key(const char *s, size_t n, bool quirks, opdb_strbuf *out);

/* `sub_kernel_durations` parsed as docs/ANALYSIS.md §2.4: the literal of a non-empty
 * string arg, valid only as a non-empty list of 2-element lists/tuples;
 * otherwise NULL. Free with opdb_pylit_free. */
OPDB_API opdb_pylit *opdb_skd_parse(const opdb_trace_field *f);

/* The same, flattened to (str(name), duration) pairs, with a fast path
 * (no allocation) for the usual `[('MatMulV2', 12.34), ...]` text; anything
 * else goes through opdb_skd_parse, so the result is always the same. */
typedef struct opdb_skd_pair {
    size_t name_off, name_len; /* str(name) in opdb_skd.names */
    bool name_is_str;          /* the name was a str without NUL (not an int, a tuple...) */
    int num;                   /* 0: not a number, 1: int (or bool) in i, 2: float in f */
    long long i;
    double f;                  /* the value as a float (also for ints) */
} opdb_skd_pair;

typedef struct opdb_skd {
    opdb_skd_pair *p;
    size_t n, cap;
    opdb_strbuf names;
} opdb_skd;

OPDB_API void opdb_skd_init(opdb_skd *s);
OPDB_API void opdb_skd_free(opdb_skd *s);
/* true and s filled when f holds valid sub_kernel_durations (§2.4). */
OPDB_API bool opdb_skd_read(const opdb_trace_field *f, opdb_skd *s);
static inline const char *opdb_skd_name(const opdb_skd *s, size_t i) { return s->names.p + s->p[i].name_off; }

/* Everything `opdb shape-compare` does. Writes the CSV (CRLF, no BOM) to
 * o->output and the line "Generated <n> per-shape comparison rows → <path>"
 * to out, or the CSV itself to out. *rows receives n. */
OPDB_API int opdb_shapecmp_run(const opdb_shapecmp_opts *o, FILE *out, size_t *rows, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
