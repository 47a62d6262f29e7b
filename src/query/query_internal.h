/* The model every query path shares: parsed query values, dtypes, the run
 * configuration, derived views of a query, the loaded database (tables by
 * kernel type and the mapping), the result being built, and one entry point
 * per lookup path. */
#ifndef OPDB_QUERY_INTERNAL_H
#define OPDB_QUERY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/call.h"
#include "db/table.h"
#include "opdb/core.h"
#include "opdb/query.h"

/* ------------------------------------------------------------------ values */
/* Query values (JSON lines and built queries) and YAML values of the mapping
 * share one tree. Dict keys are values too: YAML keeps `3:` an integer. */
typedef enum qv_kind { QV_NULL, QV_BOOL, QV_INT, QV_FLOAT, QV_STR, QV_TENSOR, QV_DTYPE, QV_LIST, QV_DICT } qv_kind;

typedef struct q_shape {
    const int64_t *d;
    uint32_t rank;
} q_shape;

struct opdb_qvalue {
    qv_kind kind;
    bool b;                      /* QV_BOOL */
    int64_t i;                   /* QV_INT */
    double f;                    /* QV_FLOAT */
    const char *s;               /* QV_STR (NUL-terminated); QV_FLOAT read from an integer beyond int64: its digits */
    size_t n;                    /* QV_STR length; QV_LIST/QV_DICT item count */
    /* QV_TENSOR: shape, dtype (q_dtype), optional contents; QV_DTYPE: dtype */
    q_shape shape;
    int dtype;
    const double *values;        /* NULL = no readable contents (meta tensor) */
    size_t nvalues;
    /* QV_LIST items; QV_DICT keys[k] -> items[k] (a later duplicate replaces) */
    struct opdb_qvalue **items;
    struct opdb_qvalue **keys;
    size_t cap;
};
typedef struct opdb_qvalue qv;

/* A value of kind k, every other member empty (dtype -1); qv_new makes one
 * in arena a. Set member by member: a memset or copy of the whole node becomes a
 * `rep stos`, whose start-up costs more than these stores, and a query line
 * makes several nodes. */
static inline void qv_init(qv *v, qv_kind k) {
    _Static_assert(sizeof(void *) != 8 || sizeof(qv) == 104, "qv_init sets every member: add the new one");
    v->kind = k;
    v->b = false;
    v->i = 0;
    v->f = 0;
    v->s = NULL;
    v->n = 0;
    v->shape.d = NULL;
    v->shape.rank = 0;
    v->dtype = -1;
    v->values = NULL;
    v->nvalues = 0;
    v->items = NULL;
    v->keys = NULL;
    v->cap = 0;
}

static inline qv *qv_new(opdb_arena *a, qv_kind k) {
    qv *v = opdb_arena_alloc(a, sizeof *v);
    qv_init(v, k);
    return v;
}

/* Python truthiness of a value (NULL = absent = falsy). */
bool qv_truthy(const qv *v);
/* dict lookup by string key (NULL when v is not a dict or the key is absent) */
const qv *qv_get(const qv *dict, const char *key);
/* dict lookup by integer key (YAML `3:`) */
const qv *qv_get_int(const qv *dict, int64_t key);
/* a value that Python accepts as an int (int or bool) */
bool qv_as_int(const qv *v, int64_t *out);
bool qv_is_str(const qv *v, const char *s);
/* the first tensor of a value: itself, or depth-first in a list; NULL if none */
const qv *qv_first_tensor(const qv *v);

/* ------------------------------------------------------------------ dtypes */
typedef enum q_dtype {
    QDT_BF16, QDT_F16, QDT_F32, QDT_F64, QDT_I8, QDT_U8, QDT_I16, QDT_I32, QDT_I64, QDT_BOOL,
    QDT_F8E4M3, QDT_F8E5M2, QDT_COUNT
} q_dtype;

/* framework name (torch. prefix and aliases accepted) -> q_dtype, or -1 */
int q_dtype_parse(const char *name, size_t n);
const char *q_dtype_name(int dt);
size_t q_dtype_size(int dt);
/* profiler spelling used for matching, or NULL when unmapped */
const char *q_dtype_prof(int dt);
/* profiler spelling -> dtype, or -1 */
int q_dtype_from_prof(const char *s, size_t n);
/* byte size of a profiler spelling (0 = unknown) */
size_t q_prof_bytes(const char *s, size_t n);
/* kernels for which DT_BF16 and FLOAT are one dtype class */
bool q_relaxed_kernel(const char *kt);
/* the dtype strings d (row) and p (query) match for kernel kt */
bool q_prof_match(const char *kt, const char *p, const char *d, size_t dn);

/* ------------------------------------------------------------------ config */
typedef struct q_config {
    int tp, ep;                  /* 0 = not configured */
    int *grid;
    size_t grid_n;
    bool sp, interp, quirks;
} q_config;

/* ---------------------------------------------------------- derived views */
typedef struct q_tin {            /* one tensor input: shape and dtype */
    q_shape s;
    int dtype;                   /* q_dtype, or -1 when prof is given */
    const char *prof;            /* kernel level: the profiler spelling as given (NULL: from dtype) */
} q_tin;

typedef struct q_tins {
    q_tin *v;
    size_t n;
} q_tins;

/* ------------------------------------------------------------ the database */
typedef enum q_lat_col { QLAT_AVG, QLAT_PROF_AVG, QLAT_DUR, QLAT_ENVELOPE, QLAT_NONE } q_lat_col;
extern const char *const q_lat_names[3];  /* the duration columns in priority order */

/* A parsed list cell (Input Data Types, ...): rows with the same text share one. */
typedef struct q_list {
    const char **s;              /* items, stripped */
    uint32_t *len;
    uint32_t n;
} q_list;

/* The shapes of the database's cells, each distinct one kept once for all
 * its tables (shapes.c): a row names its shapes by 32-bit ids. Segment k
 * holds Q_SSEG0 << k shapes and never moves; a shape is written before the
 * table whose rows name it is published, so readers take no lock. */
