/* `opdb compare`: per-kernel-type comparison of a performance-model Chrome
 * trace ("TC trace") against a measured forward-pass kernel CSV ("prof
 * trace"), as the reference's generate_op_comparison.py (docs/ANALYSIS.md
 * §2). The TC trace is streamed: memory grows with the number of distinct
 * kernel types and op names, not with the file. */
#ifndef OPDB_COMPARE_H
#define OPDB_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Per-kernel-type accumulators ----------------------------------------- */

typedef struct opdb_cmp_stat {
    char *kt;             /* kernel type (NUL-terminated, may be any UTF-8) */
    size_t ktlen;
    double total;         /* µs, accumulated in event/row order from 0.0 */
    long long count, hit, miss;
    char *funcs[3];       /* first three distinct short op names */
    int nfuncs;
} opdb_cmp_stat;

typedef struct opdb_cmp_stats {
    opdb_cmp_stat *v;
    size_t n, cap;
    opdb_hindex ix;
} opdb_cmp_stats;

/* The entry for kt, created (zeroed) when absent. */
OPDB_API opdb_cmp_stat *opdb_cmp_stats_get(opdb_cmp_stats *s, const char *kt, size_t n);
OPDB_API opdb_cmp_stat *opdb_cmp_stats_find(const opdb_cmp_stats *s, const char *kt, size_t n);
/* Adds a func name unless present (only the first three are kept: that is
 * all the output shows, and insertion order decides which). */
OPDB_API void opdb_cmp_stat_add_func(opdb_cmp_stat *st, const char *fn, size_t n);
OPDB_API void opdb_cmp_stats_free(opdb_cmp_stats *s);

/* ---- op_mapping.yaml -------------------------------------------------------- */

typedef struct opdb_cmp_mapping opdb_cmp_mapping;

/* Loads <data_dir>/op_mapping.yaml (absent -> empty mapping). With
 * nested_too, entries under `operator_mappings:` are found as well (opdb's
 * default); otherwise only the top level is searched (the reference). */
OPDB_API int opdb_cmp_mapping_load(opdb_cmp_mapping **out, const char *data_dir, bool nested_too, opdb_err *err);
OPDB_API void opdb_cmp_mapping_free(opdb_cmp_mapping *m);
/* The reference's _get_op_entry + resolve_kernel_type / is_zero_cost for an
 * op name: *kt (NULL when none; owned by the mapping) and *zero_cost. */
OPDB_API void opdb_cmp_mapping_lookup(const opdb_cmp_mapping *m, const char *op, const char **kt, bool *zero_cost);
/* op.replace("torch.ops.", ""), malloc'd; *len its length. */
OPDB_API char *opdb_cmp_short_name(const char *op, size_t *len);

/* ---- Inputs ------------------------------------------------------------------ */

typedef struct opdb_cmp_opts {
    size_t size; /* sizeof(opdb_cmp_opts), set by opdb_cmp_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    bool quirks;          /* --reference-quirks */
    size_t top;           /* default console: rows shown per scenario (0: all) */
    const char *pid;      /* --pid N: the process to use (NULL: find it) */
    bool pid_is_text;     /* pid names a string pid ("Spans"), not a number */
} opdb_cmp_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_cmp_opts_init_sized(opdb_cmp_opts *o, size_t size);
#define opdb_cmp_opts_init(o) opdb_cmp_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

/* TC statistics (§2.4) of one Chrome trace (.json / .json.gz, object or bare
 * array form). Warnings (sole-PID fallback) go to stderr. */
OPDB_API int opdb_cmp_read_tc(const char *path, const opdb_cmp_mapping *map, const opdb_cmp_opts *o, opdb_cmp_stats *out,
                     opdb_err *err);

/* Profiling statistics (§2.5) of a forward-pass kernel CSV. */
OPDB_API int opdb_cmp_read_prof(const char *path, const opdb_cmp_opts *o, opdb_cmp_stats *out, opdb_err *err);

/* n_forward_passes of an M6 JSON (1 when the key is absent). */
OPDB_API int opdb_cmp_read_nfwd(const char *path, double *n_fwd, opdb_err *err);

/* ---- Rows and outputs ----------------------------------------------------------- */

/* A Python number that is either a float or the integer 0 (the reference's
 * defaults are ints, which JSON and the table render differently). */
typedef struct opdb_cmp_num {
    double v;
    bool is_int;
} opdb_cmp_num;

