/* Options structs are filled only as far as the caller's struct goes
 * (api.h): opdb_<x>_init_sized(o, size) writes the defaults' first `size`
 * bytes, zeros past the library's own struct and `size` in the first
 * field, and never a byte beyond. Before the sized init, opdb_<x>_init
 * wrote sizeof the library's struct whatever the caller had, so a program
 * or binding built against an older, shorter header was written past its
 * end. A run given a size it does not know refuses it; opdb_qdb_open takes
 * an older, shorter struct and the defaults of what it lacks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "opdb/aie.h"
#include "opdb/bench.h"
#include "opdb/check.h"
#include "opdb/comm.h"
#include "opdb/compare.h"
#include "opdb/diff.h"
#include "opdb/fia_fill.h"
#include "opdb/grid.h"
#include "opdb/ingest.h"
#include "opdb/m6.h"
#include "opdb/measure.h"
#include "opdb/query.h"
#include "opdb/replay.h"
#include "opdb/shape_compare.h"
#include "opdb/trace2csv.h"
#include "opdb/update.h"
#include "opdb/validate.h"
#include "query/query_internal.h"
#include "query_fixture.h"

typedef struct kind {
    const char *name;
    size_t known;
    void (*init_sized)(void *o, size_t size);
    void (*init)(void *o); /* the header's macro, with the library's own sizeof */
} kind;

#define KIND(T)                                                                                                        \
    _Static_assert(offsetof(T, size) == 0, #T ": size first");                                                         \
    static void sized_##T(void *o, size_t size) { T##_init_sized((T *)o, size); }                                      \
    static void init_##T(void *o) { T##_init((T *)o); }

KIND(opdb_aie_opts)
KIND(opdb_bench_opts)
KIND(opdb_check_options)
KIND(opdb_comm_bench_opts)
KIND(opdb_comm_validate_opts)
KIND(opdb_comm_import_opts)
KIND(opdb_cmp_opts)
KIND(opdb_diff_options)
KIND(opdb_fia_fill_opts)
KIND(opdb_grid_opts)
KIND(opdb_grid_miss_opts)
KIND(opdb_parse_opts)
KIND(opdb_m6_opts)
KIND(opdb_measure_opts)
KIND(opdb_qdb_opts)
KIND(opdb_backend_opts)
KIND(opdb_shapecmp_opts)
KIND(opdb_trace2csv_opts)
KIND(opdb_update_opts)
KIND(opdb_validate_opts)

#define ROW(T) {#T, sizeof(T), sized_##T, init_##T}
static const kind KINDS[] = {
    ROW(opdb_aie_opts),          ROW(opdb_bench_opts),      ROW(opdb_check_options),   ROW(opdb_comm_bench_opts),
    ROW(opdb_comm_validate_opts), ROW(opdb_comm_import_opts), ROW(opdb_cmp_opts),        ROW(opdb_diff_options),
    ROW(opdb_fia_fill_opts),     ROW(opdb_grid_opts),       ROW(opdb_grid_miss_opts),  ROW(opdb_parse_opts),
    ROW(opdb_m6_opts),           ROW(opdb_measure_opts),    ROW(opdb_qdb_opts),        ROW(opdb_backend_opts),
    ROW(opdb_shapecmp_opts),     ROW(opdb_trace2csv_opts),  ROW(opdb_update_opts),     ROW(opdb_validate_opts),
};
enum { SLACK = 64, CANARY = 0xA5 };

static size_t size_field(const unsigned char *b) {
    size_t s;
    memcpy(&s, b, sizeof s);
    return s;
}

static void assert_canary(const unsigned char *b, size_t from, size_t to, const char *name) {
    for (size_t i = from; i < to; i++)
        if (b[i] != CANARY) fail_msg("%s: byte %zu written past the caller's struct", name, i);
}

/* the macro writes the library's struct: its size, and nothing past it */
static void test_macro_is_the_whole_struct(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof KINDS / sizeof *KINDS; k++) {
        const kind *t = &KINDS[k];
        unsigned char *b = malloc(t->known + SLACK), *ref = malloc(t->known);
        memset(b, CANARY, t->known + SLACK);
        t->init(b);
        assert_int_equal(size_field(b), t->known);
        assert_canary(b, t->known, t->known + SLACK, t->name);
        t->init_sized(ref, t->known);
        assert_memory_equal(b, ref, t->known);
        free(b);
        free(ref);
    }
}