#define Q_SSEG0_LOG 8
#define Q_SSEG0 (1u << Q_SSEG0_LOG)
typedef struct q_shape_store {
    q_shape *seg[32 - Q_SSEG0_LOG];
    pthread_mutex_t mu;          /* taken to add shapes */
    opdb_arena dims;             /* the shapes' dims arrays */
    struct q_sslot *slot;        /* the shapes by content (open addressing, at most half full) */
    size_t cap;
    uint32_t n;                  /* shapes kept: ids 0 .. n - 1 */
} q_shape_store;

void q_shape_store_init(q_shape_store *st);
void q_shape_store_free(q_shape_store *st);

/* the shape of id (an id q_shape_store_add gave) */
static inline q_shape q_shape_of(const q_shape_store *st, uint32_t id) {
    uint32_t x = id + Q_SSEG0;
    unsigned k = (unsigned)(31 - __builtin_clz(x)) - Q_SSEG0_LOG;
    return st->seg[k][x - (Q_SSEG0 << k)];
}

/* Shapes cells parsed before their shapes are added to a store: shape k is
 * s[k].rank dims from d + s[k].at. */
typedef struct q_shape_buf {
    int64_t *d;
    size_t nd, capd;
    struct q_sbuf_shape {
        uint32_t at, rank;
    } *s;
    size_t n, cap;
} q_shape_buf;

/* Appends the shapes of CSV cell text s ("24,128;256,128") to b, as
 * q_parse_shapes reads them: false, b as it was, when a piece does not parse. */
bool q_shape_buf_parse(q_shape_buf *b, const char *s, size_t n);
void q_shape_buf_free(q_shape_buf *b);
/* The ids of b's shapes into ids[0 .. b->n), each shape added to st when new. */
void q_shape_store_add(q_shape_store *st, const q_shape_buf *b, uint32_t *ids);

/* The dtype and format lists of a row: a table keeps each distinct triple once. */
typedef struct q_rlists {
    const q_list *in_dt;         /* Input Data Types items (never NULL) */
    const q_list *in_fmt;        /* Input Formats items (never NULL) */
    const q_list *out_dt;        /* Output Data Types items (never NULL) */
} q_rlists;

/* A row's parsed cells, filled once per table (lazily, under the table's
 * guard). Its shapes and lists are read through q_row_in, q_row_in_dt, ...
 * (below), which take the row's table. */
#define Q_ROW_NMANY 0xFFFFu      /* counts that do not fit: both are the two ids before shp */
enum { Q_ROW_IN_OK = 1, Q_ROW_OUT_OK = 2 };
typedef struct q_row {
    double lat;                  /* exact-path latency; 0 = invisible */
    uint32_t shp;                /* its shape ids: t->shp[shp ..], Input Shapes then Output Shapes */
    uint32_t lists;              /* its lists: t->rlists[lists] */
    uint16_t nin16, nout16;      /* shape counts (Q_ROW_NMANY: see there) */
    uint8_t latcol;              /* q_lat_col */
    uint8_t prio;                /* latency priority: lower ranks first among equal distances */
    uint8_t ok;                  /* Q_ROW_IN_OK: Input Shapes parsed (else: a cell fault when read);
                                    Q_ROW_OUT_OK: Output Shapes parsed */
    _Atomic uint8_t skipped;     /* default mode: counted once among the skipped rows */
} q_row;
_Static_assert(sizeof(void *) != 8 || sizeof(q_row) == 24, "a prepared row is 24 bytes");

typedef enum q_tstate { QT_UNLOADED, QT_ABSENT, QT_FAILED, QT_OK } q_tstate;

/* kernel families the matching rules name (computed once per table) */
enum {
    QK_MATMUL = 1 << 0,          /* transposed weights match */
    QK_FLATTEN = 1 << 1,         /* a 3-D input matches its flattened 2-D row */
    QK_MERGE = 1 << 2,           /* ... or its last two dims merged */
    QK_ROPE = 1 << 3,            /* inputs rearranged as the RoPE kernels take them */
    QK_SWIGLU = 1 << 4,
    QK_RAC = 1 << 5,             /* ReshapeAndCache */
    QK_INDEX = 1 << 6,
    QK_RELAXED = 1 << 7,         /* DT_BF16 and FLOAT are one dtype class */
};
unsigned q_kernel_flags(const char *kt);

typedef struct q_ktable {
    char *kernel;                /* kernel type = CSV stem */
    uint64_t khash;              /* hash of kernel (the lock-free table lookup) */
    unsigned kflags;             /* QK_* of the kernel */
    char *path;                  /* the file it was (or would be) read from */
    char *shown;                 /* path as named in explain (relative to the db folder when inside) */
    _Atomic int state;           /* q_tstate; QT_UNLOADED until the once-guard ran */
    _Atomic bool prepared;       /* QT_OK: rows filled (the first lookup of the table) */
    pthread_mutex_t mu;
    char *error;                 /* QT_FAILED: one-line message */
    db_table t;
    q_row *rows;
    uint32_t *shp;               /* the rows' shape ids (q_row.shp) */
    q_rlists *rlists;            /* the rows' distinct lists (q_row.lists) */
    const q_shape_store *ss;     /* the database's shapes the ids name */
    /* columns of interest, -1 when absent */
    int c_in_shapes, c_in_dt, c_in_fmt, c_out_shapes, c_out_dt, c_core;
    int c_lat[3], c_aic, c_aiv, c_pref;
    _Atomic uint64_t warned_cols; /* default mode: one warning per file and column (bit per column) */
    _Atomic bool counted;         /* counted once among the files with skipped rows */
    bool lat_ov_bad;              /* its latency_policy override is not a mapping (bad_mapping) */
    void *ext[4];                /* per-path indexes built on demand under ext_mu: [0] the compute
                                    row index (index.c); [1]-[3] free for other paths (comm,
                                    interpolation); slots 0 and 3 are freed with q_index_free at
                                    close, the others with the function their builder left in ext_free */
    void (*ext_free[4])(void *);
    pthread_mutex_t ext_mu;
} q_ktable;

