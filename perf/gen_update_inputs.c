/*
 * gen_update_inputs.c - deterministic synthetic inputs for benchmarking
 * `opdb update`: a database folder of per-operator CSVs and msprof PROF_*
 * folders whose op_summary files re-measure most of those rows.
 *
 * Usage: gen_update_inputs OUT_DIR [DB_ROWS_PER_OP] [PROF_ROWS] [SEED]
 *   DB_ROWS_PER_OP  rows in every database CSV (default 25000)
 *   PROF_ROWS       op_summary data rows over all PROF folders (default 1000000)
 *   SEED            optional PRNG seed (default fixed); same args -> same bytes
 *
 * Writes
 *   OUT_DIR/db/<Op>.csv     40 CSVs: the 36 replay-catalogue operators plus
 *                           Cast, Mul, TransData and ZerosLike (not in the
 *                           catalogue, so `opdb update` leaves them alone).
 *                           Canonical 62-column layout (DispatchFFNCombine
 *                           has a trailing `EP Size` column = 16), CRLF, shape
 *                           cells as """a,b;c,d""", numbers with 6 decimals,
 *                           ~5% of rows without an Average Duration, every
 *                           row's signature unique within its file.  The
 *                           three MatMul-family CSVs share their shapes.
 *   OUT_DIR/prof/PROF_00000N_<ts>_<id>/mindstudio_profiler_output/
 *       op_summary_<ts>.csv  4 files, PROF_ROWS rows in all, msprof header,
 *                           LF.  Launches of the 36 catalogue operators:
 *                           each profiled shape is launched 1..6 times
 *                           (update keeps the minimum), ~90% of the shapes
 *                           are existing database rows (same shapes, dtypes
 *                           and formats -> updated), ~10% are new (-> added;
 *                           MatMul-family rows are match-only and never
 *                           added).  Plus a few rows per file of
 *                           non-catalogue operators (Cast, Mul, ZerosLike,
 *                           hcom_allReduce_).
 *
 * Prints sizes, counts and the expected update figures to stderr.  Only
 * integer arithmetic is used, so the output is byte-identical on every
 * platform for the same arguments.
 */
#define GEN_NAME "gen_update_inputs"
#include "gen_common.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <sys/types.h>

#define DEFAULT_DB_ROWS 25000ULL
#define DEFAULT_PROF_ROWS 1000000ULL
#define DEFAULT_SEED 0x6f7064622d757064ULL /* "opdb-upd" */
#define NPROF 4u
#define NONCAT_PER_FILE 12u /* non-catalogue op_summary rows per file */
#define MAX_REPEAT 6u       /* launches per profiled shape: 1..MAX_REPEAT */
#define NEW_PERCENT 10u     /* profiled shapes that are not in the database */
#define MISSING_PERMILLE 50u /* database rows without Average Duration */
#define ROW_MARGIN 16384u

/* ------------------------------------------------------------ op table */

typedef struct {
    const char *type;
    enum core core;
    unsigned weight;    /* share of profiled catalogue rows; 0 = not in catalogue */
    int slot0;          /* signature keeps only input slot 0 (+ outputs) */
    OP_TEMPLATE_FIELDS; /* '@' in dtypes = the row's main dtype */
} op_def;

/* FIA_IN, FIA_DT, FIA_FMT: see gen_common.h */
/*
 * Variables (per row): T tokens (unique per row), B batch, H hidden,
 * N heads, K kv heads, D head dim, Q=N*D, R=K*D, X=Q+2R, I intermediate,
 * P=2I, V vocab shard, E experts, k top-k, G=T*k, C cache blocks, Z block
 * size, L context length, M=ceil(L/Z), A elementwise width, W=A+64,
 * J/O matmul in/out dims, Y rope dim, U latent dim, t=ceil(T/16),
 * a=ceil(A/16).
 *
 * The first 36 entries are the replay catalogue, in its order.
 */
