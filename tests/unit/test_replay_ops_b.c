/* CPU kernels of the elementwise, normalisation, rotary, quantisation and
 * data-movement operators (opsB): a row with real CSV spellings goes through
 * plan -> prepare (CPU backend, 1 thread) -> run, and every output is compared
 * with a naive double-precision computation made from a snapshot of the
 * inputs taken before the run (several operators write their inputs in
 * place). Each plan error path of docs/REPLAY-OPS.md §2 is exercised too. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "opdb/replay.h"
#include "replay/cpu/kernels.h"
#include "replay/cpu/vec.h"
#include "replay_check.h"

/* ---- harness ---- */

typedef struct row6 {
    const char *ish, *idt, *ifm, *osh, *odt, *ofm;
} row6;

static const char *row6_cell(const opdb_replay_row *row, const char *col) {
    const row6 *r = row->ctx;
    const char *v = strcmp(col, "Input Shapes") == 0        ? r->ish
                    : strcmp(col, "Input Data Types") == 0  ? r->idt
                    : strcmp(col, "Input Formats") == 0     ? r->ifm
                    : strcmp(col, "Output Shapes") == 0     ? r->osh
                    : strcmp(col, "Output Data Types") == 0 ? r->odt
                    : strcmp(col, "Output Formats") == 0    ? r->ofm
                                                            : NULL;
    return v ? v : "";
}

static opdb_backend *g_cpu;

static int setup_cpu(void **state) {
    (void)state;
    opdb_err err = {0, ""};
    opdb_backend_opts o;
    opdb_backend_opts_init(&o);
    o.threads = 1;
    g_cpu = opdb_backend_cpu_create(&o, &err);
    return g_cpu ? 0 : -1;
}

static int teardown_cpu(void **state) {
    (void)state;
    g_cpu->destroy(g_cpu);
    return 0;
}

/* One executed row: the backend's problem plus copies of its inputs as
 * they were before the run. */
typedef struct ran {
    void *inst;
    opdb_op_problem *p;
    opdb_tensor before[OPDB_MAX_TENSORS];
} ran;

static void run_row(const char *kernel, row6 r, ran *out) {
    const opdb_op_def *op = opdb_op_find(kernel);
    assert_non_null(op);
    opdb_replay_row row = {kernel, row6_cell, &r, false};
    opdb_op_problem p;
    opdb_err err = {0, ""};
    if (op->plan(&row, &p, &err)) fail_msg("%s plan failed: %s", kernel, err.msg);
    assert_true(p.bytes > 0);
    if (g_cpu->prepare(g_cpu, op, &p, 1234, &out->inst, &err)) fail_msg("%s prepare failed: %s", kernel, err.msg);
    out->p = opdb_cpu_inst_problem(out->inst);
    for (int i = 0; i < out->p->nin; i++) {
        out->before[i] = out->p->in[i];
        size_t n = opdb_tensor_bytes(&out->p->in[i]);
        out->before[i].data = malloc(n ? n : 1);
        memcpy(out->before[i].data, out->p->in[i].data, n);
    }
    double us = -1;
    if (g_cpu->run(g_cpu, out->inst, &us, &err)) fail_msg("%s run failed: %s", kernel, err.msg);
    assert_true(us >= 0);
}

static void done(ran *r) {
    for (int i = 0; i < r->p->nin; i++) free(r->before[i].data);
    g_cpu->release(g_cpu, r->inst);
}

static void plan_fails(const char *kernel, row6 r, const char *needle) {
    const opdb_op_def *op = opdb_op_find(kernel);
    assert_non_null(op);
    opdb_replay_row row = {kernel, row6_cell, &r, false};
    opdb_op_problem p;
    opdb_err err = {0, ""};
    assert_int_equal(op->plan(&row, &p, &err), -1);
    if (!strstr(err.msg, needle)) fail_msg("%s: error '%s' lacks '%s'", kernel, err.msg, needle);
}

static void dims_are(const opdb_tensor *t, int nd, const int64_t *d) {
    assert_int_equal(t->ndim, nd);
    for (int i = 0; i < nd; i++) assert_int_equal(t->dims[i], d[i]);
}

static double *alloc_naive(int64_t n) { return calloc((size_t)(n ? n : 1), sizeof(double)); }

/* ---- conversions ---- */

static void test_vec_conversions_match_scalar_helpers(void **s) {
    (void)s;
    enum { N = 1 << 16 };
    static float src[N], back[N];
    static uint16_t b[N], h[N];
    uint64_t rng = 99;
    for (int i = 0; i < N; i++) {
        uint32_t u = (uint32_t)opdb_rng_next(&rng);
        if (i % 4 == 0) /* every bit pattern: NaN, Inf, subnormals ... */
            memcpy(&src[i], &u, 4);
        else /* ... and the fp16 range, its subnormals and rounding ties */
            src[i] = (float)((int32_t)u % 70000) * (i % 4 == 1 ? 1.0f : i % 4 == 2 ? 0x1p-24f : 0.5f);
    }
    opdb_vec_store(b, OPDB_DT_BF16, 0, src, N);
    opdb_vec_store(h, OPDB_DT_F16, 0, src, N);
    for (int i = 0; i < N; i++) {
        if (b[i] != opdb_f32_to_bf16(src[i])) fail_msg("bf16(%a) = %04x", (double)src[i], b[i]);
        if (h[i] != opdb_f32_to_f16(src[i])) fail_msg("f16(%a) = %04x", (double)src[i], h[i]);
    }
    for (int i = 0; i < N; i++) h[i] = (uint16_t)i; /* every fp16 value */
    opdb_vec_load(back, h, OPDB_DT_F16, 0, N);
    for (int i = 0; i < N; i++) {
        float want = opdb_f16_to_f32(h[i]);
        assert_memory_equal(&back[i], &want, 4);
    }
    opdb_vec_load(back, b, OPDB_DT_BF16, 0, N);
    for (int i = 0; i < N; i++) {
        float want = opdb_bf16_to_f32(b[i]);
        assert_memory_equal(&back[i], &want, 4);
    }
    float q[6] = {2.5f, 3.5f, -2.5f, 300.0f, -300.0f, NAN};
    int8_t i8[6];
    opdb_vec_store(i8, OPDB_DT_I8, 0, q, 6);
    int8_t want8[6] = {2, 4, -2, 127, -128, -128}; /* half to even, saturated, NaN -> lowest */
    assert_memory_equal(i8, want8, 6);
    float big[3] = {3e9f, -3e9f, 16777215.0f};
    int32_t i32[3], want32[3] = {INT32_MAX - 127, INT32_MIN, 16777215};
    opdb_vec_store(i32, OPDB_DT_I32, 0, big, 3);
    assert_memory_equal(i32, want32, sizeof i32);
}

static void test_vec_exp_accuracy(void **s) {
    (void)s;
    enum { N = 2001 };
    float x[N];
    for (int i = 0; i < N; i++) x[i] = -87.0f + 0.087f * (float)i; /* -87 .. 87 */
    float y[N + 3];
    memcpy(y, x, sizeof x);
    y[N] = -INFINITY, y[N + 1] = -100.0f, y[N + 2] = 100.0f;
    opdb_vec_exp(y, N + 3);
    for (int i = 0; i < N; i++) {
        double want = exp((double)x[i]);
        if (!(fabs(y[i] - want) <= 1e-6 * want)) fail_msg("exp(%g) = %g, want %g", x[i], y[i], want);
    }
    assert_true(y[N] == 0.0f && y[N + 1] == 0.0f && isinf(y[N + 2]));
}

/* ---- Add ---- */

static void check_add(row6 r, int nd, const int64_t *odims, opdb_dtype odt) {
    ran x;
    run_row("Add", r, &x);
    const opdb_tensor *o = &x.p->out[0];
    dims_are(o, nd, odims);
    assert_int_equal(o->dtype, odt);
    int64_t n = opdb_tensor_numel(o);
    double *want = alloc_naive(n);
    opdb_bcast ba, bb;
    assert_int_equal(opdb_bcast_init(&ba, o, &x.before[0]), 0);
    if (x.p->nin > 1) assert_int_equal(opdb_bcast_init(&bb, o, &x.before[1]), 0);
    for (int64_t i = 0; i < n; i++) {
        /* naive broadcasting: decompose i over the output dims */
        int64_t rem = i, ia = 0, ib = 0;
        for (int k = o->ndim - 1; k >= 0; k--) {
            int64_t c = rem % o->dims[k];
            rem /= o->dims[k];
            ia += c * ba.stride[k];
            if (x.p->nin > 1) ib += c * bb.stride[k];
        }
        want[i] = replay_val(&x.before[0], ia) + (x.p->nin > 1 ? replay_val(&x.before[1], ib) : 1.0);
    }
    replay_near(o, want, n, replay_tol(odt));
    free(want);
    done(&x);
}

