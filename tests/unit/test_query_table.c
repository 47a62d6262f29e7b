/* The query engine's table loader: pandas' default reading of a database
 * table (NA spellings, whole-column typing, duplicate header names, short and
 * long records, line numbers) and the Python conversions of its cells. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/pandas_cells.h"
#include "db/table.h"

static void load(db_table *t, const char *text) {
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(db_table_load_mem(t, "T.csv", text, strlen(text), &err), 0);
}

static const char *text(const db_table *t, size_t r, int c, char *buf) {
    opdb_span s = db_cell_text(db_table_cell(t, r, c), buf, 48);
    static char out[128];
    snprintf(out, sizeof out, "%.*s", (int)s.n, s.p);
    return out;
}

static void test_column_typing(void **state) {
    (void)state;
    db_table t;
    load(&t, "i,f,withna,b,txt,q,inf\n"
             "1,1.5,4096,True,abc,\"5\",inf\n"
             " 2 ,2,,false,NA, 6,-Infinity\n"
             "-3,1e3,7,TRUE,x,7,1\n");
    assert_int_equal(t.ncols, 7);
    assert_int_equal(t.nrows, 3);
    assert_int_equal(db_table_col_kind(&t, 0), DBC_INT);
    assert_int_equal(db_table_cell(&t, 1, 0)->v.i, 2);
    assert_int_equal(db_table_col_kind(&t, 1), DBC_FLOAT);
    /* an int column with an NA cell becomes float: 4096 reads as 4096.0 */
    assert_int_equal(db_table_col_kind(&t, 2), DBC_FLOAT);
    char buf[48];
    assert_string_equal(text(&t, 0, 2, buf), "4096.0");
    assert_int_equal(db_table_cell(&t, 1, 2)->kind, DBC_NA);
    assert_string_equal(text(&t, 1, 2, buf), "nan");
    assert_int_equal(db_table_col_kind(&t, 3), DBC_BOOL);
    assert_string_equal(text(&t, 1, 3, buf), "False");
    assert_int_equal(db_table_col_kind(&t, 4), DBC_TEXT);
    assert_int_equal(db_table_cell(&t, 1, 4)->kind, DBC_NA);
    /* quoting does not matter for typing */
    assert_int_equal(db_table_col_kind(&t, 5), DBC_INT);
    assert_int_equal(db_table_col_kind(&t, 6), DBC_FLOAT);
    assert_true(isinf(db_table_cell(&t, 1, 6)->v.f));
    assert_string_equal(text(&t, 2, 1, buf), "1000.0");
    db_table_free(&t);
}

/* A text cell reads its decoded text (quoted or not, the same text); typed
 * and NA cells are read through their value. The numbers of the typing pass
 * are the values (an int column turned float by an NA re-reads its integers
 * as floats: -0 stays negative). */
static void test_text_and_values(void **state) {
    (void)state;
    db_table t;
    load(&t, "dt,lat,n\n"
             "DT_BF16;DT_BF16,3.002913,-0\n"
             "\"DT_BF16;DT_BF16\",12.5,\n"
             "FLOAT,0.1,7\n");
    char buf[48];
    assert_int_equal(db_table_col_kind(&t, 0), DBC_TEXT);
    assert_string_equal(text(&t, 0, 0, buf), "DT_BF16;DT_BF16");
    assert_string_equal(text(&t, 1, 0, buf), "DT_BF16;DT_BF16");
    assert_string_equal(text(&t, 2, 0, buf), "FLOAT");
    assert_int_equal(db_table_col_kind(&t, 1), DBC_FLOAT);
    assert_int_equal(sizeof(db_cell), 16);
    assert_true(db_table_cell(&t, 0, 1)->v.f == 3.002913);
    assert_true(db_table_cell(&t, 2, 1)->v.f == 0.1);
    assert_string_equal(text(&t, 0, 1, buf), "3.002913");
    assert_int_equal(db_table_col_kind(&t, 2), DBC_FLOAT);
    assert_true(signbit(db_table_cell(&t, 0, 2)->v.f));
    assert_string_equal(text(&t, 0, 2, buf), "-0.0");
    assert_string_equal(text(&t, 2, 2, buf), "7.0");
    double v;
    assert_true(db_cell_num(db_table_cell(&t, 2, 0), &v) == false);
    db_table_free(&t);
}

