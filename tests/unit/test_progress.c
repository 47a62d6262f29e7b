/* The progress line: fits the terminal, MB and rate for byte stages, ETA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "opdb/progress.h"

static void bytes_stage_shows_mb_rate_and_eta(void **state) {
    (void)state;
    opdb_progress p;
    opdb_progress_init(&p, true);
    opdb_progress_stage_bytes(&p, "Load", 100000000);
    char line[512];
    opdb_progress_format(&p, 25000000, "kernel_details.csv", 2.0, 120, line, sizeof line);
    assert_non_null(strstr(line, "25.0/100.0 MB"));
    assert_non_null(strstr(line, "12.5 MB/s"));
    assert_non_null(strstr(line, "ETA 0:06"));
    assert_non_null(strstr(line, "[#######-----------------------]"));
    assert_non_null(strstr(line, "kernel_details.csv"));
}

static void never_wider_than_the_terminal(void **state) {
    (void)state;
    opdb_progress p;
    opdb_progress_init(&p, true);
    opdb_progress_stage_bytes(&p, "Load", 5000000000ULL);
    char line[512];
    for (int w = 1; w <= 200; w++) {
        opdb_progress_format(&p, 123456789, "a_rather_long_file_name_\xe6\x96\x87\xe4\xbb\xb6.csv", 3.0, w, line,
                             sizeof line);
        assert_true(strlen(line) <= (size_t)(w > 1 ? w - 1 : 1));
        /* never ends inside a UTF-8 sequence */
        size_t n = strlen(line);
        size_t k = n;
        while (k > 0 && ((unsigned char)line[k - 1] & 0xC0) == 0x80) k--;
        if (k > 0 && ((unsigned char)line[k - 1] & 0xC0) == 0xC0) {
            unsigned char lead = (unsigned char)line[k - 1];
            size_t need = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1;
            assert_int_equal(n - k, need);
        }
    }
}

static void count_stage_without_elapsed_time(void **state) {
    (void)state;
    opdb_progress p;
    opdb_progress_init(&p, true);
    opdb_progress_stage(&p, "Write", 40);
    char line[512];
    opdb_progress_format(&p, 10, NULL, 0.0, 80, line, sizeof line);
    assert_non_null(strstr(line, "Write ["));
    assert_non_null(strstr(line, "10/40"));
    assert_null(strstr(line, "ETA"));
    assert_null(strstr(line, "MB"));
}

/* On 60 columns with a rate and an ETA, the row being measured is still
 * named: the bar shrinks for it, and goes before the detail does. */
static void detail_kept_before_the_bar(void **state) {
    (void)state;
    opdb_progress p;
    opdb_progress_init(&p, true);
    opdb_progress_stage(&p, "bench", 14);
    char line[512];
    opdb_progress_format(&p, 10, "MatMulV2.csv:2", 1.3, 60, line, sizeof line);
    assert_true(strlen(line) <= 59);
    assert_non_null(strstr(line, "10/14"));
    assert_non_null(strstr(line, "ETA"));
    assert_non_null(strstr(line, "MatMulV2.csv:2"));
    assert_non_null(strstr(line, " [#"));
    /* 40 columns: no room for a bar of 10 beside the numbers and the detail */
    opdb_progress_format(&p, 10, "MatMulV2.csv:2", 1.3, 40, line, sizeof line);
    assert_true(strlen(line) <= 39);
    assert_null(strstr(line, "["));
    assert_non_null(strstr(line, "MatMulV2"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bytes_stage_shows_mb_rate_and_eta),
        cmocka_unit_test(never_wider_than_the_terminal),
        cmocka_unit_test(count_stage_without_elapsed_time),
        cmocka_unit_test(detail_kept_before_the_bar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