typedef struct opdb_cmp_row {
    char *kt;
    char *funcs;               /* first three func names joined ", " */
    opdb_cmp_num tc_total;     /* round(.., 1) */
    long long tc_count;
    opdb_cmp_num prof_per_fwd; /* round(.., 1) */
    long long prof_count;      /* int(round(prof count / n_fwd)) */
    opdb_cmp_num error_pct, count_error_pct;
    const char *status;        /* HIT / MISS / PARTIAL / TC未建模 (static) */
} opdb_cmp_row;

/* ---- Per-shape drill-down: a CSV written by `opdb shape-compare` ------------- */

typedef struct opdb_cmp_shape_row {
    /* the cells as the CSV holds them, shown verbatim */
    char *kt, *shape, *tc_dur, *prof_dur, *delta, *tc_count, *prof_count, *source;
    double tc, prof; /* tc_dur / prof_dur as numbers */
} opdb_cmp_shape_row;

typedef struct opdb_cmp_shapes {
    opdb_cmp_shape_row *v;
    size_t n, cap;
} opdb_cmp_shapes;

/* Reads the per-shape CSV (columns by header name; a missing column, a
 * non-numeric time or count is an error naming the file and line). */
OPDB_API int opdb_cmp_read_shapes(const char *path, opdb_cmp_shapes *out, opdb_err *err);
OPDB_API void opdb_cmp_shapes_free(opdb_cmp_shapes *s);

typedef struct opdb_cmp_scenario {
    char *name;
    opdb_cmp_row *rows;
    size_t nrows;
    const opdb_cmp_shapes *shapes; /* --shapes (not owned), or NULL: no drill-down */
} opdb_cmp_scenario;

/* Rows (§2.6) of the union of both maps, sorted as the reference sorts them. */
OPDB_API void opdb_cmp_build_rows(const opdb_cmp_stats *tc, const opdb_cmp_stats *prof, double n_fwd, opdb_cmp_scenario *sc);
OPDB_API void opdb_cmp_scenario_free(opdb_cmp_scenario *sc);

/* The console block of one scenario (§2.7), starting with its blank line. */
OPDB_API void opdb_cmp_console(opdb_strbuf *out, const opdb_cmp_scenario *sc);
/* opdb's default table of one scenario (starting with its blank line):
 * English headers, aligned columns, the first `top` rows (0: all) and a
 * line counting the rest; "not measured" where the measured time is 0. */
OPDB_API void opdb_cmp_console_table(opdb_strbuf *out, const opdb_cmp_scenario *sc, size_t top);
/* Terminal cells taken by UTF-8 text (East Asian wide characters: 2). */
OPDB_API size_t opdb_cmp_cells(const char *s);
/* A row status in English ("not modelled" for the reference's TC未建模). */
OPDB_API const char *opdb_cmp_status_en(const char *status);
/* The JSON document of all scenarios (indent 2, raw UTF-8, no final newline). */
/* python_nan: NaN/Infinity as the reference writes them (else null). */
OPDB_API void opdb_cmp_json(opdb_strbuf *out, const opdb_cmp_scenario *sc, size_t n, bool python_nan);
/* A self-contained HTML page: per scenario an SVG bar chart (predicted vs
 * measured per kernel type), the error per type, the table and, when the
 * scenario has shapes, a per-shape drill-down per kernel type. */
OPDB_API void opdb_cmp_html(opdb_strbuf *out, const opdb_cmp_scenario *sc, size_t n);

/* ---- The whole command ---------------------------------------------------------- */

typedef struct opdb_compare_args {
    size_t size; /* sizeof(opdb_compare_args), set by opdb_compare_args_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    const char *trace_dir, *data_dir, *output, *html;
    /* single-scenario form (tc_trace set): */
    const char *tc_trace, *prof_trace, *m6, *name;
    const char *shapes; /* per-shape CSV for the HTML drill-down, or NULL */
    opdb_cmp_opts o;
    struct opdb_compare_totals *totals; /* non-NULL: set on success */
    FILE *dash;   /* the stream an output or html of "-" is written to (opdb: stdout); NULL: "-" is an error */
    FILE *aside;  /* the console report when "-" takes the output, and the "HTML report written" line
                     (opdb: stderr); NULL: none */
} opdb_compare_args;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_compare_args_init(opdb_compare_args *o);

/* What a run compared: scenarios, kernel types seen in either trace, and
 * those in both (the ones with a ratio). */
typedef struct opdb_compare_totals {
    size_t scenarios, kernel_types, compared;
} opdb_compare_totals;

/* Runs every scenario, prints the console report to out, writes --output
 * (and --html). Returns 0 or -1 with err set. */
OPDB_API int opdb_compare_run(const opdb_compare_args *a, FILE *out, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