/* A prepared row's cells, read through its table. */
static inline bool q_row_shapes_ok(const q_row *r) { return r->ok & Q_ROW_IN_OK; }
static inline bool q_row_out_ok(const q_row *r) { return r->ok & Q_ROW_OUT_OK; }
static inline uint32_t q_row_nin(const q_ktable *t, const q_row *r) {
    return r->nin16 != Q_ROW_NMANY ? r->nin16 : t->shp[r->shp - 2];
}
static inline uint32_t q_row_nout(const q_ktable *t, const q_row *r) {
    return r->nin16 != Q_ROW_NMANY ? r->nout16 : t->shp[r->shp - 1];
}
/* input i < q_row_nin, output i < q_row_nout */
static inline q_shape q_row_in(const q_ktable *t, const q_row *r, size_t i) { return q_shape_of(t->ss, t->shp[r->shp + i]); }
static inline q_shape q_row_out(const q_ktable *t, const q_row *r, size_t i) {
    return q_shape_of(t->ss, t->shp[r->shp + q_row_nin(t, r) + i]);
}
static inline const q_list *q_row_in_dt(const q_ktable *t, const q_row *r) { return t->rlists[r->lists].in_dt; }
static inline const q_list *q_row_in_fmt(const q_ktable *t, const q_row *r) { return t->rlists[r->lists].in_fmt; }
static inline const q_list *q_row_out_dt(const q_ktable *t, const q_row *r) { return t->rlists[r->lists].out_dt; }

/* The first finite, positive latency among the columns cols[0..n) (-1:
 * none) of row r, as far as the row's preparation tells it without reading
 * its cells: 1 found (*lat, *col), 0 none of them has one, -1 not known
 * (the caller reads the cells). */
int q_row_lat_known(const q_ktable *t, size_t r, const int *cols, int n, double *lat, int *col);

/* The lookup path of an op's mapping entry, in the order dispatch tries them. */
typedef enum q_route {
    QR_COMPOSITE, QR_DECOMPOSED, QR_COMM, QR_ATTENTION, QR_ELEMENTWISE, QR_MOE_FUSED, QR_MTP_PROJECTION,
    QR_ZERO_COST, QR_ACCEPTED_MISS, QR_COMPUTE
} q_route;

/* How the TP linear projection rule of an entry reads before the inputs are seen. */
enum { Q_TP_NONE, Q_TP_INVALID, Q_TP_INPUT, Q_TP_OUTPUT };

/* What dispatch and the compute target read from one mapping entry, worked
 * out once when the mapping is loaded (plan.c). A part the plan does not
 * hold (a field of the wrong type, whose bad_mapping error a query words;
 * kernel_types_by_input_rank, read per input rank) is read from the entry
 * per query, as it is without a plan. */
typedef struct q_plan {
    /* the entry (name, value) first: finding it by name reads the plan alone */
    const char *name;
    uint32_t name_n;
    bool dict;                   /* the entry is a dict (else nothing below is set) */
    uint8_t route;               /* q_route */
    bool comm;                   /* category is communication */
    bool kernels_ok;             /* k: the kernel lists of q_entry_kernels */
    bool target_ok;              /* the rest of q_compute_target's reading: */
    bool has_n;                  /* tc_input_count given, N its value */
    uint8_t tp;                  /* Q_TP_*: the projection rule, its dims in tp_dims */
    uint32_t nk, nk0;            /* k's length; nk0: without the alternates (0 or 1) */
    const char **k;              /* [kernel_type] + alternate_kernel_types, without repeats */
    int64_t N;
    const char *deg;             /* degenerate_bmm_kernel_type when a string */
    const int64_t *tp_dims;
    size_t tp_n;
    const char *zero_kernel;     /* QR_ZERO_COST: the kernel the result names ("" absent, NULL not a string) */
    const qv *v;                 /* the entry */
} q_plan;

/* The route of entry v of op name (and the zero-cost kernel). */
q_route q_entry_route(const char *name, const qv *v, const char **zero_kernel);
/* tp_linear_projection of entry v as far as it reads without the inputs:
 * Q_TP_*, and for a valid rule its logical_global_dims (in arena a) */
uint8_t q_tp_read(opdb_arena *a, const qv *v, const int64_t **dims, size_t *n);
/* Fills p from entry v of op name (strings and lists in arena a). */
void q_plan_make(opdb_arena *a, const char *name, const qv *v, q_plan *p);

/* op_mapping.yaml as read (PyYAML safe_load semantics). */
typedef struct q_mapping {
    qv *root;                    /* NULL when the file is absent */
    const qv *ops;               /* operator_mappings (NULL when absent) */
    opdb_hindex ops_ix;          /* its string keys by hash (the first of duplicates) */
    q_plan *plans;               /* plans[j]: the plan of ops->items[j] (j a key of ops_ix) */
    bool ops_bad;                /* operator_mappings present but not a mapping */
    const qv *ov_lat, *ov_sel, *ov_int; /* the kernel_overrides mappings (NULL when absent) */
    char *comm_dir;              /* resolved communication_data_ref folder (NULL = the db folder) */
} q_mapping;

struct opdb_qdb {
    char *dir;
    q_config cfg;
    bool eager;
    bool read_files;             /* tables read into memory, never mapped (opdb_qdb_opts) */
    void (*warn)(void *, const char *);
    void *warn_ctx;
    opdb_arena arena;            /* mapping values */
    q_mapping map;
    /* tables by kernel type: created on first use */
    pthread_mutex_t tables_mu;
    q_ktable **tables;
    size_t ntables, captables;
    opdb_hindex tables_ix;
    /* the same tables for readers without the lock: open addressing over
     * published pointers, replaced (the old one kept until close) when full */
    _Atomic(struct q_tsnap *) tsnap;
    _Atomic size_t skipped_rows, skipped_files;
    bool no_index;               /* tests: every scan visits every row, every interpolation filter scans its points (the references of the indexes) */
    uint64_t ip_hash_mask;       /* tests: the interpolation groups' key hashes cut to these bits, so that keys collide (0: whole) */
    bool no_plan;                /* tests: every query reads its mapping entry's fields (the reference of the plans) */
    bool index_lazy_exact;       /* tests: the compute index makes its rows' exact key hashes in a pass of their own on first use (the reference of the one-pass build) */
    struct q_cache *cache;       /* the result cache (NULL = off) */
    struct q_hitmap *hitmap;     /* scan outcomes by scan key (NULL = off; no_index bypasses it) */
    /* intervals written by opdb check, read by calib.c on the first interpolated
     * answer (NULL: not yet); calib_free (set with it) frees them at close */
    _Atomic(struct q_calib *) calib;
    void (*calib_free)(opdb_qdb *db);
    struct ip_omap *ipmap;       /* interpolation outcomes by target (NULL = off; explain and no_index bypass it) */
    atomic_bool nomem;           /* a call ran out of memory: later calls refuse (Q_ENTRY) */
    q_shape_store shapes;        /* the tables' parsed shapes (internally synchronised) */
    size_t line_memo;            /* the batch stream's line memo bound in bytes (opdb_qdb_opts; 0 = off) */
    _Atomic size_t line_memo_hits; /* lines the batch streams answered from their memo (tests, figures) */
    atomic_bool maps_touched;    /* the maps' slot arrays faulted in for writing (q_maps_touch) */
    _Atomic size_t warned;       /* messages given through q_warn so far */
};
/* The body of a public handle call returning int: a handle one of whose
 * calls ran out of memory refuses with -OPDB_ERR_NOMEM (what that call was
 * doing under a lock may be half done); out of memory in this call marks
 * it so and returns the same. */