static const op_def OPS[] = {
    {"Add", CORE_AIV, 6, 0, "T,A;T,A", "@;@", NULL, "T,A", "@", NULL, NULL},
    {"AddRmsNormBias", CORE_AIV, 3, 0, "T,H;T,H;H;H", "@;@;@;@", NULL,
     "T,H;T,1;T,H", "@;FLOAT;@", NULL, NULL},
    {"ArgMaxV2", CORE_AIV, 1, 0, "T,V", "@", NULL, "T", "INT64", NULL, NULL},
    {"AscendQuantV2", CORE_AIV, 2, 0, "T,H;H;H", "@;@;@", NULL, "T,H", "INT8",
     NULL, NULL},
    {"BatchMatMulV2", CORE_AIC, 3, 0, "B,T,J;B,J,O", "@;@", NULL, "B,T,O", "@",
     NULL, "BTJO"},
    {"DispatchFFNCombine", CORE_MIX_AIC, 2, 0, "T,H;E,H,P;E,I,H;T,k;T,k",
     "@;INT8;INT8;INT32;FLOAT", NULL, "T,H", "@", NULL, "TkHP"},
    {"DynamicQuant", CORE_AIV, 3, 0, "T,H;", "@;DT_UNDEFINED", "ND;NULL", "T,H;T",
     "INT8;FLOAT", NULL, NULL},
    {"FusedInferAttentionScore", CORE_MIX_AIC, 4, 0, FIA_IN, FIA_DT, FIA_FMT,
     "T,N,D;", "@;FLOAT", "ND;ND", "TNDL"},
    {"GatherV2", CORE_AIV, 1, 0, "V,H;T;", "@;INT64;INT64", NULL, "T,H", "@",
     NULL, NULL},
    {"GroupedMatmul", CORE_MIX_AIC, 4, 0, "G,H;E,H,P;E", "@;@;INT64", NULL,
     "G,P", "@", NULL, "GHP"},
    {"GroupedMatmulSwigluQuant", CORE_MIX_AIC, 2, 0, "G,H;E,H,P;E,P;G;E",
     "INT8;INT8;FLOAT;FLOAT;INT64", NULL, "G,I;G", "INT8;FLOAT", NULL, "GHP"},
    {"Index", CORE_AIV, 1, 1, "V,H;T", "@;INT64", NULL, "T,H", "@", NULL, NULL},
    {"InterleaveRope", CORE_AIV, 2, 0, "T,N,1,D;T,1,1,D;T,1,1,D", "@;@;@", NULL,
     "T,N,1,D", "@", NULL, NULL},
    {"KvRmsNormRopeCache", CORE_MIX_AIV, 2, 0,
     "T,1,1,X;D;T,1,1,Y;T,1,1,Y;C,Z,1,D;C,Z,1,Y;T", "@;@;@;@;@;@;INT64", NULL,
     "C,Z,1,D;C,Z,1,Y", "@;@", NULL, NULL},
    {"LightningIndexer", CORE_MIX_AIC, 2, 0, "T,N,D;C,Z,D;T,N;B;B,M",
     "@;@;@;INT32;INT32", NULL, "T,k", "INT32", NULL, "TNDL"},
    {"MaskedFill", CORE_AIV, 1, 0, "T,A;T,A;", "@;BOOL;@", NULL, "T,A", "@", NULL,
     NULL},
    {"MatMulCommon", CORE_AIC, 2, 1, "T,J;J,O", "@;@", NULL, "T,O", "@", NULL,
     "TJO"},
    {"MatMulV2", CORE_AIC, 6, 1, "T,J;O,J", "@;@", NULL, "T,O", "@", NULL, "TJO"},
    {"MatMulV3", CORE_AIC, 5, 1, "T,J;J,O", "@;@", NULL, "T,O", "@", NULL, "TJO"},
    {"MoeTokenPermute", CORE_AIV, 2, 0, "T,H;T,k", "@;INT32", NULL, "G,H;G",
     "@;INT32", NULL, NULL},
    {"MoeTokenUnpermute", CORE_AIV, 2, 0, "G,H;G;T,k", "@;INT32;@", NULL, "T,H",
     "@", NULL, NULL},
    {"PadV3", CORE_AIV, 1, 0, "T,A;4;", "@;INT64;@", NULL, "T,W", "@", NULL, NULL},
    {"QuantBatchMatmulV3", CORE_AIC, 3, 0, "T,J;J,O;O;O", "INT8;INT8;INT64;INT32",
     NULL, "T,O", "@", NULL, "TJO"},
    {"RINGMLAPrefillBF16Kernel", CORE_MIX_AIC, 1, 0,
     "T,N,D;T,N,D;T,N,D;T,N,Y;T,N,Y;B", "@;@;@;@;@;INT32", NULL, "T,N,D;T,N",
     "@;FLOAT", NULL, "TTND"},
    {"ReshapeAndCacheNdKernel", CORE_AIV, 3, 0, "T,K,D;T,K,D;C,Z,K,D;C,Z,K,D;T",
     "@;@;@;@;INT32", NULL, "C,Z,K,D;C,Z,K,D", "@;@", NULL, NULL},
    {"RmsNorm", CORE_AIV, 6, 0, "T,H;H", "@;@", NULL, "T,H;T,1", "@;FLOAT", NULL,
     NULL},
    {"ScatterNdUpdate", CORE_AIV, 1, 0, "C,Z,K,D;T,1;T,K,D", "@;INT64;@", NULL,
     "C,Z,K,D", "@", NULL, NULL},
    {"Slice", CORE_AIV, 2, 1, "T,X;2;2", "@;INT64;INT64", NULL, "T,Q", "@", NULL,
     NULL},
    {"SoftmaxV2", CORE_AIV, 1, 0, "T,N,L", "@", NULL, "T,N,L", "@", NULL, NULL},
    {"Sort", CORE_AIV, 1, 0, "T,V", "@", NULL, "T,V;T,V", "@;INT32", NULL, NULL},
    {"SparseFlashAttention", CORE_MIX_AIC, 1, 0, "T,N,D;C,Z,D;C,Z,D;T,k;B,M;B;B",
     "@;@;@;INT32;INT32;INT32;INT32", NULL, "T,N,D", "@", NULL, "TNDL"},
    {"SwiGlu", CORE_AIV, 3, 0, "T,P", "@", NULL, "T,I", "@", NULL, NULL},
    {"TensorMove", CORE_AIV, 3, 0, "T,A", "@", NULL, "T,A", "@", NULL, NULL},
    {"Transpose", CORE_AIV, 2, 1, "B,T,N,D;4", "@;INT64", NULL, "B,N,T,D", "@",
     NULL, NULL},
    {"TransposeBatchMatMul", CORE_AIC, 1, 0, "T,N,D;N,D,U", "@;@", NULL, "T,N,U",
     "@", NULL, "TNDU"},
    {"split_qkv_rmsnorm_rope_kernel", CORE_AIV, 2, 0, "T,X;Q;R;T,Y;T,Y",
     "@;@;@;@;@", NULL, "T,Q;T,R;T,R", "@;@;@", NULL, NULL},
    /* not in the replay catalogue: database CSVs that update leaves alone */
    {"Cast", CORE_AIV, 0, 0, "T,A", "@", NULL, "T,A", "FLOAT", NULL, NULL},
    {"Mul", CORE_AIV, 0, 0, "T,A;T,A", "@;@", NULL, "T,A", "@", NULL, NULL},
    {"TransData", CORE_AIV, 0, 0, "T,A", "@", "ND", "a,t,16,16", "@",
     "FRACTAL_NZ", NULL},
    {"ZerosLike", CORE_AIV, 0, 0, "T,A", "@", NULL, "T,A", "@", NULL, NULL},
};
#define NOPS (sizeof(OPS) / sizeof(OPS[0]))
#define NCAT 36u

