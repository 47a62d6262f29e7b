/*
 * gen_kernel_details.c - deterministic synthetic Ascend kernel_details.csv
 * generator for benchmarking `opdb parse`.
 *
 * Usage: gen_kernel_details [ROWS] OUTPUT_PATH [SEED]
 *   ROWS         data rows to write (default 1000000)
 *   OUTPUT_PATH  file to write, or "-" for stdout
 *   SEED         optional PRNG seed (default fixed); same args -> same bytes
 *
 * The output mimics a torch_npu Level1 kernel_details.csv: the 46 real
 * columns plus a trailing Device_id column (47 in total), CRLF line endings,
 * Start Time written unquoted with a trailing TAB, shape cells written as
 * """a,b;c,d""", Python-repr-like decimals (at most 3 decimals), HCCL rows
 * whose metrics are N/A, and a few thousand distinct (Type, Input Shapes,
 * Output Shapes) groups drawn with a Zipf-like skew.
 *
 * Only integer arithmetic is used, so the output is byte-identical on every
 * platform for the same arguments.
 */
#define GEN_NAME "gen_kernel_details"
#include "gen_common.h"

#define DEFAULT_ROWS 1000000ULL
#define DEFAULT_SEED 0x6f7064622d62656eULL /* "opdb-ben" */
#define TARGET_GROUPS 3200u
#define ROWS_PER_STEP 2500u
#define ROW_MARGIN 8192u /* a row is at most 4 KiB of group strings + numbers */

static const char HEADER[] =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
    "Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,"
    "HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
    "Output Data Types,Output Formats,Context ID,"
    OPDB_METRIC_LIST(GEN_CSV_CELL) "Device_id\r\n";

/* ------------------------------------------------------------ op table */

typedef struct {
    const char *type;
    const char *kname; /* kernel Name column */
    enum core core;
    unsigned weight; /* relative share of rows */
    OP_TEMPLATE_FIELDS; /* '@' in dtypes = the group's main dtype */
} op_def;

/* FIA_IN, FIA_DT, FIA_FMT: see gen_common.h */
/*
 * Variables (per group): B batch, S seq len, T tokens (=B*S), H hidden,
 * N heads, K kv heads, D head dim, Q=N*D, R=K*D, X=Q+2R, I intermediate,
 * P=2I, V vocab shard, E experts, k top-k, G=T*k, C cache blocks,
 * Z block size, L context length, M=ceil(L/Z), A elementwise width,
 * J/O matmul in/out dims, t=ceil(T/16), a=ceil(A/16).
 */
