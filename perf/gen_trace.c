/*
 * gen_trace.c - deterministic synthetic performance-model ("TC") Chrome trace
 * for benchmarking `opdb compare`, `opdb m6` and `opdb shape-compare`.
 *
 * Usage: gen_trace [EVENTS] OUTPUT_PATH [SEED]
 *   EVENTS       complete ("ph": "X") events to write (default 1000000)
 *   OUTPUT_PATH  file to write, or "-" for stdout
 *   SEED         optional PRNG seed (default fixed); same args -> same bytes
 *
 * The output looks like what the performance model writes with Python's
 * json.dump: {"traceEvents": [...]} on one line, ", " / ": " separators, a
 * process_name metadata event naming the "empirical" model, then one event
 * per framework op of a decoder layer repeated until EVENTS is reached.
 * Each event carries the args the analysis tools read, all strings:
 * kernel_type (comma-separated for composites, absent on a MISS), source
 * (MEASURED / INTERPOLATED / PARTIAL), confidence, sub_kernel_durations and
 * simulation_shapes as Python literals, and composite. About 270 bytes per
 * event.
 *
 * Only integer arithmetic is used, so the output is byte-identical on every
 * platform for the same arguments.
 */
#define GEN_NAME "gen_trace"
#include "gen_common.h"

#define DEFAULT_EVENTS 1000000ULL
#define DEFAULT_SEED 0x74632d7472616365ULL /* "tc-trace" */
#define ROW_MARGIN 4096u

/* One framework op of a decoder layer. Shape templates use gen_common.h's
 * variables: T tokens, H hidden, Q/R q/kv widths, I intermediate. */
typedef struct {
    const char *name;
    const char *kernels;  /* kernel_type; NULL = MISS (no database answer) */
    const char *shapes;   /* simulation_shapes template, slots ';'-separated */
    unsigned base_ns;     /* typical duration in thousandths of a us */
} op_def;

static const op_def OPS[] = {
    {"aten.rms_norm.default", "RmsNorm", "T,H;H", 6200},
    {"aten.mm.default", "MatMulV2", "T,H;H,Q", 41500},
    {"aten.mm.default", "MatMulV2", "T,H;H,R", 18300},
    {"torch.ops.npu.npu_rotary_mul.default", "RotaryMul", "T,Q;T,Q", 7400},
    {"torch.ops.npu.npu_fused_infer_attention_score.default", "FusedInferAttentionScore", "T,Q;T,R;T,R", 55100},
    {"aten.mm.default", "MatMulV2", "T,Q;Q,H", 39800},
    {"torch.ops._C_ascend.all_reduce.default", "hcom_allReduce_", "T,H", 23700},
    {"aten.add.Tensor", "Add", "T,H;T,H", 4100},
    {"aten.mm.default", "MatMulV2,Cast", "T,H;H,I", 88200},
    {"torch.ops.npu.npu_swiglu.default", "SwiGlu", "T,I", 9300},
    {"aten.mm.default", "MatMulV2", "T,I;I,H", 61000},
    {"aten.view.default", NULL, "T,H", 0},
    {"aten.slice.Tensor", NULL, "T,Q", 1200},
};
#define NOPS (sizeof OPS / sizeof OPS[0])

static const char *const SOURCES[] = {"MEASURED", "MEASURED", "MEASURED", "INTERPOLATED", "INTERPOLATED", "PARTIAL"};
static const char *const CONFIDENCE[] = {"high", "high", "medium", "low"};
static const uint64_t TOKENS[] = {1, 16, 128, 512, 2048, 4112};

/* "[[a, b], [c]]" from a template like "T,H;H" */
static char *put_shape_literal(char *p, const char *tpl)
{
    char flat[256];
    char *e = expand_shape(flat, tpl, NULL);
    *e = '\0';
    p = PUT_LIT(p, "[[");
    for (const char *s = flat; *s; s++) {
        if (*s == ';')
            p = PUT_LIT(p, "], [");
        else if (*s == ',')
            p = PUT_LIT(p, ", ");
        else
            *p++ = *s;
    }
    return PUT_LIT(p, "]]");
}

