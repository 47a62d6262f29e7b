/* The interpolation wrapper's shared model: candidate points built once per
 * kernel table and path (their axes, latency, latency label and regime key),
 * points grouped by regime key, the regime match, and the interpolation of
 * one point set (1-D linear, 2-D/3-D Delaunay). */
#ifndef OPDB_QUERY_INTERP_INTERNAL_H
#define OPDB_QUERY_INTERP_INTERNAL_H

#include <math.h>
#include <string.h>

#include "query/query_internal.h"

#define IP_MAXAX 5     /* axes of one path (attention has the most: 5) */
#define IP_KEYCAP 2048 /* bytes of one regime key */

/* A regime key: fields `name=value` in builder order, each value in a
 * canonical text form so equal values (3 and 3.0) compare equal as bytes. */
typedef struct ip_kb {
    char s[IP_KEYCAP];
    size_t n;
    bool over;           /* did not fit: the row (or target) is unusable */
    uint8_t nf;          /* fields so far */
    uint16_t fo[32];     /* field start offsets */
    int depth;           /* open tuples in the current field's text */
} ip_kb;

void ip_kb_init(ip_kb *k);
/* one field; the value helpers below append to the current field */
void ip_kb_fieldn(ip_kb *k, const char *name, size_t len);
/* (the names are literals: their lengths are known where they are written) */
#define ip_kb_field(k, name) ip_kb_fieldn((k), (name), strlen(name))
void ip_kb_num(ip_kb *k, double v);
void ip_kb_str(ip_kb *k, const char *s, size_t n);
void ip_kb_open(ip_kb *k);   /* tuple ( */
void ip_kb_close(ip_kb *k);  /* tuple ) */
void ip_kb_shape(ip_kb *k, q_shape s);
/* the string value that stands for Python's None in a key (a text no cell can hold) */
#define IP_KB_NONE "\x01none"
/* the field's value text of name in k (NULL when absent) */
const char *ip_kb_get(const ip_kb *k, const char *name, size_t *n);

/* The points of one set that agree with a target off an axis group, keyed
 * by their values on the other axes (ip_memo.c); built once per set and axis
 * group, on first use. */
typedef struct ip_fmap ip_fmap;
#define IP_MAXAXG 8    /* axis groups a memo slot is kept for */

/* A regime group: the points whose rows have one key. Its key text is not
 * kept: the group's first row gives it again (ip_group_kb), and its hash
 * finds the group. Its points are gpts[off .. next group's off), file order. */
typedef struct ip_group {
    uint32_t hash;       /* of the key text (ip_index.hmask applied) */
    uint32_t off;
    uint32_t n1;         /* of its points, those with the alternate latency label */
} ip_group;

/* A point set whose filter results may be kept: the group's points (lab -1)
 * or one label's (0, 1). */
typedef struct ip_set {
    const struct ip_index *ix;
    size_t group;
    int lab;
} ip_set;

typedef struct ip_fault {
    uint32_t row;
    const char *col, *what;  /* static texts */
} ip_fault;

/* The latency columns of a table in the wrapper's order (without repeats), and its preferred one. */
typedef struct ip_latcols {
    int c[6], n, pref;
} ip_latcols;

struct ip_index;
/* The builder of one path: for each row r in [ix->r0, ix->r1), ip_add with
 * the row's key, axes and latency, or ip_add_fault. It is run again on one
 * row to give a group's key (then ip_add keeps the key, and faults and
 * ix->flags are ignored), so it must not keep anything else in ix: scratch
 * memory goes in ix->arena. */
typedef void (*ip_build_fn)(struct ip_index *ix, const void *params);

/* The group keys of an index as texts, one after another (key g: s + off[g], off[g + 1] - off[g]). */
typedef struct ip_keys {
    char *s;
    uint32_t *off;
} ip_keys;

/* The candidate points of one kernel table for one path and its parameters.
 * Points are columns: axes (nax per point, the path's axes up to its last
 * that any point has), latency, row (its top bit: the alternate label). */
