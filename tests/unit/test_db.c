/* Database layout: version flags, version folder names, target folder
 * resolution, devices and type-name sanitising. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/db.h"

/* ---- opdb_version_valid ---------------------------------------------------- */

static void test_version_valid_accepts_examples(void **s) {
    (void)s;
    assert_true(opdb_version_valid("0.9.2"));
    assert_true(opdb_version_valid("2.9.0"));
    assert_true(opdb_version_valid("8.5"));
    assert_true(opdb_version_valid("2.9.0+cpu"));
    assert_true(opdb_version_valid("v0.18.0"));
    assert_true(opdb_version_valid("CANN8.5"));
    assert_true(opdb_version_valid("1-rc1"));
    assert_true(opdb_version_valid("vllm0.13.0_torch2.8.0_cann8.3"));
    assert_true(opdb_version_valid("7"));
}

static void test_version_valid_strips_first(void **s) {
    (void)s;
    assert_true(opdb_version_valid(" 8.5 "));
    assert_true(opdb_version_valid("\t2.9.0\n"));
}

static void test_version_valid_rejects_empty(void **s) {
    (void)s;
    assert_false(opdb_version_valid(""));
    assert_false(opdb_version_valid("   "));
}

static void test_version_valid_rejects_bad_separators(void **s) {
    (void)s;
    assert_false(opdb_version_valid("1..2"));
    assert_false(opdb_version_valid("1."));
    assert_false(opdb_version_valid(".1"));
    assert_false(opdb_version_valid("+cpu"));
    assert_false(opdb_version_valid("1_-2"));
}

static void test_version_valid_rejects_other_chars(void **s) {
    (void)s;
    assert_false(opdb_version_valid("a b"));
    assert_false(opdb_version_valid("1/2"));
    assert_false(opdb_version_valid("../x"));
    assert_false(opdb_version_valid("1,2"));
    assert_false(opdb_version_valid("v\xc3\xa9"));
}

/* ---- opdb_db_version_dir --------------------------------------------------- */

static void expect_vdir(const char *v, const char *t, const char *c, const char *want) {
    opdb_err err;
    opdb_err_clear(&err);
    char *d = opdb_db_version_dir(v, t, c, &err);
    assert_non_null(d);
    assert_string_equal(d, want);
    free(d);
}

static void test_version_dir_spec_example(void **s) {
    (void)s;
    expect_vdir("v0.18.0", "2.9.0+cpu", "CANN8.5", "vllm0.18.0_torch2.9.0_cann8.5");
}

static void test_version_dir_drops_prefixes_case_insensitively(void **s) {
    (void)s;
    expect_vdir("VLLM0.18.0", "Torch2.9.0", "cann8.5", "vllm0.18.0_torch2.9.0_cann8.5");
    expect_vdir("V1.0", "2.1", "8", "vllm1.0_torch2.1_cann8");
    /* only one prefix: "vllm" wins over a following "v" */
    expect_vdir("vllmv1", "2", "3", "vllmv1_torch2_cann3");
}

static void test_version_dir_cuts_torch_at_plus_and_strips(void **s) {
    (void)s;
    expect_vdir(" 0.1 ", " torch 2.9.0+cu121 ", " cann 8.5 ", "vllm0.1_torch2.9.0_cann8.5");
    expect_vdir("0.1", "2.9.0+cpu+x", "8.5", "vllm0.1_torch2.9.0_cann8.5");
}

static void test_version_dir_missing_components_named_in_order(void **s) {
    (void)s;
    opdb_err err;
    opdb_err_clear(&err);
    assert_null(opdb_db_version_dir(NULL, "2.9.0", NULL, &err));
    assert_int_not_equal(err.code, OPDB_OK);
    assert_non_null(strstr(err.msg, "vLLM-Ascend, CANN"));
    assert_null(strstr(err.msg, "PyTorch"));
    assert_non_null(strstr(err.msg, "--database-path"));

    opdb_err_clear(&err);
    assert_null(opdb_db_version_dir(NULL, NULL, NULL, &err));
    assert_non_null(strstr(err.msg, "vLLM-Ascend, PyTorch, CANN"));
}

/* ---- opdb_db_resolve ------------------------------------------------------ */

static char *resolve(const char *dbpath, const char *device, const char *v, const char *t,
                     const char *c, const char *root, opdb_err *err) {
    opdb_db_target tg = {dbpath, device, v, t, c, root};
    opdb_err_clear(err);
    return opdb_db_resolve(&tg, err);
}

