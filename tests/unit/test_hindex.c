/* opdb_hindex: every added entry is found again through its hash, entries
 * sharing a hash are all visited, and growth keeps them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "opdb/core.h"

static void test_many_keys_found_after_growth(void **state) {
    (void)state;
    enum { N = 5000 };
    static char keys[N][16];
    opdb_hindex ix = {0};
    for (uint32_t i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "key%u", i);
        opdb_hindex_add(&ix, opdb_hash_bytes(keys[i], strlen(keys[i]), 1), i);
    }
    assert_int_equal(ix.n, N);
    assert_true(ix.nslots >= 2 * N);
    for (uint32_t i = 0; i < N; i++) {
        uint64_t h = opdb_hash_bytes(keys[i], strlen(keys[i]), 1);
        uint32_t k;
        bool found = false;
        for (opdb_hprobe p = opdb_hindex_probe(&ix, h); opdb_hprobe_next(&p, &k);)
            found |= k == i;
        assert_true(found);
    }
    uint32_t k;
    opdb_hprobe p = opdb_hindex_probe(&ix, opdb_hash_bytes("absent", 6, 1));
    while (opdb_hprobe_next(&p, &k)) assert_string_not_equal(keys[k], "absent");
    opdb_hindex_free(&ix);
}

/* Reserved room: no growth while that many entries are added, and every
 * entry placed before the reserve is still found. */
static void test_reserve_keeps_entries(void **state) {
    (void)state;
    opdb_hindex ix = {0};
    for (uint32_t i = 0; i < 10; i++) opdb_hindex_add(&ix, (uint64_t)i * 0x9e3779b97f4a7c15ULL, i);
    opdb_hindex_reserve(&ix, 3000);
    size_t slots = ix.nslots;
    assert_true(slots >= 6000);
    for (uint32_t i = 10; i < 3000; i++) opdb_hindex_add(&ix, (uint64_t)i * 0x9e3779b97f4a7c15ULL, i);
    assert_int_equal(ix.nslots, slots);
    for (uint32_t i = 0; i < 3000; i++) {
        uint32_t k;
        bool found = false;
        for (opdb_hprobe p = opdb_hindex_probe(&ix, (uint64_t)i * 0x9e3779b97f4a7c15ULL); opdb_hprobe_next(&p, &k);)
            found |= k == i;
        assert_true(found);
    }
    opdb_hindex_reserve(&ix, 10); /* never shrinks */
    assert_int_equal(ix.nslots, slots);
    opdb_hindex_free(&ix);
}

static void test_equal_hashes_all_visited(void **state) {
    (void)state;
    opdb_hindex ix = {0};
    for (uint32_t i = 0; i < 40; i++) opdb_hindex_add(&ix, i % 2 ? 77 : 1234, i);
    uint32_t k, seen = 0;
    for (opdb_hprobe p = opdb_hindex_probe(&ix, 77); opdb_hprobe_next(&p, &k);) {
        assert_int_equal(k % 2, 1);
        seen++;
    }
    assert_int_equal(seen, 20);
    opdb_hindex_free(&ix);
}

static void test_empty_index_finds_nothing(void **state) {
    (void)state;
    opdb_hindex ix = {0};
    uint32_t k;
    opdb_hprobe p = opdb_hindex_probe(&ix, 42);
    assert_false(opdb_hprobe_next(&p, &k));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_keys_found_after_growth),
        cmocka_unit_test(test_reserve_keeps_entries),
        cmocka_unit_test(test_equal_hashes_all_visited),
        cmocka_unit_test(test_empty_index_finds_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