static const op_def OPS[] = {
    {"MatMulV2", "aclnnMatmul_MatMulCommon_MatMulV2", CORE_AIC, 80,
     "T,J;O,J", "@;@", NULL, "T,O", "@", NULL, "TJO"},
    {"MatMulV3", "aclnnMatmul_MatMulV3Common_MatMulV3", CORE_AIC, 60,
     "T,J;J,O", "@;@", NULL, "T,O", "@", NULL, "TJO"},
    {"BatchMatMulV2", "aclnnBatchMatMul_BatchMatMulV2Common_BatchMatMulV2",
     CORE_AIC, 18, "B,S,J;J,O", "@;@", NULL, "B,S,O", "@", NULL, "BSJO"},
    {"QuantBatchMatmulV3",
     "aclnnQuantMatmulV4_QuantBatchMatmulV3_QuantBatchMatmulV3", CORE_AIC, 12,
     "T,J;J,O;O;O", "INT8;INT8;INT64;INT32", NULL, "T,O", "@", NULL, "TJO"},
    {"GroupedMatmul", "aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul",
     CORE_MIX_AIC, 22, "G,H;E,H,P;E", "@;@;INT64", NULL, "G,P", "@", NULL,
     "GHP"},
    {"FusedInferAttentionScore",
     "aclnnFusedInferAttentionScoreV2_FusedInferAttentionScore_"
     "FusedInferAttentionScore",
     CORE_MIX_AIC, 16, FIA_IN, FIA_DT, FIA_FMT, "T,N,D;", "@;FLOAT", "ND;ND",
     "TNDL"},
    {"FlashAttentionScore",
     "aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore",
     CORE_MIX_AIC, 6, "B,S,Q;B,S,R;B,S,R;;;;;2048,2048",
     "@;@;@;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;UINT8",
     "ND;ND;ND;NULL;NULL;NULL;NULL;ND", "B,N,S,8;B,N,S,8;;B,S,Q",
     "FLOAT;FLOAT;DT_UNDEFINED;@", "ND;ND;NULL;ND", "BSSQ"},
    {"FlashAttentionScoreGrad",
     "aclnnFlashAttentionScoreGrad_FlashAttentionScoreGrad_"
     "FlashAttentionScoreGrad",
     CORE_MIX_AIC, 3,
     "B,S,Q;B,S,R;B,S,R;B,S,Q;;;;2048,2048;;B,N,S,8;B,N,S,8;;B,S,Q",
     "@;@;@;@;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;UINT8;DT_UNDEFINED;"
     "FLOAT;FLOAT;DT_UNDEFINED;@",
     "ND;ND;ND;ND;NULL;NULL;NULL;ND;NULL;ND;ND;NULL;ND", "B,S,Q;B,S,R;B,S,R;",
     "@;@;@;DT_UNDEFINED", "ND;ND;ND;NULL", "BSSQ"},
    {"IncreFlashAttention",
     "aclnnIncreFlashAttentionV4_IncreFlashAttention_IncreFlashAttention",
     CORE_MIX_AIC, 5, "B,1,Q;C,Z,R;C,Z,R;;;B;;;;;;B,M",
     "@;@;@;DT_UNDEFINED;DT_UNDEFINED;INT64;DT_UNDEFINED;DT_UNDEFINED;"
     "DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;INT32",
     "ND;ND;ND;NULL;NULL;ND;NULL;NULL;NULL;NULL;NULL;ND", "B,1,Q", "@", NULL,
     "BQL"},
    {"RmsNorm", "aclnnRmsNorm_RmsNorm_RmsNorm", CORE_AIV, 50, "T,H;H", "@;@",
     NULL, "T,H;T,1", "@;FLOAT", NULL, NULL},
    {"AddRmsNorm", "aclnnAddRmsNorm_AddRmsNorm_AddRmsNorm", CORE_AIV, 40,
     "T,H;T,H;H", "@;@;@", NULL, "T,H;T,1;T,H", "@;FLOAT;@", NULL, NULL},
    {"RmsNormGrad", "aclnnRmsNormGrad_RmsNormGrad_RmsNormGrad", CORE_MIX_AIV,
     10, "T,H;T,H;T,1;H", "@;@;FLOAT;@", NULL, "T,H;H", "@;FLOAT", NULL, NULL},
    {"Add", "aclnnAdd_AddAiCore_Add", CORE_AIV, 85, "T,A;T,A", "@;@", NULL,
     "T,A", "@", NULL, NULL},
    {"Mul", "aclnnMul_MulAiCore_Mul", CORE_AIV, 75, "T,A;T,A", "@;@", NULL,
     "T,A", "@", NULL, NULL},
    {"Muls", "aclnnMuls_MulsAiCore_Muls", CORE_AIV, 25, "T,A", "@", NULL, "T,A",
     "@", NULL, NULL},
    {"Sub", "aclnnSub_SubAiCore_Sub", CORE_AIV, 8, "T,A;T,A", "@;@", NULL,
     "T,A", "@", NULL, NULL},
    {"RealDiv", "aclnnDiv_RealDivAiCore_RealDiv", CORE_AIV, 8, "T,A;T,1",
     "@;@", NULL, "T,A", "@", NULL, NULL},
    {"Cast", "aclnnCast_CastAiCore_Cast", CORE_AIV, 75, "T,A", "@", NULL, "T,A",
     "FLOAT", NULL, NULL},
    {"TransData", "trans_TransData_", CORE_AIV, 25, "T,A", "@", "ND",
     "a,t,16,16", "@", "FRACTAL_NZ", NULL},
    {"Transpose", "aclnnPermute_TransposeAiCore_Transpose", CORE_AIV, 25,
     "B,S,N,D;4", "@;INT64", NULL, "B,N,S,D", "@", NULL, NULL},
    {"SwiGlu", "aclnnSwiGlu_SwiGlu_SwiGlu", CORE_AIV, 30, "T,P", "@", NULL,
     "T,I", "@", NULL, NULL},
    {"SwiGluGrad", "aclnnSwiGluGrad_SwiGluGrad_SwiGluGrad", CORE_AIV, 8,
     "T,I;T,P", "@;@", NULL, "T,P", "@", NULL, NULL},
    {"ReshapeAndCache", "aclnnReshapeAndCache_ReshapeAndCache_ReshapeAndCache",
     CORE_AIV, 18, "T,K,D;T,K,D;C,Z,K,D;C,Z,K,D;T", "@;@;@;@;INT32", NULL,
     "C,Z,K,D;C,Z,K,D", "@;@", NULL, NULL},
    {"SoftmaxV2", "aclnnSoftmax_SoftmaxV2AiCore_SoftmaxV2", CORE_AIV, 10,
     "B,N,1,L", "@", NULL, "B,N,1,L", "@", NULL, NULL},
    {"ApplyRotaryPosEmb",
     "aclnnApplyRotaryPosEmb_ApplyRotaryPosEmb_ApplyRotaryPosEmb", CORE_AIV, 30,
     "T,N,D;T,K,D;T,1,D;T,1,D", "@;@;@;@", NULL, "T,N,D;T,K,D", "@;@", NULL,
     NULL},
    {"RotaryMul", "aclnnRotaryPositionEmbedding_RotaryMul_RotaryMul", CORE_AIV,
     8, "B,S,N,D;1,S,1,D;1,S,1,D", "@;@;@", NULL, "B,S,N,D", "@", NULL, NULL},
    {"GatherV2", "aclnnEmbedding_GatherV2AiCore_GatherV2", CORE_AIV, 8, "V,H;T;",
     "@;INT64;INT64", NULL, "T,H", "@", NULL, NULL},
    {"ConcatD", "aclnnCat_ConcatD_ConcatD", CORE_AIV, 12, "T,Q;T,R;T,R",
     "@;@;@", NULL, "T,X", "@", NULL, NULL},
    {"SplitV", "aclnnSplitWithSize_SplitV_SplitV", CORE_AIV, 12, "T,X;3;",
     "@;INT64;INT32", NULL, "T,Q;T,R;T,R", "@;@;@", NULL, NULL},
    {"TensorMove", "aclnnInplaceCopy_TensorMove_TensorMove", CORE_AIV, 30,
     "T,A", "@", NULL, "T,A", "@", NULL, NULL},
    {"ZerosLike", "aclnnInplaceZero_ZerosLike_ZerosLike", CORE_AIV, 16, "T,A",
     "@", NULL, "T,A", "@", NULL, NULL},
    {"Fill", "aclnnInplaceFillScalar_Fill_Fill", CORE_AIV, 8, "2;", "INT64;@",
     NULL, "T,A", "@", NULL, NULL},
    {"ReduceSum", "aclnnReduceSum_ReduceSumOpAiCore_ReduceSum", CORE_MIX_AIV,
     10, "T,A;1", "@;INT64", NULL, "T", "@", NULL, NULL},
    {"ArgMaxV2", "aclnnArgMax_ArgMaxV2_ArgMaxV2", CORE_AIV, 5, "T,V;", "@;INT64",
     NULL, "T", "INT64", NULL, NULL},
    {"TopKV2", "aclnnTopk_TopkV2_TopKV2", CORE_MIX_AIV, 5, "T,V;", "@;INT32",
     NULL, "T,k;T,k", "@;INT32", NULL, NULL},
    {"MoeGatingTopKSoftmax",
     "aclnnMoeGatingTopKSoftmax_MoeGatingTopKSoftmax_MoeGatingTopKSoftmax",
     CORE_AIV, 10, "T,E;", "@;DT_UNDEFINED", "ND;NULL", "T,k;T,k;T,k",
     "@;INT32;INT32", NULL, NULL},
    {"MoeInitRouting", "aclnnMoeInitRouting_MoeInitRouting_MoeInitRouting",
     CORE_AIV, 6, "T,H;T,k;T,k", "@;INT32;INT32", NULL, "G,H;G;G",
     "@;INT32;INT32", NULL, NULL},
    {"MoeFinalizeRouting",
     "aclnnMoeFinalizeRouting_MoeFinalizeRouting_MoeFinalizeRouting", CORE_AIV,
     6, "G,H;T,H;;E,H;T,k;G;T,k", "@;@;DT_UNDEFINED;@;@;INT32;INT32",
     "ND;ND;NULL;ND;ND;ND;ND", "T,H", "@", NULL, NULL},
    {"DynamicQuant", "aclnnDynamicQuant_DynamicQuant_DynamicQuant", CORE_AIV,
     12, "T,H;", "@;DT_UNDEFINED", "ND;NULL", "T,H;T", "INT8;FLOAT", NULL,
     NULL},
    {"LayerNormV3", "aclnnLayerNorm_LayerNormV3_LayerNormV3", CORE_AIV, 6,
     "T,H;H;H", "@;@;@", NULL, "T,H;T,1;T,1", "@;FLOAT;FLOAT", NULL, NULL},
    {"Silu", "aclnnSilu_SiluAiCore_Silu", CORE_AIV, 14, "T,I", "@", NULL, "T,I",
     "@", NULL, NULL},
    {"Gelu", "aclnnGelu_GeluAiCore_Gelu", CORE_AIV, 4, "T,I", "@", NULL, "T,I",
     "@", NULL, NULL},
    {"hcom_allReduce_", "hcom_allReduce__", CORE_HCCL, 14, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL},
    {"hcom_allGather_", "hcom_allGather__", CORE_HCCL, 7, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL},
    {"hcom_reduceScatter_", "hcom_reduceScatter__", CORE_HCCL, 5, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL},
    {"hcom_broadcast_", "hcom_broadcast__", CORE_HCCL, 2, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL},
};
#define NOPS (sizeof(OPS) / sizeof(OPS[0]))

