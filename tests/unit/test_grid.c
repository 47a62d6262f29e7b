/* opdb grid building blocks: Python-exact seeded sampling (vectors from
 * CPython 3.11: random.seed(S); random.sample(range(n), k)), the safe
 * expression evaluator (including hostile input), config errors, template
 * slot counts and op_mapping.yaml metadata. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/grid.h"
#include "grid/grid_opmap.h"
#include "grid/grid_rows.h"

static void test_getrandbits_vectors(void **state) {
    (void)state;
    opdb_pyrandom r;
    opdb_pyrandom_seed(&r, 0);
    assert_int_equal(opdb_pyrandom_getrandbits(&r, 32), 3626764237u);
    opdb_pyrandom_seed(&r, 20260409);
    assert_int_equal(opdb_pyrandom_getrandbits(&r, 32), 1774543370u);
    assert_int_equal(opdb_pyrandom_getrandbits(&r, 32), 3597083174u);
    assert_int_equal(opdb_pyrandom_getrandbits(&r, 32), 1227859262u);
    opdb_pyrandom_seed(&r, 12345678901234LL); /* two key words */
    assert_int_equal(opdb_pyrandom_getrandbits(&r, 32), 107551873u);
    assert_int_equal(opdb_pyrandom_getrandbits(&r, 32), 2403399316u);
    assert_int_equal(opdb_pyrandom_getrandbits(&r, 32), 624174316u);
    opdb_pyrandom_seed(&r, 4294967301LL); /* 2**32 + 5 */
    assert_int_equal(opdb_pyrandom_getrandbits(&r, 32), 675479763u);
    assert_int_equal(opdb_pyrandom_getrandbits(&r, 32), 2085189291u);
    /* random.seed(9): randrange(1000) x5 (= _randbelow), then getrandbits(7) x3 */
    opdb_pyrandom_seed(&r, 9);
    static const uint32_t below[5] = {474, 627, 382, 273, 141}, bits7[3] = {23, 110, 86};
    for (int i = 0; i < 5; i++) assert_int_equal(opdb_pyrandom_randbelow(&r, 1000), below[i]);
    for (int i = 0; i < 3; i++) assert_int_equal(opdb_pyrandom_getrandbits(&r, 7), bits7[i]);
}

typedef struct sample_case {
    long long seed;
    size_t n, k;
    size_t first[8];
    size_t sum;
} sample_case;

static void test_sample_vectors(void **state) {
    (void)state;
    static const sample_case cases[] = {
        {20260409, 100, 5, {52, 36, 50, 90, 12}, 240},
        {20260409, 50653, 1000, {27077, 18735, 25758, 46242, 6331, 40126, 23159, 3441}, 25611662},
        {1, 3000, 1000, {550, 2331, 258, 1044, 482, 2029, 1841, 1934}, 1478166},
        {0, 10, 10, {6, 9, 0, 2, 4, 3, 5, 1}, 45},
        {-5, 22, 6, {19, 8, 11, 16, 0, 14}, 68}, /* negative seed = |seed|; pool path (n <= 85) */
        {12345678901234LL, 1000, 30, {25, 573, 148, 845, 436, 542, 414, 988}, 14775},
        {7, 21, 21, {10, 4, 12, 1, 2, 3, 5, 9}, 210},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        opdb_pyrandom r;
        opdb_pyrandom_seed(&r, cases[c].seed);
        size_t *out = malloc(cases[c].k * sizeof *out), sum = 0;
        opdb_pyrandom_sample(&r, cases[c].n, cases[c].k, out);
        for (size_t i = 0; i < cases[c].k; i++) sum += out[i];
        for (size_t i = 0; i < 8 && i < cases[c].k; i++) assert_int_equal(out[i], cases[c].first[i]);
        assert_int_equal(sum, cases[c].sum);
        if (cases[c].n == 50653) { /* the last three too: the set path's retries */
            assert_int_equal(out[997], 20857);
            assert_int_equal(out[998], 44130);
            assert_int_equal(out[999], 39330);
        }
        free(out);
    }
}

