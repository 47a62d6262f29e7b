/* `compare` building blocks: op_mapping.yaml truthiness (expected values
 * from PyYAML's safe_load + bool()), lookups at the top level and under
 * operator_mappings, and the rows' int-versus-float defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/compare.h"

typedef struct {
    const char *yaml_value;
    bool truthy; /* bool(yaml.safe_load(...)) */
} truth_case;

static const truth_case truth[] = {
    {"true", true},
    {"True", true},
    {"yes", true},
    {"Yes", true},
    {"on", true},
    {"ON", true},
    {"y", true},
    {"n", true},
    {"no", false},
    {"off", false},
    {"false", false},
    {"0", false},
    {"00", false},
    {"0x0", false},
    {"0o0", true},
    {"0b0", false},
    {"+0", false},
    {"-0", false},
    {"0.0", false},
    {".0", false},
    {"0.", false},
    {"-0.0e+5", false},
    {"0.0e+5", false},
    {"0:0", true},
    {"0:00.0", false},
    {"1", true},
    {"0x1", true},
    {"0.1", true},
    {".inf", true},
    {"-.inf", true},
    {".nan", true},
    {"~", false},
    {"null", false},
    {"", false},
    {"\"\"", false},
    {"\"0\"", true},
    {"'false'", true},
    {"[]", false},
    {"[0]", true},
    {"{}", false},
    {"{a: 1}", true},
    {"abc", true},
    {"1e5", true},
    {"0e0", true},
    {"1_000", true},
    {"0_0", false},
    {"NULL", false},
    {"Null", false},
    {"nUll", true},
    {"FALSE", false},
    {"fAlse", true},
    {"0x_0", false},
    {"0b_1", true},
};

static char dir_tmpl[64];

static const char *write_mapping(const char *text) {
    snprintf(dir_tmpl, sizeof dir_tmpl, "/tmp/opdb_test_compare.XXXXXX");
    if (!mkdtemp(dir_tmpl)) abort();
    char path[128];
    snprintf(path, sizeof path, "%s/op_mapping.yaml", dir_tmpl);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return dir_tmpl;
}

static void remove_mapping(void) {
    char path[128];
    snprintf(path, sizeof path, "%s/op_mapping.yaml", dir_tmpl);
    unlink(path);
    rmdir(dir_tmpl);
}

static void test_zero_cost_truthiness_matches_pyyaml(void **st) {
    (void)st;
    int bad = 0;
    for (size_t k = 0; k < sizeof truth / sizeof truth[0]; k++) {
        char text[256];
        snprintf(text, sizeof text, "aten.x.default:\n  kernel_type: K\n  zero_cost: %s\n", truth[k].yaml_value);
        opdb_cmp_mapping *m = NULL;
        opdb_err err;
        opdb_err_clear(&err);
        assert_int_equal(opdb_cmp_mapping_load(&m, write_mapping(text), false, &err), 0);
        const char *kt;
        bool zc;
        opdb_cmp_mapping_lookup(m, "torch.ops.aten.x.default", &kt, &zc);
        if (zc != truth[k].truthy) {
            print_error("zero_cost: %s -> %d, PyYAML says %d\n", truth[k].yaml_value, zc, truth[k].truthy);
            bad++;
        }
        if (!kt || strcmp(kt, "K") != 0) bad++;
        opdb_cmp_mapping_free(m);
        remove_mapping();
    }
    assert_int_equal(bad, 0);
}

static void test_lookup_levels(void **st) {
    (void)st;
    const char *text = "aten.a.default:\n  kernel_type: A\n"
                       "aten.empty.default: {}\n"
                       "torch.ops.aten.empty.default:\n  kernel_type: RawName\n"
                       "aten.str.default: just a string\n"
                       "base: &b\n  kernel_type: Merged\n"
                       "aten.m.default:\n  <<: *b\n"
                       "operator_mappings:\n  aten.n.default:\n    kernel_type: N\n    zero_cost: true\n"
                       "  aten.a.default:\n    kernel_type: Nested\n";
    for (int nested = 0; nested <= 1; nested++) {
        opdb_cmp_mapping *m = NULL;
        opdb_err err;
        opdb_err_clear(&err);
        assert_int_equal(opdb_cmp_mapping_load(&m, write_mapping(text), nested, &err), 0);
        const char *kt;
        bool zc;
        opdb_cmp_mapping_lookup(m, "aten.a.default", &kt, &zc);
        assert_string_equal(kt, "A"); /* the top level wins */
        /* an empty entry under the short name falls back to the raw name */
        opdb_cmp_mapping_lookup(m, "torch.ops.aten.empty.default", &kt, &zc);
        assert_string_equal(kt, "RawName");
        /* a truthy non-mapping entry is no entry (and no fallback) */
        opdb_cmp_mapping_lookup(m, "aten.str.default", &kt, &zc);
        assert_null(kt);
        opdb_cmp_mapping_lookup(m, "aten.m.default", &kt, &zc);
        assert_string_equal(kt, "Merged");
        opdb_cmp_mapping_lookup(m, "aten.n.default", &kt, &zc);
        if (nested) {
            assert_string_equal(kt, "N");
            assert_true(zc);
        } else { /* the reference never looks under operator_mappings */
            assert_null(kt);
            assert_false(zc);
        }
        opdb_cmp_mapping_free(m);
        remove_mapping();
    }
}