#define Q_ENTRY(db, call)                                                                          \
    if (atomic_load(&((opdb_qdb *)(db))->nomem)) return -OPDB_ERR_NOMEM;                           \
    opdb_call_scope q_saved_ = opdb_call_enter(NULL);                                              \
    OPDB_CALL_GUARD_THEN(q_saved_, NULL, {                                                               \
        atomic_store(&((opdb_qdb *)(db))->nomem, true);                                            \
        return -OPDB_ERR_NOMEM;                                                                    \
    });                                                                                            \
    int q_rc_ = (call);                                                                            \
    opdb_call_leave(&q_saved_);                                                                    \
    return q_rc_
/* adds result r to the batch counts s (api.c) */
void q_stats_add(opdb_qstats *s, const opdb_qresult *r);
/* opdb_qresult_line inside a call already guarded (the batch's lines) */
int q_qresult_line(const opdb_qresult *r, const char **text, size_t *len);
/* opdb_qresult_buf_new and opdb_query_json_buf inside a call already guarded
 * (the streaming batch's lines) */
opdb_qresult_buf *q_qresult_buf_new(void);
int q_query_json_buf_call(const opdb_qdb *db, const char *line, size_t n, bool explain, opdb_qresult_buf *buf,
                          opdb_qresult *res);
/* One line answered into buf, its result line and a newline appended to out
 * (rendered there at once: res's strings may point into the handle). line_hash:
 * a hash of the line without its id that the caller has already (the maps'
 * first probes start there: equal lines must give equal hashes), or 0 */
void q_query_json_append(const opdb_qdb *db, const char *line, size_t n, bool explain, uint64_t line_hash,
                         opdb_qresult_buf *buf, opdb_qresult *res, opdb_strbuf *out);
/* The body of a public call that holds no handle (the value builders, a
 * result's line): out of memory in it returns `fail` instead of ending the
 * process. */
#define Q_GUARDED(type, fail, call)                                                                \
    opdb_call_scope q_saved_ = opdb_call_enter(NULL);                                              \
    OPDB_CALL_GUARD_THEN(q_saved_, NULL, return (fail));                                           \
    type q_r_ = (call);                                                                            \
    opdb_call_leave(&q_saved_);                                                                    \
    return q_r_
/* calib.c: sets the interval of an interpolated answer from kernel on dim
 * axes whose points spread by `spread` (loo.h), reading the folder's
 * calibration file on first use (default mode only) */
struct q_ctx;
void q_calib_apply(struct q_ctx *c, const char *kernel, int dim, double spread);

/* The table of kernel kt, loaded on first use (thread-safe). Never NULL;
 * state says QT_ABSENT / QT_FAILED / QT_OK. */
q_ktable *q_table(const opdb_qdb *db, const char *kt);
void q_warn(const opdb_qdb *db, const char *fmt, ...) OPDB_PRINTF(2, 3);
/* operator_mappings[name] (NULL when absent), as qv_get finds it, by hash,
 * and its plan (NULL when absent or not a dict) */
const qv *q_op_find(const opdb_qdb *db, const char *name, const q_plan **plan);
/* The policy entry OV[kt] (NULL when absent); *bad when present but not a mapping. */
const qv *q_override(const qv *ov, const char *kt, bool *bad);

/* ------------------------------------------------------------------ query */
typedef struct q_query {
    const qv *id;                /* NULL = absent */
    const char *id_text;         /* an integer id's text in the line, as it is written back (NULL: none) */
    uint32_t id_len;
    const char *op;              /* op name without the torch.ops. prefix (op level) */
    const qv *args, *out, *kwargs;
    /* kernel level */
    const char *kernel;
    const qv *kq;                /* the whole kernel-level object */
    uint64_t line_hash;          /* the line's bytes without its id, hashed (0 = not known) */
} q_query;

/* ------------------------------------------------------------------ result */
typedef enum q_src { QS_MEASURED, QS_INTERPOLATED, QS_PARTIAL, QS_MISS, QS_ERROR } q_src;

typedef struct q_sub {
    const char *kernel;
    double us;
} q_sub;

typedef struct q_xrow {           /* explain: one row used */
    const q_ktable *tab;
    size_t row;
    double lat;
    const char *rule;
    const char **input_rules;
    size_t n_rules;
    int distance;                /* distance as ranked (half-units are kept in dist) */
    double dist;
    size_t ties;
} q_xrow;

typedef struct q_result {
    q_src src;
    double lat, conf;
    const char *rule;            /* NULL = null */
    const char *kernel;          /* NULL = null */
    const char *miss;            /* MISS reason (may be ""); error code for QS_ERROR */
    const char *error_msg;       /* QS_ERROR: the message */
    q_sub *sub;
    size_t n_sub, cap_sub;
    bool has_sub;
    /* explain */
    const char *path, *stage;
    const char **kernels;
    size_t n_kernels;
    q_xrow *rows;
    size_t n_rows, cap_rows;
    opdb_strbuf extra;           /* further explain members, each `, "key": value` (paths add their own) */
    opdb_strbuf attempts;        /* explain of a MISS: the attempts' JSON objects, comma separated */
    /* a calibrated interval of an interpolated answer (calib.c), shown while lat is still iv_at */
    bool has_iv;
    double iv_at, iv90[2], iv80[2], iv_med;
    const char *request;         /* a kernel-level MISS (default mode): the request as a JSON object, or NULL */
} q_result;

