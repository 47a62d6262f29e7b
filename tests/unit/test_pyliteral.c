/* Python literal parser (docs/ANALYSIS.md §1.3). Expected values are CPython 3's
 * repr([ast.literal_eval(text)]); NULL = literal_eval (or the subset of docs/ANALYSIS.md §1.3,
 * which refuses complex, dict, set, bytes and \N{...}) rejects the text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pyliteral.h"

typedef struct {
    const char *text;
    const char *repr; /* repr of a one-element list holding the value */
} lit_case;

static const lit_case cases[] = {
    {"[('MatMulV2', 12.34), ('hcom_allReduce_', 5.6)]", "[[('MatMulV2', 12.34), ('hcom_allReduce_', 5.6)]]"},
    {"[[1, 4096], [4096, 4096]]", "[[[1, 4096], [4096, 4096]]]"},
    {"(1,)", "[(1,)]"},
    {"()", "[()]"},
    {"[]", "[[]]"},
    {"(1)", "[1]"},
    {"((1))", "[1]"},
    {"-(1)", "[-1]"},
    {"(-1)", "[-1]"},
    {"- 1", "[-1]"},
    {"+1", "[1]"},
    {"-1.5e3", "[-1500.0]"},
    {"1e400", "[inf]"},
    {"-1e400", "[-inf]"},
    {"1_000", "[1000]"},
    {"0_0", "[0]"},
    {"00", "[0]"},
    {"0x1F", "[31]"},
    {"-0x10", "[-16]"},
    {"0o17", "[15]"},
    {"0b101", "[5]"},
    {"0X_f", "[15]"},
    {"99999999999999999999", "[99999999999999999999]"},
    {"-99999999999999999999", "[-99999999999999999999]"},
    {"9223372036854775807", "[9223372036854775807]"},
    {"9223372036854775808", "[9223372036854775808]"},
    {"-9223372036854775808", "[-9223372036854775808]"},
    {"-0", "[0]"},
    {"-0.0", "[-0.0]"},
    {".5", "[0.5]"},
    {"5.", "[5.0]"},
    {"5.e3", "[5000.0]"},
    {"1E-3", "[0.001]"},
    {"00.5", "[0.5]"},
    {"01e1", "[10.0]"},
    {"1_0.2_5", "[10.25]"},
    {"'a\\'b'", "[\"a'b\"]"},
    {"\"it's\"", "[\"it's\"]"},
    {"'\\x41\\u00e9\\U0001F600\\101\\n\\t\\\\'", "['Aé😀A\\n\\t\\\\']"},
    {"r'a\\nb'", "['a\\\\nb']"},
    {"u'x'", "['x']"},
    {"'a' \"b\"", "['ab']"},
    {"'''tri'ple'''", "[\"tri'ple\"]"},
    {"'\\q'", "['\\\\q']"},
    {"'é中'", "['é中']"},
    {"True", "[True]"},
    {"False", "[False]"},
    {"None", "[None]"},
    {"[True, None, False]", "[[True, None, False]]"},
    {"1, 2", "[(1, 2)]"},
    {"1,", "[(1,)]"},
    {"  [1, 2, ]  ", "[[1, 2]]"},
    {"\n[1,\n 2]\n", "[[1, 2]]"},
    {"[1,\t2]", "[[1, 2]]"},
    {"[[[]]]", "[[[[]]]]"},
    {"[(1, 'a'), (2.5, \"b\")]", "[[(1, 'a'), (2.5, 'b')]]"},
    {"'a' 'b' 'c'", "['abc']"},
    {"'\\\n'", "['']"},
    {"'''a\r\nb\rc'''", "['a\\nb\\nc']"},
    {"R'\\d'", "['\\\\d']"},
    {"U'x'", "['x']"},
    {"", NULL},
    {"   ", NULL},
    {"[", NULL},
    {"]", NULL},
    {"[1 2]", NULL},
    {"[1,,2]", NULL},
    {"(,)", NULL},
    {"--1", NULL},
    {"-True", NULL},
    {"-'a'", NULL},
    {"-[1]", NULL},
    {"-(-1)", NULL},
    {"1 + 2", NULL},
    {"abc", NULL},
    {"nan", NULL},
    {"inf", NULL},
    {"01", NULL},
    {"0_1", NULL},
    {"1__0", NULL},
    {"1_", NULL},
    {"0x", NULL},
    {"0xg", NULL},
    {"1.2.3", NULL},
    {"1abc", NULL},
    {"f'x'", NULL},
    {"ur'x'", NULL},
    {"'abc", NULL},
    {"'a\nb'", NULL},
    {"'\\x4'", NULL},
    {"'\\N{DASH}'", NULL},
    {"[1] [2]", NULL},
    {"1\n,2", NULL},
    {"-\n1", NULL},
    {"(1\n)", "[1]"},
    {"None None", NULL},
    {"Truex", NULL},
    {"x=1", NULL},
    {"[1]]", NULL},
    {"'\\U00110000'", NULL},
    {"rr'x'", NULL},
    {"uR'x'", NULL},
    {"rrrr'x'", NULL},
    {"'a\rb'", NULL},
    {"Rb'x'", NULL},
    {"fr'x'", NULL},
    {"1j", NULL},
    {"1+2j", NULL},
    {"{}", NULL},
    {"{1: 2}", NULL},
    {"{1}", NULL},
    {"b'x'", NULL},
    {"'\\N{DASH}'", NULL},
    {"[1, {}]", NULL},
};

/* repr([v]) */
static char *repr_in_list(const opdb_pylit *v) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_addc(&sb, '[');
    opdb_pylit_repr(&sb, v);
    opdb_sb_addc(&sb, ']');
    return sb.p;
}