/* ---------------------------------------------------------------- groups */

typedef struct {
    char *pre;  /* ",Name,Type,OP State,Core," (fields 5..8) */
    char *mid;  /* ",BlockDim,...,Context ID"  (fields 12..21) */
    uint32_t pre_len, mid_len;
    uint64_t base_ns;   /* typical duration in ns (= thousandths of us) */
    uint32_t block_dim; /* cores used, for the cycle counts */
    uint16_t ratio[9];  /* base pipe ratios in thousandths */
    uint16_t icache;    /* base icache miss rate in thousandths */
    uint16_t stream;
} group_t;

typedef struct {
    group_t *groups;
    uint32_t ngroups;
    uint64_t *cdf; /* cumulative Zipf weights per group */
    uint32_t hccl_seq;
} op_groups_t;

static op_groups_t g_op[NOPS];

/* simple growable string */
typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

/* room for n more bytes (+ a NUL) at b->p + b->n */
static void sb_reserve(sbuf *b, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->n + n + 1 > cap)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np)
            die("out of memory");
        b->p = np;
        b->cap = cap;
    }
}

/* the bytes put at b->p + b->n up to end (after sb_reserve) */
static void sb_commit(sbuf *b, const char *end)
{
    b->n = (size_t)(end - b->p);
    b->p[b->n] = '\0';
}

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    sb_commit(b, put_lit(b->p + b->n, s, n));
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_putu(sbuf *b, uint64_t v)
{
    sb_reserve(b, 20);
    sb_commit(b, put_u64(b->p + b->n, v));
}