static void test_resolve_database_path_used_as_given(void **s) {
    (void)s;
    opdb_err err;
    char *d = resolve("out/db", NULL, "nonsense", NULL, NULL, "root", &err);
    assert_string_equal(d, "out/db");
    free(d);
    d = resolve("out//db/", NULL, NULL, NULL, NULL, NULL, &err);
    assert_string_equal(d, "out/db");
    free(d);
}

static void test_resolve_three_flags(void **s) {
    (void)s;
    opdb_err err;
    char *d = resolve(NULL, "TEST_DEVICE", "v0.18.0", "2.9.0+cpu", "CANN8.5", "root", &err);
    assert_non_null(d);
    assert_string_equal(d, "root/TEST_DEVICE/vllm_ascend/vllm0.18.0_torch2.9.0_cann8.5");
    free(d);
}

static void test_resolve_full_name_alone_used_as_is(void **s) {
    (void)s;
    opdb_err err;
    char *d = resolve(NULL, NULL, " vllm0.18.0_torch2.9.0_cann8.5 ", NULL, NULL, "root", &err);
    assert_non_null(d);
    assert_string_equal(d, "root/" OPDB_DEFAULT_DEVICE "/vllm_ascend/vllm0.18.0_torch2.9.0_cann8.5");
    free(d);
}

static void test_resolve_full_name_with_torch_quirk(void **s) {
    (void)s;
    opdb_err err;
    char *d = resolve(NULL, NULL, "vllm0.18.0_torch2.9.0_cann8.5", "2.9.0", "8.5", "r", &err);
    assert_non_null(d);
    assert_string_equal(d, "r/" OPDB_DEFAULT_DEVICE "/vllm_ascend/vllm0.18.0_torch2.9.0_cann8.5_torch2.9.0_cann8.5");
    free(d);
}

static void test_resolve_full_name_with_torch_only_misses_cann(void **s) {
    (void)s;
    opdb_err err;
    assert_null(resolve(NULL, NULL, "vllm0.18.0_torch2.9.0_cann8.5", "2.9.0", NULL, "r", &err));
    assert_non_null(strstr(err.msg, "CANN"));
    assert_null(strstr(err.msg, "PyTorch"));
}

static void test_resolve_plain_vllm_alone_misses_torch_and_cann(void **s) {
    (void)s;
    opdb_err err;
    assert_null(resolve(NULL, NULL, "0.18.0", NULL, NULL, "r", &err));
    assert_non_null(strstr(err.msg, "PyTorch, CANN"));
    assert_null(strstr(err.msg, "vLLM-Ascend"));
}

static void test_resolve_not_a_full_name_needs_chars_between_markers(void **s) {
    (void)s;
    opdb_err err;
    /* ^vllm.+_torch.+_cann.+$ needs at least one character in every gap */
    assert_null(resolve(NULL, NULL, "vllm_torch2_cann3", NULL, NULL, "r", &err));
    assert_null(resolve(NULL, NULL, "vllm1_torch_cann3", NULL, NULL, "r", &err));
    assert_null(resolve(NULL, NULL, "vllm1_torch2_cann", NULL, NULL, "r", &err));
    assert_null(resolve(NULL, NULL, "VLLM1_torch2_cann3", NULL, NULL, "r", &err));
    char *d = resolve(NULL, NULL, "vllmX_torch_cann_torchY_cannZ", NULL, NULL, "r", &err);
    assert_non_null(d);
    assert_string_equal(d, "r/" OPDB_DEFAULT_DEVICE "/vllm_ascend/vllmX_torch_cann_torchY_cannZ");
    free(d);
}

static void test_resolve_missing_everything(void **s) {
    (void)s;
    opdb_err err;
    assert_null(resolve(NULL, NULL, NULL, NULL, NULL, "r", &err));
    assert_non_null(strstr(err.msg, "vLLM-Ascend, PyTorch, CANN"));
}

static void test_resolve_device_is_stripped(void **s) {
    (void)s;
    opdb_err err;
    char *d = resolve(NULL, " TEST_DEVICE\t", "1", "2", "3", "r", &err);
    assert_string_equal(d, "r/TEST_DEVICE/vllm_ascend/vllm1_torch2_cann3");
    free(d);
}

/* The library reads no environment variable: this test gives it its own,
 * as opdb's CLI does for the variables it lists. */
static const char *env_setting(const char *name) { return getenv(name); }

