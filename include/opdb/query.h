/* `opdb query`: operator latencies read back from a database version folder,
 * with the lookups of the performance model the database is made for (op
 * level) or by kernel type (kernel level).  An opened database is immutable:
 * every query function takes a const handle and may run on many threads at
 * once.  Nothing here reads the environment or keeps process-wide state: the
 * run configuration, the mode and the warning sink live in the options. */
#ifndef OPDB_QUERY_H
#define OPDB_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_qdb opdb_qdb; /* an opened database */

typedef struct opdb_qdb_opts {
    size_t size;                       /* sizeof(opdb_qdb_opts), set by opdb_qdb_opts_init */
    int tp_size, ep_size;              /* 0 = not configured */
    const int *grid;                   /* rank grid dims; NULL/0 = no grid (copied at open) */
    size_t grid_n;
    bool sequence_parallel;
    bool interpolation;                /* the interpolating wrapper (default on) */
    bool reference_quirks;             /* the reference's answers, quirks included */
    bool eager_load;                   /* read every CSV at open instead of on first use (its rows are
                                          prepared by the first lookup that needs them) */
    /* Warnings, one line each without prefix or newline; NULL = the
     * program's warning handler (opdb_set_warn_handler; without one stderr
     * with "opdb: warning: "). Called from whichever thread met the condition. */
    void (*warn)(void *ctx, const char *line);
    void *warn_ctx;
    /* Result cache: at most this many answers kept, keyed by the query
     * without its id (explain queries are always computed); 0 = off. It
     * holds kernel-level answers and the interpolation wrapper's: exact
     * answers come from the handle's exact-hit map for less.
     * opdb_qdb_opts_init sets OPDB_QCACHE_DEFAULT. */
    size_t result_cache;
    /* Read each CSV into memory instead of mapping it (default: mapped where
     * the file system allows). opdb's writers replace files by renaming,
     * which a mapping survives; a program that truncates a table in place
     * while a mapped handle is open makes the process fault (SIGBUS) at
     * the next read of the lost pages. A long-lived handle over files that
     * others rewrite in place should read them. */
    bool read_files;
    /* The streaming batch's line memo (opdb_query_stream), at most this many
     * bytes: a line that repeats an earlier one but for its id is answered
     * by the earlier result line with its own id, without being read or
     * looked up again (explain batches never use it); 0 = off.
     * opdb_qdb_opts_init sets OPDB_LINE_MEMO_DEFAULT. */
    size_t line_memo;
} opdb_qdb_opts;
#define OPDB_QCACHE_DEFAULT ((size_t)1 << 16)
#define OPDB_LINE_MEMO_DEFAULT ((size_t)5 << 19) /* 2.5 MiB */

/* Defaults: interpolation on, everything else off/absent. */
OPDB_API void opdb_qdb_opts_init_sized(opdb_qdb_opts *o, size_t size);
#define opdb_qdb_opts_init(o) opdb_qdb_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */
/* Opens the version folder dir. NULL on failure with err set (an unreadable
 * folder or op_mapping.yaml); a missing op_mapping.yaml only warns. */
OPDB_API opdb_qdb *opdb_qdb_open(const char *dir, const opdb_qdb_opts *o, opdb_err *err);
OPDB_API void opdb_qdb_close(opdb_qdb *db);

typedef enum opdb_qsource {
    OPDB_SRC_MEASURED,
    OPDB_SRC_INTERPOLATED,
    OPDB_SRC_EXTRAPOLATED, /* never produced; kept for the reference's enum */
    OPDB_SRC_PARTIAL,
    OPDB_SRC_MISS,
    OPDB_SRC_ERROR
} opdb_qsource;

/* "MEASURED", "INTERPOLATED", ... */
OPDB_API const char *opdb_qsource_name(opdb_qsource s);

typedef struct opdb_qsub {
    const char *kernel;
    double latency_us;
} opdb_qsub;

typedef struct opdb_qresult_priv opdb_qresult_priv;

typedef struct opdb_qresult {
    bool hit;
    opdb_qsource source;
    double latency_us, confidence;     /* valid when hit */
    const char *shape_match_rule;      /* NULL = JSON null */
    const char *kernel_type;           /* NULL = JSON null */
    const char *miss_reason;           /* NULL on a hit; "error:<code>" on an error result */
    const opdb_qsub *sub;              /* sub_kernel_durations when has_sub */
    size_t n_sub;
    bool has_sub;
    const char *error;                 /* error results: the message */
    const char *id_json;               /* the query's id as JSON text ("null" when absent) */
    const char *explain_json;          /* with explain: the explain object's JSON text */
    opdb_qresult_priv *priv;           /* owns every string above */
} opdb_qresult;