/* ---- evaluator */
static int ev(const char *text, int64_t *out, char *msg) {
    static const char *const names[] = {"M", "N", "K", "tokens", "D"};
    static const int64_t vals[] = {7, 32, 128, -9, 4096};
    opdb_grid_vars v = {names, vals, 5};
    opdb_grid_expr *e = opdb_grid_expr_compile(text, msg, 256);
    if (!e) return -2;
    double f;
    bool fl;
    int rc = opdb_grid_expr_eval(e, &v, out, &f, &fl, msg, 256);
    /* the same with the names bound to slots (the expansion's fast path) */
    int64_t out2 = -54321;
    double f2;
    bool fl2;
    char msg2[256] = "";
    opdb_grid_expr_bind(e, &v);
    int rc2 = opdb_grid_expr_eval(e, &v, &out2, &f2, &fl2, msg2, 256);
    opdb_grid_expr_bind(e, NULL);
    if (rc2 != rc || strcmp(msg2, rc ? msg : "") || (!rc && (out2 != *out || fl2 != fl)))
        fail_msg("%s: bound rc %d '%s' %lld, by name rc %d '%s' %lld", text, rc2, msg2, (long long)out2, rc,
                 rc ? msg : "", (long long)*out);
    opdb_grid_expr_free(e);
    return rc;
}

/* The fast path sorts on rendered input cells: grid_cmp_shape_cells must
 * order them as grid_cmp_inputs orders the shapes (empty slots, negative
 * and extreme dims, equal prefixes, different dim and slot counts). */
static int sgn(int x) { return (x > 0) - (x < 0); }
static void random_shapes(uint64_t *st, grid_shape *s, int *n) {
    static const int64_t vals[] = {0, 1, 2, 9, 10, 11, 100, -1, -2, -10, 128, 4096, INT64_MAX, INT64_MIN, 1000000007};
    *st = *st * 6364136223846793005u + 1442695040888963407u;
    *n = (int)(*st >> 60) % 4;
    for (int i = 0; i < *n; i++) {
        *st = *st * 6364136223846793005u + 1442695040888963407u;
        s[i].nd = (int)((*st >> 58) % 4);
        for (int d = 0; d < s[i].nd; d++) {
            *st = *st * 6364136223846793005u + 1442695040888963407u;
            s[i].d[d] = vals[(*st >> 40) % (*st >> 63 ? 15 : 4)]; /* small values half the time: many ties */
        }
    }
}
static void test_cmp_shape_cells(void **state) {
    (void)state;
    uint64_t st = 42;
    opdb_strbuf ca, cb;
    opdb_sb_init(&ca);
    opdb_sb_init(&cb);
    size_t ties = 0, rests = 0;
    for (int t = 0; t < 200000; t++) {
        grid_shape a[4], b[4];
        int na, nb;
        random_shapes(&st, a, &na);
        if (t % 3) memcpy(b, a, sizeof b), nb = na; /* then change one thing, or nothing */
        else random_shapes(&st, b, &nb);
        if (t % 3 == 1 && nb) {
            st = st * 6364136223846793005u + 1442695040888963407u;
            grid_shape *s = &b[(st >> 33) % (uint64_t)nb];
            int64_t *v = s->nd ? &s->d[(st >> 20) % (uint64_t)s->nd] : NULL;
            if (v && (st & 1)) *v = *v == INT64_MAX ? *v - 1 : *v == INT64_MIN ? *v + 1 : *v + ((st & 2) ? 1 : -1);
            else if (s->nd < 4) s->d[s->nd++] = 7;
        }
        opdb_sb_clear(&ca);
        opdb_sb_clear(&cb);
        grid_shape_cell(&ca, a, na);
        grid_shape_cell(&cb, b, nb);
        int want = sgn(grid_cmp_inputs(a, na, b, nb));
        int got = sgn(grid_cmp_shape_cells(ca.p ? ca.p : "", ca.n, cb.p ? cb.p : "", cb.n));
        if (got != want) fail_msg("'%s' vs '%s': %d, want %d", ca.p ? ca.p : "", cb.p ? cb.p : "", got, want);
        ties += want == 0;
        int64_t lead[2], lead_b[2];
        bool has = na && a[0].nd >= 2;
        const char *rest = grid_shape_cell_lead2(ca.p ? ca.p : "", ca.n, lead);
        assert_int_equal(rest != NULL, has);
        if (has) assert_true(lead[0] == a[0].d[0] && lead[1] == a[0].d[1]);
        const char *rest_b = grid_shape_cell_lead2(cb.p ? cb.p : "", cb.n, lead_b);
        if (rest && rest_b && lead[0] == lead_b[0] && lead[1] == lead_b[1]) { /* the sort's second step */
            got = sgn(grid_cmp_shape_cells_rest(rest, rest_b));
            if (got != want) fail_msg("'%s' vs '%s' after two dims: %d, want %d", ca.p, cb.p, got, want);
            rests++;
        }
    }
    assert_true(ties > 1000 && rests > 1000);
    opdb_sb_free(&ca);
    opdb_sb_free(&cb);
}