/* the gen_common.h template expanders, appending to an sbuf */

/* returns the total element count of all slots */
static uint64_t sb_shape(sbuf *b, const char *tpl)
{
    uint64_t elems = 0;
    sb_reserve(b, 20 * strlen(tpl)); /* a letter is at most 20 digits */
    sb_commit(b, expand_shape(b->p + b->n, tpl, &elems));
    return elems;
}

static void sb_dtype(sbuf *b, const char *tpl, const char *main_dt)
{
    sb_reserve(b, strlen(tpl) * (1 + strlen(main_dt)));
    sb_commit(b, expand_dtype(b->p + b->n, tpl, main_dt));
}

static void sb_auto_fmt(sbuf *b, const char *shape_tpl)
{
    sb_reserve(b, 3 * strlen(shape_tpl) + 2);
    sb_commit(b, auto_fmt(b->p + b->n, shape_tpl));
}

static void draw_vars(void)
{
    static const uint64_t HID[] = {2048, 3584, 4096, 4096, 5120, 7168, 8192};
    static const uint64_t HEADS[] = {16, 28, 32, 32, 40, 64, 128};
    static const uint64_t KVH[] = {1, 2, 4, 8, 8};
    static const uint64_t INTER[] = {8192, 11008, 13824, 14336, 18944, 28672};
    static const uint64_t VOCAB[] = {32000, 65024, 128256, 151936, 152064};
    static const uint64_t TP[] = {1, 2, 4, 8, 8};
    static const uint64_t EXP[] = {8, 16, 32, 64, 128, 256};
    static const uint64_t TOPK[] = {1, 2, 4, 6, 8};
    static const uint64_t BATCH[] = {1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 256};
    uint64_t *v = g_var;

    uint64_t B = rng_below(3) ? PICK(BATCH) : rng_range(1, 256);
    uint64_t S = rng_below(10) < 4 ? 1 : 16 * rng_range(1, 512);
    if (B * S > 65536)
        B = 65536 / S ? 65536 / S : 1;
    uint64_t tp = PICK(TP);
    uint64_t H = PICK(HID);
    uint64_t N = PICK(HEADS) / tp;
    if (!N)
        N = 1;
    uint64_t K = PICK(KVH);
    if (K > N)
        K = N;
    uint64_t D = rng_below(8) ? 128 : 64;
    uint64_t I = PICK(INTER) / tp;
    uint64_t k = PICK(TOPK);
    uint64_t L = S > 1 ? S : 128 * rng_range(4, 256);

    v['B'] = B;
    v['S'] = S;
    v['T'] = B * S;
    v['H'] = H;
    v['N'] = N;
    v['K'] = K;
    v['D'] = D;
    v['Q'] = N * D;
    v['R'] = K * D;
    v['X'] = N * D + 2 * K * D;
    v['I'] = I;
    v['P'] = 2 * I;
    v['V'] = PICK(VOCAB) / tp;
    v['E'] = PICK(EXP);
    v['k'] = k;
    v['G'] = B * S * k;
    v['C'] = rng_range(256, 20000);
    v['Z'] = 128;
    v['L'] = L;
    v['M'] = div_up(L, 128);

    /* matmul (in, out) pairs seen in transformer layers */
    switch (rng_below(6)) {
    case 0: v['J'] = H; v['O'] = v['X']; break; /* qkv proj */
    case 1: v['J'] = v['Q']; v['O'] = H; break; /* o proj */
    case 2: v['J'] = H; v['O'] = v['P']; break; /* gate_up */
    case 3: v['J'] = I; v['O'] = H; break;      /* down */
    case 4: v['J'] = H; v['O'] = v['V']; break; /* lm head */
    default: v['J'] = H; v['O'] = H; break;
    }
    switch (rng_below(7)) {
    case 0: v['A'] = H; break;
    case 1: v['A'] = v['Q']; break;
    case 2: v['A'] = v['R']; break;
    case 3: v['A'] = I; break;
    case 4: v['A'] = v['X']; break;
    case 5: v['A'] = 1; break;
    default: v['A'] = H; break;
    }
    v['t'] = div_up(v['T'], 16);
    v['a'] = div_up(v['A'], 16);
}

