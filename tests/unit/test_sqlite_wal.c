/* An Ascend SQLite export whose committed rows are still in its write-ahead
 * log (the profiler's connection is open, nothing checkpointed yet) is read
 * whole by `opdb parse`: built here with the sqlite3 library, the writer's
 * connection kept open while opdb reads the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/fs.h"
#include "opdb/ingest.h"

static void exec(sqlite3 *db, const char *sql) {
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", sql, msg ? msg : "?");
}

/* The export's tables with n tasks of Add, each 4 us long. */
static sqlite3 *build(const char *path, int n) {
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    exec(db, "PRAGMA journal_mode=WAL");
    exec(db, "PRAGMA wal_autocheckpoint=0");
    exec(db, "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
             "CREATE TABLE TASK (globalTaskId INTEGER, startNs INTEGER, endNs INTEGER);"
             "CREATE TABLE COMPUTE_TASK_INFO (globalTaskId INTEGER, opType INTEGER, inputShapes INTEGER, "
             "outputShapes INTEGER, taskType INTEGER, inputDataTypes INTEGER, inputFormats INTEGER, "
             "outputDataTypes INTEGER, outputFormats INTEGER);"
             "INSERT INTO STRING_IDS VALUES (1, 'Add'), (2, '\"4,8;4,8\"'), (3, '\"4,8\"'), (4, 'AI_VECTOR_CORE'), "
             "(5, 'FLOAT;FLOAT'), (6, 'ND;ND'), (7, 'FLOAT'), (8, 'ND');");
    for (int t = 0; t < n; t++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "INSERT INTO TASK VALUES (%d, %d, %d); INSERT INTO COMPUTE_TASK_INFO VALUES (%d, 1, 2, 3, 4, 5, 6, 7, 8);",
                 t, t * 10000, t * 10000 + 4000, t);
        exec(db, sql);
    }
    return db;
}

static void test_rows_only_in_the_wal_are_read(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_test_wal_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], wal[140], out[128], table[160];
    snprintf(path, sizeof path, "%s/ascend_pytorch_profiler_0.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(out, sizeof out, "%s/db", dir);
    snprintf(table, sizeof table, "%s/Add.csv", out);
    sqlite3 *writer = build(path, 3);
    /* the writer is still open: every row is in the -wal file, the main file has none */
    struct stat st;
    assert_int_equal(stat(wal, &st), 0);
    assert_true(st.st_size > 0);
    opdb_parse_opts o;
    opdb_parse_opts_init(&o);
    o.profiling_path = path;
    o.output_dir = out;
    o.threads = 1;
    o.no_progress = true;
    opdb_parse_result res;
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_parse_run(&o, &res, &err), 0);
    assert_int_equal(res.rows_read, 3);
    opdb_parse_result_free(&res);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    assert_int_equal(opdb_read_file(table, &sb, &err), 0);
    /* one shape, three launches of 4 us */
    assert_non_null(strstr(sb.p, ",3,4.000000,4.000000,12.000000,48.000000,"));
    opdb_sb_free(&sb);
    /* the reader changed nothing: the writer still commits into its log */
    exec(writer, "INSERT INTO TASK VALUES (9, 0, 1)");
    assert_int_equal(sqlite3_close(writer), SQLITE_OK);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_only_in_the_wal_are_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
