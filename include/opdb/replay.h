/* Operator replay: an operator registry (how to rebuild a database row's
 * problem and what it costs) and backends that run it (docs/REPLAY-OPS.md).
 *
 * Flow: a row's metadata cells -> op->plan() -> opdb_op_problem (tensor
 * shapes/dtypes, FLOP and byte counts, op parameters) -> backend->prepare()
 * (allocate, fill inputs via op->fill()) -> backend->run() timed many times
 * by the measurement engine -> backend->release().
 *
 * Adding an operator: one file src/replay/ops/op_<name>.c defining
 * `const opdb_op_def opdb_op_<name>` plus one line in src/replay/registry.c. */
#ifndef OPDB_REPLAY_H
#define OPDB_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- element types (docs/REPLAY-OPS.md §1.3) ---- */
typedef enum opdb_dtype {
    OPDB_DT_UNDEFINED = 0,
    OPDB_DT_F32,
    OPDB_DT_F16,
    OPDB_DT_BF16,
    OPDB_DT_F64,
    OPDB_DT_I8,
    OPDB_DT_U8,
    OPDB_DT_I16,
    OPDB_DT_I32,
    OPDB_DT_I64,
    OPDB_DT_BOOL
} opdb_dtype;

/* Normalise a profiler spelling (`FLOAT`, `DT_BF16`, `INT64`, blank) and map
 * it; 0 on success, -1 with "Unsupported dtype: DT_X" in err otherwise. */
OPDB_API int opdb_dtype_parse(const char *name, size_t len, opdb_dtype *out, opdb_err *err);
OPDB_API const char *opdb_dtype_name(opdb_dtype dt);   /* "DT_FLOAT", "DT_BF16", ... */
OPDB_API size_t opdb_dtype_size(opdb_dtype dt);        /* bytes per element (bool: 1) */
OPDB_API bool opdb_dtype_is_float(opdb_dtype dt);

/* bf16 / fp16 storage: inputs are stored as such and computed in fp32. */
OPDB_API float opdb_bf16_to_f32(uint16_t h);
OPDB_API uint16_t opdb_f32_to_bf16(float f);           /* round to nearest even */
OPDB_API float opdb_f16_to_f32(uint16_t h);
OPDB_API uint16_t opdb_f32_to_f16(float f);            /* round to nearest even */
/* Read/write element i of a buffer of dtype dt as a double (any dtype). */
OPDB_API double opdb_elem_get(const void *data, opdb_dtype dt, size_t i);
OPDB_API void opdb_elem_set(void *data, opdb_dtype dt, size_t i, double v);

/* ---- tensors and problems ---- */
#define OPDB_MAX_DIMS 8
#define OPDB_MAX_TENSORS 32
#define OPDB_MAX_AUX 4096

typedef struct opdb_tensor {
    int ndim;                       /* 0: absent slot (no buffer) */
    int64_t dims[OPDB_MAX_DIMS];    /* logical, row-major */
    opdb_dtype dtype;
    bool nz;                        /* recorded as FRACTAL_NZ (layout only; CPU keeps row-major) */
    void *data;                     /* set by the backend's prepare(); host or device memory */
} opdb_tensor;

OPDB_API int64_t opdb_tensor_numel(const opdb_tensor *t);   /* 0 for an absent slot; INT64_MAX when it overflows */
OPDB_API size_t opdb_tensor_bytes(const opdb_tensor *t);    /* SIZE_MAX when it overflows */
/* A shape read from a row may hold at most 2^OPDB_REPLAY_MAX_NUMEL_LOG2
 * elements: far beyond any machine's memory, and small enough that products
 * of a few dimensions inside an operator's plan cannot overflow 64 bits. */
#define OPDB_REPLAY_MAX_NUMEL_LOG2 40
OPDB_API bool opdb_shape_too_big(const int64_t *dims, int ndim);

