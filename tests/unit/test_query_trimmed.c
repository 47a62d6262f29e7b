/* After a table's rows are prepared, its file's text goes back (the pages
 * of the mapping and the cells' starts): the lookup paths must answer from
 * the prepared rows, or, for a column read later, from a column typed with
 * its own texts, the pages it read given back again. Checked per path with
 * the mapping's resident size (/proc/self/smaps) and the table's count of
 * columns typed after the trim; and the rows' latencies the builders take
 * from the prepared rows against reading every cell, on random tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query/comm.h"
#include "query/interp_internal.h"
#include "query/query_internal.h"
#include "query_fixture.h"

static const char k_mapping[] =
    "operator_mappings:\n"
    "  aten.mm.default: {kernel_type: MatMulV3}\n"
    "  aten.add.Tensor: {kernel_type: Add, query_mode: elementwise}\n"
    "  aten.gen.default: {kernel_type: Gen}\n"
    "  tensor_cast.all_reduce.default: {kernel_type: hcom_allReduce_, category: communication}\n"
    "  tensor_cast.attention.default: {kernel_type: FIA, query_mode: attention_special}\n";

static char *g_dir;

static int setup(void **s) {
    (void)s;
    g_dir = qf_mkdir();
    qf_write(g_dir, "op_mapping.yaml", k_mapping);
    /* preferred rows (Average Duration) at 16 and 64; alternate rows (only the
     * profiler's column) at 8 and 32 */
    qf_write(g_dir, "MatMulV3.csv",
             "Input Shapes,Input Data Types,Input Formats,Average Duration(us),Profiling Average Duration(us)\n"
             "\"8,128;128,256\",DT_BF16;DT_BF16,ND;ND,,100.0\n"
             "\"16,128;128,256\",DT_BF16;DT_BF16,ND;ND,10.0,\n"
             "\"32,128;128,256\",DT_BF16;DT_BF16,ND;ND,,200.0\n"
             "\"64,128;128,256\",DT_BF16;DT_BF16,ND;ND,40.0,\n");
    qf_write(g_dir, "Add.csv",
             "Input Shapes,Input Data Types,Output Shapes,Output Data Types,Average Duration(us)\n"
             "\"16,128;16,128\",DT_BF16;DT_BF16,\"16,128\",DT_BF16,2.0\n"
             "\"64,128;64,128\",DT_BF16;DT_BF16,\"64,128\",DT_BF16,8.0\n");
    qf_write(g_dir, "Gen.csv",
             "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Average Duration(us)\n"
             "\"16,4096\",DT_BF16,ND,\"16,4096\",DT_BF16,3.0\n"
             "\"64,4096\",DT_BF16,ND,\"64,4096\",DT_BF16,9.0\n");
    qf_write(g_dir, "hcom_allReduce_.csv", "message_bytes,num_devices,Duration(us)\n1024,4,10\n4096,4,16\n16384,4,22\n");
    qf_write(g_dir, "FIA.csv",
             "Input Shapes,Input Data Types,Runtime avg_seq_len,Runtime sparse_mode,"
             "Runtime num_key_value_heads,Profiling Average Duration(us)\n"
             "\"1,8,128\",DT_BF16,100,3,1,9.0\n"
             "\"16,8,128\",DT_BF16,100,3,1,9.5\n");
    return 0;
}

static int teardown(void **s) {
    (void)s;
    qf_rmdir(g_dir);
    return 0;
}

/* kB of the mapping at addr resident in this process (-1: not found) */
static long resident_kb(const void *addr) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    bool in = false;
    long kb = -1;
    uintptr_t a = (uintptr_t)addr;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = a >= lo && a < hi;
            continue;
        }
        if (in && sscanf(line, "Rss: %ld kB", &kb) == 1) break;
    }
    fclose(f);
    return kb;
}

/* the query answers want; then the kernel's table has its text given back:
 * no page of its mapping resident, no cells' starts, and (late false) no
 * column typed after the trim */