static void test_mapping_absent_or_bad(void **st) {
    (void)st;
    opdb_cmp_mapping *m = NULL;
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_cmp_mapping_load(&m, "/nonexistent/dir", true, &err), 0);
    const char *kt;
    bool zc;
    opdb_cmp_mapping_lookup(m, "aten.a.default", &kt, &zc);
    assert_null(kt);
    opdb_cmp_mapping_free(m);
    /* a falsy document is an empty mapping, a truthy list is an error */
    assert_int_equal(opdb_cmp_mapping_load(&m, write_mapping("[]\n"), true, &err), 0);
    opdb_cmp_mapping_free(m);
    remove_mapping();
    assert_int_equal(opdb_cmp_mapping_load(&m, write_mapping("- a\n"), true, &err), -1);
    assert_non_null(strstr(err.msg, "not a mapping"));
    opdb_cmp_mapping_free(m);
    remove_mapping();
    opdb_err_clear(&err);
    assert_int_equal(opdb_cmp_mapping_load(&m, write_mapping("a: [1\n"), true, &err), -1);
    assert_non_null(strstr(err.msg, "invalid YAML at line"));
    opdb_cmp_mapping_free(m);
    remove_mapping();
}

/* `<<` merges that loop (`&r {<<: *r}`) or double at every level used to be
 * walked path by path: 3^32 or 2^30 searches, a hang (found by
 * fuzz_op_mapping). Each merged mapping is now searched once. The alarm
 * turns a hang back into a failure. */
static void test_merge_cycles_and_doubling_chains_end(void **st) {
    (void)st;
    opdb_strbuf y;
    opdb_sb_init(&y);
    opdb_sb_adds(&y, "k: &k {kernel_type: MatMulV2}\n"
                     "r: &r {<<: [*r, *r, *r]}\n"
                     "aten.r.default: {<<: [*r, *r, *k], zero_cost: 1}\n"
                     "a0: &a0 {x: 1}\n");
    for (int i = 1; i < 30; i++) opdb_sb_addf(&y, "a%d: &a%d {<<: [*a%d, *a%d]}\n", i, i, i - 1, i - 1);
    opdb_sb_adds(&y, "aten.mm.default: {<<: [*a29, *a29, *k]}\n");
    opdb_cmp_mapping *m = NULL;
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_cmp_mapping_load(&m, write_mapping(y.p), false, &err), 0);
    alarm(60);
    const char *kt;
    bool zc;
    opdb_cmp_mapping_lookup(m, "aten.r.default", &kt, &zc);
    assert_non_null(kt);
    assert_string_equal(kt, "MatMulV2");
    assert_true(zc);
    opdb_cmp_mapping_lookup(m, "aten.mm.default", &kt, &zc);
    assert_non_null(kt);
    assert_string_equal(kt, "MatMulV2");
    assert_false(zc);
    opdb_cmp_mapping_lookup(m, "aten.none.default", &kt, &zc);
    assert_null(kt);
    alarm(0);
    opdb_cmp_mapping_free(m);
    remove_mapping();
    opdb_sb_free(&y);
}

/* op_mapping.yaml nested 100k deep: refused by the linear depth check before
 * libyaml (which took ~35 s on it), as grid's reader does. */
static void test_mapping_nesting_limit(void **st) {
    (void)st;
    size_t n = 100000;
    char *text = malloc(n + 16);
    assert_non_null(text);
    memcpy(text, "a: ", 3);
    memset(text + 3, '[', n);
    strcpy(text + 3 + n, "\n");
    opdb_cmp_mapping *m = NULL;
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_cmp_mapping_load(&m, write_mapping(text), true, &err), -1);
    assert_non_null(strstr(err.msg, "op_mapping.yaml:1: YAML nested deeper than 256 levels"));
    opdb_cmp_mapping_free(m);
    remove_mapping();
    free(text);
}