static void test_na_spellings_and_text(void **state) {
    (void)state;
    db_table t;
    load(&t, "a,b\n#N/A,x\n-nan,x\n<NA>,x\nNULL,x\n \" \",x\nNone,x\n");
    assert_int_equal(t.nrows, 6);
    for (size_t r = 0; r < 4; r++) assert_int_equal(db_table_cell(&t, r, 0)->kind, DBC_NA);
    /* no trimming: a space is text, and None is text (pandas 1.5) */
    assert_int_equal(db_table_cell(&t, 4, 0)->kind, DBC_TEXT);
    assert_int_equal(db_table_cell(&t, 5, 0)->kind, DBC_TEXT);
    db_table_free(&t);
}

static void test_header_duplicates_short_rows_lines(void **state) {
    (void)state;
    db_table t;
    load(&t, "\xef\xbb\xbf" "x,x,y,x.1\n\n1,2\n\"a\nb\",3,4,5\n   \n6,7,8,9\n");
    assert_string_equal(t.cols[0], "x");
    assert_string_equal(t.cols[1], "x.1");
    assert_string_equal(t.cols[2], "y");
    assert_string_equal(t.cols[3], "x.1.1");
    assert_int_equal(db_table_col(&t, "x"), 0);
    assert_int_equal(t.nrows, 3);
    assert_int_equal(t.line[0], 3);
    assert_int_equal(t.line[1], 4);
    assert_int_equal(t.line[2], 7);
    /* a short record: the missing cells are NA */
    assert_int_equal(db_table_cell(&t, 0, 2)->kind, DBC_NA);
    db_table_free(&t);
    /* a generated name that is taken later gets its own suffix, as pandas does */
    load(&t, "x,x.1,x\n1,2,3\n");
    assert_string_equal(t.cols[2], "x.1.1");
    db_table_free(&t);
}

static void test_refused_files(void **state) {
    (void)state;
    db_table t;
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(db_table_load_mem(&t, "T.csv", "", 0, &err), -1);
    assert_non_null(strstr(err.msg, "T.csv"));
    db_table_free(&t);
    opdb_err_clear(&err);
    const char *longrec = "a,b\n1,2\n1,2,3\n";
    assert_int_equal(db_table_load_mem(&t, "T.csv", longrec, strlen(longrec), &err), -1);
    assert_non_null(strstr(err.msg, "T.csv:3:"));
    db_table_free(&t);
    opdb_err_clear(&err);
    const char *bad = "a\n\xff\xfe\n";
    assert_int_equal(db_table_load_mem(&t, "T.csv", bad, strlen(bad), &err), -1);
    assert_non_null(strstr(err.msg, "UTF-8"));
    db_table_free(&t);
}

/* A header of empty cells only (",,"): no cell byte was ever stored; the loader
 * must not offset a null buffer (a fuzzer find, caught by UBSan). */
static void test_empty_cells_only(void **state) {
    (void)state;
    static const char *texts[] = {",,", ",,\n,,\n", "\n,\n"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        db_table t;
        opdb_err err;
        opdb_err_clear(&err);
        int rc = db_table_load_mem(&t, "T.csv", texts[i], strlen(texts[i]), &err);
        assert_true(rc == 0 || (rc == -1 && strstr(err.msg, "T.csv")));
        db_table_free(&t);
    }
}

static void test_cell_conversions(void **state) {
    (void)state;
    db_table t;
    load(&t, "f,t,b\n4096.0, 1_0 ,True\n2.5,x,False\n");
    int64_t v;
    double d;
    assert_true(db_cell_pyint(db_table_cell(&t, 0, 0), &v));
    assert_int_equal(v, 4096);
    assert_true(db_cell_pyint(db_table_cell(&t, 1, 0), &v));
    assert_int_equal(v, 2); /* int() truncates a float */
    assert_true(db_cell_pyint(db_table_cell(&t, 0, 1), &v));
    assert_int_equal(v, 10);
    assert_false(db_cell_pyint(db_table_cell(&t, 1, 1), &v));
    assert_false(db_cell_num(db_table_cell(&t, 1, 1), &d));
    assert_true(db_cell_num(db_table_cell(&t, 0, 2), &d));
    assert_true(d == 1.0);
    db_table_free(&t);
}

