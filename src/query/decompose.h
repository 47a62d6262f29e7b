/* Decomposed composites: an op (multi-head latent attention, MLAPO) is
 * rebuilt from its arguments as a list of kernel invocations ("specs"),
 * each looked up on its own. The interpolation wrapper decomposes again and
 * interpolates the specs that miss, so the specs and their exact query are
 * shared here. */
#ifndef OPDB_QUERY_DECOMPOSE_H
#define OPDB_QUERY_DECOMPOSE_H

#include "query/query_internal.h"

/* the decomposed ops (decompose_registry.c) */
typedef enum { DK_MLA, DK_MLA_QUANT, DK_SPARSE, DK_SPARSE_QUANT, DK_MLAPO, DK_MLAPO_QUANT, DK_DSA } q_dkind;
int q_decomposer_kind(const char *name); /* q_dkind, or -1: not decomposed */

typedef enum q_spec_mode {
    QSPEC_COMPUTE,
    QSPEC_ATTENTION,
    QSPEC_CACHE_POSTPROCESS,
    QSPEC_SCATTER_CACHE_WRITE, /* Tier 2 */
    QSPEC_MLAPO_PREPROCESS,    /* Tier 2 */
} q_spec_mode;

typedef struct q_spec {
    const char *kernel;
    const char *alt[2];
    size_t nalt;
    q_shape shapes[8];
    size_t nshapes;
    const char *dtype;           /* profiler spelling (DT_BF16, INT8, ...) */
    const char *dtypes[8];       /* per-input dtypes (ndtypes 0: dtype repeated) */
    size_t ndtypes;
    int64_t tc;                  /* tc_input_count */
    bool has_tc;
    q_spec_mode mode;
    bool is_attention;
    /* attention: the target (q3, avg, sparse, kv; no layout in Tier 1) */
    q_attn_target att;
    /* scatter_cache_write: tokens, feature_dim (unset: None) */
    int64_t scatter[2];
    bool scatter_set[2];
    /* cache_postprocess: tokens, kv_proj_dim, kv_lora_rank, rope_dim, block_size */
    int64_t cache[5];
    bool cache_set[5];
    /* mlapo_preprocess (Tier 2): the integer params (num_tokens, hidden_size,
     * local_num_heads, q_lora_rank, kv_lora_rank, qk_nope_head_dim,
     * qk_rope_head_dim, block_size), string params (cache_mode, quant_mode,
     * weight_format) and booleans (enable_inner_out, weight_quantized);
     * unset = null */
    int64_t pre_int[8];
    bool pre_int_set[8];
    const char *pre_str[3];
    int8_t pre_bool[2];          /* -1 null, 0, 1 */
} q_spec;

typedef struct q_specs {
    q_spec *v;
    size_t n, cap;
} q_specs;

/* Decomposes the op of entry e (a registry name) under the run's tp and sp.
 * 0: out holds the specs (none = the decomposer gave nothing); 1: the query
 * is already answered (an error, or an `unsupported:<feature>` MISS). */
int q_decompose(q_ctx *c, const q_entry *e, q_specs *out);

/* One spec's exact answer. */
typedef struct q_spec_hit {
    bool hit, failed;            /* failed: an error result was set */
    double lat;
    const char *kernel;          /* the kernel of the row that answered */
    bool interp;                 /* mlapo_preprocess: between two measured token counts */
    const char *reason;          /* on a miss: the path's reason ("" = none given) */
    q_scan scan;
} q_spec_hit;
void q_spec_query(q_ctx *c, const q_spec *s, q_spec_hit *h);

/* Python repr of a spec's attention params and of its shapes / dtypes (miss reasons) */
char *q_spec_params_repr(q_ctx *c, const q_spec *s);

/* dense MLA and MLAPO (decompose_mla.c): 0 specs added (maybe none), 1 answered */
int q_decompose_mla(q_ctx *c, const q_entry *e, const char *first_kernel, q_specs *out);
int q_decompose_mlapo(q_ctx *c, const q_entry *e, bool quant, q_specs *out);
/* the opaque mla_preprocess spec of mlapo_quant (decompose_mlapre.c): 0 added or
 * nothing (arguments missing), and its query */
int q_spec_mlapo_preprocess(q_ctx *c, const qv *O, q_specs *out);
void q_query_mlapo_preprocess(q_ctx *c, const q_spec *s, q_spec_hit *h);
/* the batch phase from kwargs (phase, else is_decode_values) for the
 * expected number of requests */
typedef enum { PH_NONE, PH_PREFILL, PH_DECODE, PH_MIXED, PH_INVALID } q_phase;
q_phase q_batch_phase(const qv *kwargs, int64_t expected);
/* sparse MLA and the DSA indexer (decompose_sparse.c, decompose_dsa.c) */
int q_decompose_sparse_mla(q_ctx *c, const q_entry *e, const char *first_kernel, q_specs *out);
int q_decompose_dsa(q_ctx *c, const q_entry *e, q_specs *out);
/* appends an attention spec on a runtime-vector target (q shape (wt, wh, hd)) */
struct q_attn_rt;
q_spec *q_spec_add_sparse_attention(q_ctx *c, q_specs *out, const char *kernel, const char *dt, int64_t wt, int64_t wh,
                                     int64_t hd, const struct q_attn_rt *rt);
/* scatter_cache_write (decompose_dsa.c) */
void q_query_scatter_cache_write(q_ctx *c, const q_spec *s, const char *const *K, size_t nk, q_spec_hit *h);
/* appends an empty spec */
q_spec *q_spec_add(q_ctx *c, q_specs *out, const char *kernel, q_spec_mode mode);
/* a shape of the spec from dims (copied into the query's arena) */
q_shape q_spec_shape(q_ctx *c, size_t rank, const int64_t *d);

#endif