static void test_add(void **s) {
    (void)s;
    int64_t a[2] = {4, 64}, b[3] = {3, 5, 8}, c[2] = {4, 8}, d[1] = {300};
    check_add((row6){"\"4,64;4,64\"", "DT_BF16;DT_BF16", "ND;ND", "\"4,64\"", "DT_BF16", "ND"}, 2, a, OPDB_DT_BF16);
    check_add((row6){"3,1,8;5,1", "FLOAT;FLOAT", "ND;ND", "3,5,8", "FLOAT", "ND"}, 3, b, OPDB_DT_F32);
    check_add((row6){"4,8", "DT_FLOAT16", "ND", "4,8", "DT_FLOAT16", "ND"}, 2, c, OPDB_DT_F16);
    check_add((row6){"300;300;", "INT64;INT64;", "ND;ND;", "300", "INT64", "ND"}, 1, d, OPDB_DT_I64);
    check_add((row6){"4,64;64", "DT_BF16;FLOAT", "ND;ND", "4,64", "FLOAT", "ND"}, 2, a, OPDB_DT_F32);
    plan_fails("Add", (row6){"", "", "", "", "", ""}, "Add expects at least 1 input, got 0");
    plan_fails("Add", (row6){"4,3;4,5", "FLOAT;FLOAT", "ND;ND", "", "", ""}, "not broadcastable");
    plan_fails("Add", (row6){"4,3;4,3", "DT_INT4;DT_INT4", "ND;ND", "", "", ""}, "Unsupported dtype: DT_INT4");
    plan_fails("Add", (row6){"4,x", "FLOAT", "ND", "", "", ""}, "invalid literal");
}

/* ---- RmsNorm / AddRmsNormBias ---- */

/* want_y[r*d+j] = x * rstd * gamma (+ beta); returns rstd per row. */
static void naive_rmsnorm(const double *x, int64_t rows, int64_t d, const opdb_tensor *g, const opdb_tensor *beta,
                        double eps, double *y, double *rstd) {
    for (int64_t r = 0; r < rows; r++) {
        double ss = 0;
        for (int64_t j = 0; j < d; j++) ss += x[r * d + j] * x[r * d + j];
        rstd[r] = 1.0 / sqrt(ss / (double)d + eps);
        for (int64_t j = 0; j < d; j++)
            y[r * d + j] = x[r * d + j] * rstd[r] * replay_val(g, j) + (beta ? replay_val(beta, j) : 0.0);
    }
}

static void check_rms_norm(row6 r, int64_t rows, int64_t d, int nd, const int64_t *rstd_dims) {
    ran x;
    run_row("RmsNorm", r, &x);
    double *xs = alloc_naive(rows * d), *y = alloc_naive(rows * d), *rs = alloc_naive(rows);
    for (int64_t i = 0; i < rows * d; i++) xs[i] = replay_val(&x.before[0], i);
    naive_rmsnorm(xs, rows, d, &x.before[1], NULL, 1e-6, y, rs);
    replay_near(&x.p->out[0], y, rows * d, replay_tol(x.p->out[0].dtype));
    assert_int_equal(x.p->out[1].dtype, OPDB_DT_F32);
    dims_are(&x.p->out[1], nd, rstd_dims);
    replay_near(&x.p->out[1], rs, rows, 1e-5);
    free(xs), free(y), free(rs);
    done(&x);
}

static void test_rms_norm(void **s) {
    (void)s;
    int64_t r2[2] = {6, 1}, r3[3] = {2, 3, 1};
    check_rms_norm((row6){"\"6,128;128\"", "DT_BF16;DT_BF16", "ND;ND", "6,128;6,1", "DT_BF16;FLOAT", "ND;ND"}, 6,
                   128, 2, r2);
    check_rms_norm((row6){"2,3,1500;1500", "FLOAT;FLOAT", "ND;ND", "", "", ""}, 6, 1500, 3, r3);
    check_rms_norm((row6){"6,64;64", "DT_FLOAT16;FLOAT", "ND;ND", "", "", ""}, 6, 64, 2, r2);
    plan_fails("RmsNorm", (row6){"6,128", "DT_BF16", "ND", "", "", ""}, "RmsNorm expects exactly 2 inputs, got 1");
    plan_fails("RmsNorm", (row6){"6,128;64", "DT_BF16;DT_BF16", "ND;ND", "", "", ""}, "does not match the trailing");
    plan_fails("RmsNorm", (row6){"6,128;128", "INT32;DT_BF16", "ND;ND", "", "", ""}, "floating-point");
}

static void check_arnb(row6 r, int64_t rows, int64_t d, bool with_beta) {
    ran x;
    run_row("AddRmsNormBias", r, &x);
    assert_int_equal(x.p->nin, with_beta ? 4 : 3);
    double *xs = alloc_naive(rows * d), *y = alloc_naive(rows * d), *rs = alloc_naive(rows);
    for (int64_t i = 0; i < rows * d; i++) xs[i] = replay_val(&x.before[0], i) + replay_val(&x.before[1], i);
    naive_rmsnorm(xs, rows, d, &x.before[2], with_beta ? &x.before[3] : NULL, 1e-6, y, rs);
    opdb_dtype dt = x.p->out[0].dtype;
    replay_near(&x.p->out[0], y, rows * d, 2 * replay_tol(dt)); /* x rounded to its dtype before the norm */
    int64_t rd[2] = {rows, 1};
    dims_are(&x.p->out[1], 2, rd);
    replay_near(&x.p->out[1], rs, rows, 2 * replay_tol(dt));
    replay_near(&x.p->out[2], xs, rows * d, replay_tol(dt));
    free(xs), free(y), free(rs);
    done(&x);
}