/* non-catalogue rows in the op_summary files: Cast, Mul, ZerosLike, HCCL */
static const unsigned NONCAT_OPS[] = {36, 37, 39, (unsigned)NOPS};

static int is_matmul_family(size_t oi)
{
    const char *t = OPS[oi].type;
    return !strcmp(t, "MatMulV2") || !strcmp(t, "MatMulV3") || !strcmp(t, "MatMulCommon");
}

/* model configurations (H, N, K, D, I, V, E, k, dtype), already TP-sharded */
typedef struct {
    uint32_t H, N, K, D, I, V, E, k;
    const char *dt;
} model_cfg;

static const model_cfg MODELS[] = {
    {4096, 32, 8, 128, 14336, 16032, 8, 2, "DT_BF16"},
    {5120, 40, 8, 128, 13824, 38016, 64, 8, "DT_BF16"},
    {7168, 16, 1, 128, 2304, 16160, 256, 8, "DT_BF16"},
    {2048, 16, 16, 128, 5632, 32000, 16, 4, "FLOAT16"},
    {3584, 28, 4, 128, 18944, 152064, 32, 4, "DT_BF16"},
    {8192, 8, 1, 128, 3584, 16032, 128, 6, "DT_BF16"},
    {4096, 32, 32, 128, 11008, 32000, 8, 2, "FLOAT16"},
    {6144, 48, 8, 128, 16384, 65024, 16, 2, "DT_BF16"},
};
#define NMODELS (sizeof(MODELS) / sizeof(MODELS[0]))

static const char *const METRICS[OPDB_NMETRICS] = {OPDB_METRIC_LIST(GEN_ITEM)};

static const char PROF_HEADER[] =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
    "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,"
    "Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
    "Output Shapes,Output Data Types,Output Formats,Context ID";

/* ------------------------------------------------------------- helpers */

/* dst = the concatenation of the strings up to NULL (dies if too long) */
static void path_cat(char *dst, size_t cap, ...)
{
    va_list ap;
    size_t n = 0;
    va_start(ap, cap);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *)) {
        size_t k = strlen(s);
        if (n + k + 1 > cap)
            die("path too long");
        memcpy(dst + n, s, k);
        n += k;
    }
    va_end(ap);
    dst[n] = '\0';
}

static void mkdir_p(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n + 1 > sizeof buf)
        die("path too long");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "gen_update_inputs: cannot create %s: %s\n", buf,
                    strerror(errno));
            exit(1);
        }
        buf[i] = c;
    }
}

/* ------------------------------------------------------ row variables */

/* Variables of row idx (shape index within its operator) with token count T. */
static const model_cfg *set_vars(uint32_t idx, uint64_t T)
{
    const model_cfg *m = &MODELS[idx % NMODELS];
    uint64_t j = idx / NMODELS;
    uint64_t *v = g_var;
    uint64_t h = mix64(j * 0x9e3779b97f4a7c15ULL + 17);
    v['T'] = T;
    v['B'] = 1 + j % 8;
    v['H'] = m->H;
    v['N'] = m->N;
    v['K'] = m->K;
    v['D'] = m->D;
    v['Q'] = (uint64_t)m->N * m->D;
    v['R'] = (uint64_t)m->K * m->D;
    v['X'] = v['Q'] + 2 * v['R'];
    v['I'] = m->I;
    v['P'] = 2 * (uint64_t)m->I;
    v['V'] = m->V;
    v['E'] = m->E;
    v['k'] = m->k;
    v['G'] = T * m->k;
    v['C'] = 1024 + 256 * (idx % NMODELS);
    v['Z'] = 128;
    v['L'] = 128 * (1 + below(h, 128));
    v['M'] = div_up(v['L'], 128);
    v['Y'] = 64;
    v['U'] = 512;
    switch (j % 5) {
    case 0: v['A'] = m->H; v['J'] = m->H; v['O'] = v['X']; break;  /* qkv proj */
    case 1: v['A'] = v['Q']; v['J'] = v['Q']; v['O'] = m->H; break; /* o proj */
    case 2: v['A'] = v['R']; v['J'] = m->H; v['O'] = v['P']; break; /* gate_up */
    case 3: v['A'] = m->I; v['J'] = m->I; v['O'] = m->H; break;     /* down */
    default: v['A'] = v['X']; v['J'] = m->H; v['O'] = m->V; break;  /* lm head */
    }
    v['W'] = v['A'] + 64;
    v['t'] = div_up(T, 16);
    v['a'] = div_up(v['A'], 16);
    return m;
}

