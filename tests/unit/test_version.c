/* The run-time version and build description, the warning handler a
 * program installs, and the grid model names the CLI suggests from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "opdb/core.h"
#include "opdb/grid.h"
#include "opdb/version.h"

static bool matches(const char *text, const char *pattern) {
    regex_t re;
    assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    int rc = regexec(&re, text, 0, NULL, 0);
    regfree(&re);
    return rc == 0;
}

static void test_version_is_the_header_version(void **state) {
    (void)state;
    assert_string_equal(opdb_version(), OPDB_VERSION_STRING);
}

static void test_revision_and_features_have_their_form(void **state) {
    (void)state;
    assert_true(matches(opdb_build_revision(), "^(git [0-9a-f]+(-dirty)?|unknown)$"));
    assert_true(matches(opdb_build_features(),
                        "^CUDA=(yes|no) MPI=(yes|no) NCCL=(yes|no) SQLite=yes OpenMP=(yes|no) qhull=yes$"));
}

typedef struct seen {
    int calls;
    char line[256];
} seen;

static void catch_line(void *ctx, const char *line) {
    seen *s = ctx;
    s->calls++;
    snprintf(s->line, sizeof s->line, "%s", line);
}

static void test_warnings_go_to_the_installed_handler(void **state) {
    (void)state;
    seen s = {0};
    opdb_set_warn_handler(catch_line, &s);
    opdb_warn("%s: %d row(s) skipped\n", "a.csv", 3);
    assert_int_equal(s.calls, 1);
    assert_string_equal(s.line, "a.csv: 3 row(s) skipped"); /* one line, no prefix: the handler words it */
    opdb_warn("two\nlines");
    assert_string_equal(s.line, "two\\x0alines");
    opdb_warn_nothing("nothing written"); /* outside a call with a nothing sink: a warning */
    assert_int_equal(s.calls, 3);
    assert_string_equal(s.line, "nothing written");
    opdb_set_warn_handler(NULL, NULL);
}

static void test_grid_model_names(void **state) {
    (void)state;
    size_t n = 0;
    while (opdb_grid_model_name(n)) {
        assert_true(opdb_grid_model_known(opdb_grid_model_name(n)));
        n++;
    }
    assert_true(n >= 5);
    assert_true(opdb_grid_model_known("qwen3-32b"));
    assert_true(opdb_grid_model_known("DSV3"));
    assert_false(opdb_grid_model_known("Qwen3-23B"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_is_the_header_version),
        cmocka_unit_test(test_revision_and_features_have_their_form),
        cmocka_unit_test(test_warnings_go_to_the_installed_handler),
        cmocka_unit_test(test_grid_model_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
