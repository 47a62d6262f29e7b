/* The database table read as text (src/db/text_table.c): every opening
 * check and its one-line error, BOM policy, repeated header names, padding
 * and ragged rows, record lines, a file and the same bytes in memory giving
 * the same table; the signature cells picked by column name; and the record
 * lines reaching parse --merge's messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/sig_cells.h"
#include "db/text_table.h"
#include "ingest/table_merge.h"
#include "opdb/schema.h"

static char g_dir[] = "/tmp/opdb_text_table_XXXXXX";

static int setup(void **state) {
    (void)state;
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes bytes to <dir>/name; returns the path (valid for the next 7 calls). */
static const char *put(const char *name, const char *bytes, size_t n) {
    static char paths[8][256];
    static unsigned next;
    char *path = paths[next++ % 8];
    snprintf(path, sizeof paths[0], "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
    return path;
}

static const char *puts_(const char *name, const char *text) { return put(name, text, strlen(text)); }

static void assert_span(opdb_span s, const char *want) {
    assert_int_equal(s.n, strlen(want));
    assert_memory_equal(s.p, want, s.n);
    assert_int_equal(s.p[s.n], '\0');
}

/* Loads path, which must succeed. */
static void load_ok(db_text_table *t, const char *path, const db_text_opts *o) {
    opdb_err e;
    opdb_err_clear(&e);
    if (db_text_load(t, path, o, NULL, &e) != 0) fail_msg("%s", e.msg);
}

/* Loads path, expecting the opening check `kind` at `line` and an error
 * that starts with the file's name and contains `msg`. */
static void expect_refused(const char *path, const db_text_opts *o, db_open_kind kind, unsigned line, const char *msg) {
    db_text_table t;
    db_open_problem p;
    opdb_err e;
    opdb_err_clear(&e);
    assert_int_equal(db_text_load(&t, path, o, &p, &e), -1);
    assert_int_equal(p.kind, kind);
    assert_int_equal(p.line, line);
    assert_true(strncmp(e.msg, path, strlen(path)) == 0);
    assert_non_null(strstr(e.msg, msg));
    assert_null(strchr(e.msg, '\n'));
    db_text_free(&t);
}

static void test_opening_checks(void **state) {
    (void)state;
    db_text_opts o = {.open = {.sniff = true, .need_header = true, .lfs = true}};
    char missing[300];
    snprintf(missing, sizeof missing, "%s/missing.csv", g_dir);
    expect_refused(missing, &o, DB_OPEN_CANNOT_OPEN, 0, ": cannot open: No such file or directory");
    static const char gz[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xfe\x00\x01";
    expect_refused(put("gz.csv", gz, sizeof gz - 1), &o, DB_OPEN_NOT_TEXT, 1, "gzip");
    expect_refused(puts_("latin1.csv", "Input Shapes,Dur\xe9" "e\n1,2\n"), &o, DB_OPEN_NOT_TEXT, 1, "UTF-8");
    static const char utf16[] = "\xff\xfeI\0n\0,\0x\0\n\0";
    expect_refused(put("utf16.csv", utf16, sizeof utf16 - 1), &o, DB_OPEN_NOT_TEXT, 1, "UTF-16");
    expect_refused(puts_("empty.csv", ""), &o, DB_OPEN_NO_HEADER, 0, ": CSV has no header");
    expect_refused(puts_("blank.csv", "\na,b\n1,2\n"), &o, DB_OPEN_NO_HEADER, 0, ": CSV has no header");
    const char *lfs = puts_("lfs.csv", "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 12\n");
    expect_refused(lfs, &o, DB_OPEN_LFS_POINTER, 1, " is a Git LFS pointer, not CSV data (run git lfs pull)");

    /* a header of one empty name is a header (a DictReader's fieldnames [""]) */
    db_text_table h;
    load_ok(&h, puts_("one_empty_name.csv", "\"\"\n1\n"), &o);
    assert_int_equal(h.ncols, 1);
    assert_span(h.names[0], "");
    assert_int_equal(h.nrows, 1);
    db_text_free(&h);

    /* each check only where asked: the same files load */
    db_text_opts lax = {0};
    db_text_table t;
    load_ok(&t, lfs, &lax);
    assert_span(t.names[0], "version https://git-lfs.github.com/spec/v1");
    db_text_free(&t);
    load_ok(&t, puts_("empty.csv", ""), &lax);
    assert_null(t.names);
    assert_int_equal(t.nrows, 0);
    db_text_free(&t);
    /* without need_header, blank lines before the header are skipped */
    load_ok(&t, puts_("blank.csv", "\n\na,b\n1,2\n"), &lax);
    assert_int_equal(t.ncols, 2);
    assert_span(t.names[1], "b");
    assert_int_equal(t.nrows, 1);
    assert_int_equal(t.line[0], 4);
    db_text_free(&t);
}

static void test_stream_open(void **state) {
    (void)state;
    db_open_opts o = {.need_header = true, .lfs = true};
    opdb_csv_file c;
    db_open_problem p;
    opdb_err e;
    opdb_err_clear(&e);
    assert_int_equal(db_csv_open(&c, puts_("s.csv", "\xef\xbb\xbfx,y\n1,2\n3,4\n"), &o, &p, &e), 0);
    assert_int_equal(p.kind, DB_OPEN_OK);
    assert_int_equal(c.nf, 2);
    assert_int_equal(c.f[0].n, 1); /* the BOM skipped */
    assert_memory_equal(c.f[0].p, "x", 1);
    int rows = 0;
    while (opdb_csv_file_next(&c, false) > 0) rows++;
    assert_int_equal(rows, 2);
    opdb_csv_file_close(&c);
    assert_int_equal(db_csv_open(&c, puts_("s.csv", ""), &o, &p, &e), -1);
    assert_int_equal(p.kind, DB_OPEN_NO_HEADER);
    assert_string_equal(p.why, "no header");
    opdb_csv_file_close(&c); /* closed already: harmless */
}

static void test_bom(void **state) {
    (void)state;
    const char *path = puts_("bom.csv", "\xef\xbb\xbf" "a,b\n1,2\n");
    db_text_opts o = {0};
    db_text_table t;
    load_ok(&t, path, &o);
    assert_span(t.names[0], "a");
    assert_int_equal(db_text_col(&t, "a"), 0);
    db_text_free(&t);
    o.open.keep_bom = true; /* the reference's reading: the BOM is part of the first name */
    load_ok(&t, path, &o);
    assert_span(t.names[0], "\xef\xbb\xbf" "a");
    assert_int_equal(db_text_col(&t, "a"), -1);
    db_text_free(&t);
}

static void test_duplicate_names(void **state) {
    (void)state;
    const char *path = puts_("dup.csv", "a,b,a,c,b\n1,2,3,4,5\n6\n");
    db_text_opts o = {0};
    db_text_table t;
    load_ok(&t, path, &o);
    const char *as_written[] = {"1", "2", "3", "4", "5"};
    for (int i = 0; i < 5; i++) assert_span(t.rows[0][i], as_written[i]);
    assert_int_equal(db_text_col(&t, "a"), 0);
    db_text_free(&t);
    o.last_name_wins = true;
    load_ok(&t, path, &o);
    const char *last[] = {"3", "5", "3", "4", "5"};
    for (int i = 0; i < 5; i++) assert_span(t.rows[0][i], last[i]);
    /* "6" sits under the first a, but a row reads the last a, which the record lacks */
    for (int i = 0; i < 5; i++) assert_span(t.rows[1][i], "");
    assert_span(t.names[2], "a");
    db_text_free(&t);
}

static void test_padding_and_ragged(void **state) {
    (void)state;
    const char *path = puts_("pad.csv", "a,b,c\n1\n1,2,3,4\n,,\n");
    db_text_opts o = {0};
    db_text_table t;
    load_ok(&t, path, &o);
    assert_null(t.ncells);
    assert_int_equal(t.nrows, 3);
    assert_span(t.rows[0][0], "1");
    assert_span(t.rows[0][1], "");
    assert_span(t.rows[0][2], "");
    assert_span(t.rows[1][2], "3"); /* the fourth cell is cut */
    assert_span(db_text_cell(&t, 1, 3), "");
    assert_span(db_text_cell(&t, 1, -1), "");
    db_text_free(&t);
    o.ragged = true;
    load_ok(&t, path, &o);
    assert_int_equal(t.ncells[0], 1);
    assert_int_equal(t.ncells[1], 4);
    assert_int_equal(t.ncells[2], 3);
    assert_span(t.rows[1][3], "4");
    assert_span(db_text_cell(&t, 0, 2), "");
    assert_span(db_text_cell(&t, 1, 3), "4");
    db_text_free(&t);
}

static void test_lines_quotes_and_max_rows(void **state) {
    (void)state;
    const char *text = "a,b\n\n1,2\r\n\"x\ny\",3\n\n4,5\n";
    const char *path = puts_("lines.csv", text);
    db_text_opts o = {0};
    db_text_table t;
    opdb_err e;
    opdb_err_clear(&e);
    load_ok(&t, path, &o);
    assert_int_equal(t.nrows, 3);
    assert_int_equal(t.line[0], 3);
    assert_int_equal(t.line[1], 4);
    assert_int_equal(t.line[2], 7);
    assert_span(t.rows[1][0], "x\ny");
    db_text_free(&t);
    o.max_rows = 2;
    load_ok(&t, path, &o);
    assert_int_equal(t.nrows, 2);
    db_text_free(&t);

    /* a quote that never closes: the rest of the file is one cell, or an error naming its line */
    const char *open = puts_("open.csv", "a,b\n1,2\n3,\"x\n4,5\n");
    o = (db_text_opts){0};
    load_ok(&t, open, &o);
    assert_int_equal(t.nrows, 2);
    assert_span(t.rows[1][1], "x\n4,5\n");
    db_text_free(&t);
    o.refuse_open_quote = true;
    assert_int_equal(db_text_load(&t, open, &o, NULL, &e), -1);
    char want[300];
    snprintf(want, sizeof want, "%s:3: unterminated quoted field", open);
    assert_true(strncmp(e.msg, want, strlen(want)) == 0);
    db_text_free(&t);
    opdb_err_clear(&e);
    assert_int_equal(db_text_load(&t, puts_("open_header.csv", "a,\"b\n1,2\n"), &o, NULL, &e), -1);
    assert_non_null(strstr(e.msg, ":1: unterminated quoted field"));
    db_text_free(&t);
}

static void assert_same_table(const db_text_table *a, const db_text_table *b) {
    assert_int_equal(a->ncols, b->ncols);
    assert_int_equal(a->names == NULL, b->names == NULL);
    for (size_t i = 0; i < a->ncols; i++) assert_span(a->names[i], b->names[i].p);
    assert_int_equal(a->nrows, b->nrows);
    assert_int_equal(a->ncells == NULL, b->ncells == NULL);
    for (size_t r = 0; r < a->nrows; r++) {
        size_t n = a->ncells ? a->ncells[r] : a->ncols;
        if (a->ncells) assert_int_equal(a->ncells[r], b->ncells[r]);
        assert_int_equal(a->line[r], b->line[r]);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(a->rows[r][i].n, b->rows[r][i].n);
            assert_memory_equal(a->rows[r][i].p, b->rows[r][i].p, a->rows[r][i].n);
        }
    }
}

static void test_memory_equals_file(void **state) {
    (void)state;
    static const char *const inputs[] = {
        "\xef\xbb\xbf" "a,b,a\n1,2,3\n\n\"q\"\"x\",\"m\nl\"\r\n7\n",
        "a\n",
        "",
        "\n\nx,y\n1,2,3\n4\n",
        "h1,h2\n\"open,\n",
    };
    for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; k++)
        for (int v = 0; v < 4; v++) {
            db_text_opts o = {.open = {.keep_bom = v & 1}, .ragged = v == 2, .last_name_wins = v == 3};
            const char *path = puts_("mem.csv", inputs[k]);
            db_text_table f, m;
            opdb_err e1, e2;
            opdb_err_clear(&e1);
            opdb_err_clear(&e2);
            assert_int_equal(db_text_load(&f, path, &o, NULL, &e1), 0);
            assert_int_equal(db_text_load_mem(&m, "mem", inputs[k], strlen(inputs[k]), &o, NULL, &e2), 0);
            assert_same_table(&f, &m);
            db_text_free(&f);
            db_text_free(&m);
        }
    /* the checks that need no file apply to memory too */
    db_text_opts o = {.open = {.need_header = true, .lfs = true}};
    db_text_table m;
    db_open_problem p;
    opdb_err e;
    opdb_err_clear(&e);
    assert_int_equal(db_text_load_mem(&m, "mem", "\n", 1, &o, &p, &e), -1);
    assert_int_equal(p.kind, DB_OPEN_NO_HEADER);
    assert_string_equal(e.msg, "mem: CSV has no header");
    db_text_free(&m);
    opdb_err_clear(&e);
    static const char lfs[] = "version https://git-lfs.github.com/spec/v1\n";
    assert_int_equal(db_text_load_mem(&m, "mem", lfs, sizeof lfs - 1, &o, &p, &e), -1);
    assert_int_equal(p.kind, DB_OPEN_LFS_POINTER);
    db_text_free(&m);
}

