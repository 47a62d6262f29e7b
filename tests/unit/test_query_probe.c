/* Where a query's exact-hit map probe starts: the hash of its line without
 * the id. Lines that differ only in their ids hash equal; and whatever the
 * start, the map answers as a handle without it does (the same scan key
 * reached from other lines, other ops, repeated lines, first sights). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "opdb/core.h"
#include "query/qline_fast.h"
#include "query/query_internal.h"
#include "query_fixture.h"

static uint64_t lh(const char *s) { return q_line_hash(s, strlen(s)); }

static void test_line_hash(void **state) {
    (void)state;
    static const char *const same[][2] = {
        {"{\"op\":\"mm\",\"args\":[{\"shape\":[2,3]}],\"id\":1}", "{\"op\":\"mm\",\"args\":[{\"shape\":[2,3]}],\"id\":27}"},
        {"{\"op\":\"mm\",\"args\":[],\"id\":-5}", "{\"op\":\"mm\",\"args\":[],\"id\":1.5e3}"},
        {"{\"op\":\"mm\",\"args\":[],\"id\":\"a\"}", "{\"op\":\"mm\",\"args\":[],\"id\":\"bcd\"}"},
        {"{\"op\":\"mm\",\"args\":[],\"id\":null}", "{\"op\":\"mm\",\"args\":[],\"id\":true}"},
        {"{\"id\": 7, \"op\": \"mm\", \"args\": [\"id\"]}", "{\"id\": 123456, \"op\": \"mm\", \"args\": [\"id\"]}"},
        {"{\"id\" :  0 , \"op\": \"mm\"}", "{\"id\" :  99 , \"op\": \"mm\"}"},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        if (lh(same[i][0]) != lh(same[i][1])) fail_msg("hash differs: %s / %s", same[i][0], same[i][1]);
        assert_true(lh(same[i][0]) != 0);
    }
    /* any other byte counts */
    static const char *const other[] = {
        "{\"op\":\"mm\",\"args\":[{\"shape\":[2,3]}],\"id\":1}", "{\"op\":\"mm\",\"args\":[{\"shape\":[2,4]}],\"id\":1}",
        "{\"op\":\"mn\",\"args\":[{\"shape\":[2,3]}],\"id\":1}", "{\"op\":\"mm\",\"args\":[{\"shape\":[2,3]}], \"id\":1}",
        "{\"op\":\"mm\",\"args\":[{\"shape\":[2,3]}]}", "",
    };
    size_t n = sizeof other / sizeof other[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (lh(other[i]) == lh(other[j])) fail_msg("hash equal: %s / %s", other[i], other[j]);
}

static const char k_map[] = "operator_mappings:\n"
                            "  mm: {kernel_type: MatMulV2, alternate_kernel_types: [MatMulV3]}\n"
                            "  mm2: {kernel_type: MatMulV2, alternate_kernel_types: [MatMulV3]}\n"
                            "  add: {kernel_type: Add, query_mode: elementwise}\n"
                            "  view: {zero_cost: true}\n";
static const char k_mm[] = "Input Shapes,Input Data Types,Output Shapes,Output Data Types,Duration(us)\n"
                           "\"16,128;128,256\",DT_BF16;DT_BF16,\"16,256\",DT_BF16,5.0\n"
                           "\"32,128;256,128\",DT_BF16;DT_BF16,\"32,256\",DT_BF16,6.0\n"
                           "\"32,128;256,128\",DT_BF16;DT_BF16,\"32,256\",DT_BF16,6.5\n"
                           "\"64,128;128,256\",FLOAT;FLOAT,\"64,256\",FLOAT,7.0\n";
static const char k_add[] = "Output Shapes,Output Data Types,Duration(us)\n\"16,128\",DT_BF16,1.0\n\"64,128\",FLOAT,2.0\n";