static void test_resolve_data_root_from_env_and_default(void **s) {
    (void)s;
    opdb_err err;
    setenv(OPDB_DATA_ROOT_ENV, "/tmp/envroot/", 1);
    char *d = resolve(NULL, "TEST_DEVICE", "1", "2", "3", NULL, &err);
    assert_string_equal(d, "/tmp/envroot/TEST_DEVICE/vllm_ascend/vllm1_torch2_cann3");
    free(d);
    /* the explicit field wins over the environment */
    d = resolve(NULL, "TEST_DEVICE", "1", "2", "3", "mine", &err);
    assert_string_equal(d, "mine/TEST_DEVICE/vllm_ascend/vllm1_torch2_cann3");
    free(d);
    setenv(OPDB_DATA_ROOT_ENV, "", 1);
    d = resolve(NULL, "TEST_DEVICE", "1", "2", "3", NULL, &err);
    assert_string_equal(d, "data/TEST_DEVICE/vllm_ascend/vllm1_torch2_cann3");
    free(d);
    unsetenv(OPDB_DATA_ROOT_ENV);
    d = resolve(NULL, "TEST_DEVICE", "1", "2", "3", NULL, &err);
    assert_string_equal(d, "data/TEST_DEVICE/vllm_ascend/vllm1_torch2_cann3");
    free(d);
    /* a program that gives the library no settings: the environment is not read */
    setenv(OPDB_DATA_ROOT_ENV, "/tmp/envroot/", 1);
    opdb_set_settings(NULL);
    d = resolve(NULL, "TEST_DEVICE", "1", "2", "3", NULL, &err);
    assert_string_equal(d, "data/TEST_DEVICE/vllm_ascend/vllm1_torch2_cann3");
    free(d);
    opdb_set_settings(env_setting);
    unsetenv(OPDB_DATA_ROOT_ENV);
}

static void test_resolve_normalises_root(void **s) {
    (void)s;
    opdb_err err;
    char *d = resolve(NULL, "TEST_DEVICE", "1", "2", "3", "./a//b/", &err);
    assert_string_equal(d, "a/b/TEST_DEVICE/vllm_ascend/vllm1_torch2_cann3");
    free(d);
}

/* ---- devices ------------------------------------------------------------------ */

static void test_device_valid_all_listed(void **s) {
    (void)s;
    static const char *const want[] = {
        "TEST_DEVICE",           "ATLAS_800_A2_376T_64G",      "ATLAS_800_A2_313T_64G",
        "ATLAS_800_A2_280T_64G", "ATLAS_800_A2_280T_64G_PCIE", "ATLAS_800_A2_280T_32G_PCIE",
        "ATLAS_800_A3_752T_128G_DIE", "ATLAS_800_A3_560T_128G_DIE",
    };
    assert_int_equal(opdb_ndevices, 8);
    for (size_t i = 0; i < 8; i++) assert_true(opdb_device_valid(want[i]));
    assert_true(opdb_device_valid(OPDB_DEFAULT_DEVICE));
}

static void test_device_valid_rejects_others(void **s) {
    (void)s;
    assert_false(opdb_device_valid(""));
    assert_false(opdb_device_valid("test_device"));
    assert_false(opdb_device_valid("ATLAS_800_A3_752T_128G"));
    assert_false(opdb_device_valid("ATLAS_800_A3_752T_128G_DIE_X"));
}

/* ---- opdb_sanitize_type_name ---------------------------------------------------- */

static void expect_sanitized(const char *in, size_t n, const char *want) {
    char *o = opdb_sanitize_type_name(in, n);
    assert_string_equal(o, want);
    assert_null(strchr(o, '/'));
    free(o);
}

static void test_sanitize_plain_name_unchanged(void **s) {
    (void)s;
    expect_sanitized("MatMulV2", 8, "MatMulV2");
    expect_sanitized("hcom_allReduce_", 15, "hcom_allReduce_");
}

static void test_sanitize_slash_and_reserved_chars(void **s) {
    (void)s;
    expect_sanitized("a/b", 3, "a_b");
    expect_sanitized("<>:\"/\\|?*", 9, "_________");
    expect_sanitized("../../etc", 9, ".._.._etc");
}

static void test_sanitize_dots_kept(void **s) {
    (void)s;
    expect_sanitized("..", 2, "..");
    expect_sanitized(".", 1, ".");
}

static void test_sanitize_control_chars(void **s) {
    (void)s;
    expect_sanitized("\x01" "a\x1f\t\n", 5, "_a___");
    expect_sanitized("a\0b", 3, "a_b");
    expect_sanitized("\x7f", 1, "\x7f"); /* DEL is not U+0000..U+001F */
}

static void test_sanitize_keeps_utf8(void **s) {
    (void)s;
    expect_sanitized("\xc3\xa9t\xc3\xa9", 5, "\xc3\xa9t\xc3\xa9");
}

