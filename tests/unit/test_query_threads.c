/* One opened database queried from many threads at once: tables load lazily
 * on first use and row indexes build on demand, yet every thread gets the
 * answers a single thread gets, and a threaded batch keeps input order. Also
 * with interpolation (its filter maps and group matches built on first use)
 * and without explain (answers through the result cache, or with the cache
 * off through the exact-hit map and the interpolation outcome map alone).
 * (Run under the TSan build for the data-race check.) */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "opdb/core.h"
#include "query/query_internal.h"
#include "query_fixture.h"

static const char k_map[] = "operator_mappings:\n"
                            "  mm: {kernel_type: MatMulV2, alternate_kernel_types: [MatMulV3]}\n"
                            "  add: {kernel_type: Add, query_mode: elementwise}\n"
                            "  bad: {kernel_type: Bad}\n";
static const char k_mm[] = "Input Shapes,Input Data Types,Output Shapes,Output Data Types,Duration(us)\n"
                           "\"16,128;128,256\",DT_BF16;DT_BF16,\"16,256\",DT_BF16,5.0\n"
                           "\"32,128;256,128\",DT_BF16;DT_BF16,\"32,256\",DT_BF16,6.0\n";
static const char k_add[] = "Output Shapes,Output Data Types,Duration(us)\n\"16,128\",DT_BF16,1.0\n\"64,128\",FLOAT,2.0\n";
static const char k_bad[] = "Input Shapes,Input Data Types,Duration(us)\nN/A,DT_BF16,1.0\n\"4,4\",DT_BF16,2.0\n";

enum { NQ = 48, NT = 8 };
static char g_q[NQ][256];
static char *g_want[NQ];
static opdb_qdb *g_db;
static bool g_explain;

static void make_queries(void) {
    static const char *const ops[] = {"mm", "add", "bad", "none"};
    static const int m[] = {1, 16, 20, 32, 64};
    for (int i = 0; i < NQ; i++) {
        const char *op = ops[i % 4];
        if (i % 4 == 1)
            snprintf(g_q[i], sizeof g_q[i], "{\"id\": %d, \"op\": \"%s\", \"out\": {\"shape\": [%d, 128], \"dtype\": \"%s\"}}",
                     i, op, m[i % 5], i % 3 ? "bfloat16" : "float32");
        else
            snprintf(g_q[i], sizeof g_q[i],
                     "{\"id\": %d, \"op\": \"%s\", \"args\": [{\"shape\": [%d, 128]}, {\"shape\": [128, 256]}]}", i, op,
                     m[i % 5]);
    }
}

static void *worker(void *arg) {
    size_t off = (size_t)(uintptr_t)arg;
    for (int rep = 0; rep < 20; rep++)
        for (int k = 0; k < NQ; k++) {
            int i = (int)((k + off * 7) % NQ);
            char *line = qf_line(g_db, g_q[i], g_explain);
            if (strcmp(line, g_want[i]) != 0) abort();
            free(line);
        }
    return NULL;
}

static int collect(void *ctx, const opdb_qresult *r) {
    opdb_strbuf *sb = ctx;
    char *line;
    size_t n;
    if (opdb_qresult_json(r, &line, &n)) return -1;
    opdb_sb_add(sb, line, n);
    opdb_sb_addc(sb, '\n');
    free(line);
    return 0;
}

static void test_many_threads_one_handle(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_map);
    qf_write(dir, "MatMulV2.csv", k_mm);
    qf_write(dir, "Add.csv", k_add);
    qf_write(dir, "Bad.csv", k_bad);
    make_queries();
    for (int mode = 0; mode < 6; mode++) {
        bool quirks = mode & 1, interp = mode >= 2, nocache = mode >= 4;
        g_explain = !interp;
        opdb_qdb *ref = qf_open(dir, quirks, interp, 0);
        q_cache_free(ref->cache);
        ref->cache = NULL;
        for (int i = 0; i < NQ; i++) g_want[i] = qf_line(ref, g_q[i], g_explain);
        /* a fresh handle: the threads race on the first loads */
        g_db = qf_open(dir, quirks, interp, 0);
        if (nocache) {
            q_cache_free(g_db->cache);
            g_db->cache = NULL;
        }
        pthread_t t[NT];
        for (size_t k = 0; k < NT; k++) assert_int_equal(pthread_create(&t[k], NULL, worker, (void *)(uintptr_t)k), 0);
        for (size_t k = 0; k < NT; k++) pthread_join(t[k], NULL);
        /* a threaded batch emits in input order, as a single-threaded one */
        opdb_strbuf in, a, b;
        opdb_sb_init(&in), opdb_sb_init(&a), opdb_sb_init(&b);
        for (int rep = 0; rep < 100; rep++)
            for (int i = 0; i < NQ; i++) opdb_sb_addf(&in, "%s\n\n", g_q[i]);
        opdb_qstats s1, s2;
        assert_int_equal(opdb_query_batch(g_db, in.p, in.n, 0, g_explain, collect, &a, &s1), 0);
        assert_int_equal(opdb_query_batch(g_db, in.p, in.n, 6, g_explain, collect, &b, &s2), 0);
        assert_int_equal(a.n, b.n);
        assert_memory_equal(a.p, b.p, a.n);
        assert_int_equal(s1.queries, 100 * NQ);
        assert_int_equal(s2.measured, s1.measured);
        opdb_sb_free(&in), opdb_sb_free(&a), opdb_sb_free(&b);
        for (int i = 0; i < NQ; i++) free(g_want[i]);
        if (nocache) assert_true(q_hitmap_hits(g_db->hitmap) > 0); /* the threads shared the map's answers */
        if (nocache) assert_true(ip_omap_hits(g_db->ipmap) > 0);   /* and the interpolation outcomes */
        opdb_qdb_close(g_db);
        opdb_qdb_close(ref);
    }
    qf_rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_many_threads_one_handle)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