/* Bound slots: the last binding of a name wins, values may change between
 * evaluations, and only the names array bound to uses the slots. */
static void test_expr_bind(void **state) {
    (void)state;
    char msg[256] = "";
    opdb_grid_expr *e = opdb_grid_expr_compile("N * 100 + K", msg, sizeof msg);
    assert_non_null(e);
    const char *names[] = {"N", "K", "N"};
    int64_t vals[] = {1, 2, 3};
    opdb_grid_vars v = {names, vals, 3};
    int64_t r;
    double f;
    bool fl;
    opdb_grid_expr_bind(e, &v);
    assert_int_equal(opdb_grid_expr_eval(e, &v, &r, &f, &fl, msg, sizeof msg), 0);
    assert_int_equal(r, 302);
    vals[2] = 5, vals[1] = 7;
    assert_int_equal(opdb_grid_expr_eval(e, &v, &r, &f, &fl, msg, sizeof msg), 0);
    assert_int_equal(r, 507);
    const char *other[] = {"K", "N"}; /* another names array: looked up by name */
    int64_t ovals[] = {4, 9};
    opdb_grid_vars w = {other, ovals, 2};
    assert_int_equal(opdb_grid_expr_eval(e, &w, &r, &f, &fl, msg, sizeof msg), 0);
    assert_int_equal(r, 904);
    opdb_grid_vars shorter = {names, vals, 2}; /* same array, fewer names: not the binding */
    assert_int_equal(opdb_grid_expr_eval(e, &shorter, &r, &f, &fl, msg, sizeof msg), 0);
    assert_int_equal(r, 107);
    opdb_grid_expr_bind(e, NULL);
    assert_int_equal(opdb_grid_expr_eval(e, &v, &r, &f, &fl, msg, sizeof msg), 0);
    assert_int_equal(r, 507);
    const char *no_k[] = {"N"};
    opdb_grid_vars nk = {no_k, vals, 1};
    opdb_grid_expr_bind(e, &nk); /* K unbound: the by-name error */
    assert_int_equal(opdb_grid_expr_eval(e, &nk, &r, &f, &fl, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "name 'K' is not defined"));
    opdb_grid_expr_free(e);
}
static void expect(const char *text, int64_t want) {
    int64_t got = -12345;
    char msg[256] = "";
    int rc = ev(text, &got, msg);
    if (rc || got != want) fail_msg("%s: rc %d (%s), got %lld, want %lld", text, rc, msg, (long long)got, (long long)want);
}
static void expect_error(const char *text, int rc_want, const char *fragment) {
    int64_t got;
    char msg[256] = "";
    int rc = ev(text, &got, msg);
    if (rc != rc_want || !strstr(msg, fragment)) fail_msg("%s: rc %d msg '%s', want rc %d '%s'", text, rc, msg, rc_want, fragment);
}

static void test_expr_python_semantics(void **state) {
    (void)state;
    expect("M", 7);
    expect("max(1, N//32)", 1);
    expect("min(M, N, K)", 7);
    expect("abs(tokens)", 9);
    expect("align(tokens, 8)", -8);  /* ((-9+7)//8)*8 = -8 */
    expect("align(M, 8)", 8);
    expect("tokens // 4", -3);       /* floors toward -inf */
    expect("tokens % 4", 3);         /* sign of the divisor */
    expect("M % -4", -1);
    expect("-2 ** 2", -4);
    expect("2 ** 3 ** 2", 512);      /* right associative */
    expect("M / 2", 3);              /* float 3.5 truncated */
    expect("2 ** -1", 0);            /* float 0.5 */
    expect("1 < M <= 7 < N", 1);     /* chained */
    expect("1 < M > 7", 0);
    expect("M == 7 and N", 32);      /* Python returns the operand */
    expect("0 or K", 128);
    expect("not M", 0);
    expect("not not M and not 0", 1);
    expect("M != 7 or N % 16 == 0", 1);
    expect("tokens * D >= 262144", 0);
    expect("(((M)))", 7);
    expect("1_000 + 1", 1001);
    expect("max(1, 2, 3,)", 3);
}

