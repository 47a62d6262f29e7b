/* CPU kernels of the matmul, attention and MoE-permute operators (opsA):
 * each row is built with real CSV spellings, planned, prepared and run on the
 * CPU backend, and its outputs are compared with a naive double-precision
 * computation from the inputs the backend filled. */
#include <math.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "opdb/replay.h"
#include "replay_test_row.h"
#include "replay/cpu/kernels.h"


static opdb_backend *g_be;
static bool g_quirks; /* rows planned with the reference's rules (--reference-quirks) */

static int setup(void **state) {
    (void)state;
    opdb_err err = {0, ""};
    opdb_backend_opts o;
    opdb_backend_opts_init(&o);
    o.threads = 1; /* one thread keeps sanitizer runs quiet */
    g_be = opdb_backend_create("cpu", &o, &err);
    return g_be ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    g_be->destroy(g_be);
    return 0;
}

/* Plan + prepare + one run; returns the instance (release it) and its problem. */
static void *run_row(const char *kernel, kv *cells, opdb_op_problem **out) {
    const opdb_op_def *op = opdb_op_find(kernel);
    assert_non_null(op);
    opdb_replay_row row = {kernel, cell, cells, g_quirks};
    opdb_op_problem p;
    opdb_err err = {0, ""};
    int rc = op->plan(&row, &p, &err);
    if (rc) fail_msg("plan failed: %s", err.msg);
    const char *why = NULL;
    assert_true(g_be->supports(g_be, op, &why));
    void *inst = NULL;
    if (g_be->prepare(g_be, op, &p, 42, &inst, &err)) fail_msg("prepare failed: %s", err.msg);
    double us = -1;
    g_be->flush_cache(g_be);
    if (g_be->run(g_be, inst, &us, &err)) fail_msg("run failed: %s", err.msg);
    assert_true(us >= 0);
    *out = opdb_cpu_inst_problem(inst);
    return inst;
}

static void expect_plan_error(const char *kernel, kv *cells, const char *needle) {
    const opdb_op_def *op = opdb_op_find(kernel);
    assert_non_null(op);
    opdb_replay_row row = {kernel, cell, cells, g_quirks};
    opdb_op_problem p;
    opdb_err err = {0, ""};
    assert_int_equal(op->plan(&row, &p, &err), -1);
    if (!strstr(err.msg, needle)) fail_msg("error '%s' lacks '%s'", err.msg, needle);
}

static double tol_for(opdb_dtype dt) {
    return dt == OPDB_DT_BF16 ? 1e-2 : dt == OPDB_DT_F16 ? 1e-3 : dt == OPDB_DT_F64 ? 1e-12 : 1e-5;
}

static double at(const opdb_tensor *t, int64_t i) { return opdb_elem_get(t->data, t->dtype, (size_t)i); }

/* max |got - ref| relative to max |ref| must stay under the dtype's bound. */
static void expect_close(const opdb_tensor *t, const double *ref, int64_t n, double tol) {
    assert_int_equal(opdb_tensor_numel(t), n);
    double emax = 0, rmax = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(at(t, i) - ref[i]);
        if (!(d <= emax)) emax = d; /* NaN counts as an error */
        if (fabs(ref[i]) > rmax) rmax = fabs(ref[i]);
    }
    assert_true(rmax > 0);
    if (!(emax / rmax <= tol)) fail_msg("relative error %g > %g", emax / rmax, tol);
}

/* C[b][m][n] = sum_k A[b][m][k] * W(b, n, k) with W read from (n,k) or (k,n) storage. */
static double *naive_gemm(const opdb_tensor *a, const opdb_tensor *w, int64_t batch, int64_t m, int64_t n, int64_t k,
                        bool w_nk, bool w_shared) {
    double *c = calloc((size_t)(batch * m * n), sizeof *c);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t q = 0; q < k; q++) {
                    int64_t wb = w_shared ? 0 : b * n * k;
                    s += at(a, (b * m + i) * k + q) * at(w, wb + (w_nk ? j * k + q : q * n + j));
                }
                c[(b * m + i) * n + j] = s;
            }
    return c;
}