/* ,"""shapes""",dtypes,formats: the three cells of the inputs or the outputs */
static void sb_slot_cells(sbuf *b, const sbuf *shapes, const char *shape_tpl,
                          const char *dt_tpl, const char *fmt, const char *main_dt)
{
    sb_puts(b, ",\"\"\"");
    sb_putn(b, shapes->p, shapes->n);
    sb_puts(b, "\"\"\",");
    sb_dtype(b, dt_tpl, main_dt);
    sb_puts(b, ",");
    if (fmt)
        sb_puts(b, fmt);
    else
        sb_auto_fmt(b, shape_tpl);
}

/* ---- 64-bit hash set for group de-duplication (type + in + out shapes) */
static hset g_seen;

static char *sb_take(sbuf *b, uint32_t *len)
{
    *len = (uint32_t)b->n;
    char *p = b->p;
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}

static unsigned count_slots(const char *s)
{
    unsigned n = 1;
    for (; *s; s++)
        n += *s == ';';
    return n;
}

/* every list column of an op must have the same number of slots */
static void check_templates(void)
{
    for (size_t i = 0; i < NOPS; i++) {
        const op_def *op = &OPS[i];
        if (op->core == CORE_HCCL)
            continue;
        unsigned ni = count_slots(op->in), no = count_slots(op->out);
        if (count_slots(op->in_dt) != ni || (op->in_fmt && count_slots(op->in_fmt) != ni) ||
            count_slots(op->out_dt) != no || (op->out_fmt && count_slots(op->out_fmt) != no)) {
            fprintf(stderr, "gen_kernel_details: slot count mismatch in op %s\n", op->type);
            exit(1);
        }
    }
}

