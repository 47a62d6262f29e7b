/* The opening checks of a database table (src/db/open_check.c) as the three
 * readers make them: the text table, update's lazy table (both of its
 * tokenizers) and the query's typed table.  Asked for the same checks, each
 * reader refuses each bad kind of file (missing, not UTF-8, empty, no
 * header, a Git LFS pointer) with the same kind, line and message; a reader
 * that skipped a check, or worded it its own way, fails here.  Then each
 * reader's own rules, which differ on purpose, are pinned. */
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

#include "db/lazy_table.h"
#include "db/open_check.h"
#include "db/table.h"
#include "db/text_table.h"

static char g_dir[] = "/tmp/opdb_open_check_XXXXXX";

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

/* Writes text to <dir>/name (NULL: leaves it absent); returns the path. */
static const char *put(const char *name, const char *text, size_t n) {
    static char paths[4][256];
    static unsigned next;
    char *path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s/%s", g_dir, name);
    if (!text) return path;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    return path;
}

enum { R_TEXT, R_LAZY, R_LAZY_EAGER, R_TABLE, NREADERS };
static const char *const k_reader[NREADERS] = {"text table", "lazy table", "lazy table (exact tokenizer)",
                                              "typed table"};

typedef struct outcome {
    int rc;
    db_open_problem p;
    opdb_err e;
} outcome;

/* Opens path through reader r with the checks o. */
static outcome open_with(int r, const char *path, const db_open_opts *o) {
    outcome out;
    memset(&out, 0, sizeof out);
    opdb_err_clear(&out.e);
    if (r == R_TEXT) {
        db_text_opts to = {.open = *o};
        db_text_table t;
        out.rc = db_text_load(&t, path, &to, &out.p, &out.e);
        db_text_free(&t);
    } else if (r == R_TABLE) {
        db_table t;
        out.rc = db_table_load_checked(&t, path, o, &out.p, &out.e);
        db_table_free(&t);
    } else {
        db_lazy_table f;
        memset(&f, 0, sizeof f);
        out.rc = db_lazy_load(path, &f, r == R_LAZY_EAGER, o, &out.p, &out.e);
        db_lazy_free(&f);
    }
    return out;
}

/* Every reader refuses path with kind at line, all with the same message,
 * which names the file first and contains msg. */
static void expect_refused_alike(const char *path, const db_open_opts *o, db_open_kind kind, unsigned line,
                                 const char *msg) {
    outcome first = open_with(0, path, o);
    for (int r = 0; r < NREADERS; r++) {
        outcome x = open_with(r, path, o);
        if (x.rc != -1 || x.p.kind != kind || x.p.line != line || strcmp(x.e.msg, first.e.msg) != 0)
            fail_msg("%s, %s: rc %d kind %d line %u \"%s\" (want kind %d line %u, \"%s\")", k_reader[r], path, x.rc,
                     (int)x.p.kind, x.p.line, x.e.msg, (int)kind, line, first.e.msg);
    }
    assert_true(strncmp(first.e.msg, path, strlen(path)) == 0);
    if (!strstr(first.e.msg, msg)) fail_msg("\"%s\" lacks \"%s\"", first.e.msg, msg);
    assert_null(strchr(first.e.msg, '\n'));
}

#define PUT(name, lit) put(name, lit, sizeof lit - 1)

static const char k_lfs[] = "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 12\n";