/* One query from its JSON line (op or kernel level). 0 on success, MISS and
 * error results included; -1 only when no result could be built. Free the
 * result with opdb_qresult_free. */
OPDB_API int opdb_query_json(const opdb_qdb *db, const char *line, size_t n, bool explain, opdb_qresult *res);

/* Result storage the caller owns and reuses, one per thread: a query
 * answered into it allocates nothing once the storage has grown to the
 * size of the queries asked. */
typedef struct opdb_qresult_buf opdb_qresult_buf;
OPDB_API opdb_qresult_buf *opdb_qresult_buf_new(void);
OPDB_API void opdb_qresult_buf_free(opdb_qresult_buf *buf);
/* opdb_query_json with the result's storage in buf: the result (its strings
 * and its line) stays valid until the next query into buf or
 * opdb_qresult_buf_free; opdb_qresult_free on it may be called and frees
 * nothing. One buf serves one query at a time. */
OPDB_API int opdb_query_json_buf(const opdb_qdb *db, const char *line, size_t n, bool explain,
                                 opdb_qresult_buf *buf, opdb_qresult *res);

/* A built query value: null, bool, int, float, string, tensor, dtype, list
 * or dict. Values are created under a builder that owns them all. Out of
 * memory makes a builder call return NULL (-1 for append and set) and
 * opdb_qresult_buf_new NULL. */
typedef struct opdb_qvalue opdb_qvalue;
typedef struct opdb_qbuilder opdb_qbuilder;
OPDB_API opdb_qbuilder *opdb_qbuilder_new(void);
OPDB_API void opdb_qbuilder_free(opdb_qbuilder *b);
OPDB_API opdb_qvalue *opdb_qv_null(opdb_qbuilder *b);
OPDB_API opdb_qvalue *opdb_qv_bool(opdb_qbuilder *b, bool v);
OPDB_API opdb_qvalue *opdb_qv_int(opdb_qbuilder *b, long long v);
OPDB_API opdb_qvalue *opdb_qv_float(opdb_qbuilder *b, double v);
OPDB_API opdb_qvalue *opdb_qv_str(opdb_qbuilder *b, const char *s);
/* dtype: a framework name ("bfloat16", "torch.int32", "half"); NULL on an
 * unknown dtype. values: numel numbers or NULL (a tensor without contents). */
OPDB_API opdb_qvalue *opdb_qv_tensor(opdb_qbuilder *b, const int64_t *shape, size_t rank, const char *dtype,
                                     const double *values);
OPDB_API opdb_qvalue *opdb_qv_dtype(opdb_qbuilder *b, const char *dtype);
OPDB_API opdb_qvalue *opdb_qv_list(opdb_qbuilder *b);
OPDB_API opdb_qvalue *opdb_qv_dict(opdb_qbuilder *b);
/* Appends item to a list; 0, or -1 when list is not a list. */
OPDB_API int opdb_qv_append(opdb_qbuilder *b, opdb_qvalue *list, opdb_qvalue *item);
/* Sets key in a dict (a later key replaces an earlier one); 0 or -1. */
OPDB_API int opdb_qv_set(opdb_qbuilder *b, opdb_qvalue *dict, const char *key, opdb_qvalue *v);

/* An op-level query from built values: args a list (NULL = []), out any value
 * (NULL = null), kwargs a dict (NULL = {}). */
OPDB_API int opdb_query(const opdb_qdb *db, const char *op, const opdb_qvalue *args, const opdb_qvalue *out,
                        const opdb_qvalue *kwargs, bool explain, opdb_qresult *res);

/* A kernel-level query. */
typedef struct opdb_ktensor {
    const int64_t *shape;
    size_t rank;
    const char *dtype;                 /* profiler spelling or framework name */
    const char *format;                /* NULL = "ND" */
} opdb_ktensor;

typedef struct opdb_kquery {
    const char *kernel;
    const opdb_ktensor *inputs;
    size_t n_inputs;
    const opdb_ktensor *outputs;
    size_t n_outputs;
    const char *const *alternates;
    size_t n_alternates;
    const char *match;                 /* NULL = "shape"; or "elementwise" */
    const opdb_qvalue *attention;      /* dict or NULL */
    const opdb_qvalue *comm;           /* dict or NULL */
    int interpolate;                   /* -1 = the handle's setting, 0 off, 1 on */
} opdb_kquery;

OPDB_API int opdb_query_kernel(const opdb_qdb *db, const opdb_kquery *q, bool explain, opdb_qresult *res);