static void ask_then_trimmed(const char *q, const char *want, const char *kernel, bool late) {
    opdb_qdb *db = qf_open(g_dir, false, true, 8);
    assert_non_null(db);
    char *line = qf_line(db, q, false);
    if (!strstr(line, want)) fail_msg("%s\n  answered %s\n  wanted %s", q, line, want);
    free(line);
    q_ktable *t = q_table(db, kernel);
    assert_int_equal(atomic_load(&t->state), QT_OK);
    assert_true(atomic_load(&t->prepared));
    assert_null(t->t.at);
    if (!late) assert_int_equal(atomic_load(&t->t.late_typed), 0);
    if (t->t.view.map) {
        long kb = resident_kb(t->t.view.map);
        if (kb >= 0 && kb != 0) fail_msg("%s: %ld kB of %s resident after the lookup", q, kb, kernel);
    }
    opdb_qdb_close(db);
}

#define MM(m) "{\"op\": \"aten.mm.default\", \"args\": [{\"shape\": [" #m ", 128], \"dtype\": \"bfloat16\"}, " \
              "{\"shape\": [128, 256], \"dtype\": \"bfloat16\"}]}"

static void test_compute_paths(void **s) {
    (void)s;
    ask_then_trimmed(MM(16), "\"latency_us\": 10.0", "MatMulV3", false);
    /* matmul interpolation: the preferred points 16 and 64 bracket 24, 10 + 30 * 8 / 48 */
    ask_then_trimmed(MM(24), "\"latency_us\": 15.0", "MatMulV3", false);
    /* they do not bracket 12: the alternate points 8 and 32 do, 100 + 4 / 24 * 100 */
    ask_then_trimmed(MM(12), "\"latency_us\": 116.66666666666", "MatMulV3", false);
    /* 1-D interpolation of a generic compute kernel on the leading dim */
    ask_then_trimmed("{\"op\": \"aten.gen.default\", \"args\": [{\"shape\": [24, 4096], \"dtype\": \"bfloat16\"}], "
                     "\"out\": {\"shape\": [24, 4096], \"dtype\": \"bfloat16\"}}",
                     "\"latency_us\": 4.0", "Gen", false);
}

#define ADD(m) "{\"op\": \"aten.add.Tensor\", \"args\": [{\"shape\": [" #m ", 128], \"dtype\": \"bfloat16\"}, " \
               "{\"shape\": [" #m ", 128], \"dtype\": \"bfloat16\"}], \"out\": {\"shape\": [" #m ", 128], " \
               "\"dtype\": \"bfloat16\"}}"

static void test_elementwise_paths(void **s) {
    (void)s;
    ask_then_trimmed(ADD(16), "\"latency_us\": 2.0", "Add", false);
    /* io numel 3*40*128 between 3*16*128 (2.0) and 3*64*128 (8.0) */
    ask_then_trimmed(ADD(40), "\"latency_us\": 5.0", "Add", false);
}

/* communication and attention read columns the preparation does not keep:
 * typed after the trim, their pages go back again */
static void test_comm_attention_pages(void **s) {
    (void)s;
    ask_then_trimmed("{\"op\": \"tensor_cast.all_reduce.default\", \"args\": [{\"shape\": [1024], \"dtype\": "
                     "\"bfloat16\"}, [0, 1, 2, 3]]}",
                     "\"hit\": true", "hcom_allReduce_", true);
    ask_then_trimmed("{\"op\": \"tensor_cast.attention.default\", \"args\": [{\"shape\": [16, 8, 128]}, "
                     "{\"shape\": [100, 1, 128]}, {\"shape\": [100, 1, 128]}, null, null, null, "
                     "{\"shape\": [2], \"dtype\": \"int32\", \"values\": [96, 104]}]}",
                     "\"latency_us\": 9.5", "FIA", true);
}

/* ---- latencies from the prepared rows against every cell read */

static const char *const k_lat[5] = {"Average Duration(us)", "Profiling Average Duration(us)",
                                     "Profiling Median Duration(us)", "Median Duration(us)", "Duration(us)"};
static const char *const k_vals[] = {"", "0", "-1", "2.5", "7", "abc", "nan", "inf", "1e400", "3"};

/* mostly numbers, so that most columns stay numeric */
static const char *pick_val(void) {
    static const char *const nums[] = {"2.5", "7", "3", "", "0"};
    return rand() % 10 < 9 ? nums[rand() % 5] : k_vals[rand() % 10];
}