static void test_sanitize_empty_is_unknown_type(void **s) {
    (void)s;
    expect_sanitized("", 0, "UNKNOWN_TYPE");
    expect_sanitized("abc", 0, "UNKNOWN_TYPE");
}

static void test_sanitize_uses_only_n_bytes(void **s) {
    (void)s;
    expect_sanitized("abc/def", 2, "ab");
}

static void test_sanitize_never_yields_slash(void **s) {
    (void)s;
    char in[256];
    for (int i = 0; i < 256; i++) in[i] = (char)i;
    char *o = opdb_sanitize_type_name(in, 256);
    for (int i = 0; i < 256; i++) assert_true(o[i] != '/' && o[i] != '\\' && o[i] != '\0');
    free(o);
}

/* ---- the path policy (opdb_safe_stem, opdb_path_in_dir) --------------------------------- */

static void expect_safe(const char *in, const char *want) {
    char *o = opdb_safe_stem(in, strlen(in));
    assert_string_equal(o, want);
    free(o);
}

static void test_safe_stem_hostile_names(void **s) {
    (void)s;
    expect_safe("../../pwned", "_._.._pwned");
    expect_safe("/abs/x", "_abs_x");
    expect_safe("a/b", "a_b");
    expect_safe(".", "_");
    expect_safe("..", "_.");
    expect_safe(".x", "_x");
    expect_safe("a\x01" "b\nc\x7f", "a_b_c_");
    expect_safe("", "UNKNOWN_TYPE");
    expect_safe("MatMulV2", "MatMulV2");
    /* direction marks and overrides would show a name reversed: each becomes one `_` */
    expect_safe("ab\xe2\x80\xaetxt", "ab_txt");
    expect_safe("\xe2\x81\xa6x\xe2\x81\xa9\xe2\x80\x8f\xd8\x9c", "_x___");
    expect_safe("caf\xc3\xa9 \xe2\x80\x94", "caf\xc3\xa9 \xe2\x80\x94"); /* other UTF-8 stays */
}

static void test_safe_stem_long_names_bounded_and_distinct(void **s) {
    (void)s;
    char a[600], b[600];
    memset(a, 'x', 599), a[599] = '\0';
    memcpy(b, a, sizeof a);
    b[598] = 'y';
    char *sa = opdb_safe_stem(a, 599), *sb = opdb_safe_stem(b, 599);
    assert_int_equal(strlen(sa), OPDB_STEM_MAX);
    assert_int_equal(strlen(sb), OPDB_STEM_MAX);
    assert_string_not_equal(sa, sb);
    char want[16];
    snprintf(want, sizeof want, "~%08x", (unsigned)opdb_name_hash(a, 599));
    assert_string_equal(sa + OPDB_STEM_MAX - 9, want);
    free(sa), free(sb);
}

static void test_safe_stem_cuts_on_utf8_boundary(void **s) {
    (void)s;
    char a[700];
    size_t n = 0;
    /* byte OPDB_STEM_MAX - 9 is the second byte of a character: the cut moves back */
    while (n + 2 < sizeof a) a[n++] = (char)0xc3, a[n++] = (char)0xa9;
    a[n] = '\0';
    char *o = opdb_safe_stem(a, n);
    char *tilde = strrchr(o, '~');
    assert_non_null(tilde);
    assert_true(((unsigned char)tilde[-1] & 0xc0) == 0x80 && (unsigned char)tilde[-2] == 0xc3);
    assert_true(strlen(o) <= OPDB_STEM_MAX);
    free(o);
}

static void test_safe_stem_random_bytes_never_escape(void **s) {
    (void)s;
    unsigned x = 12345;
    for (int t = 0; t < 2000; t++) {
        char in[300];
        size_t n = (size_t)(t % 299) + 1;
        for (size_t i = 0; i < n; i++) x = x * 1103515245u + 12345u, in[i] = (char)(x >> 16);
        char *o = opdb_safe_stem(in, n);
        char *name = opdb_xmalloc(strlen(o) + 5);
        sprintf(name, "%s.csv", o);
        opdb_err e;
        opdb_err_clear(&e);
        char *p = opdb_path_in_dir("db", name, &e);
        assert_non_null(p);
        assert_true(o[0] != '.' && !strchr(o, '/'));
        for (const char *c = o; *c; c++) assert_true((unsigned char)*c >= 0x20 && (unsigned char)*c != 0x7f);
        free(p), free(name), free(o);
    }
}