static void test_table_matches_cpython(void **st) {
    (void)st;
    int bad = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const lit_case *c = &cases[k];
        size_t off = 0;
        const char *msg = NULL;
        opdb_pylit *v = opdb_pylit_parse(c->text, strlen(c->text), &off, &msg);
        if (!c->repr) {
            if (v) {
                char *got = repr_in_list(v);
                print_error("%s: parsed as %s, want failure\n", c->text, got);
                free(got);
                bad++;
            } else if (!msg || off > strlen(c->text)) {
                print_error("%s: failure without message/offset\n", c->text);
                bad++;
            }
        } else if (!v) {
            print_error("%s: failed at %zu (%s), want %s\n", c->text, off, msg, c->repr);
            bad++;
        } else {
            char *got = repr_in_list(v);
            if (strcmp(got, c->repr) != 0) {
                print_error("%s: got %s, want %s\n", c->text, got, c->repr);
                bad++;
            }
            free(got);
        }
        opdb_pylit_free(v);
    }
    assert_int_equal(bad, 0);
}

static void test_tree_fields(void **st) {
    (void)st;
    const char *t = "[('MatMulV2', 12.34), ('hcom_allReduce_', 5)]";
    opdb_pylit *v = opdb_pylit_parse(t, strlen(t), NULL, NULL);
    assert_non_null(v);
    assert_int_equal(v->kind, OPDB_PYLIT_LIST);
    assert_int_equal(v->nitems, 2);
    const opdb_pylit *a = v->items[0], *b = v->items[1];
    assert_int_equal(a->kind, OPDB_PYLIT_TUPLE);
    assert_int_equal(a->nitems, 2);
    assert_int_equal(a->items[0]->kind, OPDB_PYLIT_STR);
    assert_string_equal(a->items[0]->s, "MatMulV2");
    assert_int_equal(a->items[0]->n, 8);
    double d = 0;
    assert_true(opdb_pylit_number(a->items[1], &d));
    assert_true(d == 12.34);
    assert_int_equal(b->items[1]->kind, OPDB_PYLIT_INT);
    assert_true(b->items[1]->fits_int64);
    assert_int_equal(b->items[1]->i, 5);
    assert_string_equal(b->items[1]->s, "5");
    assert_false(opdb_pylit_number(b->items[0], &d)); /* a str is no number */
    opdb_pylit_free(v);
}

static void test_big_int_keeps_text(void **st) {
    (void)st;
    const char *t = "-1_000_000_000_000_000_000_000";
    opdb_pylit *v = opdb_pylit_parse(t, strlen(t), NULL, NULL);
    assert_non_null(v);
    assert_int_equal(v->kind, OPDB_PYLIT_INT);
    assert_false(v->fits_int64);
    assert_string_equal(v->s, "-1000000000000000000000");
    assert_true(v->f == -1e21);
    opdb_pylit_free(v);
}

static void test_bool_is_not_a_number(void **st) {
    (void)st;
    opdb_pylit *v = opdb_pylit_parse("True", 4, NULL, NULL);
    assert_non_null(v);
    assert_int_equal(v->kind, OPDB_PYLIT_BOOL);
    assert_int_equal(v->i, 1);
    double d;
    assert_false(opdb_pylit_number(v, &d));
    opdb_pylit_free(v);
}

static void test_error_offsets(void **st) {
    (void)st;
    size_t off = 99;
    const char *msg = NULL;
    assert_null(opdb_pylit_parse("[1, 2 x]", 8, &off, &msg));
    assert_int_equal(off, 6);
    assert_non_null(msg);
    assert_null(opdb_pylit_parse("[1, 'ab", 7, &off, &msg));
    assert_int_equal(off, 4); /* the opening quote */
    /* an embedded NUL byte is refused, as Python refuses it in source */
    assert_null(opdb_pylit_parse("[1,\0 2]", 7, &off, &msg));
    assert_int_equal(off, 3);
    /* the span is honoured: text after n is not read */
    opdb_pylit *v = opdb_pylit_parse("[1]]]]", 3, NULL, NULL);
    assert_non_null(v);
    opdb_pylit_free(v);
}

static void test_deep_nesting_refused(void **st) {
    (void)st;
    enum { N = 5000 };
    char *t = malloc(2 * N);
    memset(t, '[', N);
    memset(t + N, ']', N);
    assert_null(opdb_pylit_parse(t, 2 * N, NULL, NULL));
    /* 100 levels are fine */
    opdb_pylit *v = opdb_pylit_parse(t + N - 100, 200, NULL, NULL);
    assert_non_null(v);
    opdb_pylit_free(v);
    free(t);
}

static void test_str_forms(void **st) {
    (void)st;
    const char *t = "('a', [1, 2.0], ('x',), None, True)";
    opdb_pylit *v = opdb_pylit_parse(t, strlen(t), NULL, NULL);
    assert_non_null(v);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_pylit_str(&sb, v);
    assert_string_equal(sb.p, "('a', [1, 2.0], ('x',), None, True)");
    opdb_sb_clear(&sb);
    opdb_pylit_str(&sb, v->items[0]); /* str() of a str is the text itself */
    assert_string_equal(sb.p, "a");
    opdb_sb_clear(&sb);
    opdb_pylit_repr(&sb, v->items[0]);
    assert_string_equal(sb.p, "'a'");
    opdb_sb_free(&sb);
    opdb_pylit_free(v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_matches_cpython),
        cmocka_unit_test(test_tree_fields),
        cmocka_unit_test(test_big_int_keeps_text),
        cmocka_unit_test(test_bool_is_not_a_number),
        cmocka_unit_test(test_error_offsets),
        cmocka_unit_test(test_deep_nesting_refused),
        cmocka_unit_test(test_str_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
