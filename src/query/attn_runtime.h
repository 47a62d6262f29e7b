/* Runtime-vector attention targets (sparse MLA, DSA indexer): besides the
 * q shape and average length, the row must agree on the per-request query
 * and KV lengths, the paged-cache layout and the top-k selection. The
 * target's fields, its Python repr (miss reasons), the per-row checks, and
 * the builders of the vectors from the query's sequence lengths. */
#ifndef OPDB_QUERY_ATTN_RUNTIME_H
#define OPDB_QUERY_ATTN_RUNTIME_H

#include "opdb/json_writer.h"
#include "query/query_internal.h"

typedef struct q_ivec {
    int64_t *v;
    size_t n;
    bool set;                    /* false = None */
} q_ivec;

/* an optional integer (false = None) */
typedef struct q_oint {
    int64_t v;
    bool set;
} q_oint;

typedef struct q_attn_rt {
    q_oint avg;                  /* the target's avg_seq_len (None possible for DSA) */
    int64_t num_heads, batch_size;
    q_oint topk, block_size;
    q_ivec ql, kv, vb;           /* actual_seq_lengths(_kv)_values, block_table_valid_blocks */
    bool sparse_block;           /* sparse_block_size / pattern / valid count are part of it */
    q_oint valid_count;
    bool has_blocks;             /* DSA: active_cache_blocks is part of it */
    q_oint active_blocks;
} q_attn_rt;

/* The column checks need these columns of a kernel table, found once. */
typedef struct q_rt_cols {
    int topk, bs, ql, kv, vb, heads, sbs, valid, cache_layout, kv_mode, pattern;
} q_rt_cols;

/* bits of missing columns, in sorted name order */
enum {
    QRT_M_AVG = 1u << 0,         /* Runtime avg_seq_len */
    QRT_M_BS = 1u << 1,          /* Runtime block_size */
    QRT_M_LAYOUT = 1u << 2,      /* Runtime input_layout */
    QRT_M_KV = 1u << 3,          /* Runtime num_key_value_heads */
    QRT_M_SPARSE = 1u << 4,      /* Runtime sparse_mode */
    QRT_M_TOPK = 1u << 5,        /* Runtime topk */
};
/* "Runtime a,Runtime b" of the missing bits, sorted */
char *q_rt_missing_text(q_ctx *c, unsigned bits);

/* Finds the columns of table t; returns the bit of the first required
 * column absent (the row is rejected), 0 when all are there. */
unsigned q_rt_columns(const db_table *t, q_rt_cols *cols);
/* 1 the row agrees, 0 reject, -1 cell fault (handled as q_cell_fault said) */
int q_rt_check(q_ctx *c, const q_attn_rt *rt, q_ktable *t, size_t row, const q_rt_cols *cols);

/* A list cell: `;` or `,` separated Python integers; false (None) on NA or
 * any piece that is not one. *out in the arena. */
bool q_rt_list_parse(opdb_arena *a, const char *p, size_t n, q_ivec *out);

/* "semantic_context_missing:target:<sorted fields>" when a required field is
 * None, else NULL */
const char *q_rt_target_missing(q_ctx *c, const q_attn_rt *rt);
/* the Python repr of the whole params dict of a runtime target */
void q_rt_repr(opdb_strbuf *sb, const q_attn_target *tg);

/* cumulative even split of n over b (None when n <= 0, b <= 0 or n < b) */
bool q_rt_evensplit(opdb_arena *a, int64_t n, int64_t b, q_ivec *out);
/* rank-zero vectors of a sequence-parallel prefill: of the requests' lengths
 * seq (G tokens in all, spread as ql says when it is consistent, evenly
 * otherwise), the cumulative query lengths and KV lengths of the first Lq
 * tokens. false = None. */
bool q_rt_rankzero(opdb_arena *a, const qv *seq, int64_t G, int64_t Lq, const qv *ql, bool strict, q_ivec *cum,
                   q_ivec *kvl);
/* the integer values of a tensor (None without values) */
bool q_rt_ivals(opdb_arena *a, const qv *t, q_ivec *out);

/* The params of a sparse attention target (wt tokens, wh heads, hd head
 * dim); vec_cum/vec_kv unset = no rank-zero vectors. */
q_attn_rt *q_rt_sparse_params(q_ctx *c, int64_t wt, int64_t wh, const qv *seq, q_oint avg, q_oint topk, q_oint bs,
                              bool sb, const q_ivec *vec_cum, const q_ivec *vec_kv);

#endif