/* Empties r (every member zero, as a memset would): set member by member,
 * as qv_new is, since each query starts this way. */
static inline void q_result_clear(q_result *r) {
    _Static_assert(sizeof(void *) != 8 || sizeof(q_result) == 256, "q_result_clear sets every member: add the new one");
    r->src = QS_MEASURED;
    r->lat = r->conf = 0;
    r->rule = r->kernel = r->miss = r->error_msg = NULL;
    r->sub = NULL;
    r->n_sub = r->cap_sub = 0;
    r->has_sub = false;
    r->path = r->stage = NULL;
    r->kernels = NULL;
    r->n_kernels = 0;
    r->rows = NULL;
    r->n_rows = r->cap_rows = 0;
    r->extra = (opdb_strbuf){0};
    r->attempts = (opdb_strbuf){0};
    r->has_iv = false;
    r->iv_at = r->iv90[0] = r->iv90[1] = r->iv80[0] = r->iv80[1] = r->iv_med = 0;
    r->request = NULL;
}

/* One query's working state. */
typedef struct q_ctx {
    const opdb_qdb *db;
    const q_config *cfg;
    const q_query *q;
    opdb_arena *a;               /* everything of this query lives here */
    bool explain;
    q_result *r;
    uint64_t probe_hash;         /* where the query's first exact-hit map probe starts (0 = at its key's hash) */
} q_ctx;

/* result helpers */
void q_hit(q_ctx *c, q_src src, double lat, double conf, const char *rule, const char *kernel);
void q_miss(q_ctx *c, const char *reason);
void q_missf(q_ctx *c, const char *fmt, ...) OPDB_PRINTF(2, 3);
/* an error result: code (bad_mapping, bad_csv, bad_cell, ...) and a message */
void q_error(q_ctx *c, const char *code, const char *fmt, ...) OPDB_PRINTF(3, 4);
void q_add_sub(q_ctx *c, const char *kernel, double us);
char *q_strdup(q_ctx *c, const char *s);
char *q_sprintf(q_ctx *c, const char *fmt, ...) OPDB_PRINTF(2, 3);
void q_set_kernels(q_ctx *c, const char *const *k, size_t n);
/* explain: one attempt of a lookup, in the order tried (listed under miss.attempts on a MISS):
 * {"kernel": name, "status": status}. Only with explain on. */
void q_attempt(q_ctx *c, const char *name, const char *status);
/* starts an attempt object of another form: the buffer after its opening `{`; the caller writes
 * the members and the closing `}` */
opdb_strbuf *q_attempt_open(q_ctx *c);

/* -------------------------------------------------------- mapping entries */
/* The fields of operator_mappings[name] a path reads; NULL = absent/null. */
typedef struct q_entry {
    const char *name;
    const qv *v;                 /* the whole entry */
    const q_plan *p;             /* its plan (NULL: every field read from v) */
} q_entry;

/* The kernel list [kernel_type] + alternates (dedup), or -1 with a bad_mapping error set. */
int q_entry_kernels(q_ctx *c, const q_entry *e, bool with_alternates, const char ***k, size_t *n);

/* ------------------------------------------------------ shared machinery */
q_tins q_tensor_inputs(q_ctx *c, const qv *args);
q_shape q_strip(q_shape s);
q_shape q_nz(q_ctx *c, q_shape s);
/* a * b, saturated at the int64 range instead of overflowing (a query may name absurd dims) */
static inline int64_t q_mul_sat(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}
/* the element count of s, saturated (a zero dim still makes it 0) */
int64_t q_numel(q_shape s);
bool q_shape_eq(q_shape a, q_shape b);
bool q_padded(int64_t t, int64_t c);
bool q_padmatch(q_shape a, q_shape b);
/* Python slice [:n] of a count (negative n drops from the end) */
size_t q_slice_n(size_t len, int64_t n);

/* A row scan over a kernel list (the reference's candidate selection).
 * The checker returns 1 with a candidate, 0 to reject, -1 on a cell fault
 * (the scan's error is already set in quirks mode, the row skipped otherwise). */
typedef struct q_cand {
    double lat, conf, dist;
    const char *rule;
    const char **input_rules;
    size_t n_rules;
} q_cand;
typedef int (*q_checker)(q_ctx *c, void *arg, q_ktable *t, size_t kidx, size_t row, q_cand *out);
typedef struct q_scan {
    bool found;
    size_t kidx, row;
    q_ktable *tab;
    const char *kernel;          /* found: the kernel of tab (read from the exact-hit map without fetching tab) */
    q_cand best;
    size_t ties;
    const char *reason;          /* "", csv_not_found, ambiguous_semantic_match:<kt> */
    bool failed;                 /* an error result was set (bad_csv, bad_cell, bad_mapping) */
} q_scan;
typedef enum q_scan_mode { QSCAN_FIRST, QSCAN_NEAREST } q_scan_mode;
/* Optional row subsets: for kernel k, the rows to visit in file order (set
 * *usable, *n), so a scan skips rows that cannot match. */
typedef struct q_rowsel {
    const uint32_t *(*rows)(q_ctx *c, void *arg, q_ktable *t, size_t *n, bool *usable);
    /* Optional: the checker's key, every input of its verdict besides the
     * handle's fixed state, written into buf (0 when it does not fit). With
     * it, a scan without explain is answered from the exact-hit map. tag
     * tells the checkers apart. */
    size_t (*key)(void *arg, uint8_t *buf, size_t cap);
    char tag;
    /* Optional: a filter on the rows subset rows gives, passing every row
     * the checker can accept at distance 0: the row's hash in *fh (by row
     * number) is one of the nq in qh (at most 2; none: no row passes); false
     * when t has none. A nearest scan outside the reference mode first weighs
     * the rows that pass, and keeps their best when it is at distance 0.
     * *sh, when not NULL, holds the same hashes in the order of the subset
     * sub that rows gave (sh[i] is row sub[i]'s). */
    bool (*exact_keys)(q_ctx *c, void *arg, q_ktable *t, const uint32_t *sub, const uint32_t **fh,
                       const uint32_t **sh, uint32_t *qh, size_t *nq);
} q_rowsel;
/* q_scan_run with a row subset provider (NULL = every row) */
void q_scan_run_sel(q_ctx *c, const char *const *k, size_t nk, q_scan_mode mode, q_checker chk, void *arg,
                    const q_rowsel *sel, q_scan *s);