/* an older header's shorter struct: only its bytes, the defaults' own, and its size */
static void test_shorter_struct_not_overrun(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof KINDS / sizeof *KINDS; k++) {
        const kind *t = &KINDS[k];
        unsigned char *b = malloc(t->known + SLACK), *ref = malloc(t->known);
        t->init(ref);
        size_t cuts[] = {0, 4, sizeof(size_t), sizeof(size_t) + 1, t->known / 2, t->known - 1};
        for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
            size_t n = cuts[c];
            memset(b, CANARY, t->known + SLACK);
            t->init_sized(b, n);
            assert_canary(b, n, t->known + SLACK, t->name);
            if (n >= sizeof(size_t)) {
                assert_int_equal(size_field(b), n);
                assert_memory_equal(b + sizeof(size_t), ref + sizeof(size_t), n - sizeof(size_t));
            } else {
                assert_memory_equal(b, ref, n); /* too short to say its size: the defaults' bytes only */
            }
        }
        free(b);
        free(ref);
    }
}

/* a newer header's longer struct: the library's defaults, zeros after them, the caller's size */
static void test_longer_struct_zeroed(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof KINDS / sizeof *KINDS; k++) {
        const kind *t = &KINDS[k];
        size_t n = t->known + SLACK / 2;
        unsigned char *b = malloc(t->known + SLACK), *ref = malloc(t->known);
        t->init(ref);
        memset(b, CANARY, t->known + SLACK);
        t->init_sized(b, n);
        assert_int_equal(size_field(b), n);
        assert_memory_equal(b + sizeof(size_t), ref + sizeof(size_t), t->known - sizeof(size_t));
        for (size_t i = t->known; i < n; i++) assert_int_equal(b[i], 0);
        assert_canary(b, n, t->known + SLACK, t->name);
        free(b);
        free(ref);
    }
}

/* a run given a struct of another size refuses it, naming the struct and the sizes */
static void test_other_size_refused(void **state) {
    (void)state;
    opdb_validate_opts v;
    opdb_validate_opts_init_sized(&v, sizeof v - 1);
    opdb_err err;
    opdb_err_clear(&err);
    opdb_validate_result res;
    assert_int_equal(opdb_validate_run("/nonexistent/opdb-test-opts-sized", &v, &res, &err), -1);
    assert_int_equal(err.code, OPDB_ERR_USAGE);
    assert_non_null(strstr(err.msg, "opdb_validate_opts"));
    assert_non_null(strstr(err.msg, "not one this library knows"));
}

static const char *const MM_CSV = "Type,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
                                  "Output Data Types,Output Formats,Duration(us)\n"
                                  "MatMulV2,AI_CORE,\"8,16;16,4\",DT_BF16;DT_BF16,ND;ND,\"8,4\",DT_BF16,ND,12.5\n";

/* opdb_qdb_open with an older struct (before read_files and line_memo): those take
 * their defaults, whatever lies past the caller's struct */
static void test_qdb_open_older_struct(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    qf_write(dir, "MatMulV2.csv", MM_CSV);
    size_t n = offsetof(opdb_qdb_opts, read_files);
    unsigned char *b = malloc(sizeof(opdb_qdb_opts));
    memset(b, CANARY, sizeof(opdb_qdb_opts));
    opdb_qdb_opts_init_sized((opdb_qdb_opts *)b, n);
    assert_canary(b, n, sizeof(opdb_qdb_opts), "opdb_qdb_opts");
    opdb_qdb_opts *o = (opdb_qdb_opts *)b;
    o->warn = qf_quiet;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_qdb *db = opdb_qdb_open(dir, o, &err);
    assert_non_null(db);
    assert_false(db->read_files);
    assert_int_equal(db->line_memo, OPDB_LINE_MEMO_DEFAULT);
    char *line = qf_line(db, "{\"kernel\": \"MatMulV2\", \"inputs\": [{\"shape\": [8, 16], \"dtype\": \"DT_BF16\"}, "
                             "{\"shape\": [16, 4], \"dtype\": \"DT_BF16\"}], \"id\": 1}",
                         false);
    assert_non_null(strstr(line, "\"latency_us\": 12.5"));
    free(line);
    opdb_qdb_close(db);
    free(b);
    qf_rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_macro_is_the_whole_struct),
        cmocka_unit_test(test_shorter_struct_not_overrun),
        cmocka_unit_test(test_longer_struct_zeroed),
        cmocka_unit_test(test_other_size_refused),
        cmocka_unit_test(test_qdb_open_older_struct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