/* The descriptive cells of one row, as plain text (no CSV quoting). */
typedef struct {
    char in[2048], in_dt[1024], in_fmt[512], out[512], out_dt[256], out_fmt[256];
    size_t in_n, in_dt_n, in_fmt_n, out_n, out_dt_n, out_fmt_n;
    uint64_t elems;
    const model_cfg *m;
} row_cells;

static void build_cells(const op_def *op, uint32_t idx, uint64_t T, row_cells *c)
{
    c->m = set_vars(idx, T);
    c->elems = 0;
    c->in_n = (size_t)(expand_shape(c->in, op->in, &c->elems) - c->in);
    c->out_n = (size_t)(expand_shape(c->out, op->out, &c->elems) - c->out);
    c->in_dt_n = (size_t)(expand_dtype(c->in_dt, op->in_dt, c->m->dt) - c->in_dt);
    c->out_dt_n = (size_t)(expand_dtype(c->out_dt, op->out_dt, c->m->dt) - c->out_dt);
    c->in_fmt_n = (size_t)((op->in_fmt ? put_str(c->in_fmt, op->in_fmt) : auto_fmt(c->in_fmt, op->in)) - c->in_fmt);
    c->out_fmt_n = (size_t)((op->out_fmt ? put_str(c->out_fmt, op->out_fmt) : auto_fmt(c->out_fmt, op->out)) - c->out_fmt);
}

/*
 * Token counts of rows 0..n-1 of operator oi, so that every row's signature
 * is unique: the key is the part of the row the signature reads (input slot 0
 * for Slice/Transpose/Index/MatMul, else every input shape), the output
 * shapes and the dtypes.  A colliding row moves to a token count beyond the
 * regular range.  Depends only on the operator's templates, so the MatMul
 * family (same slot 0, outputs and dtypes) gets identical shapes.
 */
static uint32_t *assign_tokens(const op_def *op, uint32_t n, uint32_t *bumped)
{
    uint32_t *T = xmalloc((size_t)n * sizeof *T);
    size_t cap = 1024;
    while (cap < (size_t)n * 2)
        cap *= 2;
    hset s;
    hset_init(&s, cap);
    uint64_t span = n / NMODELS + 1;
    row_cells *c = xmalloc(sizeof *c);
    *bumped = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t = 1 + i / NMODELS;
        for (uint32_t attempt = 0;; attempt++) {
            if (attempt > 64)
                die("cannot make row signatures unique");
            build_cells(op, i, t, c);
            size_t kin = c->in_n;
            if (op->slot0) {
                const char *semi = memchr(c->in, ';', c->in_n);
                if (semi)
                    kin = (size_t)(semi - c->in);
            }
            uint64_t h = fnv1a(c->in, kin, FNV1A_INIT);
            h = fnv1a("|", 1, h);
            h = fnv1a(c->out, c->out_n, h);
            h = fnv1a("|", 1, h);
            h = fnv1a(c->in_dt, c->in_dt_n, h);
            h = fnv1a("|", 1, h);
            h = fnv1a(c->out_dt, c->out_dt_n, h);
            if (hset_insert(&s, h))
                break;
            (*bumped)++;
            t += span + i % 7;
        }
        T[i] = (uint32_t)t;
    }
    free(c);
    free(s.v);
    return T;
}

/* ------------------------------------------------------- row properties */

static uint64_t g_seed;

/* stable per (operator, shape index) hash: same for db and op_summary rows */
static inline uint64_t row_hash(size_t oi, uint32_t idx)
{
    return mix64(g_seed ^ mix64(((uint64_t)oi << 40) ^ idx ^ 0x5bd1e995ULL));
}

typedef struct {
    uint64_t base_ns; /* typical duration, thousandths of us */
    uint32_t block_dim;
    uint16_t ratio[9]; /* pipe ratios in thousandths */
    uint16_t icache;   /* thousandths */
    uint16_t stream;
    int is_static;
} row_props;

static void props_of(size_t oi, uint32_t idx, const row_cells *c, row_props *p)
{
    const op_def *op = &OPS[oi];
    uint64_t h = row_hash(oi, idx);
    uint64_t ns = model_ns(op->flops, c->elems);
    if (ns > 60000000)
        ns = 60000000 + h % 1000000;
    p->base_ns = ns;
    int is_cube = op->core == CORE_AIC || op->core == CORE_MIX_AIC;
    static const uint32_t BD_CUBE[] = {20, 24, 24, 16, 8, 4};
    static const uint32_t BD_VEC[] = {48, 48, 40, 32, 16, 8, 1};
    p->block_dim = is_cube ? BD_CUBE[h % 6] : BD_VEC[h % 7];
    uint64_t r = mix64(h + 1);
    for (int i = 0; i < 9; i++) {
        p->ratio[i] = (uint16_t)(30 + (r & 0x3ff) % 931);
        r = (r >> 7) | (r << 57);
        if (i == 4)
            r = mix64(r);
    }
    p->icache = (uint16_t)((h >> 20) % 4 ? 1 + (h >> 24) % 5 : 6 + (h >> 24) % 85);
    p->stream = (uint16_t)((h >> 32) % 12 ? 2 : 3 + (h >> 36) % 4);
    p->is_static = (h >> 40) % 10 == 0;
}

/* 25 metric values in millionths (cycles: count * 1e6) for a launch whose
 * core time is core_u millionths of us.  jit: 0 = the group's base ratios. */