/* the wrapper's order, every cell read */
static bool ref_ip(const q_ktable *t, size_t r, double *lat, bool *alt) {
    ip_latcols lc;
    ip_latcols_of(t, &lc);
    for (int k = 0; k < lc.n; k++) {
        double v;
        if (!db_cell_num(db_table_cell(&t->t, r, lc.c[k]), &v) || !isfinite(v) || v <= 0) continue;
        *lat = v;
        *alt = lc.c[k] != lc.pref;
        return true;
    }
    return false;
}

static bool ref_plain(const q_ktable *t, size_t r, double *lat) {
    int order[4] = {t->c_pref, t->c_lat[0], t->c_lat[1], t->c_lat[2]};
    for (int k = 0; k < 4; k++) {
        double v;
        if (order[k] < 0 || !db_cell_num(db_table_cell(&t->t, r, order[k]), &v) || !isfinite(v) || v <= 0) continue;
        *lat = v;
        return true;
    }
    return false;
}

static void test_row_latency_random(void **s) {
    (void)s;
    srand(7);
    char *dir = qf_mkdir();
    opdb_strbuf map;
    opdb_sb_init(&map);
    opdb_sb_adds(&map, "operator_mappings:\n  aten.x.default: {kernel_type: R0}\nlatency_policy:\n  kernel_overrides:\n");
    enum { NT = 60, NR = 40 };
    for (int i = 0; i < NT; i++)
        if (i % 3 == 0) opdb_sb_addf(&map, "    R%d: {profiling_core_envelope_fallback: {max_duration_to_core_ratio: 1.5}}\n", i);
    opdb_sb_addc(&map, 0);
    qf_write(dir, "op_mapping.yaml", map.p);
    for (int i = 0; i < NT; i++) {
        opdb_strbuf b;
        opdb_sb_init(&b);
        bool has[5];
        opdb_sb_adds(&b, "Input Shapes,Accelerator Core,Profiling Average aicore_time(us),Profiling Average aiv_time(us)");
        for (int k = 0; k < 5; k++)
            if ((has[k] = rand() % 3 != 0)) opdb_sb_addf(&b, ",%s", k_lat[k]);
        opdb_sb_addc(&b, '\n');
        for (int r = 0; r < NR; r++) {
            opdb_sb_addf(&b, "\"%d,8\",%s,%s,%s", r + 1, rand() % 2 ? "MIX_AIC" : "AI_CORE", rand() % 4 ? "2" : "",
                         rand() % 4 ? "4" : "abc");
            for (int k = 0; k < 5; k++)
                if (has[k]) opdb_sb_addf(&b, ",%s", pick_val());
            opdb_sb_addc(&b, '\n');
        }
        opdb_sb_addc(&b, 0);
        char name[32];
        snprintf(name, sizeof name, "R%d.csv", i);
        qf_write(dir, name, b.p);
        opdb_sb_free(&b);
    }
    opdb_qdb *db = qf_open(dir, false, true, 8);
    assert_non_null(db);
    size_t from_rows = 0;
    for (int i = 0; i < NT; i++) {
        char kt[32];
        snprintf(kt, sizeof kt, "R%d", i);
        q_ktable *t = q_table(db, kt);
        assert_int_equal(atomic_load(&t->state), QT_OK);
        ip_latcols lc;
        ip_latcols_of(t, &lc);
        for (size_t r = 0; r < t->t.nrows; r++) {
            double a = -1, b = -1, c = -1, d = -1;
            bool alt_a = false, alt_b = false;
            int col;
            from_rows += q_row_lat_known(t, r, lc.c, lc.n, &c, &col) >= 0;
            bool fa = ip_row_latency_at(t, &lc, r, &a, &alt_a), fb = ref_ip(t, r, &b, &alt_b);
            assert_int_equal(fa, fb);
            if (fa) {
                assert_memory_equal(&a, &b, sizeof a);
                assert_int_equal(alt_a, alt_b);
            }
            fa = q_plain_row_latency(t, r, &c);
            fb = ref_plain(t, r, &d);
            assert_int_equal(fa, fb);
            if (fa) assert_memory_equal(&c, &d, sizeof c);
        }
    }
    /* the rows answer most of them (the test would pass vacuously otherwise) */
    assert_true(from_rows > NT * NR / 2);
    opdb_qdb_close(db);
    opdb_sb_free(&map);
    qf_rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_paths),
        cmocka_unit_test(test_elementwise_paths),
        cmocka_unit_test(test_comm_attention_pages),
        cmocka_unit_test(test_row_latency_random),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
