/* The query line reader and dtypes: tensors, dtype names and aliases, the
 * `torch.ops.` prefix, bad lines (not JSON, not an object, both or neither
 * of op/kernel, wrong values count), ids echoed as json.dumps writes them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "query/query_internal.h"

static int parse(opdb_arena *a, const char *line, q_query *q, const char **code) {
    char msg[256];
    return q_parse_line(a, line, strlen(line), q, code, msg, sizeof msg);
}

static void test_tensors_and_prefix(void **state) {
    (void)state;
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    q_query q;
    const char *code;
    assert_int_equal(parse(&a,
                           "{\"id\": 3, \"op\": \"torch.ops.aten.mm.default\", \"args\": [{\"shape\": [2, 3]}, "
                           "[{\"shape\": [4], \"dtype\": \"torch.half\"}, 5], {\"dtype_value\": \"long\"}, "
                           "{\"shape\": [2], \"dtype\": \"int32\", \"values\": [1, 2]}], \"kwargs\": {\"a\": 1}}",
                           &q, &code),
                     0);
    assert_string_equal(q.op, "aten.mm.default");
    assert_int_equal(q.args->n, 4);
    const qv *t0 = q.args->items[0];
    assert_int_equal(t0->kind, QV_TENSOR);
    assert_int_equal(t0->dtype, QDT_BF16); /* absent dtype: bfloat16 */
    assert_int_equal(t0->shape.rank, 2);
    assert_null(t0->values);
    assert_int_equal(q.args->items[1]->items[0]->dtype, QDT_F16);
    assert_int_equal(q.args->items[2]->kind, QV_DTYPE);
    assert_int_equal(q.args->items[2]->dtype, QDT_I64);
    assert_int_equal(q.args->items[3]->nvalues, 2);
    /* tensor inputs: rank >= 1 tensors, one list level */
    q_ctx c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    c.q = &q;
    q_tins X = q_tensor_inputs(&c, q.args);
    assert_int_equal(X.n, 3);
    assert_int_equal(X.v[1].s.d[0], 4);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    q_render_value(q.id, &sb);
    opdb_sb_addc(&sb, 0);
    assert_string_equal(sb.p, "3");
    opdb_sb_free(&sb);
    opdb_arena_free(&a);
}