typedef struct ip_index {
    char *sig;           /* path and parameters it was built for */
    q_ktable *tab;
    double *ax;          /* np x nax */
    double *lat;
    uint32_t *prow;
    size_t np;
    int nax;
    unsigned axfull;     /* bit a: every point has axis a */
    bool latok;          /* every point's latency is finite and positive */
    ip_group *g;         /* ng groups, then one whose off is np */
    size_t ng;
    uint32_t *gpts;      /* the groups' point lists, one after another */
    uint32_t *lpts;      /* a group with both labels: its preferred points, then its alternate ones, at its off
                            (NULL when no group has both) */
    void *slot;          /* group hash -> group index + 1 (0: empty), linear probing; 16 or 32 bits */
    bool slot16;
    size_t smask;
    uint64_t hmask;      /* the bits of a key hash kept (all but in tests) */
    ip_fault *faults;
    size_t nfaults, capf;
    _Atomic bool reported; /* default mode: faults counted and warned once */
    struct ip_index *next;
    int ncols;           /* 0: no point list built (the path said so), e.g. a missing column */
    void *extra;         /* a builder's own fact about the table (attention: has avg column ...) */
    int flags;
    pthread_mutex_t memo_mu; /* builds of the groups' filter maps; the kept group matches; the key texts */
    struct ip_gmemo *gmemo;  /* target key -> the groups it matches (ip_groups_matching) */
    _Atomic(struct ip_fmaps *_Atomic *) fmaps; /* per group, filter maps per point set and axis group */
    _Atomic(ip_keys *) keys; /* the key texts, made for the paths that match a target against every group */
    const char *names;       /* the field names every group's key has, in order (NULL: they differ) */
    size_t namesn;
    ip_latcols latcols;      /* the table's, for the builder */
    /* the builder and its parameters (a group's key is made again with them) */
    ip_build_fn fn;
    uint64_t params[4];
    size_t r0, r1;           /* rows the builder runs over */
    opdb_arena arena;        /* the builder's scratch (freed after the build) */
    struct ip_build *b;      /* while building (NULL after); a key's rebuild: where ip_add puts the key */
} ip_index;

static inline double ip_ax(const ip_index *ix, uint32_t p, int a) {
    return a < ix->nax ? ix->ax[(size_t)p * (size_t)ix->nax + (size_t)a] : NAN;
}
static inline double ip_lat(const ip_index *ix, uint32_t p) { return ix->lat[p]; }
static inline uint32_t ip_prow(const ip_index *ix, uint32_t p) { return ix->prow[p] & 0x7fffffffu; }
static inline int ip_palt(const ip_index *ix, uint32_t p) { return (int)(ix->prow[p] >> 31); }
/* the axes of point p into v (NaN where it has none) */
static inline void ip_point_axes(const ip_index *ix, uint32_t p, double v[IP_MAXAX]) {
    for (int a = 0; a < IP_MAXAX; a++) v[a] = ip_ax(ix, p, a);
}
static inline uint32_t ip_gn(const ip_index *ix, size_t g) { return ix->g[g + 1].off - ix->g[g].off; }
static inline const uint32_t *ip_gpts(const ip_index *ix, size_t g) { return ix->gpts + ix->g[g].off; }
/* the points of group g with label lab (0 preferred, 1 alternate), file order; *n of them */
static inline const uint32_t *ip_glab(const ip_index *ix, size_t g, int lab, uint32_t *n) {
    uint32_t all = ip_gn(ix, g), n1 = ix->g[g].n1;
    *n = lab ? n1 : all - n1;
    if (n1 == 0 || n1 == all) return ip_gpts(ix, g);
    return ix->lpts + ix->g[g].off + (lab ? all - n1 : 0);
}
/* the row that made group g (its first point's) */
static inline uint32_t ip_grow(const ip_index *ix, size_t g) { return ip_prow(ix, ix->gpts[ix->g[g].off]); }
/* the key of group g, made again from its first row */
void ip_group_kb(const ip_index *ix, size_t g, ip_kb *k);
/* the key text of group g: the kept texts' when made, else a copy in a */
const char *ip_group_key(const ip_index *ix, size_t g, opdb_arena *a, size_t *n);
/* every group's key text (made on first use, then kept with the index) */
const ip_keys *ip_group_keys(const ip_index *ix);

/* The index of t for sig (built on first use with fn). NULL when t is not loaded. */
ip_index *ip_index_get(const opdb_qdb *db, q_ktable *t, const char *sig, ip_build_fn fn, const void *params,
                       size_t params_size);
/* adds a point with key k (ignored when the key overflowed) */
void ip_add(ip_index *ix, const ip_kb *k, const double *ax, double lat, bool alt, uint32_t row);
void ip_add_fault(ip_index *ix, uint32_t row, const char *col, const char *what);
/* Applies the index's cell faults to the query: -1 when the query must stop
 * (quirks: error result set); 0 otherwise. */
int ip_faults(q_ctx *c, ip_index *ix);
void ip_index_free_all(void *p);