/* One database row as an operator sees it. */
typedef struct opdb_replay_row {
    const char *kernel_type;        /* normalised operator name */
    /* Cell by exact column name ("Input Shapes", "Runtime num_heads", ...);
     * "" when the column is absent. Valid for the duration of plan(). */
    const char *(*cell)(const struct opdb_replay_row *row, const char *column);
    void *ctx;
    /* --reference-quirks: the reference's row rules (e.g. a MatMulV2 weight
     * always stored (N, K), no bias); else opdb's (docs/REPLAY.md). */
    bool quirks;
} opdb_replay_row;

/* Everything a backend needs to run one row: built by op->plan(). */
typedef struct opdb_op_problem {
    int nin, nout;
    opdb_tensor in[OPDB_MAX_TENSORS];
    opdb_tensor out[OPDB_MAX_TENSORS];
    int64_t iparam[16];             /* op-specific integers (axes, groups, heads, M/N/K, ...) */
    double fparam[8];               /* op-specific reals (eps, scale, ...) */
    size_t workspace_bytes;         /* extra scratch the kernel needs */
    double flops;                   /* arithmetic operations per execution (GEMM: 2*M*N*K) */
    double bytes;                   /* minimum bytes moved per execution (inputs read + outputs written) */
    /* Op-specific integer lists the plan computes and fill/kernels read
     * (FusedInferAttentionScore: per-batch q and kv sequence lengths). */
    int naux;
    int64_t aux[OPDB_MAX_AUX];
} opdb_op_problem;

/* Bytes of every buffer the problem needs (inputs, outputs, workspace);
 * SIZE_MAX when that does not fit in a size_t. */
OPDB_API size_t opdb_problem_buffer_bytes(const opdb_op_problem *p);

/* ---- operators ---- */
enum { OPDB_PLAN_SKIP = 1 };

typedef struct opdb_op_def {
    const char *name;               /* catalogue name, e.g. "MatMulV2" */
    const char *const *aliases;     /* NULL-terminated list or NULL */
    /* Parse a row into a problem (docs/REPLAY-OPS.md §1.3-§2). A malformed row
     * returns -1 with the reason in err (the row is reported as failed).
     * OPDB_PLAN_SKIP (1) with the reason in err: the row is valid but not
     * replayable exactly (e.g. FusedInferAttentionScore §2.5): keep the row,
     * report it as skipped, never drop it. */
    int (*plan)(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err);
    /* Fill the inputs (host memory) after allocation; NULL = the default
     * fill (docs/REPLAY-OPS.md §1.4: floats random in [-1,1), ints in [0,8), bools 0/1).
     * Ops whose inputs carry structure (index vectors, group lists, block
     * tables, permutations) set them here. Deterministic for a seed. */
    int (*fill)(opdb_op_problem *p, uint64_t seed, opdb_err *err);
    /* CPU kernel: one execution on host tensors; NULL with cpu_skip_reason
     * set when the operator has no meaning on a CPU. */
    int (*cpu_run)(const opdb_op_problem *p, void *workspace, opdb_err *err);
    const char *cpu_skip_reason;
} opdb_op_def;

/* The registry: every operator opdb can replay, sorted by name. */
OPDB_API extern const opdb_op_def *const opdb_op_registry[];
OPDB_API extern const size_t opdb_op_registry_count;
/* By catalogue name or alias (exact, after operator-name normalisation); NULL if none. */
OPDB_API const opdb_op_def *opdb_op_find(const char *name);

/* Shared row helpers (docs/REPLAY-OPS.md §1.3): split a slot cell into items
 * (keep_empty: slot-list, else nonempty-list); parse a shape "a,b,c". */
OPDB_API size_t opdb_replay_split(const char *cell, bool keep_empty, char items[][128], size_t max_items);
OPDB_API int opdb_replay_shape(const char *text, opdb_tensor *t, opdb_err *err);
/* Default tensor building from Input/Output Shapes/Data Types/Formats
 * (docs/REPLAY-OPS.md §1.5): nonempty-lists; expect_in < 0 = any count. */
OPDB_API int opdb_replay_default_io(const opdb_replay_row *row, opdb_op_problem *p, int expect_in, opdb_err *err);
/* make(shape, format, dtype, transpose) of §1.4 for slot-based rows: blank
 * shape -> error "missing shape"; format FRACTAL_NZ needs a 4-D (a,b,c,d)
 * and gives the logical 2-D (b*c, a*d) with nz set; transpose swaps the
 * two dims of a 2-D logical tensor. dtype text as in opdb_dtype_parse. */