static void test_add_rms_norm_bias(void **s) {
    (void)s;
    check_arnb((row6){"8,64;8,64;64;64", "DT_BF16;DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND;ND", "8,64;8,1;8,64",
                      "DT_BF16;FLOAT;DT_BF16", "ND;ND;ND"},
               8, 64, true);
    check_arnb((row6){"8,64;8,64;64;", "DT_FLOAT16;DT_FLOAT16;DT_FLOAT16;", "ND;ND;ND;", "", "", ""}, 8, 64, false);
    check_arnb((row6){"5,32;5,32;32;32", "FLOAT;FLOAT;FLOAT;DT_UNDEFINED", "ND;ND;ND;ND", "", "", ""}, 5, 32, false);
    check_arnb((row6){"5,32;5,32;32;32", "FLOAT;FLOAT;FLOAT;FLOAT", "ND;ND;ND;", "", "", ""}, 5, 32, false);
    plan_fails("AddRmsNormBias", (row6){"8,64;8,64;64", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND", "", "", ""},
               "expects exactly 4 input slots in Input Shapes, got 3");
    plan_fails("AddRmsNormBias", (row6){"8,64;8,64;64;", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND;", "", "", ""},
               "in Input Data Types, got 3");
    plan_fails("AddRmsNormBias", (row6){"8,64;8,32;64;", "DT_BF16;DT_BF16;DT_BF16;", "ND;ND;ND;", "", "", ""},
               "must be equal 2-D shapes");
    plan_fails("AddRmsNormBias", (row6){"8,64;8,64;32;", "DT_BF16;DT_BF16;DT_BF16;", "ND;ND;ND;", "", "", ""},
               "gamma shape (32) must be (64,)");
    plan_fails("AddRmsNormBias",
               (row6){"8,64;8,64;64;", "DT_BF16;DT_BF16;DT_BF16;", "ND;ND;ND;", "8,64;8;8,64", "", ""},
               "output 1 shape (8,1) does not match recorded (8)");
}

/* ---- activations and row reductions ---- */

static void test_swiglu(void **s) {
    (void)s;
    ran x;
    run_row("SwiGlu", (row6){"5,2100", "DT_FLOAT16", "ND", "5,1050", "DT_FLOAT16", "ND"}, &x);
    int64_t h = 1050, od[2] = {5, 1050};
    dims_are(&x.p->out[0], 2, od);
    double *want = alloc_naive(5 * h);
    for (int64_t r = 0; r < 5; r++)
        for (int64_t j = 0; j < h; j++) {
            double a = replay_val(&x.before[0], r * 2 * h + j), b = replay_val(&x.before[0], r * 2 * h + h + j);
            want[r * h + j] = a / (1.0 + exp(-a)) * b;
        }
    replay_near(&x.p->out[0], want, 5 * h, replay_tol(OPDB_DT_F16));
    free(want);
    done(&x);
    plan_fails("SwiGlu", (row6){"5,7", "DT_BF16", "ND", "", "", ""}, "odd");
    plan_fails("SwiGlu", (row6){"5,8;5,8", "DT_BF16;DT_BF16", "ND;ND", "", "", ""},
               "SwiGlu expects exactly 1 inputs, got 2");
}

static void check_softmax(row6 r, int64_t rows, int64_t d) {
    ran x;
    run_row("SoftmaxV2", r, &x);
    double *want = alloc_naive(rows * d);
    for (int64_t i = 0; i < rows; i++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < d; j++) mx = fmax(mx, replay_val(&x.before[0], i * d + j));
        for (int64_t j = 0; j < d; j++) sum += want[i * d + j] = exp(replay_val(&x.before[0], i * d + j) - mx);
        for (int64_t j = 0; j < d; j++) want[i * d + j] /= sum;
    }
    replay_near(&x.p->out[0], want, rows * d, replay_tol(x.p->out[0].dtype));
    free(want);
    done(&x);
}

static void test_softmax_v2(void **s) {
    (void)s;
    check_softmax((row6){"3,50", "FLOAT", "ND", "3,50", "FLOAT", "ND"}, 3, 50);
    check_softmax((row6){"2,3000", "DT_BF16", "ND", "", "", ""}, 2, 3000); /* streaming 3-pass path */
    check_softmax((row6){"4,4,16", "DT_FLOAT16", "ND", "", "", ""}, 16, 16);
    plan_fails("SoftmaxV2", (row6){"3,50", "INT32", "ND", "", "", ""}, "floating-point");
    plan_fails("SoftmaxV2", (row6){"", "", "", "", "", ""}, "SoftmaxV2 expects exactly 1 inputs, got 0");
}

static void check_argmax(row6 r, int64_t rows, int64_t d) {
    ran x;
    run_row("ArgMaxV2", r, &x);
    assert_int_equal(x.p->out[0].dtype, OPDB_DT_I64);
    assert_int_equal(opdb_tensor_numel(&x.p->out[0]), rows);
    const int64_t *got = x.p->out[0].data;
    for (int64_t i = 0; i < rows; i++) {
        int64_t best = 0;
        for (int64_t j = 1; j < d; j++)
            if (replay_val(&x.before[0], i * d + j) > replay_val(&x.before[0], i * d + best)) best = j;
        assert_int_equal(got[i], best);
    }
    done(&x);
}

static void test_arg_max_v2(void **s) {
    (void)s;
    check_argmax((row6){"4,33", "FLOAT", "ND", "4", "INT64", "ND"}, 4, 33);
    check_argmax((row6){"3000", "DT_BF16", "ND", "", "", ""}, 1, 3000); /* ties: first index wins */
    check_argmax((row6){"6,9", "INT32", "ND", "", "", ""}, 6, 9);
    plan_fails("ArgMaxV2", (row6){"4,33;4", "FLOAT;INT32", "ND;ND", "", "", ""}, "expects exactly 1 inputs, got 2");
}

/* Stable descending order by value. */
static void check_sort(row6 r, int64_t rows, int64_t d) {
    ran x;
    run_row("Sort", r, &x);
    const int64_t *idx = x.p->out[1].data;
    int64_t *order = malloc((size_t)d * sizeof *order);
    for (int64_t i = 0; i < rows; i++) {
        const opdb_tensor *in = &x.before[0];
        for (int64_t j = 0; j < d; j++) order[j] = j;
        for (int64_t j = 1; j < d; j++) /* insertion sort: obviously stable */
            for (int64_t k = j; k > 0 && replay_val(in, i * d + order[k]) > replay_val(in, i * d + order[k - 1]); k--) {
                int64_t t = order[k];
                order[k] = order[k - 1], order[k - 1] = t;
            }
        for (int64_t j = 0; j < d; j++) {
            assert_int_equal(idx[i * d + j], order[j]);
            assert_true(replay_val(&x.p->out[0], i * d + j) == replay_val(in, i * d + order[j]));
        }
    }
    free(order);
    done(&x);
}

static void test_sort(void **s) {
    (void)s;
    check_sort((row6){"3,100", "DT_BF16", "ND", "3,100;3,100", "DT_BF16;INT64", "ND;ND"}, 3, 100);
    check_sort((row6){"2,2000", "FLOAT", "ND", "", "", ""}, 2, 2000);
    check_sort((row6){"7,5", "INT32", "ND", "", "", ""}, 7, 5); /* many ties */
    plan_fails("Sort", (row6){"3,100;1", "DT_BF16;INT32", "ND;ND", "", "", ""}, "Sort expects exactly 1 inputs, got 2");
}

/* ---- quantisation ---- */

static void test_dynamic_quant(void **s) {
    (void)s;
    ran x;
    run_row("DynamicQuant", (row6){"4,1500", "DT_BF16", "ND", "4,1500;4", "INT8;FLOAT", "ND;ND"}, &x);
    const int8_t *y = x.p->out[0].data;
    const float *sc = x.p->out[1].data;
    int64_t d = 1500, sd[1] = {4};
    dims_are(&x.p->out[1], 1, sd);
    for (int64_t r = 0; r < 4; r++) {
        double amax = 0;
        for (int64_t j = 0; j < d; j++) amax = fmax(amax, fabs(replay_val(&x.before[0], r * d + j)));
        assert_true(fabs(sc[r] - amax / 127.0) <= 1e-6 * amax);
        for (int64_t j = 0; j < d; j++) {
            double q = replay_val(&x.before[0], r * d + j) * 127.0 / amax;
            assert_true(fabs(y[r * d + j] - q) <= 0.5 + 1e-4); /* rounded to the nearest integer */
        }
    }
    done(&x);
    plan_fails("DynamicQuant", (row6){"4,16", "INT8", "ND", "", "", ""}, "floating-point");
}

static void check_quant(row6 r, int64_t rows, int64_t d, opdb_dtype odt, double lo, double hi) {
    ran x;
    run_row("AscendQuantV2", r, &x);
    assert_int_equal(x.p->out[0].dtype, odt);
    for (int64_t i = 0; i < rows * d; i++) {
        int64_t c = i % d;
        const opdb_tensor *sc = &x.before[1];
        double v = replay_val(&x.before[0], i) * replay_val(sc, opdb_tensor_numel(sc) == 1 ? 0 : c);
        if (x.p->nin > 2) v += replay_val(&x.before[2], opdb_tensor_numel(&x.before[2]) == 1 ? 0 : c);
        double want = fmin(fmax(v, lo), hi);
        assert_true(fabs(replay_val(&x.p->out[0], i) - want) <= 0.5 + 1e-3);
    }
    done(&x);
}

static void test_ascend_quant_v2(void **s) {
    (void)s;
    /* uniform [-1,1) x times scale in [-1,1): small values; offsets move them around 0 */
    check_quant((row6){"4,32;32;32", "DT_FLOAT16;FLOAT;FLOAT", "ND;ND;ND", "4,32", "DT_INT8", "ND"}, 4, 32,
                OPDB_DT_I8, -128, 127);
    check_quant((row6){"3,40;40", "DT_BF16;DT_BF16", "ND;ND", "3,40", "UINT8", "ND"}, 3, 40, OPDB_DT_U8, 0, 255);
    check_quant((row6){"2,16;1;1", "FLOAT;FLOAT;FLOAT", "ND;ND;ND", "2,16", "INT32", "ND"}, 2, 16, OPDB_DT_I32,
                -2147483648.0, 2147483647.0);
    plan_fails("AscendQuantV2", (row6){"4,32;32", "FLOAT;FLOAT", "ND", "4,32", "INT8", "ND"},
               "equal shape/format/dtype counts, got 2/1/2");
    plan_fails("AscendQuantV2", (row6){"4,32;32", "FLOAT;FLOAT", "ND;ND", "4,32", "INT8;INT8", "ND"},
               "exactly 1 output dtype, got 2");
    plan_fails("AscendQuantV2", (row6){"4,32;32", "FLOAT;FLOAT", "ND;ND", "4,32", "FLOAT", "ND"},
               "unsupported output dtype DT_FLOAT");
    plan_fails("AscendQuantV2", (row6){"4,32;32", "FLOAT;FLOAT", "ND;ND", "4,32", "DT_INT4", "ND"},
               "Unsupported dtype: DT_INT4");
    plan_fails("AscendQuantV2", (row6){"4,32;7", "FLOAT;FLOAT", "ND;ND", "4,32", "INT8", "ND"},
               "scale has 7 values");
    plan_fails("AscendQuantV2", (row6){"4,32", "FLOAT", "ND", "4,32", "INT8", "ND"}, "at least 2 inputs, got 1");
}

/* ---- rotary ---- */

/* y for one row of d values: q = evens then odds, y = q*cos + rotate_half(q)*sin. */
static void naive_rope(const opdb_tensor *x, int64_t xo, const opdb_tensor *c, int64_t co, const opdb_tensor *s,
                     int64_t so, int64_t d, double *y) {
    int64_t h = d / 2;
    for (int64_t i = 0; i < d; i++) {
        double q = replay_val(x, xo + (i < h ? 2 * i : 2 * (i - h) + 1));
        double rot = i < h ? -replay_val(x, xo + 2 * i + 1) : replay_val(x, xo + 2 * (i - h));
        y[i] = q * replay_val(c, co + i) + rot * replay_val(s, so + i);
    }
}

static void test_interleave_rope(void **s) {
    (void)s;
    ran x;
    run_row("InterleaveRope",
            (row6){"2,4,3,64;2,1,3,64;2,1,3,64", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND", "2,4,3,64", "DT_BF16", "ND"},
            &x);
    int64_t n = 2 * 4 * 3 * 64;
    double *want = alloc_naive(n);
    for (int64_t b = 0; b < 2; b++)
        for (int64_t h = 0; h < 4; h++)
            for (int64_t t = 0; t < 3; t++) {
                int64_t row = (b * 4 + h) * 3 + t, crow = b * 3 + t;
                naive_rope(&x.before[0], row * 64, &x.before[1], crow * 64, &x.before[2], crow * 64, 64, want + row * 64);
            }
    replay_near(&x.p->out[0], want, n, replay_tol(OPDB_DT_BF16));
    free(want);
    done(&x);
    plan_fails("InterleaveRope", (row6){"2,4,3,63;2,1,3,63;2,1,3,63", "FLOAT;FLOAT;FLOAT", "ND;ND;ND", "", "", ""},
               "must be even");
    plan_fails("InterleaveRope", (row6){"2,4,3,64;2,1,3,64", "FLOAT;FLOAT", "ND;ND", "", "", ""},
               "InterleaveRope expects exactly 3 inputs, got 2");
    plan_fails("InterleaveRope", (row6){"2,4,3,64;3,1,3,64;2,1,3,64", "FLOAT;FLOAT;FLOAT", "ND;ND;ND", "", "", ""},
               "cos (3,1,3,64) does not broadcast");
}

static const char *const krc_tail = ";;;;;"; /* the five optional slots 7..11 */

static row6 krc_row(const char *shapes, const char *dtypes, const char *formats) {
    static char sh[512], dt[512], fm[512];
    snprintf(sh, sizeof sh, "%s%s", shapes, krc_tail);
    snprintf(dt, sizeof dt, "%s%s", dtypes, krc_tail);
    snprintf(fm, sizeof fm, "%s%s", formats, krc_tail);
    return (row6){sh, dt, fm, "", "", ""};
}

static const char *const krc_dtypes = "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT64;DT_BF16;DT_BF16";
static const char *const krc_formats = "ND;ND;ND;ND;ND;ND;ND";

static void krc_fails(const char *shapes, const char *needle) {
    plan_fails("KvRmsNormRopeCache", krc_row(shapes, krc_dtypes, krc_formats), needle);
}

static void test_kv_rms_norm_rope_cache(void **s) {
    (void)s;
    ran x;
    run_row("KvRmsNormRopeCache",
            krc_row("2,1,3,48;32;2,1,3,16;2,1,3,16;6;4,2,1,16;4,2,1,32", krc_dtypes, krc_formats),
            &x);
    const int64_t t = 6, dv = 32, dk = 16, d = 48;
    const int64_t *ix = x.before[4].data;
    for (int64_t i = 0; i < t; i++) assert_int_equal(ix[i], i);
    double *ckv = alloc_naive(t * dv), *kr = alloc_naive(t * dk), *rs = alloc_naive(t), *xs = alloc_naive(t * dv);
    for (int64_t r = 0; r < t; r++)
        for (int64_t j = 0; j < dv; j++) xs[r * dv + j] = replay_val(&x.before[0], r * d + j);
    naive_rmsnorm(xs, t, dv, &x.before[1], NULL, 1e-5, ckv, rs);
    for (int64_t r = 0; r < t; r++) naive_rope(&x.before[0], r * d + dv, &x.before[2], r * dk, &x.before[3], r * dk, dk, kr + r * dk);
    replay_near(&x.p->out[0], kr, t * dk, replay_tol(OPDB_DT_BF16));
    replay_near(&x.p->out[1], ckv, t * dv, replay_tol(OPDB_DT_BF16));
    /* cache slots 0..5 hold the outputs; slots 6, 7 keep their old contents */
    for (int64_t i = 0; i < t * dk; i++) assert_true(replay_val(&x.p->in[5], i) == replay_val(&x.p->out[0], i));
    for (int64_t i = 0; i < t * dv; i++) assert_true(replay_val(&x.p->in[6], i) == replay_val(&x.p->out[1], i));
    for (int64_t i = t * dk; i < 8 * dk; i++) assert_true(replay_val(&x.p->in[5], i) == replay_val(&x.before[5], i));
    free(ckv), free(kr), free(rs), free(xs);
    done(&x);
    plan_fails("KvRmsNormRopeCache", (row6){"2,1,3,48;32;2,1,3,16;2,1,3,16;6;4,2,1,16;4,2,1,32;;;;", "", "", "", "", ""},
               "expects exactly 12 input slots in Input Shapes, got 11");
    krc_fails("2,1,3,48;32;2,1,3,16;2,1,3,16;6;8,1,16;4,2,1,32", "k_cache must be 4-D");
    krc_fails("2,1,3,48;32;2,1,3,16;2,1,3,16;6;2,2,1,16;4,2,1,32", "6 tokens do not fit in k_cache (4 slots)");
    krc_fails("2,1,3,48;32;2,1,3,16;2,1,3,16;5;4,2,1,16;4,2,1,32", "index has 5 entries for 6 tokens");
    krc_fails("2,1,3,48;40;2,1,3,16;2,1,3,16;6;4,2,1,16;4,2,1,40", "kv last dim 48 must be gamma 40");
}

/* ---- data movement ---- */

static void test_gather_v2(void **s) {
    (void)s;
    ran x;
    run_row("GatherV2", (row6){"20,16;7", "DT_BF16;INT64", "ND;ND", "7,16", "DT_BF16", "ND"}, &x);
    int64_t od[2] = {7, 16};
    dims_are(&x.p->out[0], 2, od);
    const int64_t *ix = x.before[1].data;
    for (int64_t i = 0; i < 7; i++) {
        assert_true(ix[i] >= 0 && ix[i] < 8);
        for (int64_t j = 0; j < 16; j++) assert_true(replay_val(&x.p->out[0], i * 16 + j) == replay_val(&x.before[0], ix[i] * 16 + j));
    }
    done(&x);
    run_row("GatherV2", (row6){"3,4,5;2,6", "FLOAT;INT32", "ND;ND", "", "", ""}, &x); /* fewer rows than 8 */
    int64_t od3[4] = {2, 6, 4, 5};
    dims_are(&x.p->out[0], 4, od3);
    const int32_t *iy = x.before[1].data;
    for (int64_t i = 0; i < 12; i++) {
        assert_true(iy[i] >= 0 && iy[i] < 3);
        assert_memory_equal((float *)x.p->out[0].data + i * 20, (float *)x.before[0].data + iy[i] * 20, 80);
    }
    done(&x);
    plan_fails("GatherV2", (row6){"20,16;7", "DT_BF16;FLOAT", "ND;ND", "", "", ""}, "indices must be DT_INT32 or DT_INT64");
    plan_fails("GatherV2", (row6){"20,16", "DT_BF16", "ND", "", "", ""}, "GatherV2 expects at least 2 inputs, got 1");
}

static void test_index(void **s) {
    (void)s;
    ran x;
    run_row("Index", (row6){"\"64,32;1;2;16\"", "DT_BF16;INT64;INT64;INT64", "ND;ND;ND;ND", "\"16,32\"", "DT_BF16", "ND"},
            &x);
    int64_t od[2] = {16, 32};
    dims_are(&x.p->out[0], 2, od);
    assert_int_equal(x.p->in[1].dtype, OPDB_DT_I64);
    assert_memory_equal(x.p->out[0].data, x.before[0].data, 16 * 32 * 2);
    done(&x);
    run_row("Index", (row6){"10,3,2;1;1;4", "FLOAT;INT32;INT32;INT32", "ND;ND;ND;ND", "4,3,2", "FLOAT", "ND"}, &x);
    assert_int_equal(x.p->in[1].dtype, OPDB_DT_I32);
    assert_memory_equal(x.p->out[0].data, x.before[0].data, 4 * 6 * 4);
    done(&x);
    plan_fails("Index", (row6){"64,32;1;2", "DT_BF16;INT64;INT64;INT64", "", "16,32", "", ""},
               "Index expects exactly 4 input shapes, got 3");
    plan_fails("Index", (row6){"64,32;1;2;16", "DT_BF16;INT64;INT64", "", "16,32", "", ""},
               "Index expects exactly 4 input dtypes, got 3");
    plan_fails("Index", (row6){"64,32;1;2;16", "DT_BF16;INT64;INT64;INT64", "", "", "", ""},
               "at least 1 output shape");
    plan_fails("Index", (row6){"64,32;1;2;65", "DT_BF16;INT64;INT64;INT64", "", "65,32", "", ""},
               "L=65 out of range");
    plan_fails("Index", (row6){"64,32;1;2;0", "DT_BF16;INT64;INT64;INT64", "", "0,32", "", ""}, "L=0 out of range");
    plan_fails("Index", (row6){"64,32;1;2;16", "DT_BF16;INT64;INT64;INT8", "", "16,32", "", ""},
               "index dtype must be DT_INT32 or DT_INT64, got DT_INT8");
}

/* dst box of a (rows x cols) f16/f32 matrix problem, compared element-wise. */
static void check_box(const opdb_tensor *out, const opdb_tensor *in) {
    int nd = out->ndim;
    int64_t n = opdb_tensor_numel(out);
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, src = 0, stride = 1;
        bool inside = true;
        for (int k = nd - 1; k >= 0; k--) {
            int64_t c = rem % out->dims[k];
            rem /= out->dims[k];
            inside = inside && c < in->dims[k];
            src += c * stride;
            stride *= in->dims[k];
        }
        assert_true(replay_val(out, i) == (inside ? replay_val(in, src) : 0.0));
    }
}

static void test_slice_and_pad(void **s) {
    (void)s;
    ran x;
    run_row("Slice", (row6){"6,10;2;2", "FLOAT;INT64;INT64", "ND;ND;ND", "3,4", "FLOAT", "ND"}, &x);
    int64_t sd[2] = {3, 4};
    dims_are(&x.p->out[0], 2, sd);
    check_box(&x.p->out[0], &x.before[0]);
    done(&x);
    run_row("PadV3", (row6){"3,5;4", "DT_FLOAT16;INT64", "ND;ND", "4,8", "DT_FLOAT16", "ND"}, &x);
    int64_t pd[2] = {4, 8};
    dims_are(&x.p->out[0], 2, pd);
    check_box(&x.p->out[0], &x.before[0]);
    done(&x);
    run_row("PadV3", (row6){"2,3,5", "DT_BF16", "", "4,2,7", "", ""}, &x); /* pad dims 0 and 2, crop dim 1 */
    int64_t pc[3] = {4, 2, 7};
    dims_are(&x.p->out[0], 3, pc);
    check_box(&x.p->out[0], &x.before[0]);
    done(&x);
    run_row("PadV3", (row6){"2,3,5", "INT32", "ND", "3,8", "", ""}, &x); /* shorter output rank: last dims aligned */
    int64_t pr[3] = {2, 3, 8};
    dims_are(&x.p->out[0], 3, pr);
    check_box(&x.p->out[0], &x.before[0]);
    done(&x);
    plan_fails("Slice", (row6){"6,10", "FLOAT", "ND", "7,4", "FLOAT", "ND"}, "is not a slice of input");
    plan_fails("Slice", (row6){"6,10", "FLOAT", "ND", "", "", ""}, "is not a slice of input");
    plan_fails("PadV3", (row6){"6,10", "FLOAT", "ND", "", "", ""}, "PadV3 needs a recorded output shape");
}

static void check_transpose(row6 r, int a, int b) {
    ran x;
    run_row("Transpose", r, &x);
    const opdb_tensor *in = &x.before[0], *out = &x.p->out[0];
    assert_int_equal(out->dims[a], in->dims[b]);
    assert_int_equal(out->dims[b], in->dims[a]);
    int64_t n = opdb_tensor_numel(in);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[OPDB_MAX_DIMS], rem = i;
        for (int k = out->ndim - 1; k >= 0; k--) idx[k] = rem % out->dims[k], rem /= out->dims[k];
        int64_t t = idx[a];
        idx[a] = idx[b], idx[b] = t;
        int64_t src = 0;
        for (int k = 0; k < in->ndim; k++) src = src * in->dims[k] + idx[k];
        assert_true(replay_val(out, i) == replay_val(in, src));
    }
    done(&x);
}