static void build_groups(void)
{
    unsigned wsum = 0;
    check_templates();
    for (size_t i = 0; i < NOPS; i++)
        wsum += OPS[i].weight;
    hset_init(&g_seen, 16384);

    for (size_t oi = 0; oi < NOPS; oi++) {
        const op_def *op = &OPS[oi];
        op_groups_t *og = &g_op[oi];
        uint32_t want = op->core == CORE_HCCL
                            ? 1
                            : (uint32_t)((uint64_t)TARGET_GROUPS * op->weight / wsum);
        if (want < 2)
            want = op->core == CORE_HCCL ? 1 : 2;
        og->groups = xcalloc(want, sizeof(group_t));
        og->cdf = xcalloc(want, sizeof(uint64_t));

        uint32_t tries = 0;
        while (og->ngroups < want && tries < want * 50) {
            tries++;
            group_t *g = &og->groups[og->ngroups];
            sbuf pre = {0}, mid = {0}, ins = {0}, outs = {0};
            draw_vars();

            if (op->core == CORE_HCCL) {
                /* Name is per row for HCCL; pre holds ",Type,N/A,HCCL," */
                sb_puts(&pre, ",");
                sb_puts(&pre, op->type);
                sb_puts(&pre, ",N/A,HCCL,");
                sb_puts(&mid, ",0");
                for (int f = 13; f <= 46; f++)
                    sb_puts(&mid, ",N/A");
                g->pre = sb_take(&pre, &g->pre_len);
                g->mid = sb_take(&mid, &g->mid_len);
                /* log-uniform-ish 20us .. 80ms */
                g->base_ns = 20000ULL << rng_below(12);
                og->ngroups++;
                continue;
            }

            uint64_t elems = sb_shape(&ins, op->in);
            elems += sb_shape(&outs, op->out);
            uint64_t h = fnv1a(op->type, strlen(op->type), FNV1A_INIT);
            h = fnv1a("|", 1, h);
            h = fnv1a(ins.p, ins.n, h);
            h = fnv1a("|", 1, h);
            h = fnv1a(outs.p, outs.n, h);
            if (!hset_insert(&g_seen, h)) {
                free(ins.p);
                free(outs.p);
                continue;
            }

            static const char *const DT[] = {"DT_BF16", "DT_BF16", "DT_BF16",
                                             "FLOAT16", "FLOAT16", "FLOAT"};
            const char *dt = PICK(DT);
            int is_cube = op->core == CORE_AIC || op->core == CORE_MIX_AIC;

            /* name: TransData kernels carry a per-instance index */
            sb_puts(&pre, ",");
            sb_puts(&pre, op->kname);
            if (strcmp(op->type, "TransData") == 0)
                sb_putu(&pre, og->ngroups);
            sb_puts(&pre, ",");
            sb_puts(&pre, op->type);
            sb_puts(&pre, rng_below(10) ? ",dynamic," : ",static,");
            sb_puts(&pre, CORE_NAME[op->core]);
            sb_puts(&pre, ",");

            uint32_t bd;
            if (is_cube) {
                static const uint32_t BD[] = {20, 24, 24, 16, 8, 4};
                bd = PICK(BD);
            } else {
                static const uint32_t BD[] = {48, 48, 40, 32, 16, 8, 1};
                bd = PICK(BD);
            }
            if (elems < 4096 && bd > 8)
                bd = 8;
            g->block_dim = bd;
            sb_puts(&mid, ",");
            sb_putu(&mid, bd);
            sb_puts(&mid, ",");
            sb_putu(&mid, op->core == CORE_MIX_AIC ? bd * 2 : 0);
            sb_puts(&mid, is_cube && strcmp(dt, "FLOAT") == 0 ? ",YES" : ",NO");
            sb_slot_cells(&mid, &ins, op->in, op->in_dt, op->in_fmt, dt);
            sb_slot_cells(&mid, &outs, op->out, op->out_dt, op->out_fmt, dt);
            sb_puts(&mid, op->core == CORE_MIX_AIV ? ",0" : ",N/A");
            free(ins.p);
            free(outs.p);

            /* duration model */
            uint64_t ns = model_ns(op->flops, elems);
            if (ns > 60000000)
                ns = 60000000 + rng_below(1000000);
            g->base_ns = ns;

            for (int r = 0; r < 9; r++)
                g->ratio[r] = (uint16_t)rng_range(30, 960);
            g->icache = (uint16_t)(rng_below(4) ? rng_range(1, 5) : rng_range(6, 90));
            g->stream = (uint16_t)(rng_below(12) ? 2 : 3 + rng_below(4));
            g->pre = sb_take(&pre, &g->pre_len);
            g->mid = sb_take(&mid, &g->mid_len);
            if (g->pre_len + g->mid_len > 4096) /* row buffer margin is 8 KiB */
                die("group strings too long");
            og->ngroups++;
        }
        /* Zipf(s=1) over the groups of this op type */
        uint64_t acc = 0;
        for (uint32_t gi = 0; gi < og->ngroups; gi++) {
            acc += (1ULL << 32) / (gi + 1);
            og->cdf[gi] = acc;
        }
    }
}