static uint64_t g_rng = 0x2545f4914f6cdd1dull;
static unsigned rnd(unsigned n) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (unsigned)(g_rng % n);
}

/* the plain rules: a list of pandas' NA spellings, and a float literal as
 * its grammar says, read by strtod */
static bool plain_na(const char *s, size_t n) {
    static const char *const na[] = {"",     "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                                     "1.#QNAN", "<NA>", "N/A",     "NA",  "NULL",    "NaN",      "n/a",  "nan",  "null"};
    for (size_t i = 0; i < sizeof na / sizeof na[0]; i++)
        if (strlen(na[i]) == n && memcmp(na[i], s, n) == 0) return true;
    return false;
}

static bool plain_float(const char *s, size_t n, double *out) {
    char buf[64];
    size_t a = 0, b = n;
    while (a < b && (s[a] == ' ' || s[a] == '\t')) a++;
    while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) b--;
    snprintf(buf, sizeof buf, "%.*s", (int)(b - a), s + a);
    const char *p = buf + (buf[0] == '+' || buf[0] == '-');
    bool inf = strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0;
    if (!inf) {
        size_t i = 0, d = 0;
        while (p[i] >= '0' && p[i] <= '9') i++, d++;
        if (p[i] == '.')
            for (i++; p[i] >= '0' && p[i] <= '9'; i++) d++;
        if (!d) return false;
        if (p[i] == 'e' || p[i] == 'E') {
            i++;
            if (p[i] == '+' || p[i] == '-') i++;
            size_t e = 0;
            while (p[i] >= '0' && p[i] <= '9') i++, e++;
            if (!e) return false;
        }
        if (p[i]) return false;
    }
    errno = 0;
    double v = strtod(buf, NULL);
    if (errno == ERANGE && isinf(v)) return false;
    *out = v;
    return true;
}

/* The NA check and the float literal, which take their common cells by
 * shortcuts, against the plain rules on random cells near their forms. */
static void test_literal_shortcuts(void **state) {
    (void)state;
    static const char *const na[] = {"#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                                     "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null"};
    const char *na_bytes = "#N/A -1.IDQnaul<>LU", *num_bytes = "0123456789..+-eE \tinfINFty";
    for (size_t i = 0; i < sizeof na / sizeof na[0]; i++) assert_true(db_is_na(na[i], strlen(na[i])));
    assert_true(db_is_na("", 0));
    char s[32];
    for (int it = 0; it < 400000; it++) {
        size_t n;
        if (rnd(3) == 0) { /* a spelling, cut, grown or changed in one byte */
            const char *w = na[rnd(sizeof na / sizeof na[0])];
            n = strlen(w);
            memcpy(s, w, n);
            unsigned k = rnd(4);
            if (k == 1 && n) n--;
            else if (k == 2) s[n++] = na_bytes[rnd((unsigned)strlen(na_bytes))];
            else if (k == 3) s[rnd((unsigned)n)] = na_bytes[rnd((unsigned)strlen(na_bytes))];
        } else {
            n = rnd(10);
            for (size_t i = 0; i < n; i++) s[i] = na_bytes[rnd((unsigned)strlen(na_bytes))];
        }
        assert_int_equal(db_is_na(s, n), plain_na(s, n));
        /* numbers: digits with a point, signs, exponents, spaces, infinities, 25 digits and more */
        n = rnd(4) == 0 ? rnd(12) : 1 + rnd(28);
        for (size_t i = 0; i < n; i++) s[i] = rnd(3) ? (char)('0' + rnd(10)) : num_bytes[rnd((unsigned)strlen(num_bytes))];
        double got = 0, want = 0;
        bool g = db_float_literal(s, n, &got), w = plain_float(s, n, &want);
        if (g != w) fail_msg("'%.*s': %d, plain %d", (int)n, s, g, w);
        if (g) assert_memory_equal(&got, &want, sizeof got);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literal_shortcuts),
        cmocka_unit_test(test_column_typing),
        cmocka_unit_test(test_text_and_values),
        cmocka_unit_test(test_empty_cells_only),
        cmocka_unit_test(test_na_spellings_and_text),
        cmocka_unit_test(test_header_duplicates_short_rows_lines),
        cmocka_unit_test(test_refused_files),
        cmocka_unit_test(test_cell_conversions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