static void check_matmul(const char *kernel, const char *shapes, const char *dtypes, const char *formats,
                         int64_t m, int64_t n, int64_t k, opdb_dtype dt) {
    kv cells[] = {{"Input Shapes", shapes}, {"Input Data Types", dtypes}, {"Input Formats", formats},
                  {"Output Shapes", ""},    {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = run_row(kernel, cells, &p);
    assert_int_equal(p->out[0].dtype, dt);
    assert_true(p->flops == 2.0 * (double)(m * n * k));
    assert_true(p->bytes > 0);
    double *ref = naive_gemm(&p->in[0], &p->in[1], 1, m, n, k, true, true);
    expect_close(&p->out[0], ref, m * n, tol_for(dt));
    free(ref);
    g_be->release(g_be, inst);
}

static void test_matmul_v2(void **state) {
    (void)state;
    g_quirks = true; /* the reference's rule: weight stored (N, K), extras unused */
    check_matmul("MatMulV2", "\"4,64;128,64\"", "DT_BF16;DT_BF16", "ND;ND", 4, 128, 64, OPDB_DT_BF16);
    check_matmul("MatMulV2", "\"5,33;17,33\"", "FLOAT;FLOAT", "ND;ND", 5, 17, 33, OPDB_DT_F32);
    check_matmul("MatMulV3", "\"3,2,40;24,40\"", "DT_FLOAT16;DT_FLOAT16", "ND;ND", 6, 24, 40, OPDB_DT_F16);
    /* NZ weight (a,b,c,d) = (2,3,16,16): logical (N,K) = (48, 32) */
    check_matmul("MatMulV2", "\"7,32;2,3,16,16\"", "DT_BF16;DT_BF16", "ND;FRACTAL_NZ", 7, 48, 32, OPDB_DT_BF16);
    check_matmul("MatMulCommon", "\"9,16;8,16;8\"", "FLOAT;FLOAT;FLOAT", "ND;ND;ND", 9, 8, 16, OPDB_DT_F32);
    check_matmul("BatchMatMulV2", "\"6,16;10,16\"", "FLOAT;FLOAT", "ND;ND", 6, 10, 16, OPDB_DT_F32);
    g_quirks = false;
}

/* opdb's rule: the output shape decides which operand is stored transposed,
 * a third input is a bias. Naive model: C = op(A) . op(B) (+ bias), in double. */
static void check_inferred(const char *kernel, const char *shapes, const char *dtypes, const char *formats,
                           const char *out, bool ta, bool tb, int64_t m, int64_t n, int64_t k, bool bias) {
    kv cells[] = {{"Input Shapes", shapes}, {"Input Data Types", dtypes}, {"Input Formats", formats},
                  {"Output Shapes", out},   {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = run_row(kernel, cells, &p);
    assert_int_equal(opdb_tensor_numel(&p->out[0]), m * n);
    assert_true(p->flops == 2.0 * (double)(m * n * k) + (bias ? (double)(m * n) : 0.0));
    const opdb_tensor *a = &p->in[0], *b = &p->in[1];
    double *ref = calloc((size_t)(m * n), sizeof *ref);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t q = 0; q < k; q++)
                s += at(a, ta ? q * m + i : i * k + q) * at(b, tb ? j * k + q : q * n + j);
            if (bias) s += at(&p->in[2], opdb_tensor_numel(&p->in[2]) == n ? j : i * n + j);
            ref[i * n + j] = s;
        }
    expect_close(&p->out[0], ref, m * n, tol_for(p->out[0].dtype));
    free(ref);
    g_be->release(g_be, inst);
}

static void test_matmul_inferred(void **state) {
    (void)state;
    /* real PyTorch-on-Ascend rows (shapes scaled down by 8 where large) */
    check_inferred("MatMulV2", "\"32,125;125,512\"", "FLOAT;FLOAT", "FORMAT_ND;FORMAT_ND", "\"32,512\"", false, false, 32,
                   512, 125, false);
    check_inferred("MatMulV2", "\"32,125;32,512\"", "FLOAT;FLOAT", "FORMAT_ND;FORMAT_ND", "\"125,512\"", true, false, 125,
                   512, 32, false);
    check_inferred("MatMulV2", "\"32,512;512,512;512\"", "FLOAT;FLOAT;FLOAT", "FORMAT_ND;FORMAT_ND;FORMAT_ND",
                   "\"32,512\"", false, true, 32, 512, 512, true);
    check_inferred("MatMulV3", "\"32,512;125,512;125\"", "FLOAT;FLOAT;FLOAT", "ND;ND;ND", "\"32,125\"", false, true, 32,
                   125, 512, true);
    /* A and B both transposed; bf16 with a bf16 bias of the whole output */
    check_inferred("MatMulV2", "\"24,9;17,24;9,17\"", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND", "\"9,17\"", true, true, 9,
                   17, 24, true);
    /* a square GEMM keeps the reference's reading (weight (N, K)) */
    check_inferred("MatMulCommon", "\"16,16;16,16\"", "FLOAT;FLOAT", "ND;ND", "\"16,16\"", false, true, 16, 16, 16,
                   false);
    /* no output shape: A is never read transposed */
    check_inferred("MatMulV2", "\"6,10;10,7\"", "FLOAT;FLOAT", "ND;ND", "", false, false, 6, 7, 10, false);
    /* what still cannot be replayed says why */
    kv bad[] = {{"Input Shapes", "\"4,64;128,32\""}, {"Input Data Types", "FLOAT;FLOAT"}, {"Input Formats", "ND;ND"},
                {"Output Shapes", "\"4,128\""}, {NULL, NULL}};
    expect_plan_error("MatMulV2", bad, "no reading of A 4,64 and B 128,32");
    kv badbias[] = {{"Input Shapes", "\"4,64;128,64;5\""}, {"Input Data Types", "FLOAT;FLOAT;FLOAT"},
                    {"Input Formats", "ND;ND;ND"}, {"Output Shapes", "\"4,128\""}, {NULL, NULL}};
    expect_plan_error("MatMulV2", badbias, "is not a bias of the output");
    kv four[] = {{"Input Shapes", "\"4,64;128,64;128;1\""}, {"Input Data Types", "FLOAT;FLOAT;FLOAT;FLOAT"},
                 {"Input Formats", "ND;ND;ND;ND"}, {"Output Shapes", "\"4,128\""}, {NULL, NULL}};
    expect_plan_error("MatMulV2", four, "got 4 inputs");
}

static void test_matmul_errors(void **state) {
    (void)state;
    g_quirks = true; /* the reference's messages */
    kv three[] = {{"Input Shapes", "\"4,64;128,64;128\""}, {"Input Data Types", "DT_BF16;DT_BF16;DT_BF16"},
                  {"Input Formats", "ND;ND;ND"}, {NULL, NULL}};
    expect_plan_error("MatMulV2", three, "MatMulV2 expects exactly two inputs");
    kv one[] = {{"Input Shapes", "\"4,64\""}, {"Input Data Types", "DT_BF16"}, {"Input Formats", "ND"}, {NULL, NULL}};
    expect_plan_error("MatMulCommon", one, "MatMulCommon expects at least two inputs");
    kv fmt1[] = {{"Input Shapes", "\"4,64;128,64\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
                 {"Input Formats", "ND"}, {NULL, NULL}};
    expect_plan_error("MatMulV3", fmt1, "MatMulV3 expects exactly two inputs");
    kv kmis[] = {{"Input Shapes", "\"4,64;128,32\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
                 {"Input Formats", "ND;ND"}, {NULL, NULL}};
    expect_plan_error("MatMulV2", kmis, "cannot be multiplied");
    kv nz[] = {{"Input Shapes", "\"4,64;128,64\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
               {"Input Formats", "ND;FRACTAL_NZ"}, {NULL, NULL}};
    expect_plan_error("MatMulV2", nz, "Unsupported FRACTAL_NZ shape");
    kv mixed[] = {{"Input Shapes", "\"4,64;128,64\""}, {"Input Data Types", "DT_BF16;FLOAT"},
                  {"Input Formats", "ND;ND"}, {NULL, NULL}};
    expect_plan_error("MatMulV2", mixed, "same dtype");
    kv undef[] = {{"Input Shapes", "\"4,64;128,64\""}, {"Input Data Types", "DT_BF16;DT_UNDEFINED"},
                  {"Input Formats", "ND;ND"}, {NULL, NULL}};
    expect_plan_error("MatMulV2", undef, "Unsupported dtype: DT_UNDEFINED");
    g_quirks = false;
}

static void test_batch_matmul(void **state) {
    (void)state;
    for (int t = 0; t < 2; t++) { /* in1 given as (b,k,n), then as (b,n,k) */
        kv cells[] = {{"Input Shapes", t ? "\"3,5,24;3,7,24\"" : "\"3,5,24;3,24,7\""},
                      {"Input Data Types", "DT_BF16;DT_BF16"}, {"Input Formats", "ND;ND"},
                      {"Output Shapes", "\"3,5,7\""}, {"Output Data Types", "DT_BF16"}, {NULL, NULL}};
        opdb_op_problem *p;
        void *inst = run_row("BatchMatMulV2", cells, &p);
        double *ref = naive_gemm(&p->in[0], &p->in[1], 3, 5, 7, 24, t == 1, false);
        expect_close(&p->out[0], ref, 3 * 5 * 7, tol_for(OPDB_DT_BF16));
        free(ref);
        g_be->release(g_be, inst);
    }
    kv bad[] = {{"Input Shapes", "\"3,5,24;3,8,9\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
                {"Input Formats", "ND;ND"}, {"Output Shapes", "\"3,5,7\""}, {NULL, NULL}};
    expect_plan_error("BatchMatMulV2", bad, "matches neither");
    kv noout[] = {{"Input Shapes", "\"3,5,24;3,24,7\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
                  {"Input Formats", "ND;ND"}, {NULL, NULL}};
    expect_plan_error("BatchMatMulV2", noout, "out0 (b,m,n)");
}

static void test_transpose_batch_matmul(void **state) {
    (void)state;
    kv cells[] = {{"Input Shapes", "\"2,3,128;2,128,128\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
                  {"Input Formats", "ND;ND"}, {"Output Shapes", "\"3,2,128\""}, {"Output Data Types", "DT_BF16"},
                  {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = run_row("TransposeBatchMatMul", cells, &p);
    double *bmn = naive_gemm(&p->in[0], &p->in[1], 2, 3, 128, 128, false, false);
    double *ref = malloc(2 * 3 * 128 * sizeof *ref); /* (B,M,N) -> (M,B,N) */
    for (int b = 0; b < 2; b++)
        for (int m = 0; m < 3; m++)
            for (int n = 0; n < 128; n++) ref[(m * 2 + b) * 128 + n] = bmn[(b * 3 + m) * 128 + n];
    expect_close(&p->out[0], ref, 2 * 3 * 128, tol_for(OPDB_DT_BF16));
    free(bmn);
    free(ref);
    g_be->release(g_be, inst);
    kv k100[] = {{"Input Shapes", "\"2,3,100;2,100,128\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
                 {"Input Formats", "ND;ND"}, {"Output Shapes", "\"3,2,128\""}, {NULL, NULL}};
    expect_plan_error("TransposeBatchMatMul", k100, "divisible by 128");
    kv nzf[] = {{"Input Shapes", "\"2,3,128;2,128,128\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
                {"Input Formats", "ND;FRACTAL_NZ"}, {"Output Shapes", "\"3,2,128\""}, {NULL, NULL}};
    expect_plan_error("TransposeBatchMatMul", nzf, "ND;ND");
    kv outb[] = {{"Input Shapes", "\"2,3,128;2,128,128\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
                 {"Input Formats", "ND;ND"}, {"Output Shapes", "\"2,3,128\""}, {NULL, NULL}};
    expect_plan_error("TransposeBatchMatMul", outb, "exactly one output (M,B,N)");
}

/* QuantBatchMatmulV3: int32 accumulate, scale, then bias / per-token / offset. */
static void check_qbmm(const char *shapes, const char *dtypes, const char *out_dt, int kind) {
    kv cells[] = {{"Input Shapes", shapes}, {"Input Data Types", dtypes}, {"Input Formats", kind ? "ND;ND;ND;ND" : "ND;ND;ND"},
                  {"Output Shapes", "\"5,24\""}, {"Output Data Types", out_dt}, {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = run_row("QuantBatchMatmulV3", cells, &p);
    double ref[5 * 24];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 24; j++) {
            double acc = 0;
            for (int q = 0; q < 64; q++) acc += at(&p->in[0], i * 64 + q) * at(&p->in[1], q * 24 + j);
            if (kind == 1) acc += at(&p->in[3], j);
            double v = acc * at(&p->in[2], j);
            if (kind == 2) v *= at(&p->in[3], i);
            if (kind == 3) v += at(&p->in[3], j);
            ref[i * 24 + j] = v;
        }
    expect_close(&p->out[0], ref, 5 * 24, tol_for(p->out[0].dtype));
    assert_true(p->flops == 2.0 * 5 * 24 * 64);
    g_be->release(g_be, inst);
}

static void test_quant_batch_matmul(void **state) {
    (void)state;
    check_qbmm("\"5,64;64,24;24\"", "DT_INT8;DT_INT8;FLOAT", "DT_BF16", 0);
    check_qbmm("\"5,64;64,24;24;24\"", "INT8;INT8;FLOAT;INT32", "DT_FLOAT16", 1);
    check_qbmm("\"5,64;64,24;24;5\"", "INT8;INT8;FLOAT;FLOAT", "FLOAT", 2);
    check_qbmm("\"5,64;64,24;24;24\"", "INT8;INT8;FLOAT;FLOAT", "FLOAT", 3);
    kv bf[] = {{"Input Shapes", "\"5,64;64,24;24\""}, {"Input Data Types", "DT_BF16;DT_INT8;FLOAT"},
               {"Input Formats", "ND;ND;ND"}, {"Output Shapes", "\"5,24\""}, {"Output Data Types", "DT_BF16"}, {NULL, NULL}};
    expect_plan_error("QuantBatchMatmulV3", bf, "expects DT_INT8 x and weight");
    kv two_out[] = {{"Input Shapes", "\"5,64;64,24;24\""}, {"Input Data Types", "INT8;INT8;FLOAT"},
                    {"Input Formats", "ND;ND;ND"}, {"Output Shapes", "\"5,24;5\""}, {"Output Data Types", "DT_BF16;FLOAT"},
                    {NULL, NULL}};
    expect_plan_error("QuantBatchMatmulV3", two_out, "exactly one output");
    kv uneven[] = {{"Input Shapes", "\"5,64;64,24;24\""}, {"Input Data Types", "INT8;INT8"},
                   {"Input Formats", "ND;ND;ND"}, {"Output Shapes", "\"5,24\""}, {"Output Data Types", "DT_BF16"}, {NULL, NULL}};
    expect_plan_error("QuantBatchMatmulV3", uneven, "differ in length");
    kv odd[] = {{"Input Shapes", "\"5,64;64,24;24;7\""}, {"Input Data Types", "INT8;INT8;FLOAT;FLOAT"},
                {"Input Formats", "ND;ND;ND;ND"}, {"Output Shapes", "\"5,24\""}, {"Output Data Types", "DT_BF16"}, {NULL, NULL}};
    expect_plan_error("QuantBatchMatmulV3", odd, "4th input");
    kv badout[] = {{"Input Shapes", "\"5,64;64,24;24\""}, {"Input Data Types", "INT8;INT8;FLOAT"},
                   {"Input Formats", "ND;ND;ND"}, {"Output Shapes", "\"5,24\""}, {"Output Data Types", "DT_INT16"}, {NULL, NULL}};
    expect_plan_error("QuantBatchMatmulV3", badout, "unsupported output dtype DT_INT16");
}

/* Group bounds docs/REPLAY-OPS.md prescribes: cumulative even split of m rows over g. */
static void expect_group_list(const opdb_tensor *gl, int64_t m, int64_t g) {
    int64_t end = 0;
    for (int64_t i = 0; i < g; i++) {
        end += m / g + (i < m % g ? 1 : 0);
        assert_true(at(gl, i) == (double)end);
    }
}

static void test_grouped_matmul(void **state) {
    (void)state;
    for (int q = 0; q < 2; q++) {
        kv cells[] = {{"Input Shapes", q ? "\"10,32;3,32,24;;3,24;;;;3;10\"" : "\"10,32;3,32,24;;;;;;3\""},
                      {"Input Data Types", q ? "DT_INT8;DT_INT8;;FLOAT;;;;INT64;FLOAT" : ";DT_BF16;;;;;;INT64"},
                      {"Input Formats", q ? "ND;ND;;ND;;;;ND;ND" : "ND;ND;;;;;;ND"},
                      {"Output Shapes", "\"10,24\""}, {"Output Data Types", "DT_BF16"}, {NULL, NULL}};
        opdb_op_problem *p;
        void *inst = run_row("GroupedMatmul", cells, &p);
        assert_int_equal(p->in[0].dtype, q ? OPDB_DT_I8 : OPDB_DT_BF16); /* blank x dtype -> DT_BF16 */
        const opdb_tensor *gl = &p->in[4];
        expect_group_list(gl, 10, 3);
        double ref[10 * 24];
        for (int i = 0; i < 10; i++) {
            int g = i < 4 ? 0 : i < 7 ? 1 : 2;
            for (int j = 0; j < 24; j++) {
                double acc = 0;
                for (int k = 0; k < 32; k++) acc += at(&p->in[0], i * 32 + k) * at(&p->in[1], (g * 32 + k) * 24 + j);
                ref[i * 24 + j] = acc;
            }
        }
        expect_close(&p->out[0], ref, 10 * 24, tol_for(OPDB_DT_BF16));
        g_be->release(g_be, inst);
    }
    kv nogl[] = {{"Input Shapes", "\"10,32;3,32,24\""}, {"Input Data Types", "DT_BF16;DT_BF16"},
                 {"Input Formats", "ND;ND"}, {NULL, NULL}};
    expect_plan_error("GroupedMatmul", nogl, "group_list slot 7 is empty");
    kv badk[] = {{"Input Shapes", "\"10,32;3,16,24;;;;;;3\""}, {"Input Data Types", "DT_BF16;DT_BF16;;;;;;INT64"},
                 {"Input Formats", "ND;ND;;;;;;ND"}, {NULL, NULL}};
    expect_plan_error("GroupedMatmul", badk, "does not match x K");
    kv many[] = {{"Input Shapes", "\"10,32;3,32,24;;;;;;5\""}, {"Input Data Types", "DT_BF16;DT_BF16;;;;;;INT64"},
                 {"Input Formats", "ND;ND;;;;;;ND"}, {NULL, NULL}};
    expect_plan_error("GroupedMatmul", many, "5 groups but the weight holds 3");
}

static void test_grouped_swiglu_quant(void **state) {
    (void)state;
    for (int nz = 0; nz < 2; nz++) { /* weight (3,32,16) as ND, then as NZ 5-D (3,1,2,16,16) */
        kv cells[] = {{"Input Shapes", nz ? "\"10,32;3,1,2,16,16;3,16;10;3\"" : "\"10,32;3,32,16;3,16;10;3\""},
                      {"Input Data Types", "INT8;INT8;FLOAT;FLOAT;INT64"},
                      {"Input Formats", nz ? "ND;FRACTAL_NZ;ND;ND;ND" : "ND;ND;ND;ND;ND"},
                      {"Output Shapes", "\"10,8;10\""}, {"Output Data Types", "INT8;FLOAT"}, {NULL, NULL}};
        opdb_op_problem *p;
        void *inst = run_row("GroupedMatmulSwigluQuant", cells, &p);
        expect_group_list(&p->in[4], 10, 3);
        assert_int_equal(p->in[1].dims[1], 32);
        assert_int_equal(p->in[1].dims[2], 16);
        double v[8], scale_ref[10];
        for (int i = 0; i < 10; i++) {
            int g = i < 4 ? 0 : i < 7 ? 1 : 2;
            double y[16], amax = 0;
            for (int j = 0; j < 16; j++) {
                double acc = 0;
                for (int k = 0; k < 32; k++) acc += at(&p->in[0], i * 32 + k) * at(&p->in[1], (g * 32 + k) * 16 + j);
                y[j] = acc * at(&p->in[2], g * 16 + j) * at(&p->in[3], i);
            }
            for (int j = 0; j < 8; j++) {
                v[j] = y[j] / (1 + exp(-y[j])) * y[j + 8];
                if (fabs(v[j]) > amax) amax = fabs(v[j]);
            }
            scale_ref[i] = amax / 127;
            double s = at(&p->out[1], i);
            assert_true(fabs(s - scale_ref[i]) <= 1e-5 * scale_ref[i] + 1e-30);
            for (int j = 0; j < 8; j++) {
                double q = at(&p->out[0], i * 8 + j);
                assert_true(fabs(q) <= 127);
                assert_true(fabs(q * s - v[j]) <= 0.5 * s * (1 + 1e-4) + 1e-6);
            }
        }
        g_be->release(g_be, inst);
    }
    kv odd[] = {{"Input Shapes", "\"10,32;3,32,15;3,15;10;3\""}, {"Input Data Types", "INT8;INT8;FLOAT;FLOAT;INT64"},
                {"Input Formats", "ND;ND;ND;ND;ND"}, {NULL, NULL}};
    expect_plan_error("GroupedMatmulSwigluQuant", odd, "is odd");
}

static void test_moe_token_permute(void **state) {
    (void)state;
    kv cells[] = {{"Input Shapes", "\"6,8;6,2\""}, {"Input Data Types", "DT_BF16;INT64"}, {"Input Formats", "ND;ND"},
                  {"Output Shapes", "\"12,8;12\""}, {"Output Data Types", "DT_BF16;INT32"}, {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = run_row("MoeTokenPermute", cells, &p);
    int pos = 0;
    for (int e = 0; e < 8; e++) /* stable order: by expert, then by flat slot */
        for (int s = 0; s < 12; s++) {
            if (at(&p->in[1], s) != e) continue;
            assert_true(at(&p->out[1], pos) == s);
            for (int j = 0; j < 8; j++) assert_true(at(&p->out[0], pos * 8 + j) == at(&p->in[0], (s / 2) * 8 + j));
            pos++;
        }
    assert_int_equal(pos, 12);
    g_be->release(g_be, inst);
    kv one[] = {{"Input Shapes", "\"6,8\""}, {"Input Data Types", "DT_BF16"}, {"Input Formats", "ND"}, {NULL, NULL}};
    expect_plan_error("MoeTokenPermute", one, "MoeTokenPermute expects at least 2 inputs, got 1");
    kv fidx[] = {{"Input Shapes", "\"6,8;6,2\""}, {"Input Data Types", "DT_BF16;FLOAT"}, {"Input Formats", "ND;ND"},
                 {NULL, NULL}};
    expect_plan_error("MoeTokenPermute", fidx, "integer indices");
}

static void test_moe_token_unpermute(void **state) {
    (void)state;
    /* slot 2 has dtype DT_UNDEFINED: skipped, so probs is the third built tensor */
    kv cells[] = {{"Input Shapes", "\"12,8;12;4;6,2\""}, {"Input Data Types", "DT_BF16;INT32;DT_UNDEFINED;DT_BF16"},
                  {"Input Formats", "ND;ND;ND;ND"}, {"Output Shapes", "\"6,8\""}, {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = run_row("MoeTokenUnpermute", cells, &p);
    assert_int_equal(p->nin, 3);
    int seen[12] = {0};
    double ref[6 * 8] = {0};
    for (int i = 0; i < 12; i++) {
        int s = (int)at(&p->in[1], i);
        assert_true(s >= 0 && s < 12 && !seen[s]);
        seen[s] = 1;
        for (int j = 0; j < 8; j++) ref[(s / 2) * 8 + j] += at(&p->in[0], i * 8 + j) * at(&p->in[2], s);
    }
    expect_close(&p->out[0], ref, 6 * 8, tol_for(OPDB_DT_BF16));
    g_be->release(g_be, inst);
    kv only[] = {{"Input Shapes", "\"12,8;12\""}, {"Input Data Types", "DT_BF16;DT_UNDEFINED"},
                 {"Input Formats", "ND;ND"}, {NULL, NULL}};
    expect_plan_error("MoeTokenUnpermute", only, "at least two tensors, got 1");
}

/* ---- FusedInferAttentionScore ---- */

/* 31 slots: the given ones, the rest empty. */
static void fia_slots(char *out, size_t cap, const char *const *v, int n, const char *blank) {
    out[0] = '\0';
    for (int i = 0; i < 31; i++) {
        const char *x = i < n && v[i] ? v[i] : blank;
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? ";" : "", x);
    }
}

/* Naive attention over dense arrays: q[b][h][i][dk], k/v[b][hk][j][*]. */
typedef struct dense_att {
    int B, N, NKV, DK, DV, mode; /* mode 3: right-down causal, 2: left-up causal, 0: none */
    int ql[4], kl[4];
    double scale;
    double q[4][4][8][48], k[4][2][40][48], v[4][2][40][32];
    double o[4][4][8][32], lse[4][4][8];
} dense_att;

static void dense_run(dense_att *a) {
    for (int b = 0; b < a->B; b++)
        for (int h = 0; h < a->N; h++) {
            int hk = h / (a->N / a->NKV);
            for (int i = 0; i < a->ql[b]; i++) {
                double sc[40], mx = -INFINITY, sum = 0;
                for (int j = 0; j < a->kl[b]; j++) {
                    double dot = 0;
                    for (int d = 0; d < a->DK; d++) dot += a->q[b][h][i][d] * a->k[b][hk][j][d];
                    bool m = (a->mode == 3 && j > i + a->kl[b] - a->ql[b]) || (a->mode == 2 && j > i);
                    sc[j] = m ? -INFINITY : dot * a->scale;
                    if (sc[j] > mx) mx = sc[j];
                }
                for (int j = 0; j < a->kl[b]; j++) sum += (sc[j] = sc[j] == -INFINITY ? 0 : exp(sc[j] - mx));
                for (int d = 0; d < a->DV; d++) {
                    double acc = 0;
                    for (int j = 0; j < a->kl[b]; j++) acc += sc[j] / sum * a->v[b][hk][j][d];
                    a->o[b][h][i][d] = acc;
                }
                a->lse[b][h][i] = mx + log(sum);
            }
        }
}

static void *fia_run(kv *cells, opdb_op_problem **p) { return run_row("FusedInferAttentionScore", cells, p); }

/* TND query, paged BSH key cache, GQA 4:1, causal via the 2048 mask, runtime kv lengths, lse. */
static void test_fia_tnd_paged(void **state) {
    (void)state;
    static dense_att a;
    memset(&a, 0, sizeof a);
    const char *sh[] = {"8,4,32", "6,16,32", "6,16,32", "", "2048,2048", "2", "2", "", "", "", "", "", "", "", "2,4"};
    const char *dt[] = {"DT_BF16", "DT_BF16", "DT_BF16", "DT_UNDEFINED", "INT8", "INT64", "INT64", "DT_UNDEFINED",
                        "DT_UNDEFINED", "DT_UNDEFINED", "DT_UNDEFINED", "DT_UNDEFINED", "DT_UNDEFINED", "DT_UNDEFINED", "INT32"};
    const char *fm[] = {"ND", "ND", "ND", "NULL", "ND", "ND", "ND", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "ND"};
    char shapes[512], dts[1024], fms[512], quoted[600];
    fia_slots(shapes, sizeof shapes, sh, 15, "");
    fia_slots(dts, sizeof dts, dt, 15, "DT_UNDEFINED");
    fia_slots(fms, sizeof fms, fm, 15, "NULL");
    snprintf(quoted, sizeof quoted, "\"\"%s\"\"", shapes);
    kv cells[] = {{"Input Shapes", quoted}, {"Input Data Types", dts}, {"Input Formats", fms},
                  {"Runtime operator_input_shapes_raw", shapes}, {"Runtime actual_seq_lengths_kv_values", "20,33"},
                  {"Output Shapes", "\"8,4,32;8,4,1\""}, {"Output Data Types", "DT_BF16;FLOAT"}, {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = fia_run(cells, &p);
    const opdb_tensor *q = &p->in[0], *k = &p->in[1], *v = &p->in[2], *tab = &p->in[14];
    /* block table: rows need 2 and 3 blocks, allocated consecutively */
    static const int want[2][4] = {{0, 1, 0, 0}, {2, 3, 4, 0}};
    for (int r = 0; r < 2; r++)
        for (int j = 0; j < 4; j++) assert_true(at(tab, r * 4 + j) == want[r][j]);
    assert_true(at(&p->in[4], 1) == 1.0 && at(&p->in[4], 2048) == 0.0); /* causal mask: strict upper triangle */
    a.B = 2, a.N = 4, a.NKV = 1, a.DK = 32, a.DV = 32, a.mode = 3, a.scale = 1 / sqrt(32.0);
    a.ql[0] = a.ql[1] = 4, a.kl[0] = 20, a.kl[1] = 33;
    for (int b = 0; b < 2; b++) {
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 4; i++)
                for (int d = 0; d < 32; d++) a.q[b][h][i][d] = at(q, ((b * 4 + i) * 4 + h) * 32 + d);
        for (int j = 0; j < a.kl[b]; j++) {
            int blk = (int)at(tab, b * 4 + j / 16), off = j % 16;
            for (int d = 0; d < 32; d++) {
                a.k[b][0][j][d] = at(k, (blk * 16 + off) * 32 + d);
                a.v[b][0][j][d] = at(v, (blk * 16 + off) * 32 + d);
            }
        }
    }
    dense_run(&a);
    double ref[8 * 4 * 32], lref[8 * 4];
    for (int b = 0; b < 2; b++)
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 4; i++) {
                lref[(b * 4 + i) * 4 + h] = a.lse[b][h][i];
                for (int d = 0; d < 32; d++) ref[((b * 4 + i) * 4 + h) * 32 + d] = a.o[b][h][i][d];
            }
    expect_close(&p->out[0], ref, 8 * 4 * 32, tol_for(OPDB_DT_BF16));
    expect_close(&p->out[1], lref, 8 * 4, 1e-5);
    assert_true(p->flops == 2.0 * 4 * (4 * 20 + 4 * 33) * 64);
    g_be->release(g_be, inst);
}

/* TND query and contiguous TND key (kv heads = key[1]): no mask, lengths split evenly. */
static void test_fia_tnd_contiguous(void **state) {
    (void)state;
    static dense_att a;
    memset(&a, 0, sizeof a);
    const char *sh[] = {"10,4,16", "12,2,16", "12,2,16", "", "", "2", "2"};
    const char *dt[] = {"DT_FLOAT16", "DT_FLOAT16", "DT_FLOAT16", "DT_UNDEFINED", "DT_UNDEFINED", "INT64", "INT64"};
    char shapes[512], dts[1024], fms[512];
    fia_slots(shapes, sizeof shapes, sh, 7, "");
    fia_slots(dts, sizeof dts, dt, 7, "DT_UNDEFINED");
    fia_slots(fms, sizeof fms, NULL, 0, "");
    kv cells[] = {{"Input Shapes", shapes}, {"Input Data Types", dts}, {"Input Formats", fms},
                  {"Output Shapes", "\"10,4,16;\""}, {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = fia_run(cells, &p);
    assert_int_equal(p->nout, 1); /* empty lse slot: no lse output */
    a.B = 2, a.N = 4, a.NKV = 2, a.DK = 16, a.DV = 16, a.mode = 0, a.scale = 0.25;
    a.ql[0] = a.ql[1] = 5, a.kl[0] = a.kl[1] = 6;
    for (int b = 0; b < 2; b++) {
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 5; i++)
                for (int d = 0; d < 16; d++) a.q[b][h][i][d] = at(&p->in[0], ((b * 5 + i) * 4 + h) * 16 + d);
        for (int hk = 0; hk < 2; hk++)
            for (int j = 0; j < 6; j++)
                for (int d = 0; d < 16; d++) {
                    a.k[b][hk][j][d] = at(&p->in[1], ((b * 6 + j) * 2 + hk) * 16 + d);
                    a.v[b][hk][j][d] = at(&p->in[2], ((b * 6 + j) * 2 + hk) * 16 + d);
                }
    }
    dense_run(&a);
    double ref[10 * 4 * 16];
    for (int b = 0; b < 2; b++)
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 5; i++)
                for (int d = 0; d < 16; d++) ref[((b * 5 + i) * 4 + h) * 16 + d] = a.o[b][h][i][d];
    expect_close(&p->out[0], ref, 10 * 4 * 16, tol_for(OPDB_DT_F16));
    g_be->release(g_be, inst);
}

/* 4-D BNSD query with rope, paged BNSD cache, output re-laid NBSD. */
static void test_fia_bnsd_rope(void **state) {
    (void)state;
    static dense_att a;
    memset(&a, 0, sizeof a);
    const char *sh[31] = {"2,4,3,32", "5,1,8,32", "5,1,8,32", "", "", "2", "2"};
    const char *dt[31] = {"DT_BF16", "DT_BF16", "DT_BF16", "", "", "INT64", "INT64"};
    sh[14] = "2,2", dt[14] = "INT32", sh[24] = "2,4,3,16", dt[24] = "DT_BF16", sh[25] = "5,1,8,16", dt[25] = "DT_BF16";
    char shapes[512], dts[1024], fms[512];
    fia_slots(shapes, sizeof shapes, sh, 31, "");
    fia_slots(dts, sizeof dts, dt, 31, "");
    fia_slots(fms, sizeof fms, NULL, 0, "ND");
    kv cells[] = {{"Input Shapes", shapes}, {"Input Data Types", dts}, {"Input Formats", fms},
                  {"Runtime sparse_mode", "0"}, {"Output Shapes", "\"4,2,3,32\""}, {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = fia_run(cells, &p);
    assert_int_equal(p->out[0].dims[0], 4); /* NBSD */
    const opdb_tensor *q = &p->in[0], *k = &p->in[1], *v = &p->in[2], *qr = &p->in[24], *kr = &p->in[25];
    a.B = 2, a.N = 4, a.NKV = 1, a.DK = 48, a.DV = 32, a.mode = 0, a.scale = 1 / sqrt(48.0);
    a.ql[0] = a.ql[1] = 3, a.kl[0] = a.kl[1] = 8;
    for (int b = 0; b < 2; b++) {
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 3; i++) {
                for (int d = 0; d < 32; d++) a.q[b][h][i][d] = at(q, ((b * 4 + h) * 3 + i) * 32 + d);
                for (int d = 0; d < 16; d++) a.q[b][h][i][32 + d] = at(qr, ((b * 4 + h) * 3 + i) * 16 + d);
            }
        int blk = (int)at(&p->in[14], b * 2);
        for (int j = 0; j < 8; j++) {
            for (int d = 0; d < 32; d++) {
                a.k[b][0][j][d] = at(k, (blk * 8 + j) * 32 + d);
                a.v[b][0][j][d] = at(v, (blk * 8 + j) * 32 + d);
            }
            for (int d = 0; d < 16; d++) a.k[b][0][j][32 + d] = at(kr, (blk * 8 + j) * 16 + d);
        }
    }
    dense_run(&a);
    double ref[4 * 2 * 3 * 32];
    for (int b = 0; b < 2; b++)
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 3; i++)
                for (int d = 0; d < 32; d++) ref[((h * 2 + b) * 3 + i) * 32 + d] = a.o[b][h][i][d];
    expect_close(&p->out[0], ref, 4 * 2 * 3 * 32, tol_for(OPDB_DT_BF16));
    g_be->release(g_be, inst);
}

/* 3-D BSH query and key (heads from the runtime columns), left-up causal (sparse mode 2). */
static void test_fia_bsh_leftup(void **state) {
    (void)state;
    static dense_att a;
    memset(&a, 0, sizeof a);
    const char *sh[] = {"2,5,64", "2,7,32", "2,7,32"};
    const char *dt[] = {"FLOAT", "FLOAT", "FLOAT"};
    char shapes[512], dts[1024], fms[512];
    fia_slots(shapes, sizeof shapes, sh, 3, "");
    fia_slots(dts, sizeof dts, dt, 3, "DT_UNDEFINED");
    fia_slots(fms, sizeof fms, NULL, 0, "ND");
    kv cells[] = {{"Input Shapes", shapes}, {"Input Data Types", dts}, {"Input Formats", fms},
                  {"Runtime input_layout", "BSH"}, {"Runtime num_heads", "4"}, {"Runtime num_key_value_heads", "2"},
                  {"Runtime sparse_mode", "2"}, {NULL, NULL}};
    opdb_op_problem *p;
    void *inst = fia_run(cells, &p);
    /* §2.5: a 3-D query's scale is 1/sqrt(q[-1]) whatever the layout: 1/sqrt(64) for BSH */
    a.B = 2, a.N = 4, a.NKV = 2, a.DK = 16, a.DV = 16, a.mode = 2, a.scale = 0.125;
    a.ql[0] = a.ql[1] = 5, a.kl[0] = a.kl[1] = 7;
    for (int b = 0; b < 2; b++) {
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 5; i++)
                for (int d = 0; d < 16; d++) a.q[b][h][i][d] = at(&p->in[0], (b * 5 + i) * 64 + h * 16 + d);
        for (int hk = 0; hk < 2; hk++)
            for (int j = 0; j < 7; j++)
                for (int d = 0; d < 16; d++) {
                    a.k[b][hk][j][d] = at(&p->in[1], (b * 7 + j) * 32 + hk * 16 + d);
                    a.v[b][hk][j][d] = at(&p->in[2], (b * 7 + j) * 32 + hk * 16 + d);
                }
    }
    dense_run(&a);
    double ref[2 * 5 * 64];
    for (int b = 0; b < 2; b++)
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 5; i++)
                for (int d = 0; d < 16; d++) ref[(b * 5 + i) * 64 + h * 16 + d] = a.o[b][h][i][d];
    expect_close(&p->out[0], ref, 2 * 5 * 64, tol_for(OPDB_DT_F32));
    g_be->release(g_be, inst);
}

static void test_fia_plan_outcomes(void **state) {
    (void)state;
    /* a real database row: 3-D paged key, TND, kv heads 1 != key[1] and no raw shapes -> kept, skipped */
    kv real[] = {{"Input Shapes", "\"\"128,4,128;12307,128,128;12307,128,128;;2048,2048;128;128;;;;;;;;128,512;;;;;;;;;;;;;;;;\"\""},
                 {"Input Data Types", "DT_BF16;DT_BF16;DT_BF16;DT_UNDEFINED;INT8;INT64;INT64;DT_UNDEFINED;DT_UNDEFINED;"
                                      "DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;INT32;DT_UNDEFINED;"
                                      "DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;"
                                      "DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;"
                                      "DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED"},
                 {"Input Formats", "ND;ND;ND;NULL;ND;ND;ND;NULL;NULL;NULL;NULL;NULL;NULL;NULL;ND;NULL;NULL;NULL;NULL;NULL;"
                                   "NULL;NULL;NULL;NULL;NULL;NULL;NULL;NULL;NULL;NULL;NULL"},
                 {"Output Shapes", "\"\"128,4,128;\"\""}, {NULL, NULL}};
    const opdb_op_def *op = opdb_op_find("FusedInferAttentionScore");
    opdb_replay_row row = {"FusedInferAttentionScore", cell, real, false};
    static opdb_op_problem p;
    opdb_err err = {0, ""};
    assert_int_equal(op->plan(&row, &p, &err), OPDB_PLAN_SKIP);
    assert_non_null(strstr(err.msg, "not replayable exactly"));
    /* the same row with its kv heads given as key[1] replays: 128 decode sequences of one block */
    kv fixed[7];
    memcpy(fixed, real, sizeof real);
    fixed[4] = (kv){"Runtime num_key_value_heads", "128"};
    fixed[5] = (kv){NULL, NULL};
    row.ctx = fixed;
    opdb_err e2 = {0, ""};
    assert_int_equal(op->plan(&row, &p, &e2), -1); /* 128 kv heads do not divide 4 heads */
    assert_non_null(strstr(e2.msg, "do not group"));

    const char *sh[] = {"2,4,3,32", "2,4,8,32", "2,4,8,32"};
    const char *dt[] = {"DT_BF16", "DT_BF16", "DT_BF16"};
    char shapes[512], dts[1024], fms[512];
    fia_slots(shapes, sizeof shapes, sh, 3, "");
    fia_slots(dts, sizeof dts, dt, 3, "");
    fia_slots(fms, sizeof fms, NULL, 0, "ND");
    kv norope[] = {{"Input Shapes", shapes}, {"Input Data Types", dts}, {"Input Formats", fms}, {NULL, NULL}};
    expect_plan_error("FusedInferAttentionScore", norope, "Unsupported FusedInferAttentionScore shape pattern");
    kv short_dt[] = {{"Input Shapes", shapes}, {"Input Data Types", "DT_BF16;DT_BF16;DT_BF16"}, {"Input Formats", fms},
                     {NULL, NULL}};
    expect_plan_error("FusedInferAttentionScore", short_dt, "exactly 31 input slots");
    const char *msh[] = {"8,4,32", "8,4,32", "8,4,32", "", "2048,2048"};
    const char *mdt[] = {"DT_BF16", "DT_BF16", "DT_BF16", "", "FLOAT"};
    fia_slots(shapes, sizeof shapes, msh, 5, "");
    fia_slots(dts, sizeof dts, mdt, 5, "");
    kv fmask[] = {{"Input Shapes", shapes}, {"Input Data Types", dts}, {"Input Formats", fms}, {NULL, NULL}};
    expect_plan_error("FusedInferAttentionScore", fmask, "causal mask dtype DT_FLOAT");
}

/* The multi-threaded paths (GEMM split by rows and by columns, attention
 * groups over threads) on every CPU this process may use. */
static void test_parallel_paths(void **state) {
    (void)state;
    opdb_err err = {0, ""};
    opdb_backend_opts o;
    opdb_backend_opts_init(&o);
    opdb_backend *one = g_be, *all = opdb_backend_create("cpu", &o, &err);
    assert_non_null(all);
    assert_non_null(strstr(all->description, "pinned thread"));
    assert_true(strncmp(all->stack, "openblas", 8) == 0 && strstr(all->stack, "_gcc") != NULL);
    g_be = all;
    check_matmul("MatMulV2", "\"300,64;40,64\"", "DT_BF16;DT_BF16", "ND;ND", 300, 40, 64, OPDB_DT_BF16);
    check_matmul("MatMulV2", "\"8,64;640,64\"", "FLOAT;FLOAT", "ND;ND", 8, 640, 64, OPDB_DT_F32);
    test_fia_tnd_paged(state);
    test_grouped_matmul(state);
    g_be = one;
    all->destroy(all);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_v2),
        cmocka_unit_test(test_matmul_errors),
        cmocka_unit_test(test_matmul_inferred),
        cmocka_unit_test(test_batch_matmul),
        cmocka_unit_test(test_transpose_batch_matmul),
        cmocka_unit_test(test_quant_batch_matmul),
        cmocka_unit_test(test_grouped_matmul),
        cmocka_unit_test(test_grouped_swiglu_quant),
        cmocka_unit_test(test_moe_token_permute),
        cmocka_unit_test(test_moe_token_unpermute),
        cmocka_unit_test(test_fia_tnd_paged),
        cmocka_unit_test(test_fia_tnd_contiguous),
        cmocka_unit_test(test_fia_bnsd_rope),
        cmocka_unit_test(test_fia_bsh_leftup),
        cmocka_unit_test(test_fia_plan_outcomes),
        cmocka_unit_test(test_parallel_paths),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
