/* Replay base helpers: dtype spellings, bf16/fp16 conversions (rounding,
 * NaN/Inf, subnormals), slot splitting, shapes, make() and the registry. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "opdb/db.h"
#include "opdb/replay.h"
#include "opdb/update.h"
#include "replay_test_row.h"

static void test_dtype_parse(void **state) {
    (void)state;
    static const struct { const char *in; opdb_dtype dt; } ok[] = {
        {"FLOAT", OPDB_DT_F32},     {"DT_FLOAT", OPDB_DT_F32}, {"DT_BF16", OPDB_DT_BF16}, {" FLOAT16 ", OPDB_DT_F16},
        {"INT64", OPDB_DT_I64},     {"DT_INT8", OPDB_DT_I8},   {"UINT8", OPDB_DT_U8},     {"INT16", OPDB_DT_I16},
        {"DT_INT32", OPDB_DT_I32},  {"BOOL", OPDB_DT_BOOL},    {"DOUBLE", OPDB_DT_F64},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        opdb_err err = {0, ""};
        opdb_dtype dt = OPDB_DT_UNDEFINED;
        assert_int_equal(opdb_dtype_parse(ok[i].in, strlen(ok[i].in), &dt, &err), 0);
        assert_int_equal(dt, ok[i].dt);
    }
    static const char *const bad[][2] = {{"", "Unsupported dtype: DT_UNDEFINED"},
                                         {"DT_UNDEFINED", "Unsupported dtype: DT_UNDEFINED"},
                                         {"INT4", "Unsupported dtype: DT_INT4"},
                                         {"DT_UINT64", "Unsupported dtype: DT_UINT64"}};
    for (size_t i = 0; i < 4; i++) {
        opdb_err err = {0, ""};
        opdb_dtype dt = OPDB_DT_F32;
        assert_int_equal(opdb_dtype_parse(bad[i][0], strlen(bad[i][0]), &dt, &err), -1);
        assert_string_equal(err.msg, bad[i][1]);
        assert_int_equal(dt, OPDB_DT_UNDEFINED);
    }
    assert_string_equal(opdb_dtype_name(OPDB_DT_F16), "DT_FLOAT16");
    assert_string_equal(opdb_dtype_name(OPDB_DT_F32), "DT_FLOAT");
    assert_int_equal(opdb_dtype_size(OPDB_DT_BF16), 2);
    assert_int_equal(opdb_dtype_size(OPDB_DT_I64), 8);
    assert_int_equal(opdb_dtype_size(OPDB_DT_BOOL), 1);
    assert_true(opdb_dtype_is_float(OPDB_DT_BF16));
    assert_false(opdb_dtype_is_float(OPDB_DT_I32));
}

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The naive rounding: the representable neighbours of x, nearest wins, ties to the even code. */
static uint16_t naive_round(float x, float (*dec)(uint16_t), uint16_t lo_code) {
    uint16_t best = lo_code;
    for (uint16_t c = lo_code; c != (uint16_t)(lo_code + 2); c++) {
        double d = fabs((double)dec(c) - x), db = fabs((double)dec(best) - x);
        if (d < db || (d == db && (c & 1) == 0)) best = c;
    }
    return best;
}

static void test_bf16(void **state) {
    (void)state;
    assert_int_equal(opdb_f32_to_bf16(1.0f), 0x3f80);
    assert_true(opdb_bf16_to_f32(0x3f80) == 1.0f);
    /* halfway cases: 1 + 2^-8 ties to even (down), 1 + 3*2^-8 ties up */
    assert_int_equal(opdb_f32_to_bf16(from_bits(0x3f808000)), 0x3f80);
    assert_int_equal(opdb_f32_to_bf16(from_bits(0x3f818000)), 0x3f82);
    assert_int_equal(opdb_f32_to_bf16(from_bits(0x3f808001)), 0x3f81);
    assert_int_equal(opdb_f32_to_bf16(INFINITY), 0x7f80);
    assert_int_equal(opdb_f32_to_bf16(-INFINITY), 0xff80);
    assert_int_equal(opdb_f32_to_bf16(from_bits(0x7f7fffff)), 0x7f80); /* FLT_MAX rounds to Inf */
    uint16_t n = opdb_f32_to_bf16(from_bits(0x7f800001));               /* sNaN with low payload */
    assert_true(isnan(opdb_bf16_to_f32(n)));
    assert_true(isnan(opdb_bf16_to_f32(opdb_f32_to_bf16(NAN))));
    assert_int_equal(opdb_f32_to_bf16(from_bits(0x00000001)), 0x0000);  /* tiny subnormal */
    assert_int_equal(opdb_f32_to_bf16(from_bits(0x00018000)), 0x0002);  /* subnormal tie to even */
    assert_int_equal(opdb_f32_to_bf16(-0.0f), 0x8000);
    /* every bf16 code round-trips */
    for (uint32_t c = 0; c < 0x10000; c++) {
        float f = opdb_bf16_to_f32((uint16_t)c);
        if (!isnan(f)) assert_int_equal(opdb_f32_to_bf16(f), c);
    }
}