static void test_expr_hostile(void **state) {
    (void)state;
    /* the rule of docs/GRID.md §5.2: '.' anywhere, or "__" after the start,
     * a non-word character or '_' */
    expect_error("__import__('os').system('x')", -2, OPDB_GRID_EXPR_FORBIDDEN);
    expect_error("__import__('os')", -2, OPDB_GRID_EXPR_FORBIDDEN);
    expect_error("M.__class__", -2, OPDB_GRID_EXPR_FORBIDDEN);
    expect_error("M + 1.5", -2, OPDB_GRID_EXPR_FORBIDDEN);
    expect_error("max(M, __x)", -2, OPDB_GRID_EXPR_FORBIDDEN);
    expect_error("M___x", -2, OPDB_GRID_EXPR_FORBIDDEN);  /* `_` then `__` */
    expect_error("M__x", -1, "name 'M__x' is not defined"); /* no boundary before `__`: allowed, unknown */
    expect_error("open('x')", -2, "unknown function");
    expect_error("eval('1')", -2, "unknown function");
    expect_error("lambda: 1", -2, "unexpected");
    expect_error("M; 1", -2, "unexpected");
    expect_error("[1][0]", -2, "unexpected");
    expect_error("M / 0", -1, "division by zero");
    expect_error("M // 0", -1, "division or modulo by zero");
    expect_error("M % 0", -1, "modulo by zero");
    expect_error("10 ** 100", -1, "overflow");
    expect_error("2 ** 2 ** 2 ** 2 ** 2", -1, "overflow");
    expect_error("9223372036854775807 + 1", -1, "overflow");
    expect_error("99999999999999999999", -2, "too large");
    expect_error("X + 1", -1, "name 'X' is not defined");
    expect_error("max(M)", -1, "not iterable");
    expect_error("abs(1, 2)", -2, "number of arguments");
    /* deep nesting and long input are refused, not recursed into */
    char deep[400];
    size_t n = 0;
    for (int i = 0; i < 150; i++) deep[n++] = '(';
    deep[n++] = '1';
    for (int i = 0; i < 150; i++) deep[n++] = ')';
    deep[n] = '\0';
    expect_error(deep, -2, "nested too deeply");
    char negs[300];
    memset(negs, '-', 200);
    strcpy(negs + 200, "1");
    expect_error(negs, -2, "nested too deeply");
    char *nots = malloc(500);
    nots[0] = '\0';
    for (int i = 0; i < 100; i++) strcat(nots, "not ");
    strcat(nots, "1");
    expect_error(nots, -2, "nested too deeply");
    free(nots);
    char *longe = malloc(2000);
    memset(longe, '1', 1999);
    longe[1999] = '\0';
    expect_error(longe, -2, "longer than");
    free(longe);
}

/* ---- configuration */
static void test_config_default_and_errors(void **state) {
    (void)state;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_grid_config *c = opdb_grid_config_load(opdb_grid_default_config, opdb_grid_default_config_len, "built-in", &err);
    assert_non_null(c);
    opdb_grid_config_free(c);
    static const struct { const char *yaml, *want; } bad[] = {
        {"patterns: {p: {iterators: {x: NOPE}, inputs: ['(x)'], outputs: []}}\nassignments: {}\n", "t.yaml:1: unknown grid: NOPE"},
        {"grids: {G: [1, x]}\npatterns: {}\nassignments: {}\n", "t.yaml:1: not an integer: x"},
        {"patterns:\n  p:\n    iterators: {x: [1]}\n    inputs: ['(x + )']\n    outputs: []\nassignments: {}\n",
         "t.yaml:4: bad expression 'x +'"},
        {"patterns:\n  p:\n    iterators: {x: [1]}\n    constraints: ['x.real > 0']\n    inputs: []\n    outputs: []\nassignments: {}\n",
         "t.yaml:4: bad expression 'x.real > 0'"},
        {"patterns: {p: {generator_function: rm_rf}}\nassignments: {}\n", "unknown generator_function: rm_rf"},
        {"patterns: [1\n", "t.yaml:2: YAML error"},
        {"- 1\n", "the configuration must be a mapping"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        opdb_err_clear(&err);
        c = opdb_grid_config_load(bad[i].yaml, strlen(bad[i].yaml), "t.yaml", &err);
        if (c || !strstr(err.msg, bad[i].want)) fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].want);
    }
}