static uint32_t cdf_pick(const uint64_t *cdf, uint32_t n)
{
    uint64_t r = rng_next() % cdf[n - 1];
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint32_t m = (lo + hi) / 2;
        if (cdf[m] > r)
            hi = m;
        else
            lo = m + 1;
    }
    return lo;
}

/* ---------------------------------------------------------- formatting */

#define ZERO_AIC ",0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0"
#define ZERO_AIV ",0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0"

static inline uint64_t jitter_ratio(uint16_t base, uint32_t rnd)
{
    int64_t r = (int64_t)base + (int64_t)(rnd % 31) - 15;
    if (r < 1)
        r = 1;
    if (r > 999)
        r = 999;
    return (uint64_t)r;
}

/* first 2 fields of an AIC / AIV block: core time, cycles */
static char *put_core_time(char *p, const group_t *g, uint64_t core_ns)
{
    p = PUT_LIT(p, ",");
    p = put_milli(p, core_ns);
    *p++ = ',';
    return put_u64(p, core_ns * g->block_dim * 9 / 5); /* 1.8 GHz */
}

/* last field of an AIC / AIV block */
static char *put_icache(char *p, const group_t *g, uint64_t rnd)
{
    *p++ = ',';
    return put_milli(p, g->icache + (uint32_t)(rnd >> 40) % 3);
}

/* AIC block: 13 fields */
static char *put_aic(char *p, const group_t *g, uint64_t core_ns, uint64_t *mac_ratio)
{
    uint64_t rnd = rng_next();
    p = put_core_time(p, g, core_ns);
    for (int i = 0; i < 5; i++) {
        uint64_t r = jitter_ratio(g->ratio[i], (uint32_t)(rnd >> (i * 6)));
        if (i == 0)
            *mac_ratio = r;
        *p++ = ',';
        p = put_milli(p, core_ns * r / 1000);
        *p++ = ',';
        p = put_milli(p, r);
    }
    return put_icache(p, g, rnd);
}

/* AIV block: 11 fields */
static char *put_aiv(char *p, const group_t *g, uint64_t core_ns)
{
    uint64_t rnd = rng_next();
    p = put_core_time(p, g, core_ns);
    for (int i = 0; i < 4; i++) {
        uint64_t r = jitter_ratio(g->ratio[5 + i], (uint32_t)(rnd >> (i * 6)));
        *p++ = ',';
        p = put_milli(p, core_ns * r / 1000);
        *p++ = ',';
        p = put_milli(p, r);
    }
    return put_icache(p, g, rnd);
}

/* ------------------------------------------------------------------ main */