static void test_transpose(void **s) {
    (void)s;
    check_transpose((row6){"2,3,4;3", "DT_BF16;INT64", "ND;ND", "2,4,3", "DT_BF16", "ND"}, 1, 2);
    check_transpose((row6){"37,70", "FLOAT", "", "70,37", "", ""}, 0, 1);
    check_transpose((row6){"4,4", "INT8", "ND", "4,4", "INT8", "ND"}, 0, 1); /* equal shapes -> (0,1) */
    check_transpose((row6){"2,3,4,5", "FLOAT", "ND", "2,4,3,5", "FLOAT", "ND"}, 1, 2);
    check_transpose((row6){"3,5,2,3", "DT_FLOAT16", "ND", "2,5,3,3", "", ""}, 0, 2);
    ran x;
    run_row("Transpose", (row6){"9", "INT64", "ND", "9", "INT64", "ND"}, &x); /* rank 1 -> (0,0): a copy */
    assert_memory_equal(x.p->out[0].data, x.before[0].data, 72);
    done(&x);
    plan_fails("Transpose", (row6){"2,3", "FLOAT", "ND", "", "", ""}, "Transpose needs a recorded output shape");
}

static void test_tensor_move(void **s) {
    (void)s;
    ran x;
    run_row("TensorMove", (row6){"3,100000", "INT8", "ND", "3,100000", "INT8", "ND"}, &x);
    assert_memory_equal(x.p->out[0].data, x.before[0].data, 300000);
    done(&x);
    plan_fails("TensorMove", (row6){"3,1;3,1", "INT8;INT8", "ND;ND", "", "", ""}, "expects exactly 1 inputs, got 2");
}