/* ---- template slot counts (§7.1) */
static void test_slot_count_final_semicolon(void **state) {
    (void)state;
    static const struct { const char *cell; int want; } t[] = {
        {"\"128,4,128;\"", 1}, /* every real FusedInferAttentionScore output cell */
        {"\"a;;b\"", 3},       {"\"1,2;3\"", 2},   {"\"1,2;3;\"", 2}, {"\"1,2;;\"", 2},
        {"\";\"", 1},          {"\"(1;2);3\"", 2}, {"1,2", 1},          {"\"\"", 0},
        {"N/A", 0},             {"  ", 0},           {"\"1,2; \"", 2}, /* a blank last part is text */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (grid_slot_count(opdb_span_cstr(t[i].cell)) != t[i].want)
            fail_msg("'%s': %d slots, want %d", t[i].cell, grid_slot_count(opdb_span_cstr(t[i].cell)), t[i].want);
    /* a real FIA input cell: 30 top-level ';' and nothing after the last, so
     * 30 slots (the generator's 31 are kept: never truncated) */
    char fia[256] = "\"128,4,128;12307,128,128;12307,128,128;;2048,2048;128;128;;;;;;;;128,512";
    for (int i = 0; i < 16; i++) strcat(fia, ";");
    strcat(fia, "\"");
    assert_int_equal(grid_slot_count(opdb_span_cstr(fia)), 30);
}

/* ---- op_mapping.yaml metadata (§3) */
static int load_map(const char *yaml, grid_opmap *m) {
    char path[] = "/tmp/opdb_test_opmap_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(yaml, f);
    fclose(f);
    opdb_err err;
    opdb_err_clear(&err);
    int rc = grid_opmap_load(path, m, &err);
    unlink(path);
    return rc;
}

static const grid_opmeta *meta_of(const grid_opmap *m, const char *kt) {
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->e[i].kernel_type, kt)) return &m->e[i];
    return NULL;
}

static void test_opmap_keyed_by_op_name(void **state) {
    (void)state;
    grid_opmap m;
    assert_int_equal(load_map("operator_mappings:\n"
                              "  \"aten.div.Tensor\": {kernel_type: Div, alternate_kernel_types: [RealDiv, '', ~], query_mode: elementwise}\n"
                              "  \"aten.view.default\": {zero_cost: true}\n"
                              "  \"aten.x\": {kernel_type: '', zero_cost: true}\n"
                              "  \"aten.y\": {kernel_type: ~, zero_cost: true}\n"
                              "  \"aten.z\": not a mapping\n"
                              "  \"p.MemSet\": {kernel_type: MemSet, zero_cost: true}\n"
                              "  \"p.Div2\": {kernel_type: RealDiv, composite: true}\n"
                              "  \"c.ag\": {kernel_type: hcom_allGather_, category: communication, alternate_kernel_types: [agAicpu]}\n"
                              "  \"p.MemSet\": {kernel_type: MemSet2}\n", /* given twice: the last value, first place */
                              &m),
                     0);
    assert_true(m.present);
    const char *order[] = {"Div", "RealDiv", "MemSet2", "hcom_allGather_", "agAicpu"};
    assert_int_equal(m.n, 5);
    for (size_t i = 0; i < 5; i++) assert_string_equal(m.e[i].kernel_type, order[i]);
    const grid_opmeta *d = meta_of(&m, "RealDiv"); /* the first entry naming it wins */
    assert_string_equal(d->alternates_of, "Div");
    assert_string_equal(d->query_mode, "elementwise");
    assert_false(d->composite);
    assert_false(meta_of(&m, "MemSet2")->zero_cost);
    assert_true(meta_of(&m, "agAicpu")->communication);
    assert_string_equal(meta_of(&m, "agAicpu")->alternates_of, "hcom_allGather_");
    grid_opmap_free(&m);
    /* a list, a scalar or nothing under operator_mappings: a file without metadata */
    static const char *const none[] = {"operator_mappings:\n  - {kernel_type: RealDiv, zero_cost: true}\n",
                                       "operator_mappings: RealDiv\n", "other: 1\n", "- 1\n"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(load_map(none[i], &m), 0);
        assert_true(m.present);
        assert_int_equal(m.n, 0);
        grid_opmap_free(&m);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_getrandbits_vectors),
        cmocka_unit_test(test_sample_vectors),
        cmocka_unit_test(test_expr_python_semantics),
        cmocka_unit_test(test_expr_bind),
        cmocka_unit_test(test_cmp_shape_cells),
        cmocka_unit_test(test_expr_hostile),
        cmocka_unit_test(test_config_default_and_errors),
        cmocka_unit_test(test_slot_count_final_semicolon),
        cmocka_unit_test(test_opmap_keyed_by_op_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