/* the compute index: a superset of the rows of t that can match X (in file
 * order; normalise as q_match_row takes it); *usable false when the table
 * cannot be indexed (scan every row) */
const uint32_t *q_index_rows(q_ctx *c, q_ktable *t, const q_tins *X, int64_t N, bool has_n, bool normalise, size_t *n,
                             bool *usable);
void q_index_free(void *p);
/* the exact-key filter of the compute index (q_rowsel.exact_keys): a row
 * that can match X without padding or flattening has X's exact key (each
 * slot's dtype class and dims without 1s, sorted), so its hash; false when t
 * has none (flattening kernels, not indexable) */
bool q_index_exact_keys(q_ctx *c, q_ktable *t, const q_tins *X, int64_t N, bool has_n, bool normalise,
                        const uint32_t *sub, const uint32_t **fh, const uint32_t **sh, uint32_t *qh, size_t *nq);
/* the elementwise index: a superset of the rows of t whose first output
 * shape can match y (stripped), in file order; *usable as above */
const uint32_t *q_index_out_rows(q_ctx *c, q_ktable *t, q_shape y, size_t *n, bool *usable);
/* the same for the elementwise index: a first output shape that can match y
 * without padding has the exact key of y or of y's 3-D flattening */
bool q_index_out_exact_keys(q_ctx *c, q_ktable *t, q_shape y, const uint32_t *sub, const uint32_t **fh,
                            const uint32_t **sh, uint32_t *qh, size_t *nq);
void q_scan_run(q_ctx *c, const char *const *k, size_t nk, q_scan_mode mode, q_checker chk, void *arg, q_scan *s);
/* A row's cell fault: quirks mode sets error bad_cell and returns -1 (stop);
 * default mode counts/warns and returns 0 (skip the row). */
int q_cell_fault(q_ctx *c, q_ktable *t, size_t row, const char *col, const char *what);
/* ensures the table's per-row input data is parsed; false when the table is not usable */
bool q_table_rows(q_ktable *t);
/* records the best row of a scan in explain */
void q_explain_scan(q_ctx *c, const q_scan *s);

/* The compute row matcher. has_n: truncate the row's lists to [:N]. */
typedef struct q_match {
    const char *rule;
    const char *input_rules[16];
    size_t n;
    bool padded_any;             /* some input fired a padding test (default-mode distance) */
} q_match;
/* 1 match, 0 reject, -1 cell fault already handled (stop or skip as q_cell_fault said) */
int q_match_row(q_ctx *c, const q_tins *X, q_ktable *t, size_t row, int64_t N, bool has_n, bool normalise, q_match *m);
/* find_compute (used by composites, decomposers, moe_fused): a nearest scan
 * with miss diagnosis; returns true on a hit. */
bool q_find_compute(q_ctx *c, const char *const *k, size_t nk, const q_tins *X, int64_t N, bool has_n, bool autoN,
                    q_scan *s, const char **reason);

/* attention target (op level, decomposer sub-kernels, kernel level) */
typedef struct q_attn_target {
    int64_t q3[3];
    int64_t avg;
    const char *prof;            /* the query's profiler dtype */
    bool has_sparse, has_kv;
    int64_t sparse, kv;
    const char *layout;          /* NULL = not checked */
    const struct q_attn_rt *rt;  /* runtime-vector fields (attn_runtime.h); NULL = none */
} q_attn_target;
bool q_norm3(q_shape s, int64_t hd, int64_t out[3]);
/* int(seq_lens.float().mean()): false without values, for none, or non-finite */
bool q_avgseq(const qv *t, int64_t *out);
/* the attention scan over K; false on a miss with *reason (s->failed: error set) */
bool q_attention_scan(q_ctx *c, const char *const *K, size_t nk, const q_attn_target *tg, q_scan *s,
                      const char **reason);
/* the elementwise scan over K for output shape y (stripped) and dtype p */
void q_elementwise_scan(q_ctx *c, const char *const *K, size_t nk, q_shape y, const char *p);
/* the compute entry's kernel list and inputs (0; 1 when answered: miss or error set) */
int q_compute_target(q_ctx *c, const q_entry *e, const char ***K, size_t *nk, q_tins *X, int64_t *N, bool *has_n,
                     bool project);
bool q_is_matmul(const char *kt);

/* --------------------------------------------------------- lookup paths */
/* Each fills c->r. Paths not implemented yet answer a MISS with
 * `unsupported:<path>`, never a wrong answer. */
void q_path_compute(q_ctx *c, const q_entry *e);
void q_path_mtp_projection(q_ctx *c, const q_entry *e);
void q_path_elementwise(q_ctx *c, const q_entry *e);
void q_path_attention(q_ctx *c, const q_entry *e);
void q_path_comm(q_ctx *c, const q_entry *e);                 /* comm.c */
void q_path_composite(q_ctx *c, const q_entry *e);            /* composite.c: static sub_kernels */
/* decompose.c: true when name is in the decomposer registry */
bool q_is_decomposer(const char *name);
void q_path_decomposed(q_ctx *c, const q_entry *e);           /* decompose.c */
void q_path_moe_fused(q_ctx *c, const q_entry *e);            /* moe.c */
/* interpolate.c: the wrapper, called when the exact answer (already in c->r)
 * is a MISS or PARTIAL and interpolation is on. It may replace c->r. */
void q_interpolate(q_ctx *c, const q_entry *e);
/* interpolate.c: the same for a kernel-level query (c->q->kq): its kernel
 * list, given inputs and outputs, and how it was matched */
typedef enum q_kmatch { QK_SHAPE, QK_ELEMENTWISE, QK_ATTENTION } q_kmatch;
void q_interpolate_kernel(q_ctx *c, const char *const *K, size_t nk, const q_tins *in, const q_tins *out,
                          q_kmatch how);
/* kernel-level comm query (comm.c) */
void q_kernel_comm(q_ctx *c, const char *kernel, const qv *comm);

/* op-level dispatch (dispatch.c) and kernel level (kernel.c) */
void q_dispatch(q_ctx *c);
void q_kernel_query(q_ctx *c);