/* The interpolation latency of a row (the wrapper's column order); false
 * when the row has none. *alt: not from the preferred column. */
bool ip_row_latency(const q_ktable *t, size_t row, double *lat, bool *alt);
/* the same with the table's latency columns found once (ip_latcols_of) */
void ip_latcols_of(const q_ktable *t, ip_latcols *lc);
bool ip_row_latency_at(const q_ktable *t, const ip_latcols *lc, size_t row, double *lat, bool *alt);

/* cell helpers */
/* list(cell) of a column by name; a missing column gives the empty list */
void ip_list(opdb_arena *a, const q_ktable *t, size_t row, int col, opdb_span **items, uint32_t *n);
/* _to_int_cell: false for none */
bool ip_intcell(const db_cell *c, int64_t *out);
/* _optional_str_cell: false for none */
bool ip_strcell(const db_cell *c, char *buf, size_t cap, opdb_span *out);

/* Regime match: every required field in both, every field of G in T with an
 * equal value or allowed extra. */
bool ip_key_match(const ip_kb *T, const char *G, size_t gn, const char *const *required,
                  const char *const *allow_extra);

/* ------------------------------------------------------------ one point set */
typedef bool (*ip_matcher)(double t, double v);

typedef struct ip_task {
    const ip_index *ix;
    const double *t;             /* target axes (NaN: absent) */
    int nax;                     /* axes in use */
    const uint8_t (*groups)[4];  /* axis groups: count then axis indexes */
    size_t ngroups;
    int64_t maxdim;              /* INT64_MAX: no limit */
    ip_matcher match[IP_MAXAX];  /* per axis, NULL = equality */
    int sqrt_axis;               /* -1: none; else that axis is compared as its square root */
    uint32_t skip1;              /* leave-one-out: row + 1 of the point to hide (0: none) */
} ip_task;

#define IP_MAXSTAT 16
typedef struct ip_status {
    const char *s[IP_MAXSTAT];
    size_t n;
} ip_status;

typedef struct ip_out {
    double lat, conf;
    const char *rule;
    /* explain: the merged points used and their weights */
    int dim;
    const uint8_t *axes;
    double coord[4][3], w[4], plat[4];
    uint32_t *rows[4];
    size_t nrows[4];
    int npts;
    /* explain: the point set that answered (its group, NULL kix: none yet; its latency label) */
    const struct ip_index *kix;
    uint32_t kgroup;
    int lab;                     /* 0 preferred, 1 alternate, -1 the whole group */
} ip_out;

/* CandidateGroup.interpolate over the points pts (indexes into ix->p).
 * true on success; statuses appended to st. */
bool ip_interpolate(q_ctx *c, const ip_task *tk, const uint32_t *pts, size_t n, ip_status *st, ip_out *out);
/* the same over a stable point set, whose filter results are kept */
bool ip_interpolate_set(q_ctx *c, const ip_task *tk, const ip_set *set, ip_status *st, ip_out *out);
/* The points of set that pass the filter of axis group gi (axes A, cnt of
 * them) for tk's target, in set order: true with *f, *nf when the kept map
 * answers (every other axis compared by equality, the target has them all);
 * false: filter by scanning (as with the handle's no_index). */
bool ip_memo_filter(const q_ctx *c, const ip_task *tk, const ip_set *set, size_t gi, const uint8_t *A, int cnt,
                    const uint32_t **f, size_t *nf);
void ip_memo_free(ip_index *ix);
/* the reason of a status list (first that is not missing_target_axis), or def */
const char *ip_reason(const ip_status *st, const char *def);

/* griddata over merged points P (n x d, row-major), values V, target t:
 * 0 ok (*y, weights and vertex indexes set), else the status text. */
const char *ip_griddata(const double *P, const double *V, size_t n, int d, const double *t, double *y, double w[4],
                        int vid[4]);

/* Runs the group loop of a path: groups in the given order, each as its
 * preferred then its alternate points (or whole when whole). true on success. */
bool ip_run_groups(q_ctx *c, const ip_task *tk, const uint32_t *gidx, size_t ng, bool whole, ip_status *last,
                   bool *attempted, ip_out *out);

/* explain: a regime key as a JSON object (tuples as lists, numbers as JSON numbers) */
void ip_key_json(const char *key, size_t n, opdb_strbuf *sb);
/* explain: the point set (group g of ix, label lab as in ip_out) failed with statuses st;
 * (attempted) and answered (ip_set_answer, into o) */