static void test_masked_fill(void **s) {
    (void)s;
    ran x;
    run_row("MaskedFill", (row6){"4,6,8;6,8", "DT_BF16;INT8", "ND;ND", "4,6,8", "DT_BF16", "ND"}, &x);
    assert_int_equal(x.p->nout, 0);
    assert_int_equal(x.p->in[1].dtype, OPDB_DT_BOOL);
    const uint8_t *m = x.before[1].data;
    int ones = 0;
    for (int64_t i = 0; i < 4 * 48; i++) {
        bool masked = m[i % 48] != 0;
        ones += masked;
        assert_true(replay_val(&x.p->in[0], i) == (masked ? 0.0 : replay_val(&x.before[0], i)));
    }
    assert_true(ones > 0 && ones < 4 * 48);
    done(&x);
    run_row("MaskedFill", (row6){"5,3;5,1", "INT64;BOOL", "ND;ND", "", "", ""}, &x);
    for (int64_t i = 0; i < 15; i++)
        assert_true(replay_val(&x.p->in[0], i) == (((uint8_t *)x.before[1].data)[i / 3] ? 0.0 : replay_val(&x.before[0], i)));
    done(&x);
    plan_fails("MaskedFill", (row6){"4,6,8", "DT_BF16", "ND", "", "", ""}, "MaskedFill expects exactly 2 inputs, got 1");
    plan_fails("MaskedFill", (row6){"4,6,8;5,8", "DT_BF16;BOOL", "ND;ND", "", "", ""}, "does not broadcast");
}