static void test_sig_cells_by_name(void **state) {
    (void)state;
    /* EP Size first, Input Shapes twice (the last one counts), no Output Data Types */
    const opdb_span names[] = {opdb_span_cstr(OPDB_COL_EP_SIZE), opdb_span_cstr(OPDB_COL_INPUT_SHAPES),
                               opdb_span_cstr(OPDB_COL_OUTPUT_SHAPES), opdb_span_cstr(OPDB_COL_INPUT_DTYPES),
                               opdb_span_cstr(OPDB_COL_INPUT_SHAPES), opdb_span_cstr(OPDB_COL_INPUT_FORMATS)};
    db_sig_cols m;
    assert_int_equal(db_sig_cols_from_header(&m, names, 6, DB_NAME_LAST), -1);
    assert_int_equal(m.col[0], 4);
    assert_int_equal(m.col[4], -1);
    const opdb_span row[] = {opdb_span_cstr("8"), opdb_span_cstr("first"), opdb_span_cstr("2,2"),
                             opdb_span_cstr("FLOAT16"), opdb_span_cstr("1,4"), opdb_span_cstr("ND")};
    opdb_sig_cells c = db_sig_cells_from_row(&m, row, 6);
    assert_span(c.in_shapes, "1,4");
    assert_span(c.in_dtypes, "FLOAT16");
    assert_span(c.in_formats, "ND");
    assert_span(c.out_shapes, "2,2");
    assert_span(c.out_dtypes, "");
    assert_span(c.ep_size, "8");
    c = db_sig_cells_from_row(&m, row, 3); /* a short row: the cells past it are empty */
    assert_span(c.in_shapes, "");
    assert_span(c.in_dtypes, "");
    assert_span(c.out_shapes, "2,2");

    /* a tokenizer's record reads the same as the spans */
    opdb_field fields[6];
    for (int i = 0; i < 6; i++) fields[i] = (opdb_field){(char *)row[i].p, (uint32_t)row[i].n};
    for (int n = 0; n <= 6; n++) {
        opdb_sig_cells a = db_sig_cells_from_row(&m, row, (size_t)n), b = db_sig_cells_from_fields(&m, fields, n);
        assert_memory_equal(&a, &b, sizeof a);
    }
    /* a replaced cell: every signature cell read from that column, no other */
    c = db_sig_cells_from_row(&m, row, 6);
    db_sig_cells_put(&m, &c, 5, opdb_span_cstr("NZ"));
    db_sig_cells_put(&m, &c, 0, opdb_span_cstr("16"));
    db_sig_cells_put(&m, &c, 1, opdb_span_cstr("shadowed")); /* the first Input Shapes: not the one read */
    db_sig_cells_put(&m, &c, -1, opdb_span_cstr("absent")); /* no column: Output Data Types stays "" */
    assert_span(c.in_formats, "NZ");
    assert_span(c.ep_size, "16");
    assert_span(c.in_shapes, "1,4");
    assert_span(c.out_dtypes, "");
    assert_span(c.in_dtypes, "FLOAT16");
    assert_span(c.out_shapes, "2,2");
}