static void test_same_checks_same_refusal(void **state) {
    (void)state;
    static const db_open_opts all = {.sniff = true, .need_header = true, .lfs = true};
    expect_refused_alike(put("missing.csv", NULL, 0), &all, DB_OPEN_CANNOT_OPEN, 0,
                         ": cannot open: No such file or directory");
    expect_refused_alike(PUT("latin1.csv", "Input Shapes,Dur\xe9" "e\n1,2\n"), &all, DB_OPEN_NOT_TEXT, 1,
                         "not UTF-8 text (byte 0xE9");
    expect_refused_alike(PUT("gz.csv", "\x1f\x8b\x08\x00\x00\x00"), &all, DB_OPEN_NOT_TEXT, 1, ": gzip-compressed");
    expect_refused_alike(PUT("empty.csv", ""), &all, DB_OPEN_NO_HEADER, 0, ": CSV has no header");
    expect_refused_alike(PUT("blank.csv", "\n\r\n"), &all, DB_OPEN_NO_HEADER, 0, ": CSV has no header");
    expect_refused_alike(PUT("lfs.csv", k_lfs), &all, DB_OPEN_LFS_POINTER, 1,
                         " is a Git LFS pointer, not CSV data (run git lfs pull)");
    expect_refused_alike(PUT("bom_lfs.csv", "\xef\xbb\xbfversion https://git-lfs.github.com/spec/v1\n"), &all,
                         DB_OPEN_LFS_POINTER, 1, " is a Git LFS pointer");
    /* the wording of a missing header is the caller's, the same through every reader */
    db_open_opts worded = all;
    worded.no_header_msg = "empty file (no header)";
    expect_refused_alike(PUT("empty2.csv", ""), &worded, DB_OPEN_NO_HEADER, 0, ": empty file (no header)");
    /* a folder: open() succeeds, reading does not, unless the caller refuses it first */
    char dir[300];
    snprintf(dir, sizeof dir, "%s/folder.csv", g_dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    expect_refused_alike(dir, &all, DB_OPEN_CANNOT_OPEN, 0, ": cannot read: Is a directory");
    db_open_opts regular = all;
    regular.regular = true;
    expect_refused_alike(dir, &regular, DB_OPEN_CANNOT_OPEN, 0, ": not a regular file");
    /* and a good table passes every reader */
    const char *good = PUT("good.csv", "\xef\xbb\xbfInput Shapes,Average Duration(us)\n\"1,2\",3\n");
    for (int r = 0; r < NREADERS; r++) {
        outcome x = open_with(r, good, &all);
        if (x.rc != 0 || x.p.kind != DB_OPEN_OK) fail_msg("%s: %s", k_reader[r], x.e.msg);
    }
}

/* Bytes that are not UTF-8 past the header: only the readers that hold the
 * whole file can see them (the text table streams), and they say so alike. */
static void test_whole_file_utf8(void **state) {
    (void)state;
    static const db_open_opts utf8 = {.utf8 = true, .need_header = true};
    const char *path = PUT("late_latin1.csv", "a,b\n1,caf\xe9\n");
    const int readers[] = {R_LAZY, R_LAZY_EAGER, R_TABLE};
    char want[400];
    snprintf(want, sizeof want, "%s: not UTF-8 text", path);
    for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
        outcome x = open_with(readers[i], path, &utf8);
        assert_int_equal(x.rc, -1);
        assert_int_equal(x.p.kind, DB_OPEN_NOT_TEXT);
        assert_string_equal(x.e.msg, want);
    }
    outcome ok = open_with(R_TABLE, PUT("utf8.csv", "a,b\n1,caf\xc3\xa9\n"), &utf8);
    assert_int_equal(ok.rc, 0);
}

/* The rules each room reads with, which differ on purpose. */
static void test_each_readers_rules(void **state) {
    (void)state;
    const char *empty = PUT("r_empty.csv", ""), *lfs = PUT("r_lfs.csv", k_lfs);
    const char *latin = PUT("r_latin.csv", "a,b\n1,caf\xe9\n");
    opdb_err e;
    db_open_problem p;

    /* the query (pandas): bytes that are not UTF-8 and an empty file are load
     * failures; an LFS pointer is a one-column table */
    db_table t;
    opdb_err_clear(&e);
    assert_int_equal(db_table_load(&t, empty, &e), -1);
    char want[400];
    snprintf(want, sizeof want, "%s: empty file (no header)", empty);
    assert_string_equal(e.msg, want);
    db_table_free(&t);
    assert_int_equal(db_table_load_checked(&t, latin, &db_table_query_rules, &p, &e), -1);
    assert_int_equal(p.kind, DB_OPEN_NOT_TEXT);
    db_table_free(&t);
    assert_int_equal(db_table_load(&t, lfs, &e), 0);
    assert_int_equal(t.ncols, 1);
    assert_int_equal(t.nrows, 2);
    db_table_free(&t);

    /* update (DictReader): an empty table has no rows; an LFS pointer and
     * other bytes are read, for update's own column check to refuse */
    const char *files[] = {empty, lfs, latin};
    const size_t fields[] = {0, 1, 2};
    for (int k = 0; k < 3; k++)
        for (int eager = 0; eager < 2; eager++) {
            db_lazy_table f;
            memset(&f, 0, sizeof f);
            opdb_err_clear(&e);
            if (db_lazy_load(files[k], &f, eager, &db_lazy_update_rules, &p, &e)) fail_msg("%s", e.msg);
            assert_int_equal(p.kind, DB_OPEN_OK);
            assert_int_equal(f.fields.n, fields[k]);
            db_lazy_free(&f);
        }
    db_lazy_table f;
    memset(&f, 0, sizeof f);
    assert_int_equal(db_lazy_load(put("r_missing.csv", NULL, 0), &f, false, &db_lazy_update_rules, &p, &e), -1);
    assert_int_equal(p.kind, DB_OPEN_CANNOT_OPEN);
    db_lazy_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_checks_same_refusal),
        cmocka_unit_test(test_whole_file_utf8),
        cmocka_unit_test(test_each_readers_rules),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