static void test_f16(void **state) {
    (void)state;
    assert_int_equal(opdb_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(opdb_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(opdb_f32_to_f16(65519.0f), 0x7bff);
    assert_int_equal(opdb_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(opdb_f32_to_f16(-INFINITY), 0xfc00);
    assert_true(isnan(opdb_f16_to_f32(opdb_f32_to_f16(NAN))));
    assert_true(opdb_f16_to_f32(0x0001) == 0x1p-24f);                    /* smallest subnormal */
    assert_true(opdb_f16_to_f32(0x03ff) == 1023 * 0x1p-24f);
    assert_true(opdb_f16_to_f32(0x7c00) == INFINITY);
    assert_int_equal(opdb_f32_to_f16(0x1p-25f), 0x0000);                 /* tie to even zero */
    assert_int_equal(opdb_f32_to_f16(0x1.8p-24f), 0x0002);               /* 1.5 ulp ties to 2 */
    assert_int_equal(opdb_f32_to_f16(0x1.000002p-25f), 0x0001);
    assert_int_equal(opdb_f32_to_f16(-0x1p-24f), 0x8001);
    /* every f16 code round-trips; midpoints between neighbours round to even */
    for (uint32_t c = 0; c < 0x7c00; c++) {
        float f = opdb_f16_to_f32((uint16_t)c);
        assert_int_equal(opdb_f32_to_f16(f), c);
        assert_int_equal(opdb_f32_to_f16(-f), c | 0x8000);
        if (c + 1 < 0x7c00) {
            float mid = (float)(((double)f + (double)opdb_f16_to_f32((uint16_t)(c + 1))) / 2);
            assert_int_equal(opdb_f32_to_f16(mid), naive_round(mid, opdb_f16_to_f32, (uint16_t)c));
            float above = from_bits(bits(mid) + 1);
            assert_int_equal(opdb_f32_to_f16(above), c + 1);
        }
    }
}

static void test_elem(void **state) {
    (void)state;
    int8_t i8[2];
    opdb_elem_set(i8, OPDB_DT_I8, 0, 300.0);
    opdb_elem_set(i8, OPDB_DT_I8, 1, -5.0);
    assert_int_equal(i8[0], 127);
    assert_true(opdb_elem_get(i8, OPDB_DT_I8, 1) == -5.0);
    uint16_t h[1];
    opdb_elem_set(h, OPDB_DT_BF16, 0, 1.5);
    assert_true(opdb_elem_get(h, OPDB_DT_BF16, 0) == 1.5);
    int64_t v[1];
    opdb_elem_set(v, OPDB_DT_I64, 0, NAN);
    assert_int_equal(v[0], 0);
    uint8_t bo[1];
    opdb_elem_set(bo, OPDB_DT_BOOL, 0, -2.0);
    assert_int_equal(bo[0], 1);
}

static void test_split(void **state) {
    (void)state;
    char it[8][128];
    assert_int_equal(opdb_replay_split("\"\"\"128,4,128;;2048,2048;\"\"\"", false, it, 8), 2);
    assert_string_equal(it[0], "128,4,128");
    assert_string_equal(it[1], "2048,2048");
    assert_int_equal(opdb_replay_split("\"128,4,128;;2048,2048;\"", true, it, 8), 4);
    assert_string_equal(it[1], "");
    assert_string_equal(it[2], "2048,2048");
    assert_string_equal(it[3], "");
    assert_int_equal(opdb_replay_split("  ", false, it, 8), 0);
    assert_int_equal(opdb_replay_split("", true, it, 8), 1);
    assert_int_equal(opdb_replay_split(" DT_BF16 ; FLOAT ", false, it, 8), 2);
    assert_string_equal(it[1], "FLOAT");
    assert_int_equal(opdb_replay_split("a;b;c;d", false, it, 3), 3);
}

static void test_shape_make(void **state) {
    (void)state;
    opdb_tensor t;
    opdb_err err = {0, ""};
    assert_int_equal(opdb_replay_shape("4, 64,,", &t, &err), 0);
    assert_int_equal(t.ndim, 2);
    assert_int_equal(t.dims[1], 64);
    assert_int_equal(opdb_replay_shape("", &t, &err), 0);
    assert_int_equal(t.ndim, 0);
    assert_int_equal(opdb_replay_shape("4,x", &t, &err), -1);
    assert_non_null(strstr(err.msg, "'x'"));

    opdb_err e2 = {0, ""};
    assert_int_equal(opdb_replay_make("2,3,16,16", "FRACTAL_NZ", "DT_BF16", false, &t, &e2), 0);
    assert_int_equal(t.ndim, 2);
    assert_int_equal(t.dims[0], 48);   /* b*c */
    assert_int_equal(t.dims[1], 32);   /* a*d */
    assert_true(t.nz);
    assert_int_equal(opdb_tensor_numel(&t), 48 * 32);
    assert_int_equal(opdb_tensor_bytes(&t), 48 * 32 * 2);
    assert_int_equal(opdb_replay_make("2,3,16,16", "FRACTAL_NZ", "DT_BF16", true, &t, &e2), 0);
    assert_int_equal(t.dims[0], 32);
    assert_int_equal(opdb_replay_make("48,32", "FRACTAL_NZ", "DT_BF16", false, &t, &e2), -1);
    assert_non_null(strstr(e2.msg, "Unsupported FRACTAL_NZ shape"));
    opdb_err e3 = {0, ""};
    assert_int_equal(opdb_replay_make("", "ND", "DT_BF16", false, &t, &e3), -1);
    opdb_err e4 = {0, ""};
    assert_int_equal(opdb_replay_make("4,4", "ND", "DT_UNDEFINED", false, &t, &e4), -1);
    assert_string_equal(e4.msg, "Unsupported dtype: DT_UNDEFINED");
}


/* Element counts and byte sizes never wrap: a shape past 2^40 elements is
 * refused, and a tensor built by hand that overflows saturates. */
static void test_shape_overflow(void **state) {
    (void)state;
    opdb_tensor t;
    opdb_err err = {0, ""};
    assert_int_equal(opdb_replay_shape("4294967296,4294967296", &t, &err), -1);
    assert_non_null(strstr(err.msg, "more than 2^40 elements"));
    opdb_err e2 = {0, ""};
    assert_int_equal(opdb_replay_shape("9223372036854775807", &t, &e2), -1);
    opdb_err e3 = {0, ""};
    assert_int_equal(opdb_replay_shape("1048576,1048576", &t, &e3), 0); /* exactly 2^40 */
    opdb_err e4 = {0, ""};
    assert_int_equal(opdb_replay_shape("0,9223372036854775807", &t, &e4), 0); /* empty: 0 elements */
    assert_int_equal(opdb_tensor_numel(&t), 0);
    assert_int_equal(opdb_replay_shape("4294967296,4294967296,0", &t, &e4), 0); /* a trailing 0 empties it too */
    assert_int_equal(opdb_tensor_numel(&t), 0);
    opdb_tensor big = {0};
    big.ndim = 2;
    big.dims[0] = big.dims[1] = (int64_t)1 << 32;
    big.dtype = OPDB_DT_F32;
    assert_true(opdb_tensor_numel(&big) == INT64_MAX);
    assert_true(opdb_tensor_bytes(&big) == SIZE_MAX);
    big.dims[0] = INT64_MAX / 2;
    big.dims[1] = 2;
    assert_true(opdb_tensor_numel(&big) == INT64_MAX - 1);
    assert_true(opdb_tensor_bytes(&big) == SIZE_MAX); /* 4 bytes each overflows */
    opdb_op_problem p = {0};
    p.nin = 1;
    p.in[0] = big;
    assert_true(opdb_problem_buffer_bytes(&p) == SIZE_MAX);
    p.in[0].dims[0] = 1000;
    p.in[0].dims[1] = 1;
    p.nout = 1;
    p.out[0] = p.in[0];
    p.workspace_bytes = 24;
    assert_true(opdb_problem_buffer_bytes(&p) == 8024);
}

static void test_default_io(void **state) {
    (void)state;
    kv cells[] = {{"Input Shapes", "\"4,64;;1,2,16,16\""}, {"Input Data Types", "DT_BF16;INT64"},
                  {"Input Formats", "ND;FRACTAL_NZ"},     {"Output Shapes", "\"4,64\""},
                  {"Output Data Types", "DT_INT4"},       {NULL, NULL}};
    opdb_replay_row row = {"Foo", cell, cells, false};
    opdb_op_problem p;
    memset(&p, 0, sizeof p);
    opdb_err err = {0, ""};
    assert_int_equal(opdb_replay_default_io(&row, &p, -1, &err), 0);
    assert_int_equal(p.nin, 2);
    assert_int_equal(p.in[0].dtype, OPDB_DT_BF16);
    assert_int_equal(p.in[1].dtype, OPDB_DT_I64);
    assert_true(p.in[1].nz);
    assert_int_equal(p.in[1].dims[0], 32);
    assert_int_equal(p.nout, 1);
    assert_int_equal(p.out[0].ndim, 0); /* unsupported output dtype: slot left absent */
    assert_int_equal(opdb_replay_default_io(&row, &p, 3, &err), -1);
    assert_string_equal(err.msg, "Foo expects exactly 3 inputs, got 2");
}

static void test_fill_and_rng(void **state) {
    (void)state;
    uint64_t a = 7, b = 7;
    assert_true(opdb_rng_next(&a) == opdb_rng_next(&b));
    float f[4096];
    int32_t ix[4096];
    uint8_t bo[4096];
    opdb_tensor tf = {1, {4096}, OPDB_DT_F32, false, f};
    opdb_tensor ti = {1, {4096}, OPDB_DT_I32, false, ix};
    opdb_tensor tb = {1, {4096}, OPDB_DT_BOOL, false, bo};
    uint64_t rng = 1;
    opdb_replay_fill_default(&tf, &rng);
    opdb_replay_fill_default(&ti, &rng);
    opdb_replay_fill_default(&tb, &rng);
    int ones = 0, neg = 0;
    for (int i = 0; i < 4096; i++) {
        assert_true(f[i] >= -1.0f && f[i] < 1.0f);
        assert_true(ix[i] >= 0 && ix[i] < 8);
        assert_true(bo[i] <= 1);
        ones += bo[i];
        neg += f[i] < 0;
    }
    assert_true(ones > 1500 && ones < 2600);
    assert_true(neg > 1500 && neg < 2600);
}

static void test_registry(void **state) {
    (void)state;
    assert_true(opdb_op_registry_count > 0);
    for (size_t i = 0; i + 1 < opdb_op_registry_count; i++)
        assert_true(strcmp(opdb_op_registry[i]->name, opdb_op_registry[i + 1]->name) < 0);
    for (size_t i = 0; i < opdb_op_registry_count; i++) {
        const opdb_op_def *op = opdb_op_registry[i];
        assert_ptr_equal(opdb_op_find(op->name), op);
        assert_non_null(op->plan);
        assert_true(op->cpu_run != NULL || op->cpu_skip_reason != NULL);
    }
    assert_ptr_equal(opdb_op_find(" MatMulV2_run.py"), opdb_op_find("MatMulV2"));
    assert_ptr_equal(opdb_op_find("MatMulV2.csv"), opdb_op_find("MatMulV2"));
    assert_null(opdb_op_find("NoSuchOperator"));
}

/* The catalogue (src/db/) is the registry's names, in its order: the
 * reference's 36 operators, an alias or another operator is not in it. */
static void test_catalogue_is_registry(void **state) {
    (void)state;
    assert_int_equal(opdb_op_registry_count, 36);
    assert_int_equal(opdb_op_catalogue_count, opdb_op_registry_count);
    for (size_t i = 0; i < opdb_op_registry_count; i++)
        assert_string_equal(opdb_op_catalogue[i], opdb_op_registry[i]->name);
    for (size_t i = 0; i < opdb_op_registry_count; i++) {
        const opdb_op_def *op = opdb_op_registry[i];
        assert_true(opdb_is_replay_op(op->name));
        for (const char *const *a = op->aliases; a && *a; a++) assert_false(opdb_is_replay_op(*a));
    }
    assert_false(opdb_is_replay_op("Cast"));
    assert_false(opdb_is_replay_op("TransData"));
    assert_false(opdb_is_replay_op(""));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_parse), cmocka_unit_test(test_bf16),       cmocka_unit_test(test_f16),
        cmocka_unit_test(test_elem),        cmocka_unit_test(test_split),      cmocka_unit_test(test_shape_make),
        cmocka_unit_test(test_default_io),  cmocka_unit_test(test_fill_and_rng), cmocka_unit_test(test_registry),
        cmocka_unit_test(test_catalogue_is_registry), cmocka_unit_test(test_shape_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