void ip_attempt_set(q_ctx *c, const ip_index *ix, size_t g, int lab, const ip_status *st);
void ip_set_answer(ip_out *o, const ip_index *ix, size_t g, int lab);

/* result and explain of a success */
void ip_success(q_ctx *c, const ip_task *tk, const ip_out *o, const char *kernel, const char *const *axis_names);

/* the answer of a success without explain: the hit and its calibrated interval (looked up by
 * kernel, dimension and the points' spread) */
void ip_hit(q_ctx *c, double lat, double conf, const char *rule, const char *kernel, int dim, double spread);
/* the spread of a success's points (what its interval is looked up by) */
double ip_out_spread(const ip_out *o);

/* The outcome map (interp_omap.c): a path's answer for a key that holds everything it reads
 * from the query. A key is built with the helpers below; ip_okey_init is false when the map
 * is not used for this query (off, explain, the plain reference). */
typedef struct ip_okey {
    uint8_t b[1024];
    size_t n;
    bool over;                   /* did not fit: neither looked up nor stored */
    bool hashed;                 /* h is known (the lookup sets it; the store after it reuses it) */
    uint64_t h;                  /* where its probes start */
} ip_okey;
bool ip_okey_init(const q_ctx *c, ip_okey *k, char tag);
void ip_okey_add(ip_okey *k, const void *p, size_t n);
void ip_okey_str(ip_okey *k, const char *s);       /* NULL is a value of its own */
void ip_okey_kernels(ip_okey *k, const char *const *K, size_t nk);
void ip_okey_tins(ip_okey *k, const q_tins *X, int64_t N, bool has_n);
void ip_okey_shape(ip_okey *k, q_shape s);
typedef struct ip_outcome {
    bool hit;
    uint32_t kidx;               /* the kernel list's index of the kernel that answered */
    double lat, conf, spread;
    int dim;
    const char *rule;            /* static text */
    const char *kernel;          /* a hit, when the path named the handle's kernel text (else NULL) */
    const char *reason;          /* a miss: why */
} ip_outcome;
/* the stored outcome of k (its reason copied into c's arena); false when absent. A query's
 * probes start where its line hashes (the slot fetched while the line was read; every key
 * is still compared in full), else at the key's own hash. */
bool ip_omap_get(const q_ctx *c, ip_okey *k, ip_outcome *o);
/* stores o under k (a full map takes nothing) */
void ip_omap_put(const q_ctx *c, ip_okey *k, const ip_outcome *o);
/* the outcome of a success o by kernel kidx */
void ip_outcome_hit(ip_outcome *oc, size_t kidx, const ip_out *o);
/* ip_success and ip_outcome_hit in one, the points' spread found once */
void ip_success_outcome(q_ctx *c, const ip_task *tk, const ip_out *o, const char *kernel,
                        const char *const *axis_names, size_t kidx, ip_outcome *oc);
/* sets c's result as the path did: the hit by kernel, or the miss */
void ip_outcome_replay(q_ctx *c, const ip_outcome *oc, const char *kernel);

/* shared by paths */
bool ip_in_matmul_plus(const char *kt);
int64_t ip_maxdim(q_ctx *c, const char *kt, const char *overlay);
/* The groups of ix whose key matches T (no required or extra fields): their
 * indexes in an arena array *gi; the count. */
size_t ip_groups_matching(q_ctx *c, const ip_index *ix, const ip_kb *T, uint32_t **gi);
/* the kept group matches of ix by key bytes (a caller's key: distinct callers
 * keep keys that cannot meet); get copies the groups into gi (ix->ng of room) */
bool ip_gmemo_get(const ip_index *ix, const char *k, size_t kn, uint32_t *gi, size_t *ng);
void ip_gmemo_put(const ip_index *ix, const char *k, size_t kn, const uint32_t *gi, size_t ng);
/* A task over ix on nax target axes t with its axis groups and maximum
 * dimension: no matchers, no square-root axis. */
void ip_task_init(ip_task *tk, const ip_index *ix, const double *t, int nax, const uint8_t (*groups)[4],
                  size_t ngroups, int64_t maxdim);
/* wrapper paths */
void ip_matmul(q_ctx *c, const q_entry *e, bool quantized);
void ip_generic(q_ctx *c, const q_entry *e);
void ip_scale(q_ctx *c, const q_entry *e);
void ip_elementwise(q_ctx *c, const q_entry *e);
void ip_attention(q_ctx *c, const q_entry *e);
/* an attention target given directly (decomposed specs): query-token,
 * heads, head-dim axes q3, the sequence axis avg, an optional batch, and the
 * regime key's values (quant NULL: not in the key) */