static void test_reshape_and_cache(void **s) {
    (void)s;
    ran x;
    run_row("ReshapeAndCacheNdKernel",
            (row6){"5,2,8;5,2,4;3,4,2,8;3,4,2,4;5", "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT32", "ND;ND;ND;ND;ND", "", "", ""},
            &x);
    assert_int_equal(x.p->nout, 0);
    const int32_t *slot = x.before[4].data;
    bool used[12] = {false};
    for (int64_t t = 0; t < 5; t++) {
        assert_true(slot[t] >= 0 && slot[t] < 12 && !used[slot[t]]);
        used[slot[t]] = true;
        assert_memory_equal((uint16_t *)x.p->in[2].data + slot[t] * 16, (uint16_t *)x.before[0].data + t * 16, 32);
        assert_memory_equal((uint16_t *)x.p->in[3].data + slot[t] * 8, (uint16_t *)x.before[1].data + t * 8, 16);
    }
    for (int64_t sl = 0; sl < 12; sl++)
        if (!used[sl])
            assert_memory_equal((uint16_t *)x.p->in[2].data + sl * 16, (uint16_t *)x.before[2].data + sl * 16, 32);
    done(&x);
    plan_fails("ReshapeAndCacheNdKernel", (row6){"5,2,8;5,2,4;3,4,2,8;3,4,2,4", "", "", "", "", ""},
               "ReshapeAndCacheNdKernel expects exactly 5 inputs, got 4");
    plan_fails("ReshapeAndCacheNdKernel", (row6){"5,2,8;5,2,4;1,4,2,8;1,4,2,4;5", "", "", "", "", ""},
               "5 tokens do not fit in 4 cache slots");
    plan_fails("ReshapeAndCacheNdKernel", (row6){"5,2,8;5,2,4;3,4,2,8;3,4,2,4;5", "DT_BF16;DT_BF16;INT8;DT_BF16;INT32",
                                                 "", "", "", ""},
               "key dtype DT_BF16 differs");
}

static void test_scatter_nd_update(void **s) {
    (void)s;
    ran x;
    run_row("ScatterNdUpdate", (row6){"10,6;4,1;4,6", "FLOAT;INT64;FLOAT", "ND;ND;ND", "10,6", "FLOAT", "ND"}, &x);
    int64_t id[2] = {4, 1};
    dims_are(&x.p->in[1], 2, id);
    assert_int_equal(x.p->in[1].dtype, OPDB_DT_I32);
    const int32_t *ix = x.before[1].data;
    bool hit[10] = {false};
    for (int64_t i = 0; i < 4; i++) {
        assert_true(ix[i] >= 0 && ix[i] < 10 && !hit[ix[i]]);
        hit[ix[i]] = true;
        assert_memory_equal((float *)x.p->in[0].data + ix[i] * 6, (float *)x.before[2].data + i * 6, 24);
    }
    for (int64_t r = 0; r < 10; r++)
        if (!hit[r]) assert_memory_equal((float *)x.p->in[0].data + r * 6, (float *)x.before[0].data + r * 6, 24);
    done(&x);
    plan_fails("ScatterNdUpdate", (row6){"3,6;4,1;4,6", "FLOAT;INT32;FLOAT", "", "", "", ""},
               "4 indices do not fit in 3 rows");
    plan_fails("ScatterNdUpdate", (row6){"10,6;4,1;4,5", "FLOAT;INT32;FLOAT", "", "", "", ""},
               "updates hold 20 values, expected 4 x 6");
    plan_fails("ScatterNdUpdate", (row6){"10,6;4,1", "FLOAT;INT32", "", "", "", ""}, "expects exactly 3 inputs, got 2");
}

/* q/k heads: rmsnorm * weight rounded to the output dtype, then rotate-half
 * rotary on the first rope values with the cache row's cos | sin halves. */
static void naive_norm_rope(const ran *x, int64_t t, int64_t src, int64_t hidden, int64_t head, int64_t rope,
                          const opdb_tensor *w, opdb_dtype odt, double *want) {
    const opdb_tensor *in = &x->before[0], *cache = &x->before[1];
    int64_t pos = ((const int64_t *)x->before[2].data)[t], h = rope / 2;
    for (int64_t hd = 0; hd < hidden / head; hd++) {
        double y[512], ss = 0;
        assert_true(head <= 512);
        for (int64_t i = 0; i < head; i++) ss += pow(replay_val(in, src + hd * head + i), 2);
        double rstd = 1.0 / sqrt(ss / (double)head + 1e-6);
        for (int64_t i = 0; i < head; i++) {
            float v = (float)(replay_val(in, src + hd * head + i) * rstd * replay_val(w, i));
            y[i] = odt == OPDB_DT_BF16 ? opdb_bf16_to_f32(opdb_f32_to_bf16(v)) : v;
        }
        double *o = want + t * hidden + hd * head;
        for (int64_t i = 0; i < head; i++) o[i] = y[i];
        for (int64_t i = 0; i < h; i++) {
            double c = replay_val(cache, pos * rope + i), sn = replay_val(cache, pos * rope + h + i);
            o[i] = y[i] * c - y[i + h] * sn;
            o[i + h] = y[i + h] * c + y[i] * sn;
        }
    }
}

static void check_split_qkv(row6 r, int64_t t, int64_t qh, int64_t kvh, int64_t head, int64_t rope) {
    ran x;
    run_row("split_qkv_rmsnorm_rope_kernel", r, &x);
    assert_int_equal(x.p->iparam[2], head);
    opdb_dtype odt = x.p->out[0].dtype;
    int64_t width = x.before[0].dims[1], rows = x.before[1].dims[0];
    const int64_t *pos = x.before[2].data;
    for (int64_t i = 0; i < t; i++) assert_true(pos[i] >= 0 && pos[i] < rows);
    double *q = alloc_naive(t * qh), *k = alloc_naive(t * kvh), *v = alloc_naive(t * kvh);
    for (int64_t i = 0; i < t; i++) {
        naive_norm_rope(&x, i, i * width, qh, head, rope, &x.before[3], odt, q);
        naive_norm_rope(&x, i, i * width + qh, kvh, head, rope, &x.before[4], odt, k);
        for (int64_t j = 0; j < kvh; j++) v[i * kvh + j] = replay_val(&x.before[0], i * width + qh + kvh + j);
    }
    replay_near(&x.p->out[0], q, t * qh, 2 * replay_tol(odt));
    replay_near(&x.p->out[1], k, t * kvh, 2 * replay_tol(odt));
    replay_near(&x.p->out[2], v, t * kvh, 0.0);
    free(q), free(k), free(v);
    done(&x);
}

static void test_split_qkv_rmsnorm_rope(void **s) {
    (void)s;
    /* Qwen-like: head_dim = rope_dim = 128, positions given */
    check_split_qkv((row6){"8,5120;4096,128;8", "DT_BF16;DT_BF16;INT64", "ND;ND;ND", "8,4096;8,512;8,512",
                           "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND"},
                    8, 4096, 512, 128, 128);
    /* two inputs: cache (2048, 64); 64 does not divide 96 -> head_dim 96, partial rope */
    check_split_qkv((row6){"5,576;2048,64", "DT_FLOAT;DT_FLOAT", "ND;ND", "5,384;5,96", "", ""}, 5, 384, 96, 96, 64);
    plan_fails("split_qkv_rmsnorm_rope_kernel",
               (row6){"8,5120;4096,128", "FLOAT;FLOAT", "ND;ND", "8,4096;8,512", "FLOAT;FLOAT", "ND;ND"},
               "unsupported weight dtype FLOAT");
    plan_fails("split_qkv_rmsnorm_rope_kernel",
               (row6){"8,5120;4096,128;8", "DT_BF16;DT_BF16;INT64", "ND;ND", "8,4096;8,512", "", ""},
               "equal shape/format/dtype counts");
    plan_fails("split_qkv_rmsnorm_rope_kernel", (row6){"8,5120", "DT_BF16", "ND", "8,4096;8,512", "", ""},
               "expects 2-3 inputs and 2-3 outputs, got 1/2");
    plan_fails("split_qkv_rmsnorm_rope_kernel", (row6){"8,500;4096,128", "DT_BF16;DT_BF16", "ND;ND", "8,4096;8,512", "", ""},
               "input must be (T, >= 5120)");
    plan_fails("split_qkv_rmsnorm_rope_kernel", (row6){"8,700;4096,128", "DT_BF16;DT_BF16", "ND;ND", "8,300;8,100", "", ""},
               "no head dim >= 128 divides 300 and 100");
}