static void metrics_of(const op_def *op, const row_props *p, uint64_t core_u, uint64_t jit,
                       uint64_t m[OPDB_NMETRICS])
{
    memset(m, 0, OPDB_NMETRICS * sizeof *m);
    int aic = op->core == CORE_AIC || op->core == CORE_MIX_AIC;
    int aiv = op->core != CORE_AIC;
    uint64_t mac = 0;
    if (aic) {
        m[0] = core_u;
        m[1] = core_u * p->block_dim * 9 / 5000 * 1000000; /* 1.8 GHz */
        for (int i = 0; i < 5; i++) {
            int64_t r = (int64_t)p->ratio[i] * 1000 + (jit ? (int64_t)((jit >> (i * 6)) % 31000) - 15000 : 0);
            if (r < 1000)
                r = 1000;
            if (r > 999000)
                r = 999000;
            if (i == 0)
                mac = (uint64_t)r;
            m[2 + 2 * i] = core_u * (uint64_t)r / 1000000;
            m[3 + 2 * i] = (uint64_t)r;
        }
        m[12] = (uint64_t)p->icache * 1000 + (jit >> 40) % 3000;
    }
    if (aiv) {
        uint64_t vu = op->core == CORE_MIX_AIC ? core_u * (600 + (p->base_ns % 300)) / 1000 : core_u;
        m[13] = vu;
        m[14] = vu * p->block_dim * 9 / 5000 * 1000000;
        for (int i = 0; i < 4; i++) {
            int64_t r = (int64_t)p->ratio[5 + i] * 1000 + (jit ? (int64_t)((jit >> (i * 6 + 30)) % 31000) - 15000 : 0);
            if (r < 1000)
                r = 1000;
            if (r > 999000)
                r = 999000;
            m[15 + 2 * i] = vu * (uint64_t)r / 1000000;
            m[16 + 2 * i] = (uint64_t)r;
        }
        m[23] = (uint64_t)p->icache * 1000 + (jit >> 44) % 3000;
    }
    if (aic)
        m[24] = mac * (op->core == CORE_AIC ? 97 : 93) / 1000;
}

/* ------------------------------------------------------------ database */

static char *put_quoted_shape(char *p, const char *s, size_t n)
{
    /* the cell's text is "a,b;c,d" with literal quotes -> """a,b;c,d""" */
    p = PUT_LIT(p, "\"\"\"");
    p = put_lit(p, s, n);
    return PUT_LIT(p, "\"\"\"");
}

/* the six cells Input Shapes .. Output Formats, comma-separated */
static char *put_cells(char *p, const row_cells *c)
{
    p = put_quoted_shape(p, c->in, c->in_n);
    *p++ = ',';
    p = put_lit(p, c->in_dt, c->in_dt_n);
    *p++ = ',';
    p = put_lit(p, c->in_fmt, c->in_fmt_n);
    *p++ = ',';
    p = put_quoted_shape(p, c->out, c->out_n);
    *p++ = ',';
    p = put_lit(p, c->out_dt, c->out_dt_n);
    *p++ = ',';
    return put_lit(p, c->out_fmt, c->out_fmt_n);
}

/* millionths value whose last digit is never 0, so a re-measured (3-decimal)
 * duration always changes the cell */
static inline uint64_t nz6(uint64_t v, uint64_t r) { return v - v % 10 + 1 + r % 9; }

static uint64_t write_db_csv(const char *dir, size_t oi, uint32_t nrows, const uint32_t *T,
                             char *buf, uint64_t *missing)
{
    const op_def *op = &OPS[oi];
    int dfc = strcmp(op->type, "DispatchFFNCombine") == 0;
    char path[4096];
    path_cat(path, sizeof path, dir, "/", op->type, ".csv", (char *)NULL);
    outfile o;
    of_open(&o, path, buf, ROW_MARGIN);

    char *p = o.buf;
    p = PUT_LIT(p, OPDB_BASE_COL_LIST(GEN_CSV_CELL) OPDB_COL_MB_DUR "," OPDB_COL_PROF_AVG_DUR ","
                   OPDB_COL_PROF_MEDIAN_DUR "," OPDB_COL_PROF_STD_DUR);
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        p = PUT_LIT(p, "," OPDB_METRIC_MB_PREFIX);
        p = put_str(p, METRICS[m]);
        p = PUT_LIT(p, "," OPDB_METRIC_PROF_PREFIX);
        p = put_str(p, METRICS[m]);
    }
    if (dfc)
        p = PUT_LIT(p, "," OPDB_COL_EP_SIZE);
    p = PUT_LIT(p, "\r\n");
    of_end_row(&o, p);

    row_cells *c = xmalloc(sizeof *c);
    row_props rp;
    uint64_t mb[OPDB_NMETRICS], pa[OPDB_NMETRICS];
    for (uint32_t i = 0; i < nrows; i++) {
        build_cells(op, i, T[i], c);
        props_of(oi, i, c, &rp);
        uint64_t h = mix64(row_hash(oi, i) ^ 0xdb);
        uint64_t h2 = mix64(h);
        /* durations in millionths of us */
        uint64_t mb_dur = nz6(rp.base_ns * (1000 + h % 120), h >> 8);
        uint64_t pa_dur = nz6(rp.base_ns * (980 + (h >> 16) % 100), h >> 24);
        uint64_t med = nz6(pa_dur - pa_dur / 50 + (h2 % 1000) * pa_dur / 50000, h2 >> 10);
        uint64_t sd = nz6(pa_dur / 100 + (h2 >> 20) % 5000000 / 1000 * (pa_dur / 1000000 + 1), h2 >> 40);
        uint32_t miss = (uint32_t)((h >> 32) % 1000);
        int no_mb = miss < MISSING_PERMILLE;
        int no_prof = miss < MISSING_PERMILLE / 2; /* no valid duration at all */
        if (no_mb)
            (*missing)++;
        metrics_of(op, &rp, mb_dur * 96 / 100, 0, mb);
        metrics_of(op, &rp, pa_dur * 95 / 100, h2 | 1, pa);

        p = of_row(&o);
        p = rp.is_static ? PUT_LIT(p, "static,") : PUT_LIT(p, "dynamic,");
        p = put_str(p, CORE_NAME[op->core]);
        *p++ = ',';
        p = put_cells(p, c);
        *p++ = ',';
        if (!no_mb)
            p = put_fixed6(p, mb_dur);
        if (no_prof) {
            p = PUT_LIT(p, ",,,");
        } else {
            *p++ = ',';
            p = put_fixed6(p, pa_dur);
            *p++ = ',';
            p = put_fixed6(p, med);
            *p++ = ',';
            p = put_fixed6(p, sd);
        }
        for (int m = 0; m < OPDB_NMETRICS; m++) {
            *p++ = ',';
            if (!no_mb)
                p = put_fixed6(p, mb[m]);
            *p++ = ',';
            if (!no_prof)
                p = put_fixed6(p, pa[m]);
        }
        if (dfc)
            p = PUT_LIT(p, ",16");
        p = PUT_LIT(p, "\r\n");
        of_end_row(&o, p);
    }
    free(c);
    return of_close(&o);
}