typedef struct ip_attn_tg {
    int64_t q3[3], avg;
    const char *prof, *layout, *quant;
    bool has_batch, has_sparse, has_kv;
    double batch;
    int64_t sparse, kv;
} ip_attn_tg;
/* the kernels of K in order for tg: 1 answered (hit or error set), 0 not (*reason) */
int ip_attention_target(q_ctx *c, const char *const *K, size_t nk, const ip_attn_tg *tg, const char **reason);
/* a decomposed spec's compute kernels K (K[0] its policy kernel) from its
 * shapes X cut to n: 1 answered (hit or error set), 0 not */
int ip_spec_compute(q_ctx *c, const char *const *K, size_t nk, const q_tins *X, int64_t n);
/* kernel-level attention: the target from inputs[0] and the query's attention object */
void ip_kernel_attention(q_ctx *c, const char *const *K, size_t nk, const q_tins *in, const qv *att);
/* decomposed composites: each spec exact first, else interpolated */
void ip_composite(q_ctx *c, const q_entry *e);
void ip_moe(q_ctx *c, const q_entry *e);
void ip_scatter_op(q_ctx *c, const q_entry *e);               /* interp_runtime.c */
/* For the composite wrapper (interp_runtime.c), leaving c->r alone: a
 * scatter_cache_write spec interpolated over K, and a runtime-vector attention
 * target over one kernel (SparseFlashAttention, LightningIndexer[Vllm]) with
 * the spec's dtype. true: *lat (and *kernel); false: *reason, NULL when an
 * error result was set. */
struct q_spec;
bool ip_scatter_spec(q_ctx *c, const char *const *K, size_t nk, const struct q_spec *s, double *lat,
                     const char **kernel, const char **reason);
bool ip_runtime_attention(q_ctx *c, const char *kt, const q_attn_target *tg, const char *dt, double *lat,
                          const char **reason);
/* kernel level, shape match: matmul family or generic compute */
void ip_kernel_shape(q_ctx *c, const char *const *K, size_t nk, const q_tins *in, const q_tins *out);
void ip_kernel_elementwise(q_ctx *c, const char *const *K, size_t nk, const q_tins *in, const q_tins *out);

/* Leave-one-out (interp_loo.c) reads the indexes the kernel-level paths use:
 * the matmul family's for tables cut to n inputs, its matching groups in
 * the order the query tries them, generic compute's (numel: output_numel
 * axis) and elementwise's; and whether kt's generic axis is output_numel. */
ip_index *ip_mm_index(const opdb_qdb *db, q_ktable *t, int64_t n);
/* the quantized matmul points: the output count, dtypes and formats in the key */
ip_index *ip_mmq_index(const opdb_qdb *db, q_ktable *t, int64_t n);
size_t ip_mm_matching(q_ctx *c, const ip_index *ix, const ip_kb *T, bool quantized, uint32_t **gi);
ip_index *ip_gen_index(const opdb_qdb *db, q_ktable *t, int64_t n, bool numel);
bool ip_gen_numel(q_ctx *c, const char *kt);
ip_index *ip_elem_index(const opdb_qdb *db, q_ktable *t);
extern const uint8_t ip_mm_groups[7][4];
/* attention (interp_attn.c): the index of a table (NULL when it has no
 * sequence column), its axes and axis groups; the groups a kernel-level
 * query of group g's own key matches; and point pi asked for on axis groups
 * G with its row hidden (its own axes, its batch when it has one). */
ip_index *ip_attn_index(const opdb_qdb *db, q_ktable *t);
extern const char *const *const ip_attn_axes;
extern const uint8_t ip_attn_groups[14][4];
size_t ip_attn_loo_groups(q_ctx *c, const ip_index *ix, uint32_t g, uint32_t **gi);
bool ip_attn_loo(q_ctx *c, const ip_index *ix, uint32_t pi, const uint32_t *gi, size_t ngi, const uint8_t (*G)[4],
                 size_t ng, ip_status *last, bool *att, ip_out *o);
/* moe_fused (tokens), compute_scale (M, K) and scatter (tokens written) indexes */
ip_index *ip_moe_index(const opdb_qdb *db, q_ktable *t);
ip_index *ip_scale_index(const opdb_qdb *db, q_ktable *t);
ip_index *ip_scatter_index(const opdb_qdb *db, q_ktable *t);
extern const char *const ip_mm_axes[3];

#endif