OPDB_API int opdb_replay_make(const char *shape, const char *format, const char *dtype, bool transpose,
                     opdb_tensor *t, opdb_err *err);
/* A "Runtime ..." style cell parsed as an integer; false when blank or not an integer. */
OPDB_API bool opdb_replay_cell_int(const opdb_replay_row *row, const char *column, int64_t *v);
/* Default fill of one tensor (see opdb_op_def.fill). */
OPDB_API void opdb_replay_fill_default(opdb_tensor *t, uint64_t *rng);
OPDB_API uint64_t opdb_rng_next(uint64_t *state);      /* splitmix64 */

/* ---- backends ---- */
typedef struct opdb_backend opdb_backend;
struct opdb_backend {
    const char *name;               /* "cpu", "cuda" */
    char description[256];          /* e.g. "AMD EPYC 7B13, OpenBLAS 0.3.21, 2 threads" */
    char stack[128];                /* version-dir name, e.g. "openblas0.3.21_gcc12.2" */
    char device_name[128];          /* e.g. "AMD EPYC 7B13" (sanitised by the caller) */
    /* false + reason: this backend cannot run that operator (reported as skipped). */
    bool (*supports)(opdb_backend *b, const opdb_op_def *op, const char **reason);
    /* Allocate buffers for p's tensors and workspace, fill inputs (op->fill or
     * default), upload; *inst is the backend's handle for run()/release(). */
    int (*prepare)(opdb_backend *b, const opdb_op_def *op, const opdb_op_problem *p,
                   uint64_t seed, void **inst, opdb_err *err);
    /* One synchronised execution; *elapsed_us = its duration (CPU: monotonic
     * clock around the kernel; CUDA: events). Tensor creation is never timed. */
    int (*run)(opdb_backend *b, void *inst, double *elapsed_us, opdb_err *err);
    /* Evict the last-level cache (CPU: sweep a preallocated >= 2x LLC buffer;
     * CUDA: overwrite an L2-sized buffer). Not timed. */
    void (*flush_cache)(opdb_backend *b);
    void (*release)(opdb_backend *b, void *inst);
    void (*destroy)(opdb_backend *b);
    void *impl;
    /* The real eviction's cost over what flush_cache() costs now: > 1 when the
     * backend was made with estimate_only and sweeps a smaller pilot buffer;
     * 0 means 1. */
    double flush_scale;
};

typedef struct opdb_backend_opts {
    size_t size; /* sizeof(opdb_backend_opts), set by opdb_backend_opts_init */
    int threads;                    /* CPU threads to use and pin (0 = all online CPUs) */
    bool hot_cache;                 /* no cache eviction between samples */
    int device_index;               /* CUDA device */
    size_t cache_bytes;             /* CPU: last-level cache to evict (0 = the size the CPU reports) */
    int launch_batch;               /* CUDA: launches timed together per sample (0 = enough for about
                                       OPDB_LAUNCH_BATCH_TARGET_US, at most OPDB_LAUNCH_BATCH_MAX; 1 = one) */
    bool estimate_only;             /* --plan: the backend only pilots rows; CPU: a pilot-sized eviction
                                       buffer (flush_scale says how much larger the real one is) */
} opdb_backend_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_backend_opts_init_sized(opdb_backend_opts *o, size_t size);
#define opdb_backend_opts_init(o) opdb_backend_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

#define OPDB_LAUNCH_BATCH_TARGET_US 100.0
#define OPDB_LAUNCH_BATCH_MAX 128

/* Create a backend by name; returns NULL with a reason (e.g. "CUDA backend
 * not built: no CUDA toolkit found at configure time", "no CUDA device"). */
OPDB_API opdb_backend *opdb_backend_create(const char *name, const opdb_backend_opts *o, opdb_err *err);
OPDB_API opdb_backend *opdb_backend_cpu_create(const opdb_backend_opts *o, opdb_err *err);
OPDB_API opdb_backend *opdb_backend_cuda_create(const opdb_backend_opts *o, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