/* --------------------------------------------------------- op_summary */

typedef struct {
    uint16_t op; /* index into OPS; NOPS = HCCL */
    uint32_t idx;
} launch;

static void shuffle(launch *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(rng_next() % i);
        launch t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* Task Start Time (with msprof's trailing TAB), Task Duration, Task Wait
 * Time; all in thousandths of us */
static char *put_times(char *p, uint64_t start_ns, uint64_t dur, uint64_t wait)
{
    p = put_fixed3(p, start_ns);
    p = PUT_LIT(p, "\t,");
    p = put_fixed3(p, dur);
    *p++ = ',';
    if (!wait) {
        *p++ = '0';
        return p;
    }
    return put_fixed6(p, wait * 1000);
}

static uint64_t write_op_summary(const char *path, unsigned dev, const launch *L, size_t n,
                                 uint32_t *const *T, char *buf, uint64_t start_ns)
{
    outfile o;
    of_open(&o, path, buf, ROW_MARGIN);
    char *p = o.buf;
    p = PUT_LIT(p, PROF_HEADER);
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        *p++ = ',';
        p = put_str(p, METRICS[m]);
    }
    *p++ = '\n';
    of_end_row(&o, p);

    row_cells *c = xmalloc(sizeof *c);
    row_props rp;
    uint64_t mv[OPDB_NMETRICS];
    uint32_t task_id = 0, hccl_op = 311;
    for (size_t r = 0; r < n; r++) {
        uint64_t rnd = rng_next();
        uint64_t wait_sel = (rnd >> 32) % 100;
        uint64_t wait = wait_sel < 30 ? 0 : wait_sel < 95 ? (rnd >> 40) % 3000 : (rnd >> 40) % 400000;
        p = of_row(&o);
        p = put_u64(p, dev);
        p = PUT_LIT(p, ",4294967295,");
        uint64_t dur;
        if (L[r].op >= NOPS) { /* HCCL */
            dur = 20000 + (rnd >> 8) % 2000000;
            p = PUT_LIT(p, "N/A,N/A,hcom_allReduce__");
            p = put_u64(p, hccl_op++);
            p = PUT_LIT(p, "_0_1,hcom_allReduce_,N/A,HCCL,");
            p = put_times(p, start_ns, dur, wait);
            p = PUT_LIT(p, ",0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A");
            for (int m = 0; m < OPDB_NMETRICS; m++)
                p = PUT_LIT(p, ",N/A");
            *p++ = '\n';
            of_end_row(&o, p);
            start_ns += dur + wait + 300;
            continue;
        }
        const op_def *op = &OPS[L[r].op];
        uint32_t idx = L[r].idx;
        build_cells(op, idx, T[L[r].op][idx], c);
        props_of(L[r].op, idx, c, &rp);
        /* duration: -8%..+8% jitter, 1% slow outliers */
        dur = rp.base_ns * (920 + (rnd & 0xff) % 161) / 1000;
        if (((rnd >> 8) & 0x7f) == 0)
            dur = dur * (1500 + (rnd >> 16) % 1500) / 1000;
        if (dur < 1000)
            dur = 1000 + (rnd >> 20) % 500;
        uint64_t core_ns = dur * (930 + (rnd >> 48) % 66) / 1000;
        metrics_of(op, &rp, core_ns * 1000, rnd | 1, mv);

        p = put_u64(p, task_id);
        task_id = (task_id + 1) & 0xffff;
        *p++ = ',';
        p = put_u64(p, rp.stream);
        *p++ = ',';
        p = PUT_LIT(p, "aclnn");
        p = put_str(p, op->type);
        *p++ = '_';
        p = put_str(p, op->type);
        *p++ = ',';
        p = put_str(p, op->type);
        p = rp.is_static ? PUT_LIT(p, ",static,") : PUT_LIT(p, ",dynamic,");
        p = put_str(p, CORE_NAME[op->core]);
        *p++ = ',';
        p = put_times(p, start_ns, dur, wait);
        *p++ = ',';
        p = put_u64(p, rp.block_dim);
        *p++ = ',';
        p = put_u64(p, op->core == CORE_MIX_AIC ? rp.block_dim * 2 : 0);
        p = strcmp(c->m->dt, "FLOAT") == 0 && op->core == CORE_AIC ? PUT_LIT(p, ",YES,") : PUT_LIT(p, ",NO,");
        p = put_cells(p, c);
        p = PUT_LIT(p, ",N/A");
        for (int m = 0; m < OPDB_NMETRICS; m++) {
            *p++ = ',';
            if (m == 1 || m == 14)
                p = put_u64(p, mv[m] / 1000000);
            else
                p = put_milli(p, mv[m] / 1000);
        }
        *p++ = '\n';
        of_end_row(&o, p);
        start_ns += dur + wait + 200 + (rnd >> 52) % 800;
    }
    free(c);
    return of_close(&o);
}

/* ------------------------------------------------------------------ main */

static void usage(void)
{
    fprintf(stderr,
            "usage: gen_update_inputs OUT_DIR [DB_ROWS_PER_OP] [PROF_ROWS] [SEED]\n"
            "  DB_ROWS_PER_OP defaults to %llu, PROF_ROWS to %llu\n"
            "  writes OUT_DIR/db/<Op>.csv and OUT_DIR/prof/PROF_*/mindstudio_profiler_output/"
            "op_summary_*.csv\n",
            (unsigned long long)DEFAULT_DB_ROWS, (unsigned long long)DEFAULT_PROF_ROWS);
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t db_rows = DEFAULT_DB_ROWS, prof_rows = DEFAULT_PROF_ROWS, seed = DEFAULT_SEED;
    if (argc < 2 || argc > 5 || argv[1][0] == '\0' || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "--help"))
        usage();
    const char *out_dir = argv[1];
    if (argc > 2 && !parse_u64(argv[2], &db_rows))
        usage();
    if (argc > 3 && !parse_u64(argv[3], &prof_rows))
        usage();
    if (argc > 4 && !parse_u64(argv[4], &seed))
        usage();
    if (db_rows < 1 || db_rows > 50000000 || prof_rows > 2000000000ULL) {
        fprintf(stderr, "gen_update_inputs: DB_ROWS_PER_OP must be 1..50000000 and "
                        "PROF_ROWS at most 2000000000\n");
        return 2;
    }
    if (strlen(out_dir) > 3000)
        die("OUT_DIR too long");

    struct timespec t0 = clock_now();
    g_seed = seed;

    /* ---- plan the launches: per catalogue op, shapes with 1..6 launches */
    uint32_t noncat_per_file = prof_rows >= 100ULL * NPROF * NONCAT_PER_FILE ? NONCAT_PER_FILE : 0;
    uint64_t ncat_rows = prof_rows - (uint64_t)noncat_per_file * NPROF;
    unsigned wsum = 0;
    for (size_t i = 0; i < NCAT; i++)
        wsum += OPS[i].weight;
    launch *L = xmalloc((size_t)(prof_rows ? prof_rows : 1) * sizeof *L);
    size_t nl = 0;
    uint32_t nnew[NOPS] = {0}, nmatch[NOPS] = {0};
    uint64_t nshapes[NOPS] = {0};
    uint32_t *perm = xmalloc((size_t)db_rows * sizeof *perm);
    uint64_t assigned = 0;
    for (size_t oi = 0; oi < NCAT; oi++) {
        g_rng = mix64(seed ^ (0x706c616eULL + oi * 0x9e3779b97f4a7c15ULL));
        uint64_t quota = ncat_rows * OPS[oi].weight / wsum;
        if (oi == NCAT - 1)
            quota = ncat_rows - assigned;
        assigned += quota;
        for (uint32_t i = 0; i < db_rows; i++)
            perm[i] = i;
        uint32_t npicked = 0;
        while (quota) {
            uint64_t rep = 1 + rng_below(MAX_REPEAT);
            if (rep > quota)
                rep = quota;
            uint32_t idx;
            if (rng_below(100) >= NEW_PERCENT && npicked < db_rows) {
                uint32_t k = npicked + (uint32_t)(rng_next() % (db_rows - npicked));
                idx = perm[k];
                perm[k] = perm[npicked];
                perm[npicked++] = idx;
                nmatch[oi]++;
            } else {
                if ((uint64_t)db_rows + nnew[oi] >= UINT32_MAX)
                    die("too many rows");
                idx = (uint32_t)db_rows + nnew[oi]++;
            }
            nshapes[oi]++;
            for (uint64_t r = 0; r < rep; r++) {
                L[nl].op = (uint16_t)oi;
                L[nl++].idx = idx;
            }
            quota -= rep;
        }
    }
    free(perm);

    /* ---- token counts (unique signatures) for every op's rows */
    uint32_t *T[NOPS];
    uint64_t bumped_total = 0;
    for (size_t oi = 0; oi < NOPS; oi++) {
        uint32_t bumped;
        T[oi] = assign_tokens(&OPS[oi], (uint32_t)db_rows + nnew[oi], &bumped);
        bumped_total += bumped;
    }

    char *buf = xmalloc(OUT_BUF_SIZE);
    char path[4096];

    /* ---- database */
    path_cat(path, sizeof path, out_dir, "/db", (char *)NULL);
    mkdir_p(path);
    uint64_t db_bytes = 0, missing = 0;
    for (size_t oi = 0; oi < NOPS; oi++)
        db_bytes += write_db_csv(path, oi, (uint32_t)db_rows, T[oi], buf, &missing);

    /* ---- op_summary files */
    g_rng = mix64(seed ^ 0x70726f66ULL);
    shuffle(L, nl);
    uint64_t prof_bytes = 0, noncat_rows = 0;
    size_t pos = 0;
    uint64_t start_ns = 1780676244313289000ULL; /* thousandths of us */
    char prof_dirs[NPROF][128];
    for (unsigned k = 0; k < NPROF; k++) {
        size_t ncat_k = nl / NPROF + (k < nl % NPROF);
        size_t n_k = ncat_k + noncat_per_file;
        /* this file's launches: a chunk of the shuffled catalogue launches
         * plus its non-catalogue rows, shuffled together */
        launch *F = xmalloc((n_k ? n_k : 1) * sizeof *F);
        memcpy(F, L + pos, ncat_k * sizeof *F);
        pos += ncat_k;
        for (uint32_t j = 0; j < noncat_per_file; j++) {
            unsigned o = NONCAT_OPS[j % (sizeof NONCAT_OPS / sizeof NONCAT_OPS[0])];
            F[ncat_k + j].op = (uint16_t)o;
            F[ncat_k + j].idx = rng_below((uint32_t)db_rows);
        }
        noncat_rows += noncat_per_file;
        shuffle(F, n_k);

        char id[11];
        for (int i = 0; i < 10; i++)
            id[i] = (char)('A' + rng_below(26));
        id[10] = '\0';
        /* PROF_000001_20260605161737123_ABCDEFGHIJ/mindstudio_profiler_output */
        snprintf(prof_dirs[k], sizeof prof_dirs[k], "PROF_%06u_20260605%02u%02u%02u%03u_%s", k + 1,
                 16u, 17u + k, 37u, 123u + 7 * k, id);
        path_cat(path, sizeof path, out_dir, "/prof/", prof_dirs[k], "/mindstudio_profiler_output",
                 (char *)NULL);
        mkdir_p(path);
        char fname[64];
        snprintf(fname, sizeof fname, "/op_summary_20260605%02u%02u%02u.csv", 16u, 21u + k, 48u);
        char dir[4096];
        path_cat(dir, sizeof dir, path, (char *)NULL);
        path_cat(path, sizeof path, dir, fname, (char *)NULL);
        prof_bytes += write_op_summary(path, k, F, n_k, T, buf, start_ns);
        start_ns += 3600000000000ULL;
        free(F);
    }

    /* ---- expected update figures */
    uint64_t exp_updated = 0, exp_added = 0, shapes_total = 0, match_total = 0, new_total = 0;
    uint64_t mm_new = 0, mm_shapes = 0, mm_match = 0;
    for (size_t oi = 0; oi < NCAT; oi++) {
        shapes_total += nshapes[oi];
        match_total += nmatch[oi];
        new_total += nnew[oi];
        if (is_matmul_family(oi)) {
            mm_new += nnew[oi];
            mm_shapes += nshapes[oi];
            mm_match += nmatch[oi];
        } else {
            exp_updated += nmatch[oi];
            exp_added += nnew[oi];
        }
    }
    /* the three MatMul-family CSVs share their shapes, and each takes the
     * rows of all three operators (match-only): every match updates a row
     * in each of them */
    exp_updated += 3 * mm_match;

    double secs = seconds_since(t0);
    fprintf(stderr,
            "gen_update_inputs: db: %zu CSVs x %" PRIu64 " rows = %" PRIu64 " rows, %" PRIu64
            " bytes (%.1f MB); %" PRIu64 " rows without Average Duration; %zu CSVs"
            " (Cast, Mul, TransData, ZerosLike) are not in the update catalogue\n",
            (size_t)NOPS, db_rows, db_rows * NOPS, db_bytes, (double)db_bytes / 1e6, missing,
            (size_t)(NOPS - NCAT));
    fprintf(stderr,
            "gen_update_inputs: prof: %u op_summary files, %" PRIu64 " rows, %" PRIu64
            " bytes (%.1f MB): %zu catalogue launches of %" PRIu64 " distinct shapes (%" PRIu64
            " existing db rows, %" PRIu64 " new), %" PRIu64 " non-catalogue rows\n",
            NPROF, prof_rows, prof_bytes, (double)prof_bytes / 1e6, nl, shapes_total,
            match_total, new_total, noncat_rows);
    fprintf(stderr,
            "gen_update_inputs: expected update: ~%" PRIu64 " rows updated, %" PRIu64
            " rows added (MatMul-family: %" PRIu64 " of %" PRIu64
            " shapes are new and only warned about, not added); %" PRIu64
            " token-count bumps for unique signatures; %.2f s -> %s\n",
            exp_updated, exp_added, mm_new, mm_shapes, bumped_total, secs, out_dir);
    for (size_t oi = 0; oi < NOPS; oi++)
        free(T[oi]);
    free(L);
    free(buf);
    return 0;
}