/* Naive sparse attention over the cache rows the indices select. */
static void check_sfa(row6 r, int64_t t, int64_t n, int64_t l, int64_t rd, int64_t bs, int64_t topk) {
    ran x;
    run_row("SparseFlashAttention", r, &x);
    const opdb_tensor *q = &x.before[0], *key = &x.before[1], *val = &x.before[2], *qpe = &x.before[7],
                      *kpe = &x.before[8];
    const int32_t *sidx = x.before[3].data, *bt = x.before[4].data, *ql = x.before[5].data, *kl = x.before[6].data;
    int64_t w = x.before[4].dims[1], batch = x.before[4].dims[0];
    assert_int_equal(ql[batch - 1], t);
    double scale = 1.0 / sqrt((double)(l + rd)), *want = alloc_naive(t * n * l), sc[64];
    assert_true(topk <= 64);
    for (int64_t i = 0; i < t; i++) {
        int64_t b = 0;
        while (i >= ql[b]) b++;
        for (int64_t h = 0; h < n; h++) {
            double mx = -INFINITY, sum = 0;
            int64_t rows[64];
            for (int64_t j = 0; j < topk; j++) {
                int64_t pos = sidx[i * topk + j];
                assert_true(pos >= 0 && pos < kl[b]);
                rows[j] = bt[b * w + pos / bs] * bs + pos % bs;
                double s = 0;
                for (int64_t d = 0; d < l; d++) s += replay_val(q, (i * n + h) * l + d) * replay_val(key, rows[j] * l + d);
                for (int64_t d = 0; d < rd; d++)
                    s += replay_val(qpe, (i * n + h) * rd + d) * replay_val(kpe, rows[j] * rd + d);
                sc[j] = s * scale;
                mx = fmax(mx, sc[j]);
            }
            for (int64_t j = 0; j < topk; j++) sum += sc[j] = exp(sc[j] - mx);
            for (int64_t j = 0; j < topk; j++)
                for (int64_t d = 0; d < l; d++) want[(i * n + h) * l + d] += sc[j] / sum * replay_val(val, rows[j] * l + d);
        }
    }
    replay_near(&x.p->out[0], want, t * n * l, replay_tol(x.p->out[0].dtype));
    free(want);
    done(&x);
}

static void test_sparse_flash_attention(void **s) {
    (void)s;
    /* batch 2 (q lengths 3 + 2), block table 2 x 3 over 6 blocks of 4: 12 positions, topk 10 */
    check_sfa((row6){"5,4,32;6,4,1,32;6,4,1,32;5,1,10;2,3;2;2;5,4,16;6,4,1,16",
                     "DT_BF16;DT_BF16;DT_BF16;INT32;INT32;INT32;INT32;DT_BF16;DT_BF16", "", "5,4,32", "DT_BF16", ""},
              5, 4, 32, 16, 4, 10);
    /* topk 20 > 12 positions: indices padded with the last one */
    check_sfa((row6){"3,2,16;4,4,1,16;4,4,1,16;3,1,20;1,3;1;1;3,2,8;4,4,1,8", "FLOAT;FLOAT;FLOAT;INT32;INT32;INT32;INT32;FLOAT;FLOAT",
                     "", "", "", ""},
              3, 2, 16, 8, 4, 20);
    plan_fails("SparseFlashAttention", (row6){"4,128,512;1;1;1;1;1;1;1", "", "", "", "", ""},
               "SparseFlashAttention expects exactly 9 inputs, got 8");
    plan_fails("SparseFlashAttention", (row6){"5,4,30;6,4,1,32;6,4,1,32;5,1,10;2,3;2;2;5,4,16;6,4,1,16", "", "", "", "", ""},
               "do not agree");
}

/* Top-k positions by sum_g w * ReLU(q_g . k_s) over the causally visible keys. */
static void check_indexer(row6 r, int64_t t, int64_t n, int64_t d, int64_t bs, int64_t sparse) {
    ran x;
    run_row("LightningIndexer", r, &x);
    const opdb_tensor *q = &x.before[0], *key = &x.before[1], *wt = &x.before[2];
    const int32_t *cum = x.before[3].data, *kl = x.before[4].data, *bt = x.before[5].data;
    const int32_t *got = x.p->out[0].data;
    int64_t w = x.before[5].dims[1];
    for (int64_t i = 0; i < t; i++) {
        int64_t b = 0;
        while (i >= cum[b]) b++;
        int64_t start = b ? cum[b - 1] : 0, vis = kl[b] - (cum[b] - start) + (i - start) + 1;
        double score[256];
        int64_t order[256];
        assert_true(vis > 0 && vis <= 256);
        for (int64_t s = 0; s < vis; s++) {
            int64_t slot = bt[b * w + s / bs] * bs + s % bs;
            score[s] = 0;
            for (int64_t g = 0; g < n; g++) {
                double dot = 0;
                for (int64_t e = 0; e < d; e++) dot += replay_val(q, (i * n + g) * d + e) * replay_val(key, slot * d + e);
                score[s] += replay_val(wt, i * n + g) * fmax(dot, 0.0);
            }
            order[s] = s;
            for (int64_t k = s; k > 0 && score[order[k]] > score[order[k - 1]]; k--) {
                int64_t tmp = order[k];
                order[k] = order[k - 1], order[k - 1] = tmp;
            }
        }
        for (int64_t j = 0; j < sparse; j++) {
            int32_t g = got[i * sparse + j];
            if (j >= vis) {
                assert_int_equal(g, -1);
                continue;
            }
            assert_true(g >= 0 && g < vis); /* rank j holds a score equal to the reference's rank j */
            if (!(fabs(score[g] - score[order[j]]) <= 1e-3 * (fabs(score[order[0]]) + 1e-9)))
                fail_msg("token %lld rank %lld: position %d scores %g, want %g", (long long)i, (long long)j, g,
                         score[g], score[order[j]]);
        }
    }
    done(&x);
}

static void test_lightning_indexer(void **s) {
    (void)s;
    /* 2 batches: q lengths 3 + 3, key lengths 10 + 10 from 5 blocks of 4 through a 2 x 6 table */
    check_indexer((row6){"6,4,16;5,4,1,16;6,4;2;2;2,6", "DT_BF16;DT_BF16;FLOAT;INT32;INT32;INT32", "", "6,1,9", "INT32", ""},
                  6, 4, 16, 4, 9);
    check_indexer((row6){"4,2,8;3,8,1,8;4,2;1;1;1,3", "FLOAT;FLOAT;FLOAT;INT32;INT32;INT32", "", "", "", ""}, 4, 2, 8, 8,
                  2048); /* no output: 2048 slots, mostly -1 */
    plan_fails("LightningIndexer", (row6){"4,64,128;64,128,1,128;4,64;2;2", "", "", "", "", ""},
               "LightningIndexer expects exactly 6 inputs, got 5");
    plan_fails("LightningIndexer", (row6){"6,4,16;5,4,1,16;6,4;2;2;2,1", "", "", "", "", ""},
               "key length 10 exceeds the block table (1 x 4)");
}

/* Naive MLA attention of one ring step (causal without a prefix), merged
 * with the prefix output/lse by log-sum-exp weights when present. */