static void usage(void)
{
    fprintf(stderr,
            "usage: gen_kernel_details [ROWS] OUTPUT_PATH [SEED]\n"
            "  ROWS defaults to %llu; OUTPUT_PATH '-' writes to stdout\n",
            (unsigned long long)DEFAULT_ROWS);
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t rows = DEFAULT_ROWS, seed = DEFAULT_SEED;
    const char *path = NULL;

    if (argc == 2) {
        if (parse_u64(argv[1], &rows))
            usage(); /* "gen_kernel_details 1000" is missing OUTPUT_PATH */
        rows = DEFAULT_ROWS;
        path = argv[1];
    } else if (argc == 3 || argc == 4) {
        if (!parse_u64(argv[1], &rows))
            usage();
        path = argv[2];
        if (argc == 4 && !parse_u64(argv[3], &seed))
            usage();
    } else {
        usage();
    }

    struct timespec t0 = clock_now();

    g_rng = seed;
    build_groups();

    uint64_t op_cdf[NOPS];
    uint64_t acc = 0;
    for (size_t i = 0; i < NOPS; i++) {
        acc += OPS[i].weight;
        op_cdf[i] = acc;
    }

    outfile o;
    of_open(&o, path, xmalloc(OUT_BUF_SIZE), ROW_MARGIN);
    of_end_row(&o, PUT_LIT(o.buf, HEADER));

    uint64_t start_ns = 1736408883704643212ULL; /* thousandths of us */
    uint32_t task_id = 11051;
    uint32_t hccl_op = 586;
    uint32_t hccl_sub = 0;

    for (uint64_t row = 0; row < rows; row++) {
        char *p = of_row(&o);
        uint32_t oi = cdf_pick(op_cdf, (uint32_t)NOPS);
        const op_def *op = &OPS[oi];
        op_groups_t *og = &g_op[oi];
        const group_t *g = &og->groups[cdf_pick(og->cdf, og->ngroups)];
        uint64_t rnd = rng_next();

        /* duration: +-8% jitter, 1% slow outliers */
        uint64_t dur = g->base_ns * (920 + (rnd & 0xff) % 161) / 1000;
        if (((rnd >> 8) & 0x7f) == 0)
            dur = dur * (1500 + (rnd >> 16) % 1500) / 1000;
        if (op->core == CORE_HCCL)
            dur = g->base_ns * (700 + (rnd >> 16) % 601) / 1000;
        if (dur < 1000)
            dur = 1000 + (rnd >> 20) % 500;
        uint32_t wsel = (uint32_t)(rnd >> 32) % 100;
        uint64_t wait = wsel < 25 ? 0
                        : wsel < 95 ? (rnd >> 40) % 3000
                                    : (rnd >> 40) % 500000;

        p = put_u64(p, 1 + row / ROWS_PER_STEP);
        p = PUT_LIT(p, ",4294967295,");
        if (op->core == CORE_HCCL) {
            p = PUT_LIT(p, "N/A,N/A,");
            p = put_str(p, op->kname);
            p = put_u64(p, hccl_op);
            *p++ = '_';
            p = put_u64(p, hccl_sub);
            p = PUT_LIT(p, "_1");
            if (++hccl_sub == 4) {
                hccl_sub = 0;
                hccl_op++;
            }
        } else {
            p = put_u64(p, task_id);
            task_id = (task_id + 1) & 0xffff;
            *p++ = ',';
            p = put_u64(p, g->stream);
        }
        p = put_lit(p, g->pre, g->pre_len);
        p = put_fixed3(p, start_ns);
        *p++ = '\t';
        *p++ = ',';
        p = put_milli(p, dur);
        *p++ = ',';
        p = put_milli(p, wait);
        p = put_lit(p, g->mid, g->mid_len);

        if (op->core != CORE_HCCL) {
            uint64_t core_ns = dur * (930 + (rnd >> 48) % 66) / 1000;
            uint64_t mac = 0;
            switch (op->core) {
            case CORE_AIC:
                p = put_aic(p, g, core_ns, &mac);
                p = PUT_LIT(p, ZERO_AIV);
                *p++ = ',';
                p = put_milli(p, mac * 97);
                break;
            case CORE_MIX_AIC:
                p = put_aic(p, g, core_ns, &mac);
                p = put_aiv(p, g, core_ns * (600 + (rnd >> 56) % 300) / 1000);
                *p++ = ',';
                p = put_milli(p, mac * 93);
                break;
            default: /* AIV, MIX_AIV */
                p = PUT_LIT(p, ZERO_AIC);
                p = put_aiv(p, g, core_ns);
                p = PUT_LIT(p, ",0");
                break;
            }
        }
        p = PUT_LIT(p, ",0\r\n"); /* Device_id */
        of_end_row(&o, p);
        start_ns += dur + wait + 200 + (rnd >> 52) % 800;
    }
    uint64_t total_bytes = of_close(&o);
    free(o.buf);

    double secs = seconds_since(t0);
    uint32_t ngroups = 0;
    for (size_t i = 0; i < NOPS; i++)
        ngroups += g_op[i].ngroups;
    fprintf(stderr,
            "gen_kernel_details: %" PRIu64 " rows, %" PRIu64 " bytes (%.1f MB, "
            "%.1f bytes/row), %zu op types, %u groups, %.2f s -> %s\n",
            rows, total_bytes, (double)total_bytes / 1e6,
            rows ? (double)total_bytes / (double)rows : 0.0, (size_t)NOPS, ngroups,
            secs, path);
    return 0;
}
