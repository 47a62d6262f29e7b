/* opdb_query_batch_text from many threads at once on one opened database: every thread gets the
 * answers one thread gets, and the threaded batch text equals the serial one
 * (run under ThreadSanitizer in CI). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "opdb/query.h"

static char g_dir[256];

static void write_file(const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/opdb-qthreads-XXXXXX");
    if (!mkdtemp(g_dir)) return -1;
    write_file("MatMulV2.csv",
               "OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
               "Output Data Types,Output Formats,Average Duration(us)\n"
               "dynamic,AI_CORE,\"2,4096;2048,4096\",DT_BF16;DT_BF16,ND;ND,\"2,2048\",DT_BF16,ND,22.5\n"
               "dynamic,AI_CORE,\"8,4096;2048,4096\",DT_BF16;DT_BF16,ND;ND,\"8,2048\",DT_BF16,ND,30.25\n"
               "dynamic,AI_CORE,\"32,4096;2048,4096\",DT_BF16;DT_BF16,ND;ND,\"32,2048\",DT_BF16,ND,41.0\n");
    write_file("op_mapping.yaml", "operator_mappings:\n  \"aten.mm.default\":\n    kernel_type: MatMulV2\n"
                                  "  \"aten.view.default\":\n    zero_cost: true\n");
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/MatMulV2.csv", g_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/op_mapping.yaml", g_dir);
    unlink(path);
    rmdir(g_dir);
    return 0;
}

/* a mix of hits, misses, zero-cost, bad lines and interpolation */
static char *make_batch(int n) {
    static const int ms[] = {2, 8, 32, 5, 16, 1000};
    size_t cap = (size_t)n * 256 + 1, len = 0;
    char *text = malloc(cap);
    for (int i = 0; i < n; i++) {
        int m = ms[i % 6];
        int w;
        if (i % 17 == 3) w = snprintf(text + len, cap - len, "not json %d\n", i);
        else if (i % 11 == 5) w = snprintf(text + len, cap - len, "{\"id\":%d,\"op\":\"aten.view.default\",\"args\":[]}\n", i);
        else
            w = snprintf(text + len, cap - len,
                         "{\"id\":%d,\"op\":\"aten.mm.default\",\"args\":[{\"shape\":[%d,4096]},{\"shape\":[4096,2048]}]}\n",
                         i, m);
        len += (size_t)w;
    }
    return text;
}

typedef struct worker {
    const opdb_qdb *db;
    const char *batch;
    const char *want;
    int ok;
} worker;

static void *run_worker(void *arg) {
    worker *w = arg;
    w->ok = 1;
    for (int round = 0; round < 3; round++) {
        char *out = NULL;
        size_t n = 0;
        if (opdb_query_batch_text(w->db, w->batch, strlen(w->batch), 1, false, &out, &n, NULL) != 0 ||
            strcmp(out, w->want) != 0)
            w->ok = 0;
        opdb_query_free_text(out);
    }
    return NULL;
}

static void test_many_threads_one_handle(void **state) {
    (void)state;
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    opdb_err err = {0};
    opdb_qdb *db = opdb_qdb_open(g_dir, &o, &err);
    assert_non_null(db);
    char *batch = make_batch(600);
    char *serial = NULL, *threaded = NULL;
    size_t ns = 0, nt = 0;
    opdb_qstats ss, st;
    assert_int_equal(opdb_query_batch_text(db, batch, strlen(batch), 1, false, &serial, &ns, &ss), 0);
    assert_int_equal(opdb_query_batch_text(db, batch, strlen(batch), 4, false, &threaded, &nt, &st), 0);
    assert_string_equal(serial, threaded);
    assert_int_equal(ss.queries, 600);
    assert_int_equal(st.queries, ss.queries);
    assert_int_equal(st.error, ss.error);
    assert_true(ss.error > 0);
    assert_true(ss.measured > 0);
    /* one line per query, in input order */
    size_t lines = 0;
    for (const char *p = serial; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, 600);
    assert_non_null(strstr(serial, "{\"id\": 0,"));
    worker ws[6];
    pthread_t t[6];
    for (int i = 0; i < 6; i++) {
        ws[i] = (worker){.db = db, .batch = batch, .want = serial};
        assert_int_equal(pthread_create(&t[i], NULL, run_worker, &ws[i]), 0);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(t[i], NULL);
        assert_true(ws[i].ok);
    }
    opdb_query_free_text(serial);
    opdb_query_free_text(threaded);
    free(batch);
    opdb_qdb_close(db);
}

static void test_empty_batch(void **state) {
    (void)state;
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    opdb_err err = {0};
    opdb_qdb *db = opdb_qdb_open(g_dir, &o, &err);
    assert_non_null(db);
    char *out = NULL;
    size_t n = 99;
    assert_int_equal(opdb_query_batch_text(db, "\n  \n", 4, 3, false, &out, &n, NULL), 0);
    assert_non_null(out);
    assert_int_equal(n, 0);
    assert_string_equal(out, "");
    opdb_query_free_text(out);
    opdb_qdb_close(db);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_threads_one_handle),
        cmocka_unit_test(test_empty_batch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