static void test_rows_int_defaults_and_order(void **st) {
    (void)st;
    opdb_cmp_stats tc, prof;
    memset(&tc, 0, sizeof tc);
    memset(&prof, 0, sizeof prof);
    opdb_cmp_stat *s = opdb_cmp_stats_get(&tc, "B", 1);
    s->total = 5.0;
    s->count = 1;
    s->hit = 1;
    s = opdb_cmp_stats_get(&tc, "A", 1);
    s->total = 5.0;
    s->count = 2;
    s->miss = 1;
    s->hit = 1;
    opdb_cmp_stat_add_func(s, "f1", 2);
    opdb_cmp_stat_add_func(s, "f1", 2);
    opdb_cmp_stat_add_func(s, "f2", 2);
    s = opdb_cmp_stats_get(&prof, "C", 1);
    s->total = 10.0;
    s->count = 2;
    opdb_cmp_scenario sc = {0};
    opdb_cmp_build_rows(&tc, &prof, 2.0, &sc);
    assert_int_equal(sc.nrows, 3);
    /* equal maxima keep the kernel-type order */
    assert_string_equal(sc.rows[0].kt, "A");
    assert_string_equal(sc.rows[1].kt, "B");
    assert_string_equal(sc.rows[2].kt, "C");
    assert_string_equal(sc.rows[0].funcs, "f1, f2");
    assert_string_equal(sc.rows[0].status, "PARTIAL");
    assert_string_equal(sc.rows[1].status, "HIT");
    assert_true(sc.rows[2].tc_total.is_int);       /* no TC stats: int 0 */
    assert_false(sc.rows[0].prof_per_fwd.is_int);  /* 0 / n_fwd is a float */
    assert_true(sc.rows[0].error_pct.is_int);      /* prof 0: int 0 */
    assert_true(sc.rows[2].prof_per_fwd.v == 5.0);
    assert_int_equal(sc.rows[2].prof_count, 1);
    assert_true(sc.rows[2].error_pct.v == -100.0);
    opdb_cmp_scenario_free(&sc);
    /* n_fwd 0: every per-forward value is the int 0 */
    opdb_cmp_build_rows(&tc, &prof, 0.0, &sc);
    for (size_t i = 0; i < sc.nrows; i++) {
        assert_true(sc.rows[i].prof_per_fwd.is_int);
        assert_int_equal(sc.rows[i].prof_count, 0);
        assert_true(sc.rows[i].count_error_pct.is_int);
    }
    opdb_cmp_scenario_free(&sc);
    opdb_cmp_stats_free(&tc);
    opdb_cmp_stats_free(&prof);
}

/* --shapes: the shape-compare CSV is read by header name, cells kept as
 * written; a missing column or a non-numeric cell is an error naming the
 * file and line. */
static const char *write_shapes(const char *text) {
    static char path[] = "/tmp/opdb_test_shapes.XXXXXX";
    strcpy(path, "/tmp/opdb_test_shapes.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_read_shapes(void **st) {
    (void)st;
    opdb_cmp_shapes sh = {0};
    opdb_err err;
    opdb_err_clear(&err);
    /* columns in another order, CRLF, a quoted shape, inf and empty deltas */
    const char *p = write_shapes("source,kernel_type,shape_key,tc_dur_us,prof_dur_us,delta_pct,tc_count,prof_count\r\n"
                                 "MEASURED,MatMulV2,\"1,4096;4096,4096\",9.0,10.0,-10.0,1,1\r\n"
                                 ",Add,,3,0,inf,1,0\r\n"
                                 "INTERPOLATED,Mul,\"2,2\",1.5,0,,1,0\r\n");
    assert_int_equal(opdb_cmp_read_shapes(p, &sh, &err), 0);
    assert_int_equal(sh.n, 3);
    assert_string_equal(sh.v[0].kt, "MatMulV2");
    assert_string_equal(sh.v[0].shape, "1,4096;4096,4096");
    assert_string_equal(sh.v[0].tc_dur, "9.0");
    assert_true(sh.v[0].prof == 10.0);
    assert_string_equal(sh.v[0].source, "MEASURED");
    assert_string_equal(sh.v[1].shape, "");
    assert_string_equal(sh.v[1].delta, "inf");
    assert_string_equal(sh.v[2].delta, "");
    assert_true(sh.v[2].tc == 1.5);
    opdb_cmp_shapes_free(&sh);
    unlink(p);

    p = write_shapes("kernel_type,shape_key,tc_dur_us,prof_dur_us,delta_pct,tc_count\n");
    assert_int_equal(opdb_cmp_read_shapes(p, &sh, &err), -1);
    assert_non_null(strstr(err.msg, ":1: no 'prof_count' column"));
    assert_int_equal(sh.n, 0);
    unlink(p);

    opdb_err_clear(&err);
    p = write_shapes("kernel_type,shape_key,tc_dur_us,prof_dur_us,delta_pct,tc_count,prof_count,source\n"
                     "A,,1,2,3,1,1,\n\nB,,1,abc,3,1,1,\n");
    assert_int_equal(opdb_cmp_read_shapes(p, &sh, &err), -1);
    assert_non_null(strstr(err.msg, ":4: prof_dur_us 'abc' is not a number"));
    assert_int_equal(sh.n, 0);
    unlink(p);

    opdb_err_clear(&err);
    p = write_shapes("kernel_type,shape_key,tc_dur_us,prof_dur_us,delta_pct,tc_count,prof_count,source\n"
                     "A,,1,2,3,1.5,1,\n");
    assert_int_equal(opdb_cmp_read_shapes(p, &sh, &err), -1);
    assert_non_null(strstr(err.msg, ":2: tc_count '1.5' is not a whole number"));
    unlink(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_cost_truthiness_matches_pyyaml),
        cmocka_unit_test(test_lookup_levels),
        cmocka_unit_test(test_mapping_absent_or_bad),
        cmocka_unit_test(test_mapping_nesting_limit),
        cmocka_unit_test(test_merge_cycles_and_doubling_chains_end),
        cmocka_unit_test(test_rows_int_defaults_and_order),
        cmocka_unit_test(test_read_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
