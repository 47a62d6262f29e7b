/* Rows from query misses (opdb grid --from-misses, opdb query --collect):
 * reading result lines, refusing malformed requests, deduplication against
 * the table and between requests, the plan writing nothing, and the row a
 * request becomes. */
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

#include "opdb/fs.h"
#include "opdb/grid.h"

#define HDR "OP State,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats," \
            "Average Duration(us),Profiling Count,Note\r\n"
#define ROW1 "dynamic,\"\"\"16,128;16,128\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"16,128\"\"\",DT_BF16,ND,1.5,7,kept\r\n"

static const char *miss_line(const char *shape0) {
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"id\": 1, \"hit\": false, \"source\": \"MISS\", \"miss_reason\": \"shape_mismatch\", \"request\": "
             "{\"kernel\": \"Add\", \"inputs\": [{\"shape\": [%s], \"dtype\": \"DT_BF16\", \"format\": \"ND\"}, "
             "{\"shape\": [%s], \"dtype\": \"DT_BF16\"}], \"outputs\": [{\"shape\": [%s], \"dtype\": \"DT_BF16\"}]}}",
             shape0, shape0, shape0);
    return buf;
}

static char *make_db(void) {
    char tmpl[] = "/tmp/opdb_misses_XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    char *path = opdb_path_join(d, "Add.csv");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(HDR ROW1, f);
    fclose(f);
    free(path);
    return strdup(d);
}

static char *slurp(const char *dir, const char *name) {
    char *path = opdb_path_join(dir, name);
    FILE *f = fopen(path, "rb");
    free(path);
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void rm_db(char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static int add(opdb_grid_misses *m, const char *line, opdb_err *err) {
    return opdb_grid_misses_add(m, line, strlen(line), "r.jsonl", 3, err);
}

static void test_bad_lines(void **state) {
    (void)state;
    opdb_grid_misses *m = opdb_grid_misses_new();
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(add(m, "   \r\n", &err), 0); /* blank: ignored */
    assert_int_equal(add(m, "[1, 2]", &err), -1);
    assert_non_null(strstr(err.msg, "r.jsonl:3: not a JSON object"));
    opdb_err_clear(&err);
    assert_int_equal(add(m, "{\"source\": \"MISS\", \"request\": {\"kernel\": \"../Add\", \"inputs\": []}}", &err), -1);
    assert_non_null(strstr(err.msg, "not a kernel type name"));
    opdb_err_clear(&err);
    assert_int_equal(add(m, "{\"source\": \"MISS\", \"request\": {\"kernel\": \"Add\", \"inputs\": "
                            "[{\"shape\": [-1], \"dtype\": \"DT_BF16\"}]}}", &err), -1);
    assert_non_null(strstr(err.msg, "not a non-negative integer"));
    opdb_err_clear(&err);
    /* a dtype that would split the cell into another slot */
    assert_int_equal(add(m, "{\"source\": \"MISS\", \"request\": {\"kernel\": \"Add\", \"inputs\": "
                            "[{\"shape\": [1], \"dtype\": \"A;B\"}]}}", &err), -1);
    opdb_grid_misses_free(m);
}

static void test_plan_counts_and_writes_nothing(void **state) {
    (void)state;
    char *db = make_db();
    char *before = slurp(db, "Add.csv");
    opdb_grid_misses *m = opdb_grid_misses_new();
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(add(m, "{\"id\": 0, \"hit\": true, \"source\": \"MEASURED\"}", &err), 0);
    assert_int_equal(add(m, "{\"id\": 0, \"hit\": false, \"source\": \"MISS\", \"miss_reason\": \"unmapped\"}", &err), 0);
    assert_int_equal(add(m, miss_line("24, 128"), &err), 0);
    assert_int_equal(add(m, miss_line("24, 128"), &err), 0); /* the same request again */
    assert_int_equal(add(m, miss_line("16, 128"), &err), 0); /* already a row of the table */
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    opdb_grid_miss_opts o;
    opdb_grid_miss_opts_init(&o);
    o.root = db, o.plan = true, o.json = true, o.out = out;
    assert_int_equal(opdb_grid_from_misses(&o, m, &err), 0);
    fclose(out);
    assert_non_null(strstr(text, "\"requests\": 3"));
    assert_non_null(strstr(text, "\"distinct\": 2"));
    assert_non_null(strstr(text, "\"to_append\": 1"));
    assert_non_null(strstr(text, "\"results\": 5"));
    assert_non_null(strstr(text, "\"misses\": 4"));
    assert_non_null(strstr(text, "\"without_request\": 1"));
    char *after = slurp(db, "Add.csv");
    assert_string_equal(before, after);
    free(text);
    free(before);
    free(after);
    opdb_grid_misses_free(m);
    rm_db(db);
}

static void test_row_written(void **state) {
    (void)state;
    char *db = make_db();
    opdb_grid_misses *m = opdb_grid_misses_new();
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(add(m, miss_line("24, 128"), &err), 0);
    assert_int_equal(add(m, miss_line("2, 128"), &err), 0);
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    opdb_grid_miss_opts o;
    opdb_grid_miss_opts_init(&o);
    o.root = db, o.out = out;
    assert_int_equal(opdb_grid_from_misses(&o, m, &err), 0);
    fclose(out);
    assert_non_null(strstr(text, "Appended 2 rows across 1 CSV files under"));
    char *after = slurp(db, "Add.csv");
    /* the shapes, dtypes and formats asked for; the duration 0, the count empty, the rest copied;
     * sorted by input shapes */
    assert_string_equal(after, HDR ROW1
                        "dynamic,\"\"\"2,128;2,128\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2,128\"\"\",DT_BF16,ND,0,,kept\r\n"
                        "dynamic,\"\"\"24,128;24,128\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"24,128\"\"\",DT_BF16,ND,0,,kept\r\n");
    /* a second run adds nothing: the rows are there now */
    free(text);
    out = open_memstream(&text, &n);
    o.out = out;
    assert_int_equal(opdb_grid_from_misses(&o, m, &err), 0);
    fclose(out);
    assert_non_null(strstr(text, "Appended 0 rows"));
    char *again = slurp(db, "Add.csv");
    assert_string_equal(after, again);
    free(again);
    free(after);
    free(text);
    opdb_grid_misses_free(m);
    rm_db(db);
}

static void test_not_a_folder(void **state) {
    (void)state;
    opdb_grid_misses *m = opdb_grid_misses_new();
    opdb_err err;
    opdb_err_clear(&err);
    opdb_grid_miss_opts o;
    opdb_grid_miss_opts_init(&o);
    o.root = "/nonexistent/opdb/db", o.plan = true, o.out = stdout;
    assert_int_equal(opdb_grid_from_misses(&o, m, &err), -1);
    assert_non_null(strstr(err.msg, "Data directory does not exist"));
    opdb_grid_misses_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_plan_counts_and_writes_nothing),
        cmocka_unit_test(test_row_written),
        cmocka_unit_test(test_not_a_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
