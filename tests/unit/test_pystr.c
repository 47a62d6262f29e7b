/* Python str.strip() / str.strip(chars) on UTF-8 spans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "opdb/pystr.h"

static void expect_strip_n(const char *in, size_t n, const char *want) {
    opdb_span r = opdb_py_strip(opdb_span_make(in, n));
    size_t wn = strlen(want);
    if (r.n != wn || (wn && memcmp(r.p, want, wn) != 0)) {
        print_error("strip: got \"%.*s\" (%zu bytes), want \"%s\"\n", (int)r.n, r.p, r.n, want);
        fail();
    }
    /* the result is a sub-span of the input */
    assert_true(r.p >= in && r.p + r.n <= in + n);
}

static void expect_strip(const char *in, const char *want) { expect_strip_n(in, strlen(in), want); }

static void expect_strip_chars(const char *in, const char *chars, const char *want) {
    opdb_span r = opdb_py_strip_chars(opdb_span_cstr(in), chars);
    size_t wn = strlen(want);
    if (r.n != wn || (wn && memcmp(r.p, want, wn) != 0)) {
        print_error("strip(\"%s\"): got \"%.*s\", want \"%s\"\n", chars, (int)r.n, r.p, want);
        fail();
    }
}

static void test_strip_plain_ascii_unchanged(void **s) {
    (void)s;
    expect_strip("abc", "abc");
    expect_strip("a b", "a b");
}

static void test_strip_ascii_whitespace(void **s) {
    (void)s;
    expect_strip(" \t\n\r\x0b\x0c" "abc" " \t\n\r\x0b\x0c", "abc");
    expect_strip("  a  b  ", "a  b");
}

static void test_strip_ascii_separators_1c_to_1f(void **s) {
    (void)s;
    expect_strip("\x1c\x1d\x1e\x1f" "x" "\x1f\x1c", "x");
}

static void test_strip_keeps_other_controls(void **s) {
    (void)s;
    expect_strip("\x01x\x7f", "\x01x\x7f");
    expect_strip("\x08x\x1b", "\x08x\x1b");
    opdb_span r = opdb_py_strip(opdb_span_make("\0x\0", 3));
    assert_int_equal(r.n, 3);
}

static void test_strip_all_whitespace_gives_empty(void **s) {
    (void)s;
    expect_strip("", "");
    expect_strip(" \t ", "");
    expect_strip("\xc2\xa0\xe3\x80\x80 ", "");
}

static void test_strip_nel_and_nbsp(void **s) {
    (void)s;
    expect_strip("\xc2\x85" "a" "\xc2\xa0", "a");
    expect_strip("\xc2\xa0\xc2\x85" "a b" "\xc2\x85\xc2\xa0", "a b");
}

static void test_strip_u2000_to_u200a(void **s) {
    (void)s;
    char buf[64];
    for (int c = 0x80; c <= 0x8a; c++) {
        snprintf(buf, sizeof buf, "\xe2\x80%cz\xe2\x80%c", c, c);
        expect_strip(buf, "z");
    }
}

static void test_strip_other_unicode_white_space(void **s) {
    (void)s;
    expect_strip("\xe2\x80\xa8" "a" "\xe2\x80\xa9", "a");  /* U+2028, U+2029 */
    expect_strip("\xe2\x80\xaf" "a" "\xe2\x81\x9f", "a");  /* U+202F, U+205F */
    expect_strip("\xe3\x80\x80" "a" "\xe3\x80\x80", "a");  /* U+3000 */
    expect_strip("\xe1\x9a\x80" "a" "\xe1\x9a\x80", "a");  /* U+1680 */
}

static void test_strip_keeps_zero_width_space(void **s) {
    (void)s;
    expect_strip("\xe2\x80\x8b" "a" "\xe2\x80\x8b", "\xe2\x80\x8b" "a" "\xe2\x80\x8b");
    expect_strip(" \xe2\x80\x8b ", "\xe2\x80\x8b");
}

static void test_strip_keeps_bom_and_mongolian_vowel_separator(void **s) {
    (void)s;
    expect_strip("\xef\xbb\xbf" "a", "\xef\xbb\xbf" "a");  /* U+FEFF */
    expect_strip("\xe1\xa0\x8e" "a", "\xe1\xa0\x8e" "a");  /* U+180E: not White_Space */
}

static void test_strip_keeps_non_space_multibyte(void **s) {
    (void)s;
    expect_strip("\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9");   /* été */
    expect_strip(" \xe4\xb8\xad ", "\xe4\xb8\xad");          /* 中 */
    expect_strip("a\xc2", "a\xc2");                          /* truncated sequence kept */
    expect_strip("\xa0" "a", "\xa0" "a");                    /* lone continuation byte kept */
}

static void test_strip_only_inside_span(void **s) {
    (void)s;
    /* n limits the span; bytes past it are not looked at */
    expect_strip_n(" ab  cd", 4, "ab");
}

static void test_strip_chars_quotes(void **s) {
    (void)s;
    expect_strip_chars("\"abc\"", "\"", "abc");
    expect_strip_chars("\"\"\"a\"b\"\"", "\"", "a\"b");
    expect_strip_chars("\"\"", "\"", "");
    expect_strip_chars("", "\"", "");
}

static void test_strip_chars_set_of_several(void **s) {
    (void)s;
    expect_strip_chars("xyaxbyx", "xy", "axb");
    expect_strip_chars(" \"a\" ", "\" ", "a");
    expect_strip_chars("abc", "", "abc");
}

static void test_strip_chars_ignores_nul_bytes(void **s) {
    (void)s;
    /* a NUL in the span is not a member of any C-string set */
    opdb_span r = opdb_py_strip_chars(opdb_span_make("\0a\0", 3), "x");
    assert_int_equal(r.n, 3);
    r = opdb_py_strip_chars(opdb_span_make("\0a\0", 3), "");
    assert_int_equal(r.n, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_plain_ascii_unchanged),
        cmocka_unit_test(test_strip_ascii_whitespace),
        cmocka_unit_test(test_strip_ascii_separators_1c_to_1f),
        cmocka_unit_test(test_strip_keeps_other_controls),
        cmocka_unit_test(test_strip_all_whitespace_gives_empty),
        cmocka_unit_test(test_strip_nel_and_nbsp),
        cmocka_unit_test(test_strip_u2000_to_u200a),
        cmocka_unit_test(test_strip_other_unicode_white_space),
        cmocka_unit_test(test_strip_keeps_zero_width_space),
        cmocka_unit_test(test_strip_keeps_bom_and_mongolian_vowel_separator),
        cmocka_unit_test(test_strip_keeps_non_space_multibyte),
        cmocka_unit_test(test_strip_only_inside_span),
        cmocka_unit_test(test_strip_chars_quotes),
        cmocka_unit_test(test_strip_chars_set_of_several),
        cmocka_unit_test(test_strip_chars_ignores_nul_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