/* ('Name', 12.345) per sub kernel, durations summing to about ns */
static char *put_skd(char *p, const char *kernels, uint64_t ns)
{
    p = PUT_LIT(p, "[");
    int first = 1;
    for (const char *s = kernels; *s;) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (!first)
            p = PUT_LIT(p, ", ");
        first = 0;
        p = PUT_LIT(p, "('");
        p = put_lit(p, s, n);
        p = PUT_LIT(p, "', ");
        uint64_t part = e ? ns * 7 / 8 : ns; /* the last sub kernel takes the rest */
        p = put_milli(p, part);
        ns -= part;
        p = PUT_LIT(p, ")");
        s = e ? e + 1 : s + n;
    }
    return PUT_LIT(p, "]");
}

static char *put_event(char *p, const op_def *op, uint64_t ts_us)
{
    uint64_t ns = op->base_ns ? op->base_ns / 2 + rng_below(op->base_ns) : 0;
    p = PUT_LIT(p, "{\"ph\": \"X\", \"name\": \"");
    p = put_str(p, op->name);
    p = PUT_LIT(p, "\", \"pid\": 1, \"ts\": ");
    p = put_u64(p, ts_us);
    p = PUT_LIT(p, ", \"dur\": ");
    p = put_u64(p, (ns + 500) / 1000);
    p = PUT_LIT(p, ", \"args\": {");
    if (op->kernels) {
        p = PUT_LIT(p, "\"kernel_type\": \"");
        p = put_str(p, op->kernels);
        p = PUT_LIT(p, "\", \"source\": \"");
        p = put_str(p, PICK(SOURCES));
        p = PUT_LIT(p, "\", \"confidence\": \"");
        p = put_str(p, PICK(CONFIDENCE));
        p = PUT_LIT(p, "\", \"sub_kernel_durations\": \"");
        p = put_skd(p, op->kernels, ns);
        p = PUT_LIT(p, "\", ");
    } else {
        p = PUT_LIT(p, "\"source\": \"MISS\", ");
    }
    p = PUT_LIT(p, "\"simulation_shapes\": \"");
    p = put_shape_literal(p, op->shapes);
    p = PUT_LIT(p, "\", \"composite\": \"");
    p = put_str(p, op->kernels && strchr(op->kernels, ',') ? "True" : "False");
    return PUT_LIT(p, "\"}}");
}

int main(int argc, char **argv)
{
    uint64_t events = DEFAULT_EVENTS, seed = DEFAULT_SEED;
    const char *path;
    if (argc == 2) {
        path = argv[1];
    } else if (argc == 3 || argc == 4) {
        if (!parse_u64(argv[1], &events) || (argc == 4 && !parse_u64(argv[3], &seed))) {
            fprintf(stderr, "usage: gen_trace [EVENTS] OUTPUT_PATH [SEED]\n");
            return 2;
        }
        path = argv[2];
    } else {
        fprintf(stderr, "usage: gen_trace [EVENTS] OUTPUT_PATH [SEED]\n");
        return 2;
    }
    g_rng = seed;
    struct timespec t0 = clock_now();
    outfile o;
    of_open(&o, path, xmalloc(OUT_BUF_SIZE), ROW_MARGIN);
    char *p = of_row(&o);
    p = PUT_LIT(p, "{\"traceEvents\": [{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, "
                   "\"args\": {\"name\": \"empirical\"}}");
    of_end_row(&o, p);
    uint64_t ts = 1000;
    for (uint64_t i = 0; i < events; i++) {
        if (i % (NOPS * 64) == 0) { /* a new forward pass: new token count */
            g_var['T'] = PICK(TOKENS);
            g_var['H'] = 5120;
            g_var['Q'] = 8192;
            g_var['R'] = 1024;
            g_var['I'] = 25600 + 128 * rng_below(4);
        }
        const op_def *op = &OPS[i % NOPS];
        p = of_row(&o);
        p = PUT_LIT(p, ", ");
        p = put_event(p, op, ts);
        of_end_row(&o, p);
        ts += 1 + op->base_ns / 1000;
    }
    p = of_row(&o);
    p = PUT_LIT(p, "]}");
    of_end_row(&o, p);
    uint64_t bytes = of_close(&o);
    fprintf(stderr, GEN_NAME ": %" PRIu64 " events, %" PRIu64 " bytes in %.2f s\n", events, bytes,
            seconds_since(t0));
    return 0;
}