/* parse --merge names the line of a bad existing row as the file has it,
 * blank lines and multi-line cells counted */
static void test_merge_error_names_the_line(void **state) {
    (void)state;
    static const char *const stats[] = {OPDB_COL_PROF_COUNT,   OPDB_COL_PROF_SUM_DUR,   OPDB_COL_PROF_SUMSQ_DUR,
                                        OPDB_COL_PROF_MIN_DUR, OPDB_COL_PROF_MAX_DUR,   OPDB_COL_PROF_AVG_DUR,
                                        OPDB_COL_PROF_MEDIAN_DUR, OPDB_COL_PROF_STD_DUR};
    char header[1024];
    int k = snprintf(header, sizeof header, "%s,%s", OPDB_COL_INPUT_SHAPES, OPDB_COL_OUTPUT_SHAPES);
    for (int i = 0; i < 8; i++) k += snprintf(header + k, sizeof header - (size_t)k, ",%s", stats[i]);
    char existing[2048], fresh[2048];
    snprintf(existing, sizeof existing, "%s\n\n\"1,2\",\"3\n4\",2,2,2,1,1,1,1,0\n\"5\",\"6\",-5,1,1,1,1,1,1,0\n", header);
    snprintf(fresh, sizeof fresh, "%s\n\"7\",\"8\",1,1,1,1,1,1,1,0\n", header);
    const char *path = puts_("Merge.csv", existing);
    tbl_writer w = {.merge = true};
    opdb_err e;
    opdb_err_clear(&e);
    assert_int_equal(tbl_emit(&w, path, fresh, strlen(fresh), &e), -1);
    char want[300];
    snprintf(want, sizeof want, "%s:5: 'Profiling Count' is '-5'", path);
    assert_true(strncmp(e.msg, want, strlen(want)) == 0);
    tbl_writer_finish(&w, g_dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opening_checks),
        cmocka_unit_test(test_stream_open),
        cmocka_unit_test(test_bom),
        cmocka_unit_test(test_duplicate_names),
        cmocka_unit_test(test_padding_and_ragged),
        cmocka_unit_test(test_lines_quotes_and_max_rows),
        cmocka_unit_test(test_memory_equals_file),
        cmocka_unit_test(test_sig_cells_by_name),
        cmocka_unit_test(test_merge_error_names_the_line),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