/* ------------------------------------- compact map entries (map_compact.c) */
/* Pointers that live as long as the handle (tables, kernel names, rule texts)
 * by 16-bit id, 0 being NULL: ids are given under the map's lock; readers take
 * none (an id is written before the entry that holds it is published). */
#define Q_PTRS_BLOCK 256
#define Q_PTRS_BLOCKS 256
typedef struct q_ptrs {
    const void **blk[Q_PTRS_BLOCKS];
    size_t n;                    /* ids given: 1..n */
    uint16_t *ix;                /* pointer -> id, open addressing (writers only) */
    size_t ixcap;
} q_ptrs;
/* p's id, given now when p has none; false when the ids are spent */
bool q_ptrs_id(q_ptrs *t, const void *p, uint16_t *id);
static inline const void *q_ptrs_get(const q_ptrs *t, uint16_t id) {
    return id ? t->blk[id / Q_PTRS_BLOCK][id % Q_PTRS_BLOCK] : NULL;
}
void q_ptrs_free(q_ptrs *t);
/* entries as unaligned byte blocks cut from chunks of an arena */
#define Q_BUMP_CHUNK ((size_t)1 << 16)
typedef struct q_bump_region {
    uint8_t *cur;
    size_t left;
} q_bump_region;
uint8_t *q_bump(q_bump_region *r, opdb_arena *a, size_t n);
/* A count the threads of a batch add to often (a map's answers): a cache line
 * per stripe, a thread's stripe picked by an address of its own (its query
 * arena), so that two threads seldom write one line. */
enum { Q_STRIPES = 8, Q_LINE = 64 };
typedef struct q_stripes {
    struct {
        _Atomic size_t v;
        char pad[Q_LINE - sizeof(size_t)];
    } s[Q_STRIPES];
} q_stripes;
static inline void q_stripes_add(q_stripes *c, const void *own) {
    size_t k = (size_t)(((uint64_t)(uintptr_t)own * 0x9e3779b97f4a7c15ULL) >> 61) & (Q_STRIPES - 1);
    atomic_fetch_add_explicit(&c->s[k].v, 1, memory_order_relaxed);
}
static inline size_t q_stripes_sum(const q_stripes *c) {
    size_t n = 0;
    for (size_t k = 0; k < Q_STRIPES; k++) n += atomic_load_explicit(&((q_stripes *)c)->s[k].v, memory_order_relaxed);
    return n;
}
/* A map slot: an entry's address with 16 bits of its probe hash above it
 * (user addresses leave the top 16 bits of 64 clear), so that a probe reads
 * no entry whose tag differs: a first-seen key probed at half load met an
 * entry of another key about once per probe, each a cache miss. 0: empty. */
typedef uintptr_t q_tslot;
#if UINTPTR_MAX == UINT64_MAX
#define Q_TSLOT_SHIFT 48
static inline uintptr_t q_tslot_tag(uint64_t h) { return (uintptr_t)(h >> Q_TSLOT_SHIFT) << Q_TSLOT_SHIFT; }
#else
#define Q_TSLOT_SHIFT 0
static inline uintptr_t q_tslot_tag(uint64_t h) { return (void)h, 0; } /* no room: every entry is read */
#endif
/* the slot of e for hash h; 0 when e's address uses the tag's bits (the entry is not kept) */
static inline q_tslot q_tslot_make(const void *e, uint64_t h) {
    uintptr_t a = (uintptr_t)e;
    if (Q_TSLOT_SHIFT && a >> (Q_TSLOT_SHIFT & 63)) return 0;
    return a | q_tslot_tag(h);
}
static inline bool q_tslot_tag_is(q_tslot v, uint64_t h) {
    return !Q_TSLOT_SHIFT || (v & ~(((uintptr_t)1 << (Q_TSLOT_SHIFT & 63)) - 1)) == q_tslot_tag(h);
}
static inline const uint8_t *q_tslot_entry(q_tslot v) {
    return (const uint8_t *)(Q_TSLOT_SHIFT ? v & (((uintptr_t)1 << (Q_TSLOT_SHIFT & 63)) - 1) : v);
}
/* a double as 2 bits (0: +0.0, 1: 1.0, 2: its 8 bytes follow) */
unsigned q_dbl_code(double v);
uint8_t *q_dbl_put(uint8_t *p, unsigned code, double v);
const uint8_t *q_dbl_get(const uint8_t *p, unsigned code, double *v);
/* The doorkeeper: fingerprints of keys seen once, one per slot, a newer
 * fingerprint taking the slot of an older one. */
typedef struct q_door {
    _Atomic uint32_t *fp;
    size_t mask;
} q_door;
void q_door_init(q_door *d, size_t slots);
void q_door_free(q_door *d);
/* true when the key of hash h was noted before (its second sight); else notes it */
bool q_door_pass(q_door *d, uint64_t h);
/* A map with a doorkeeper admits every key until it is half full, then a key
 * only on its second sight, so that what it holds later is what repeats; the
 * doorkeeper has this many slots per entry of the map. 0: none (every key is
 * taken until the map is full), the default: on the generated 1M-line trace
 * the doorkeeper only paid for maps too small for the keys that repeat (16k
 * and 32k entries), and cost answers at the default sizes. */
#define Q_DOOR_PER_ENTRY 0

/* --------------------------------------------------------- exact-hit map */
/* Scan outcomes by scan key (hitmap.c), at most `entries` of them (NULL when 0). */
typedef struct q_hitmap q_hitmap;
#define Q_HITMAP_ENTRIES ((size_t)1 << 17)
/* the map's byte budget per entry it may hold: entries with their keys take at most
 * entries * Q_HITMAP_ENTRY_BYTES (a typical one takes about 60) */
#define Q_HITMAP_ENTRY_BYTES ((size_t)384)
q_hitmap *q_hitmap_new(size_t entries);
/* the same with door_slots doorkeeper slots (0: every key is taken until the map is full) */
q_hitmap *q_hitmap_new_door(size_t entries, size_t door_slots);
void q_hitmap_free(q_hitmap *m);
/* the stored outcome of key (hash h) into s, its reason copied into c's arena; false when absent */
bool q_hitmap_get(const q_hitmap *m, const uint8_t *key, size_t n, uint64_t h, q_ctx *c, q_scan *s);
/* stores s (a scan that did not fail) under key; a full map takes nothing */
void q_hitmap_put(q_hitmap *m, const uint8_t *key, size_t n, uint64_t h, const q_scan *s);
/* starts fetching the slot a probe from h begins at; then (once that slot has
 * likely arrived) the entry it holds */