static void check_ring(row6 r, int64_t tq, int64_t tk, int64_t h, int64_t dn, int64_t dr, int64_t dv, bool prefix) {
    ran x;
    run_row("RINGMLAPrefillBF16Kernel", r, &x);
    assert_int_equal(x.p->nin, prefix ? 7 : 5);
    const opdb_tensor *in = x.before;
    double scale = 1.0 / sqrt((double)(dn + dr)), *o = alloc_naive(tq * h * dv), *lse = alloc_naive(h * tq), sc[512];
    assert_true(tk <= 512);
    for (int64_t i = 0; i < tq; i++)
        for (int64_t hd = 0; hd < h; hd++) {
            int64_t vis = prefix ? tk : i + tk - tq + 1;
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < vis; j++) {
                double dot = 0;
                for (int64_t d = 0; d < dn; d++)
                    dot += replay_val(&in[0], (i * h + hd) * dn + d) * replay_val(&in[2], (j * h + hd) * dn + d);
                for (int64_t d = 0; d < dr; d++)
                    dot += replay_val(&in[1], (i * h + hd) * dr + d) * replay_val(&in[3], (j * h + hd) * dr + d);
                sc[j] = dot * scale;
                mx = fmax(mx, sc[j]);
            }
            for (int64_t j = 0; j < vis; j++) sum += sc[j] = exp(sc[j] - mx);
            double *row = o + (i * h + hd) * dv, l = mx + log(sum);
            for (int64_t j = 0; j < vis; j++)
                for (int64_t d = 0; d < dv; d++) row[d] += sc[j] / sum * replay_val(&in[4], (j * h + hd) * dv + d);
            if (prefix) {
                double lp = replay_val(&in[6], hd * tq + i), m2 = fmax(lp, l), wp = exp(lp - m2), wn = exp(l - m2);
                for (int64_t d = 0; d < dv; d++)
                    row[d] = (replay_val(&in[5], (i * h + hd) * dv + d) * wp + row[d] * wn) / (wp + wn);
                l = m2 + log(wp + wn);
            }
            lse[hd * tq + i] = l;
        }
    replay_near(&x.p->out[0], o, tq * h * dv, replay_tol(x.p->out[0].dtype));
    replay_near(&x.p->out[1], lse, h * tq, 1e-5);
    free(o), free(lse);
    done(&x);
}

static void test_ring_mla_prefill(void **s) {
    (void)s;
    /* first ring: causal over 6 tokens, mask slot (512, 512) */
    check_ring((row6){"6,2,16;6,2,8;6,2,16;6,2,8;6,2,16;512,512", "DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16", "",
                      "6,2,16;2,6", "DT_BF16;FLOAT", ""},
               6, 6, 2, 16, 8, 16, false);
    /* later ring: 5 queries against 300 prefix keys (two key chunks), merged with slots 13 and 14 */
    check_ring((row6){"5,2,16;5,2,8;300,2,16;300,2,8;300,2,12;N/A;;;;;;;;5,2,12;2,5",
                      "FLOAT;FLOAT;FLOAT;FLOAT;FLOAT;UNDEFINED;;;;;;;;FLOAT;FLOAT", "", "", "", ""},
               5, 300, 2, 16, 8, 12, true);
    plan_fails("RINGMLAPrefillBF16Kernel", (row6){"128,16,128;128,16,64;N/A;128,16,64;128,16,128", "DT_BF16", "", "16,1", "", ""},
               "required input slot 2 is absent");
    plan_fails("RINGMLAPrefillBF16Kernel", (row6){"128,16,128;128,16,64;128,16,128;128,16,64", "DT_BF16", "", "", "", ""},
               "at least 5 input slots, got 4");
    plan_fails("RINGMLAPrefillBF16Kernel", (row6){"6,2,16;6,2,8;6,2,16;6,2,8;6,2,16", "DT_BF16", "", "", "", ""},
               "no output shape (out0 or slot 13)");
    plan_fails("RINGMLAPrefillBF16Kernel", (row6){"6,2,16;6,2,8;6,2,16;6,2,4;6,2,16", "DT_BF16", "", "6,2,16", "", ""},
               "q/k/v shapes do not agree");
}

/* Structured inputs are a function of the seed: same seed, same slots. */
static void test_fill_is_deterministic(void **s) {
    (void)s;
    const opdb_op_def *op = opdb_op_find("ScatterNdUpdate");
    row6 r = {"1000,4;50,1;50,4", "FLOAT;INT32;FLOAT", "ND;ND;ND", "", "", ""};
    opdb_replay_row row = {"ScatterNdUpdate", row6_cell, &r, false};
    int32_t idx[3][50];
    uint64_t seeds[3] = {7, 7, 8};
    for (int k = 0; k < 3; k++) {
        opdb_op_problem p;
        opdb_err err = {0, ""};
        void *inst;
        assert_int_equal(op->plan(&row, &p, &err), 0);
        assert_int_equal(g_cpu->prepare(g_cpu, op, &p, seeds[k], &inst, &err), 0);
        memcpy(idx[k], opdb_cpu_inst_problem(inst)->in[1].data, sizeof idx[k]);
        g_cpu->release(g_cpu, inst);
    }
    assert_memory_equal(idx[0], idx[1], sizeof idx[0]);
    assert_memory_not_equal(idx[0], idx[2], sizeof idx[0]);
}

/* ---- operators without a CPU kernel ---- */

static void skipped_plans(const char *kernel, row6 r, const char *reason) {
    const opdb_op_def *op = opdb_op_find(kernel);
    assert_non_null(op);
    assert_null(op->cpu_run);
    assert_string_equal(op->cpu_skip_reason, reason);
    const char *why = NULL;
    assert_false(g_cpu->supports(g_cpu, op, &why));
    assert_string_equal(why, reason);
    opdb_replay_row row = {kernel, row6_cell, &r, false};
    opdb_op_problem p;
    opdb_err err = {0, ""};
    if (op->plan(&row, &p, &err)) fail_msg("%s plan failed: %s", kernel, err.msg);
    assert_true(p.flops > 0 && p.bytes > 0);
}

static void test_skipped_operators(void **s) {
    (void)s;
    skipped_plans("DispatchFFNCombine",
                  (row6){"16,7168;8,7168,4096;8,2048,7168;16,8;8,4096;8,7168;16,8",
                         "DT_BF16;INT8;INT8;INT32;FLOAT;FLOAT;FLOAT", "ND;FRACTAL_NZ;FRACTAL_NZ;ND;ND;ND;",
                         "16,7168;8", "DT_BF16;INT32", "ND;"},
                  "needs an expert-parallel group of devices");
    plan_fails("DispatchFFNCombine", (row6){"16,7168;8,7168,4096;8,2048,7168;16,8;8,4096;8,7168", "", "", "", "", ""},
               "expects exactly 7 input slots in Input Shapes, got 6");
    plan_fails("DispatchFFNCombine",
               (row6){"16,7168;8,7168,4096;8,2048,7168;16,8;8,4096;;16,8", "DT_BF16;INT8;INT8;INT32;FLOAT;FLOAT;FLOAT",
                      ";;;;;;", "16,7168;8", "DT_BF16;INT32", ";"},
               "input slot 5 is empty");
    plan_fails("DispatchFFNCombine",
               (row6){"16,7168;8,7168,4096;8,2048,7000;16,8;8,4096;8,7168;16,8", "DT_BF16;INT8;INT8;INT32;FLOAT;FLOAT;FLOAT",
                      ";;;;;;", "16,7168;8", "DT_BF16;INT32", ";"},
               "w2 must be (8, ., 7168)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vec_conversions_match_scalar_helpers),
        cmocka_unit_test(test_vec_exp_accuracy),
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_rms_norm),
        cmocka_unit_test(test_add_rms_norm_bias),
        cmocka_unit_test(test_swiglu),
        cmocka_unit_test(test_softmax_v2),
        cmocka_unit_test(test_arg_max_v2),
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_dynamic_quant),
        cmocka_unit_test(test_ascend_quant_v2),
        cmocka_unit_test(test_interleave_rope),
        cmocka_unit_test(test_kv_rms_norm_rope_cache),
        cmocka_unit_test(test_gather_v2),
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_slice_and_pad),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_tensor_move),
        cmocka_unit_test(test_masked_fill),
        cmocka_unit_test(test_reshape_and_cache),
        cmocka_unit_test(test_scatter_nd_update),
        cmocka_unit_test(test_split_qkv_rmsnorm_rope),
        cmocka_unit_test(test_sparse_flash_attention),
        cmocka_unit_test(test_lightning_indexer),
        cmocka_unit_test(test_ring_mla_prefill),
        cmocka_unit_test(test_fill_is_deterministic),
        cmocka_unit_test(test_skipped_operators),
    };
    return cmocka_run_group_tests(tests, setup_cpu, teardown_cpu);
}