/* The kernel-level query in CSV cell notation, as the one-shot CLI takes it:
 * shapes "24,128;256,128", dtypes "DT_BF16;DT_BF16", formats "ND;ND"; params
 * "NAME=VALUE" set attention fields (avg_seq_len, sparse_mode, num_kv_heads,
 * input_layout, batch_size) or communication fields (message_bytes,
 * num_devices, topology_tier, method; any of them makes it a communication
 * query). NULL strings are absent. */
typedef struct opdb_kcells {
    const char *kernel, *inputs, *dtypes, *formats, *outputs, *output_dtypes, *match;
    const char *const *params;
    size_t n_params;
    int interpolate;                   /* -1 = the handle's setting */
} opdb_kcells;

/* -1 with err (OPDB_ERR_USAGE) when the cells do not make a query (a shape
 * that does not parse, counts that differ, an unknown param); else as
 * opdb_query_kernel, the result's id being "kernel". */
OPDB_API int opdb_query_kernel_cells(const opdb_qdb *db, const opdb_kcells *k, bool explain, opdb_qresult *res,
                                     opdb_err *err);

typedef struct opdb_qstats {
    size_t queries, measured, interpolated, partial, miss, error, unsupported;
    size_t skipped_rows, skipped_files;
} opdb_qstats;

/* A JSONL batch: one result per non-empty line, in input order, handed to
 * emit (a non-zero return stops the batch and is returned). threads 0 = one.
 * stats may be NULL. */
OPDB_API int opdb_query_batch(const opdb_qdb *db, const char *jsonl, size_t n, unsigned threads, bool explain,
                              int (*emit)(void *ctx, const opdb_qresult *r), void *ctx, opdb_qstats *stats);

/* A JSONL batch answered as JSONL text: one result line per non-empty line,
 * each ending in a newline, in input order whatever the thread count
 * (threads 0 = one). *out is NUL-terminated; free it with
 * opdb_query_free_text. 0, or -1 when no text could be built. stats may be
 * NULL. */
OPDB_API int opdb_query_batch_text(const opdb_qdb *db, const char *jsonl, size_t n, unsigned threads, bool explain,
                                   char **out, size_t *out_n, opdb_qstats *stats);
OPDB_API void opdb_query_free_text(char *text);
/* A JSONL stream answered as JSONL text, on several threads (the CLI's
 * batch): the query lines are read through `read` in blocks, answered on
 * `threads` threads (0 = one, at most 64; one answers each block on the
 * calling thread before reading the next), and their result lines are
 * handed to `write` in blocks of whole lines, each line ending in a newline,
 * strictly in input order, so the text is the same for any thread count.
 * Blank lines are skipped, a line may end in CRLF or be the last one
 * without a newline, and lines may be of any length; only a few blocks per
 * thread are held at once.
 *   read: as read(2): up to cap bytes into buf, how many were read, 0 at the
 *     end of the input, < 0 on a failure (which ends the input there). It is
 *     called on the calling thread only and may block: results of the lines
 *     read so far are answered and written meanwhile.
 *   write: the result text of one or more lines; never two calls at once,
 *     but from whichever of the batch's threads finished the block (the
 *     calling one or a worker). A non-zero return stops the batch: nothing
 *     more is written or read, and that value is returned (make it positive
 *     to tell it from the codes below).
 * Returns 0; write's non-zero return; -OPDB_ERR_RUNTIME when read failed
 * (what was read before is answered and written); -OPDB_ERR_NOMEM out of
 * memory. stats (may be NULL) counts the lines written. */
OPDB_API int opdb_query_stream(const opdb_qdb *db, unsigned threads, bool explain,
                               ptrdiff_t (*read)(void *ctx, char *buf, size_t cap), void *read_ctx,
                               int (*write)(void *ctx, const char *text, size_t n), void *write_ctx,
                               opdb_qstats *stats);
/* The result line of a result (JSON object, no newline), malloc'd. 0, -1 on
 * a NULL result, or -OPDB_ERR_NOMEM when out of memory (also for
 * opdb_qresult_line, which renders the line on first use). */
OPDB_API int opdb_qresult_json(const opdb_qresult *r, char **text, size_t *len);
/* The result line as a view the result owns (valid until opdb_qresult_free):
 * what opdb_qresult_json gives, without the copy. 0 or -1. */
OPDB_API int opdb_qresult_line(const opdb_qresult *r, const char **text, size_t *len);
OPDB_API void opdb_qresult_free(opdb_qresult *r);

/* Rows skipped so far because a cell could not be read (default mode), and
 * in how many files. */
OPDB_API void opdb_qdb_skipped(const opdb_qdb *db, size_t *rows, size_t *files);

#ifdef __cplusplus
}
#endif
#endif