static void test_path_in_dir_refuses_escapes(void **s) {
    (void)s;
    const char *bad[] = {"../x.csv", "/abs/x.csv", "a/b.csv", ".", "..", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        opdb_err e;
        opdb_err_clear(&e);
        assert_null(opdb_path_in_dir("db", bad[i], &e));
        assert_non_null(strstr(e.msg, "outside the output folder"));
    }
    char lng[300];
    memset(lng, 'a', 299), lng[299] = '\0';
    opdb_err e;
    opdb_err_clear(&e);
    assert_null(opdb_path_in_dir("db", lng, &e));
    assert_non_null(strstr(e.msg, "too long"));
    opdb_err_clear(&e);
    char *p = opdb_path_in_dir("db/./", "x\x01.csv", &e);
    assert_string_equal(p, "db/x\x01.csv");
    free(p);
}

static void test_name_case_clash(void **s) {
    (void)s;
    const char *names[] = {"MatMulV2.csv", NULL, "Add.csv"};
    assert_string_equal(opdb_name_case_clash(names, 3, "matmulv2.csv"), "MatMulV2.csv");
    assert_null(opdb_name_case_clash(names, 3, "MatMulV2.csv"));
    assert_null(opdb_name_case_clash(names, 3, "Sub.csv"));
}

static void test_error_messages_escape_controls_and_keep_reason(void **s) {
    (void)s;
    opdb_err e;
    opdb_err_clear(&e);
    opdb_fail(&e, 1, "bad \x1b[31m name\n\n");
    assert_string_equal(e.msg, "bad \\x1b[31m name");
    char lng[3000];
    memset(lng, 'n', sizeof lng - 1), lng[sizeof lng - 1] = '\0';
    opdb_err_clear(&e);
    opdb_fail(&e, 1, "f.csv: name '%s' is too long", lng);
    assert_true(strlen(e.msg) < sizeof e.msg);
    assert_true(strncmp(e.msg, "f.csv: name '", 13) == 0);
    assert_non_null(strstr(e.msg, " ... "));
    assert_non_null(strstr(e.msg, "' is too long"));
}

int main(void) {
    opdb_set_settings(env_setting);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_valid_accepts_examples),
        cmocka_unit_test(test_safe_stem_hostile_names),
        cmocka_unit_test(test_safe_stem_long_names_bounded_and_distinct),
        cmocka_unit_test(test_safe_stem_cuts_on_utf8_boundary),
        cmocka_unit_test(test_safe_stem_random_bytes_never_escape),
        cmocka_unit_test(test_path_in_dir_refuses_escapes),
        cmocka_unit_test(test_name_case_clash),
        cmocka_unit_test(test_error_messages_escape_controls_and_keep_reason),
        cmocka_unit_test(test_version_valid_strips_first),
        cmocka_unit_test(test_version_valid_rejects_empty),
        cmocka_unit_test(test_version_valid_rejects_bad_separators),
        cmocka_unit_test(test_version_valid_rejects_other_chars),
        cmocka_unit_test(test_version_dir_spec_example),
        cmocka_unit_test(test_version_dir_drops_prefixes_case_insensitively),
        cmocka_unit_test(test_version_dir_cuts_torch_at_plus_and_strips),
        cmocka_unit_test(test_version_dir_missing_components_named_in_order),
        cmocka_unit_test(test_resolve_database_path_used_as_given),
        cmocka_unit_test(test_resolve_three_flags),
        cmocka_unit_test(test_resolve_full_name_alone_used_as_is),
        cmocka_unit_test(test_resolve_full_name_with_torch_quirk),
        cmocka_unit_test(test_resolve_full_name_with_torch_only_misses_cann),
        cmocka_unit_test(test_resolve_plain_vllm_alone_misses_torch_and_cann),
        cmocka_unit_test(test_resolve_not_a_full_name_needs_chars_between_markers),
        cmocka_unit_test(test_resolve_missing_everything),
        cmocka_unit_test(test_resolve_device_is_stripped),
        cmocka_unit_test(test_resolve_data_root_from_env_and_default),
        cmocka_unit_test(test_resolve_normalises_root),
        cmocka_unit_test(test_device_valid_all_listed),
        cmocka_unit_test(test_device_valid_rejects_others),
        cmocka_unit_test(test_sanitize_plain_name_unchanged),
        cmocka_unit_test(test_sanitize_slash_and_reserved_chars),
        cmocka_unit_test(test_sanitize_dots_kept),
        cmocka_unit_test(test_sanitize_control_chars),
        cmocka_unit_test(test_sanitize_keeps_utf8),
        cmocka_unit_test(test_sanitize_empty_is_unknown_type),
        cmocka_unit_test(test_sanitize_uses_only_n_bytes),
        cmocka_unit_test(test_sanitize_never_yields_slash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