void q_hitmap_prefetch(const q_hitmap *m, uint64_t h);
void q_hitmap_prefetch_entry(const q_hitmap *m, uint64_t h);
/* faults in the slot array for writing (opdb_touch_pages): its pages, probed before they are
 * written, would otherwise take two faults each and a TLB flush across the threads */
void q_hitmap_touch(q_hitmap *m);
/* scans answered from the map so far */
size_t q_hitmap_hits(const q_hitmap *m);
/* tests: every hash cut to mask's bits, so that keys collide */
void q_hitmap_test_hash_mask(q_hitmap *m, uint64_t mask);
/* A key being written: bytes, counts and integers as varints (each
 * self-delimiting, so distinct values stay distinct keys); over when it did
 * not fit. */
typedef struct q_kbuf {
    uint8_t *p;
    size_t n, cap;
    bool over;
} q_kbuf;
static inline void q_kput(q_kbuf *k, const void *p, size_t n) {
    if (k->over || k->cap - k->n < n) {
        k->over = true;
        return;
    }
    memcpy(k->p + k->n, p, n);
    k->n += n;
}
/* v as a varint (7 bits a byte, low first; each self-delimiting) into o, which has room for 10: its length */
static inline size_t q_varint_put(uint8_t *o, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        o[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    o[n++] = (uint8_t)v;
    return n;
}
static inline void q_kput_var(q_kbuf *k, uint64_t v) {
    if (!k->over && k->cap - k->n >= 10) { /* room for the longest: written in place */
        k->n += q_varint_put(k->p + k->n, v);
        return;
    }
    uint8_t b[10];
    q_kput(k, b, q_varint_put(b, v));
}
/* zigzagged: small negatives stay short */
static inline void q_kput_svar(q_kbuf *k, int64_t v) { q_kput_var(k, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }
/* checker keys: tensor inputs as the compute matcher reads them, an output as the elementwise one does */
size_t q_key_tins(const q_tins *X, int64_t N, bool has_n, bool normalise, uint8_t *buf, size_t cap);
size_t q_key_out(q_shape y, const char *prof, uint8_t *buf, size_t cap);

/* ------------------------------------------------ interpolation outcome map */
/* The wrapper's compute outcomes by target (interp_omap.c), at most `entries` of them (NULL when 0). */
typedef struct ip_omap ip_omap;
#define IP_OMAP_ENTRIES ((size_t)1 << 16)
ip_omap *ip_omap_new(size_t entries);
/* the same with door_slots doorkeeper slots (0: every key is taken until the map is full) */
ip_omap *ip_omap_new_door(size_t entries, size_t door_slots);
void ip_omap_free(ip_omap *m);
/* targets answered from the map so far */
size_t ip_omap_hits(const ip_omap *m);
/* tests: every hash cut to mask's bits, so that keys collide */
void ip_omap_test_hash_mask(ip_omap *m, uint64_t mask);
/* the slot where a query whose line hashes to h starts its probes, and the entry in it */
void ip_omap_prefetch(const ip_omap *m, uint64_t h);
void ip_omap_prefetch_entry(const ip_omap *m, uint64_t h);
void ip_omap_touch(ip_omap *m); /* as q_hitmap_touch */

/* ------------------------------------------------------------ result cache */
typedef struct q_cache q_cache;
/* the cache's byte budget per entry it may hold: keys and answers take at most
 * entries * Q_CACHE_ENTRY_BYTES (a typical answer with its key takes about 160) */
#define Q_CACHE_ENTRY_BYTES ((size_t)256)
/* a cache of at most `entries` answers (NULL when 0) */
q_cache *q_cache_new(size_t entries);
void q_cache_free(q_cache *c);
/* the canonical key of q (its values without the id) into buf; 0 when it does not fit */
size_t q_cache_key(const q_query *q, uint8_t *buf, size_t cap);
/* the cached answer of key, copied into out with its strings in a; false when absent */
bool q_cache_get(q_cache *c, const uint8_t *key, size_t n, opdb_arena *a, q_result *out);
/* files r's answer under key (no explain data); a full cache takes nothing */
void q_cache_put(q_cache *c, const uint8_t *key, size_t n, const q_result *r);

/* ---------------------------------------------------------------- parsing */
/* Parses one JSON query line into values under arena a: 0, or -1 with
 * *code ("bad_json" / "bad_query") and a message. */
enum { Q_JSON_AUTO, Q_JSON_YAJL, Q_JSON_FAST };
/* JSON text -> value tree (qline.c); NULL with msg on bad JSON. */
qv *q_parse_json(opdb_arena *a, const char *text, size_t n, int mode, char *msg, size_t cap);
int q_parse_line(opdb_arena *a, const char *line, size_t n, q_query *q, const char **code, char *msg, size_t cap);
/* The same with a reader: Q_JSON_AUTO (the direct form first, as
 * q_parse_line), Q_JSON_YAJL or Q_JSON_FAST (the value tree through that
 * reader only), Q_JSON_DIRECT (the direct form only: 1 when it does not take
 * the line). */
enum { Q_JSON_DIRECT = Q_JSON_FAST + 1 };
int q_parse_line_mode(opdb_arena *a, const char *line, size_t n, int mode, q_query *q, const char **code, char *msg,
                      size_t cap);
/* Loads op_mapping.yaml of dir: 0, 1 (absent), -1 (unreadable; err set). */
int q_mapping_load(opdb_qdb *db, opdb_err *err);
/* Parses a CSV-cell shape list ("24,128;256,128"); -1 on a bad piece. */
int q_parse_shapes(opdb_arena *a, const char *s, size_t n, q_shape **out, uint32_t *nout);

/* ------------------------------------------------------------ rendering */
/* The result line appended to sb, without newline (id_json: id_n bytes). */
void q_render(const q_ctx *c, const char *id_json, size_t id_n, opdb_strbuf *sb);
/* JSON text of a value (ids echo verbatim in json.dumps form) */
void q_render_value(const qv *v, opdb_strbuf *sb);

#endif