static void test_probe_answers(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_map);
    qf_write(dir, "MatMulV2.csv", k_mm);
    qf_write(dir, "Add.csv", k_add);
    static const char *const lines[] = {
        "{\"op\":\"mm\",\"args\":[{\"shape\":[16,128]},{\"shape\":[128,256]}],\"id\":1}",
        "{\"op\":\"mm\",\"args\":[{\"shape\":[16,128]},{\"shape\":[128,256]}],\"id\":2}",
        "{\"id\": 3, \"op\": \"mm\", \"args\": [{\"shape\": [16, 128]}, {\"shape\": [128, 256]}]}",
        "{\"op\":\"mm2\",\"args\":[{\"shape\":[16,128]},{\"shape\":[128,256]}],\"id\":4}",
        "{\"op\":\"mm\",\"args\":[{\"shape\":[16,128]},{\"shape\":[128,256]}],\"out\":{\"shape\":[16,256]},\"id\":5}",
        "{\"op\":\"mm\",\"args\":[{\"shape\":[32,128]},{\"shape\":[256,128]}],\"id\":6}",
        "{\"op\":\"mm\",\"args\":[{\"shape\":[64,128],\"dtype\":\"float32\"},{\"shape\":[128,256],\"dtype\":\"float32\"}],\"id\":7}",
        "{\"op\":\"mm\",\"args\":[{\"shape\":[64,128]},{\"shape\":[128,256]}],\"id\":8}",
        "{\"op\":\"mm\",\"args\":[{\"shape\":[8,128]},{\"shape\":[128,256]}],\"id\":9}",
        "{\"op\":\"add\",\"args\":[],\"out\":{\"shape\":[16,128],\"dtype\":\"bfloat16\"},\"id\":10}",
        "{\"op\":\"add\",\"args\":[{\"shape\":[1]}],\"out\":{\"shape\":[16,128],\"dtype\":\"bfloat16\"},\"id\":11}",
        "{\"op\":\"add\",\"out\":{\"shape\":[64,128],\"dtype\":\"float32\"},\"id\":\"x\"}",
        "{\"op\":\"view\",\"args\":[{\"shape\":[16,128]}],\"id\":12}",
        "{\"op\":\"mm\",\"args\":[{\"shape\":[16,128]},{\"shape\":[128,256]}],\"id\":1}",
    };
    size_t n = sizeof lines / sizeof lines[0];
    for (int mode = 0; mode < 4; mode++) {
        bool quirks = mode & 1, interp = mode >= 2;
        opdb_qdb *ref = qf_open(dir, quirks, interp, 0), *db = qf_open(dir, quirks, interp, 0);
        assert_non_null(ref);
        assert_non_null(db);
        /* the reference: every scan runs; the handle under test: the map alone (no result cache) */
        q_hitmap_free(ref->hitmap);
        ref->hitmap = NULL;
        q_cache_free(ref->cache);
        ref->cache = NULL;
        q_cache_free(db->cache);
        db->cache = NULL;
        for (int pass = 0; pass < 3; pass++)
            for (size_t i = 0; i < n; i++) {
                char *want = qf_line(ref, lines[i], false), *got = qf_line(db, lines[i], false);
                if (strcmp(want, got) != 0) fail_msg("pass %d: %s\nwithout the map: %s\nwith it: %s", pass, lines[i], want, got);
                free(want);
                free(got);
            }
        assert_true(q_hitmap_hits(db->hitmap) > 0);
        opdb_qdb_close(db);
        opdb_qdb_close(ref);
    }
    qf_rmdir(dir);
}

/* The maps' tagged slots: the entry comes back whole, its own hash's tag
 * matches, a hash with other top bits does not (so a probe passes over that
 * entry unread), and an address using the tag's bits is refused. */
static void test_tagged_slots(void **state) {
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    size_t refused = 0;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t h = x * 0xff51afd7ed558ccdULL;
        /* user addresses as the heap gives them: 47 bits, 8-aligned, never 0 */
        uintptr_t a = (uintptr_t)((x >> 3) & (((uint64_t)1 << 47) - 8)) + 8;
        q_tslot v = q_tslot_make((const void *)a, h);
        assert_true(v != 0);
        assert_ptr_equal(q_tslot_entry(v), (const uint8_t *)a);
        assert_true(q_tslot_tag_is(v, h));
        assert_true(q_tslot_tag_is(v, h ^ 0xffffffffffffULL)); /* only the top 16 bits tag */
        if (Q_TSLOT_SHIFT) {
            assert_false(q_tslot_tag_is(v, h ^ ((uint64_t)1 << (63 - i % 16))));
            refused += q_tslot_make((const void *)(a | (uintptr_t)1 << (48 + i % 16)), h) == 0;
        }
    }
    if (Q_TSLOT_SHIFT) assert_int_equal(refused, 100000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_hash),
        cmocka_unit_test(test_probe_answers),
        cmocka_unit_test(test_tagged_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