static void test_bad_lines(void **state) {
    (void)state;
    static const struct {
        const char *line, *code;
    } cases[] = {
        {"{\"op\": \"x\"", "bad_json"},
        {"[1, 2]", "bad_json"},
        {"{\"id\": 1}", "bad_query"},
        {"{\"op\": \"a\", \"kernel\": \"K\"}", "bad_query"},
        {"{\"op\": 5}", "bad_query"},
        {"{\"op\": \"a\", \"args\": [{\"shape\": [2, 2], \"values\": [1, 2, 3]}]}", "bad_query"},
        {"{\"op\": \"a\", \"args\": [{\"shape\": [-1]}]}", "bad_query"},
        {"{\"op\": \"a\", \"args\": [{\"shape\": [2], \"dtype\": \"complex64\"}]}", "bad_query"},
        {"{\"kernel\": \"../x\"}", "bad_query"},
        {"{\"kernel\": \".hidden\"}", "bad_query"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        opdb_arena a;
        opdb_arena_init(&a, 4096);
        q_query q;
        const char *code = NULL;
        assert_int_equal(parse(&a, cases[i].line, &q, &code), -1);
        assert_string_equal(code, cases[i].code);
        opdb_arena_free(&a);
    }
}

static void test_duplicate_keys_and_ids(void **state) {
    (void)state;
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    q_query q;
    const char *code;
    assert_int_equal(parse(&a, "{\"id\": \"x\\u00e9\\n\", \"op\": \"a\", \"op\": \"b\", \"id\": [1.50, null, true]}", &q,
                           &code),
                     0);
    assert_string_equal(q.op, "b");
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    q_render_value(q.id, &sb);
    opdb_sb_addc(&sb, 0);
    assert_string_equal(sb.p, "[1.5, null, true]");
    opdb_sb_free(&sb);
    opdb_arena_free(&a);
}

static void test_dtypes(void **state) {
    (void)state;
    assert_int_equal(q_dtype_parse("float", 5), QDT_F32);
    assert_int_equal(q_dtype_parse("torch.double", 12), QDT_F64);
    assert_int_equal(q_dtype_parse("int", 3), QDT_I32);
    assert_int_equal(q_dtype_parse("DT_BF16", 7), -1);
    assert_string_equal(q_dtype_prof(QDT_F16), "DT_BF16");
    assert_null(q_dtype_prof(QDT_F64));
    assert_null(q_dtype_prof(QDT_U8));
    assert_int_equal(q_dtype_size(QDT_I64), 8);
    assert_int_equal(q_dtype_from_prof("FLOAT", 5), QDT_F32);
    assert_int_equal(q_dtype_from_prof("DT_FLOAT", 8), -1);
    assert_int_equal(q_prof_bytes("DT_FLOAT16", 10), 2);
    assert_int_equal(q_prof_bytes("BOOL", 4), 0);
    assert_true(q_prof_match("MatMulV2", "FLOAT", "DT_BF16", 7));
    assert_false(q_prof_match("MatMulV3", "FLOAT", "DT_BF16", 7));
    assert_false(q_prof_match("MatMulV2", "INT8", "DT_BF16", 7));
}

static void test_padding_and_views(void **state) {
    (void)state;
    /* 1 pads to 16/32/64; 4 to 16/32/64; 120 to 128; 65 to 72/80/96/128 */
    assert_true(q_padded(16, 1) && q_padded(32, 1) && q_padded(64, 1));
    assert_false(q_padded(8, 1));
    assert_true(q_padded(16, 4) && q_padded(64, 4));
    assert_true(q_padded(128, 120));
    assert_true(q_padded(72, 65) && q_padded(80, 65) && q_padded(96, 65) && q_padded(128, 65));
    assert_false(q_padded(66, 65));
    assert_false(q_padded(65, 65));
    assert_false(q_padded(1, 16)); /* only the larger side pads */
    int64_t a[] = {1, 4, 8}, b[] = {1, 8};
    q_shape s = {a, 3}, u = {b, 2};
    assert_int_equal(q_strip(s).rank, 2);
    assert_int_equal(q_strip(u).rank, 1);
    assert_int_equal(q_slice_n(5, -2), 3);
    assert_int_equal(q_slice_n(5, 0), 0);
    assert_int_equal(q_slice_n(5, 9), 5);
    assert_int_equal(q_slice_n(1, -3), 0);
    opdb_arena ar;
    opdb_arena_init(&ar, 1024);
    q_shape *sh;
    uint32_t n;
    const char *cell = "\"\"\"136,5120;320,48,16,16\"\"\"";
    assert_int_equal(q_parse_shapes(&ar, cell, strlen(cell), &sh, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(sh[1].rank, 4);
    assert_int_equal(q_parse_shapes(&ar, "8,128;;", 7, &sh, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(q_parse_shapes(&ar, "();4", 4, &sh, &n), 0);
    assert_int_equal(sh[0].rank, 0);
    assert_int_equal(q_parse_shapes(&ar, "1,,2", 4, &sh, &n), -1);
    assert_int_equal(q_parse_shapes(&ar, "4096.0", 6, &sh, &n), -1);
    assert_int_equal(q_parse_shapes(&ar, "nan", 3, &sh, &n), -1);
    q_ctx c;
    memset(&c, 0, sizeof c);
    c.a = &ar;
    int64_t z[] = {2, 3, 16, 16};
    q_shape nz = q_nz(&c, (q_shape){z, 4});
    assert_int_equal(nz.rank, 2);
    assert_int_equal(nz.d[0], 32);
    assert_int_equal(nz.d[1], 48);
    opdb_arena_free(&ar);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensors_and_prefix), cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_duplicate_keys_and_ids), cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_padding_and_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
