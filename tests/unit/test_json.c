/* The JSON writer must produce Python's json.dump(obj, indent=2) text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "opdb/json_writer.h"

static void test_nested_layout(void **state) {
    (void)state;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_json j;
    opdb_json_init(&j, &sb);
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "a");
    opdb_json_int(&j, 1);
    opdb_json_key(&j, "list");
    opdb_json_begin_array(&j);
    opdb_json_float(&j, 2.0);
    opdb_json_null(&j);
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "x");
    opdb_json_bool(&j, true);
    opdb_json_end_object(&j);
    opdb_json_end_array(&j);
    opdb_json_key(&j, "empty_list");
    opdb_json_begin_array(&j);
    opdb_json_end_array(&j);
    opdb_json_key(&j, "empty_obj");
    opdb_json_begin_object(&j);
    opdb_json_end_object(&j);
    opdb_json_end_object(&j);
    /* json.dumps({"a": 1, "list": [2.0, None, {"x": True}], "empty_list": [], "empty_obj": {}}, indent=2) */
    assert_string_equal(sb.p, "{\n  \"a\": 1,\n  \"list\": [\n    2.0,\n    null,\n    {\n      \"x\": true\n    }\n  ],\n"
                              "  \"empty_list\": [],\n  \"empty_obj\": {}\n}");
    opdb_sb_free(&sb);
}

static void test_top_level_empty_and_scalars(void **state) {
    (void)state;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_json j;
    opdb_json_init(&j, &sb);
    opdb_json_begin_array(&j);
    opdb_json_end_array(&j);
    assert_string_equal(sb.p, "[]");
    opdb_sb_clear(&sb);
    opdb_json_init(&j, &sb);
    j.python_nan = true; /* --reference-quirks: as Python's json */
    opdb_json_begin_array(&j);
    opdb_json_float(&j, NAN);
    opdb_json_float(&j, INFINITY);
    opdb_json_float(&j, -INFINITY);
    opdb_json_float(&j, 1e16);
    opdb_json_float(&j, 1.5e-05);
    opdb_json_float(&j, 6.632392826782172);
    opdb_json_int(&j, -7);
    opdb_json_end_array(&j);
    assert_string_equal(sb.p, "[\n  NaN,\n  Infinity,\n  -Infinity,\n  1e+16,\n  1.5e-05,\n  6.632392826782172,\n  -7\n]");
    /* by default strict JSON: a non-finite float is null */
    opdb_sb_clear(&sb);
    opdb_json_init(&j, &sb);
    opdb_json_begin_array(&j);
    opdb_json_float(&j, NAN);
    opdb_json_float(&j, INFINITY);
    opdb_json_float(&j, -INFINITY);
    opdb_json_float(&j, 0.5);
    opdb_json_end_array(&j);
    assert_string_equal(sb.p, "[\n  null,\n  null,\n  null,\n  0.5\n]");
    opdb_sb_free(&sb);
}

static void test_string_escapes_ensure_ascii(void **state) {
    (void)state;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    /* json.dumps('a"b\\c\n\t\x01/é😀\x7f') */
    opdb_json_quote(&sb, "a\"b\\c\n\t\x01/\xc3\xa9\xf0\x9f\x98\x80\x7f");
    assert_string_equal(sb.p, "\"a\\\"b\\\\c\\n\\t\\u0001/\\u00e9\\ud83d\\ude00\\u007f\"");
    opdb_sb_free(&sb);
}

/* Plain runs are copied at once: escapes at either end of a run, between
 * runs and inside the UTF-8 form (json.dumps(..., ensure_ascii=False)). */
static void test_string_runs(void **state) {
    (void)state;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_json_quote(&sb, "\"plain run\tMatMulV2\\");
    assert_string_equal(sb.p, "\"\\\"plain run\\tMatMulV2\\\\\"");
    opdb_sb_clear(&sb);
    opdb_json_quote(&sb, "");
    assert_string_equal(sb.p, "\"\"");
    opdb_sb_clear(&sb);
    opdb_json_quote_utf8(&sb, "x\xc3\xa9y\x7f\"z\x01");
    assert_string_equal(sb.p, "\"x\xc3\xa9y\x7f\\\"z\\u0001\"");
    opdb_sb_free(&sb);
}

/* Each byte value is copied within a run, or escaped, exactly as the
 * per-byte rule says: plain are printable ASCII other than quote and
 * backslash, and without ensure_ascii every byte from 0x80 up. */
static void test_string_byte_classes(void **state) {
    (void)state;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    for (int ascii = 0; ascii < 2; ascii++)
        for (unsigned c = 1; c < 256; c++) {
            char in[4] = {'x', (char)c, 'y', 0}, plain[6] = {'"', 'x', (char)c, 'y', '"', 0};
            bool is_plain = c >= 0x20 && c != '"' && c != '\\' && (c < 0x7f || (!ascii && c >= 0x80));
            opdb_sb_clear(&sb);
            if (ascii) opdb_json_quote(&sb, in);
            else opdb_json_quote_utf8(&sb, in);
            /* without ensure_ascii DEL stays raw though it ends a run */
            bool raw = is_plain || (!ascii && c == 0x7f);
            if (raw) assert_string_equal(sb.p, plain);
            else assert_true(strcmp(sb.p, plain) != 0 && sb.p[2] == '\\');
        }
    opdb_sb_free(&sb);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_layout),
        cmocka_unit_test(test_top_level_empty_and_scalars),
        cmocka_unit_test(test_string_escapes_ensure_ascii),
        cmocka_unit_test(test_string_runs),
        cmocka_unit_test(test_string_byte_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
