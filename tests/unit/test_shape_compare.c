/* Shape keys (docs/ANALYSIS.md §3.1) and sub_kernel_durations pairs: the
 * fast path of opdb_skd_read must agree with the literal parser on every
 * input. Expected keys are what the reference's Python gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opdb/shape_compare.h"

typedef struct {
    const char *in;
    const char *want;      /* default mode */
    const char *want_q;    /* --reference-quirks; NULL = the reference crashes */
} key_case;

static const key_case keys[] = {
    {"[[1, 4096], [4096, 4096]]", "1,4096;4096,4096", "1,4096;4096,4096"},
    {"\"4096,4096\"", "4096,4096", "4096,4096"},
    {"  \"[[2, 3]]\" ", "2,3", "2,3"},
    {"", "", ""},
    {"[1, 4096]", "1,4096", NULL},
    {"[[1, 4096], 7]", "1,4096;7", NULL},
    {"[]", "", ""},
    {"[[]]", "", ""},
    {"[['ab'], [1.5, None], (True, 2)]", "ab;1.5,None;True,2", "ab;1.5,None;True,2"},
    {"['\xc3\xa9x']", "\xc3\xa9,x", "\xc3\xa9,x"},  /* a string iterates by code point */
    {"[[1, 2]", "[[1,2]", "[[1,2]"},              /* not a literal: the cleaned text */
    {"[[1];[2]]", "[[1];[2]]", "[[1];[2]]"},       /* ';' -> as is */
    {"([1], [2])", "([1],[2])", "([1],[2])"},       /* a tuple -> as is */
    {"8, 128", "8,128", "8,128"},
    {"[[0x10, 1_000, -0]]", "16,1000,0", "16,1000,0"},
};

static void test_shape_keys(void **state) {
    (void)state;
    opdb_strbuf out;
    opdb_sb_init(&out);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const key_case *k = &keys[i];
        assert_int_equal(opdb_shape_key(k->in, strlen(k->in), false, &out), 0);
        assert_string_equal(out.n ? out.p : "", k->want);
        int rc = opdb_shape_key(k->in, strlen(k->in), true, &out);
        if (k->want_q) {
            assert_int_equal(rc, 0);
            assert_string_equal(out.n ? out.p : "", k->want_q);
        } else {
            assert_int_equal(rc, -1);
        }
    }
    opdb_sb_free(&out);
}

static const char *const skd_texts[] = {
    "[('MatMulV2', 12.34), ('hcom_allReduce_', 5.6)]",
    "[('A', 1)]",
    "[['B', 2.5]]",
    "[ ( 'C' , -3 ) , ( \"D\" , 1e3 ) ]",
    "[('A', 1), ]",
    "[('A', 1,)]",
    "[('A', 012)]",
    "[('A', 0)]",
    "[('A', -0)]",
    "[('A', -0.0)]",
    "[('A', 1.)]",
    "[('A', .5)]",
    "[('A', 1_000)]",
    "[('A', 99999999999999999999)]",
    "[('A', True)]",
    "[('A', None)]",
    "[('A', '1')]",
    "[('A\\'b', 1)]",
    "[('A' 'B', 1)]",
    "[(1, 2)]",
    "[('A', 1, 2)]",
    "[('A',)]",
    "[]",
    "()",
    "[('A', 1)] x",
    "[('A', 1)]\t",
    "[('\xc3\xa9', 1e400)]",
    "[('A', 1e-400)]",
    "[('A', - 5)]",
    "garbage",
};

/* The pairs the literal parser gives, rendered as one line. */
static void slow_pairs(const char *text, opdb_strbuf *out) {
    opdb_trace_field f = {(char *)"sub_kernel_durations", OPDB_J_STRING, (char *)text};
    opdb_pylit *v = opdb_skd_parse(&f);
    opdb_sb_clear(out);
    if (!v) {
        opdb_sb_adds(out, "invalid");
        return;
    }
    for (size_t i = 0; i < v->nitems; i++) {
        const opdb_pylit *name = v->items[i]->items[0], *d = v->items[i]->items[1];
        opdb_pylit_str(out, name);
        if ((d->kind == OPDB_PYLIT_INT && d->fits_int64) || d->kind == OPDB_PYLIT_BOOL) opdb_sb_addf(out, "=i%lld;", d->i);
        else if (d->kind == OPDB_PYLIT_INT || d->kind == OPDB_PYLIT_FLOAT) opdb_sb_addf(out, "=f%a;", d->f);
        else opdb_sb_adds(out, "=nan;");
    }
    opdb_pylit_free(v);
}

static void fast_pairs(const char *text, opdb_skd *s, opdb_strbuf *out) {
    opdb_trace_field f = {(char *)"sub_kernel_durations", OPDB_J_STRING, (char *)text};
    opdb_sb_clear(out);
    if (!opdb_skd_read(&f, s)) {
        opdb_sb_adds(out, "invalid");
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        const opdb_skd_pair *p = &s->p[i];
        opdb_sb_add(out, opdb_skd_name(s, i), p->name_len);
        if (p->num == 1) opdb_sb_addf(out, "=i%lld;", p->i);
        else if (p->num == 2) opdb_sb_addf(out, "=f%a;", p->f);
        else opdb_sb_adds(out, "=nan;");
    }
}

static void test_skd_fast_equals_slow(void **state) {
    (void)state;
    opdb_strbuf a, b;
    opdb_sb_init(&a);
    opdb_sb_init(&b);
    opdb_skd s;
    opdb_skd_init(&s);
    for (size_t i = 0; i < sizeof skd_texts / sizeof skd_texts[0]; i++) {
        slow_pairs(skd_texts[i], &a);
        fast_pairs(skd_texts[i], &s, &b);
        if (strcmp(a.p, b.p) != 0) fail_msg("%s: literal %s, fast %s", skd_texts[i], a.p, b.p);
    }
    /* decimals around the fast float path's limits (15 digits, 10^22) */
    unsigned seed = 12345;
    for (int i = 0; i < 3000; i++) {
        char num[64], text[96];
        int nd = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 24, dot = (int)(seed >> 8) % nd;
        size_t k = 0;
        if (seed & 1) num[k++] = '-';
        for (int j = 0; j < nd; j++) {
            if (j == dot + 1) num[k++] = '.';
            num[k++] = (char)('0' + ((seed = seed * 1103515245u + 12345u) >> 16) % 10);
        }
        if (dot + 1 >= nd) num[k++] = '.', num[k++] = '5';
        num[k] = '\0';
        snprintf(text, sizeof text, "[('A', %s)]", num);
        slow_pairs(text, &a);
        fast_pairs(text, &s, &b);
        if (strcmp(a.p, b.p) != 0) fail_msg("%s: literal %s, fast %s", text, a.p, b.p);
    }
    fast_pairs("[('MatMulV2', 12.34), ('Cast', 5)]", &s, &b);
    assert_string_equal(b.p, "MatMulV2=f0x1.8ae147ae147aep+3;Cast=i5;");
    opdb_skd_free(&s);
    opdb_sb_free(&a);
    opdb_sb_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_keys),
        cmocka_unit_test(test_skd_fast_equals_slow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
