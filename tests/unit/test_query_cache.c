/* The result cache's compact entries: every answer field comes back as it
 * went in (strings kept once per shard, copied out into the caller's arena),
 * keys tell apart queries that differ anywhere but the id (counts and
 * integers are stored as varints), and a cache stops taking entries at its
 * entry count and at its byte budget; so does the exact-hit map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "query/query_internal.h"

static void assert_str_eq(const char *a, const char *b) {
    if (!a || !b) {
        assert_true(a == b);
        return;
    }
    assert_string_equal(a, b);
}

static void test_answer_round_trip(void **state) {
    (void)state;
    q_cache *c = q_cache_new(64);
    q_result r;
    memset(&r, 0, sizeof r);
    r.src = QS_PARTIAL;
    r.lat = 12.5;
    r.conf = 0.25;
    r.rule = "transposed";
    r.kernel = "MatMulV2";
    r.miss = "no_row";
    r.error_msg = "some message";
    r.request = "{\"kernel\": \"X\"}";
    r.has_iv = true;
    r.iv_at = 3.0;
    r.iv90[0] = 1.0, r.iv90[1] = 5.0;
    r.iv80[0] = 2.0, r.iv80[1] = 4.0;
    r.iv_med = 3.5;
    q_sub subs[2] = {{"MatMulV2", 1.5}, {"AddN", 2.5}};
    r.sub = subs;
    r.n_sub = 2;
    r.has_sub = true;
    const uint8_t k1[] = "key one", k2[] = "key two";
    q_cache_put(c, k1, sizeof k1, &r);
    /* a second answer sharing strings with the first, without interval or subs */
    q_result r2;
    memset(&r2, 0, sizeof r2);
    r2.src = QS_MISS;
    r2.miss = "";
    r2.kernel = "MatMulV2";
    r2.has_sub = true;
    q_cache_put(c, k2, sizeof k2, &r2);
    opdb_arena a;
    opdb_arena_init(&a, 256);
    q_result o;
    assert_true(q_cache_get(c, k1, sizeof k1, &a, &o));
    assert_int_equal(o.src, QS_PARTIAL);
    assert_true(o.lat == 12.5 && o.conf == 0.25);
    assert_str_eq(o.rule, "transposed");
    assert_str_eq(o.kernel, "MatMulV2");
    assert_str_eq(o.miss, "no_row");
    assert_str_eq(o.error_msg, "some message");
    assert_str_eq(o.request, "{\"kernel\": \"X\"}");
    assert_true(o.has_iv && o.iv_at == 3.0 && o.iv90[0] == 1.0 && o.iv90[1] == 5.0 && o.iv80[0] == 2.0 &&
                o.iv80[1] == 4.0 && o.iv_med == 3.5);
    assert_true(o.has_sub);
    assert_int_equal(o.n_sub, 2);
    assert_str_eq(o.sub[0].kernel, "MatMulV2");
    assert_str_eq(o.sub[1].kernel, "AddN");
    assert_true(o.sub[0].us == 1.5 && o.sub[1].us == 2.5);
    assert_true(o.rule != r.rule); /* copies, not the caller's strings */
    assert_true(q_cache_get(c, k2, sizeof k2, &a, &o));
    assert_int_equal(o.src, QS_MISS);
    assert_str_eq(o.miss, "");
    assert_str_eq(o.kernel, "MatMulV2");
    assert_null(o.rule);
    assert_null(o.error_msg);
    assert_null(o.request);
    assert_false(o.has_iv);
    assert_true(o.has_sub);
    assert_int_equal(o.n_sub, 0);
    assert_false(q_cache_get(c, (const uint8_t *)"key thr", 8, &a, &o));
    opdb_arena_free(&a);
    q_cache_free(c);
}

/* every line's key differs from every other line's, except lines that differ only in the id */
static void test_keys_distinct(void **state) {
    (void)state;
    static const char *const lines[] = {
        "{\"op\": \"a\", \"args\": [{\"shape\": [127, 1]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [128, 1]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [1, 127]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [16384]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [128]}, {\"shape\": [1]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [128, 1], \"dtype\": \"float16\"}]}",
        "{\"op\": \"a\", \"args\": [-1]}",
        "{\"op\": \"a\", \"args\": [1]}",
        "{\"op\": \"a\", \"args\": [9223372036854775807]}",
        "{\"op\": \"a\", \"args\": [-9223372036854775807]}",
        "{\"op\": \"a\", \"args\": [1.0]}",
        "{\"op\": \"a\", \"args\": [\"1\"]}",
        "{\"op\": \"a\", \"args\": [true]}",
        "{\"op\": \"a\", \"args\": [null]}",
        "{\"op\": \"a\", \"args\": [[1]]}",
        "{\"op\": \"a\", \"args\": [[], 1]}",
        "{\"op\": \"a\", \"args\": []}",
        "{\"op\": \"ab\", \"args\": []}",
        "{\"op\": \"a\", \"args\": [], \"kwargs\": {\"k\": 1}}",
        "{\"op\": \"a\", \"args\": [], \"kwargs\": {\"k\": 2}}",
        "{\"op\": \"a\", \"args\": [], \"out\": {\"shape\": [1]}}",
        "{\"kernel\": \"MatMulV2\", \"inputs\": [{\"shape\": [1, 2]}]}",
        "{\"kernel\": \"MatMulV2\", \"inputs\": [{\"shape\": [2, 1]}]}",
    };
    enum { N = sizeof lines / sizeof lines[0] };
    uint8_t keys[N][512];
    size_t kn[N];
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    for (size_t i = 0; i < N; i++) {
        q_query q;
        const char *code = NULL;
        char msg[256];
        assert_int_equal(q_parse_line(&a, lines[i], strlen(lines[i]), &q, &code, msg, sizeof msg), 0);
        kn[i] = q_cache_key(&q, keys[i], sizeof keys[i]);
        assert_true(kn[i] > 0);
        for (size_t j = 0; j < i; j++)
            if (kn[i] == kn[j] && memcmp(keys[i], keys[j], kn[i]) == 0) fail_msg("lines %zu and %zu share a key", j, i);
    }
    /* the id is not part of the key */
    const char *with_id = "{\"id\": 7, \"op\": \"a\", \"args\": [{\"shape\": [127, 1]}]}";
    q_query q;
    const char *code = NULL;
    char msg[256];
    assert_int_equal(q_parse_line(&a, with_id, strlen(with_id), &q, &code, msg, sizeof msg), 0);
    uint8_t k[512];
    size_t n = q_cache_key(&q, k, sizeof k);
    assert_int_equal(n, kn[0]);
    assert_memory_equal(k, keys[0], n);
    /* a key that does not fit is not made */
    assert_int_equal(q_cache_key(&q, k, 4), 0);
    opdb_arena_free(&a);
}

static size_t held(q_cache *c, size_t tries, size_t klen) {
    uint8_t key[2048];
    memset(key, 'k', sizeof key);
    q_result r;
    memset(&r, 0, sizeof r);
    r.src = QS_MEASURED;
    r.lat = 1.0;
    r.kernel = "K";
    r.miss = "";
    for (size_t i = 0; i < tries; i++) {
        memcpy(key, &i, sizeof i);
        q_cache_put(c, key, klen, &r);
    }
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    size_t n = 0;
    for (size_t i = 0; i < tries; i++) {
        memcpy(key, &i, sizeof i);
        q_result o;
        if (q_cache_get(c, key, klen, &a, &o)) {
            assert_true(o.lat == 1.0);
            n++;
        }
    }
    opdb_arena_free(&a);
    return n;
}

static void test_bounds(void **state) {
    (void)state;
    /* the entry count: each of the 16 shards takes at most entries / 16 + 1 */
    q_cache *c = q_cache_new(64);
    size_t n = held(c, 4000, 16);
    assert_true(n > 0 && n <= 64 + 16);
    q_cache_free(c);
    /* the byte budget: 2,000 entries of 1,500-byte keys would take 3 MB; the budget is 512 kB */
    c = q_cache_new(2000);
    n = held(c, 2000, 1500);
    size_t budget = 2000 * Q_CACHE_ENTRY_BYTES + 16 * Q_CACHE_ENTRY_BYTES;
    assert_true(n > 0);
    assert_true(n * 1500 <= budget + 16 * 1600); /* each shard may pass its share by one entry */
    q_cache_free(c);
    /* small entries are held up to the entry count */
    c = q_cache_new(2000);
    n = held(c, 2000, 16);
    assert_true(n >= 1500);
    q_cache_free(c);
    assert_null(q_cache_new(0));
}

/* the exact-hit map's bounds: its entry count, and its byte budget for long keys */
static size_t hit_held(q_hitmap *m, size_t tries, size_t klen) {
    uint8_t key[4096];
    memset(key, 'k', sizeof key);
    q_scan s;
    memset(&s, 0, sizeof s);
    s.found = true;
    s.row = 3;
    s.best.lat = 2.0;
    s.reason = "";
    for (size_t i = 0; i < tries; i++) {
        memcpy(key, &i, sizeof i);
        /* twice: past half full the map takes a key on its second sight */
        for (int k = 0; k < 2; k++) q_hitmap_put(m, key, klen, opdb_hash_bytes(key, klen, 5), &s);
    }
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    q_ctx c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    size_t n = 0;
    for (size_t i = 0; i < tries; i++) {
        memcpy(key, &i, sizeof i);
        q_scan o;
        if (q_hitmap_get(m, key, klen, opdb_hash_bytes(key, klen, 5), &c, &o)) {
            assert_true(o.found && o.row == 3 && o.best.lat == 2.0);
            n++;
        }
    }
    opdb_arena_free(&a);
    return n;
}

static void test_hitmap_bounds(void **state) {
    (void)state;
    q_hitmap *m = q_hitmap_new(100);
    assert_int_equal(hit_held(m, 1000, 16), 100);
    q_hitmap_free(m);
    /* 100 entries of 3,000-byte keys would take 300 kB; the budget is 100 * Q_HITMAP_ENTRY_BYTES */
    m = q_hitmap_new(100);
    size_t n = hit_held(m, 100, 3000);
    assert_true(n > 0);
    assert_true((n - 1) * 3000 < 100 * Q_HITMAP_ENTRY_BYTES);
    q_hitmap_free(m);
}

/* an outcome that names key i in every field the entry keeps */
static q_scan numbered(size_t i) {
    q_scan s;
    memset(&s, 0, sizeof s);
    s.found = i % 3 != 0;
    s.kidx = i % 5;
    s.row = i * 1000;
    s.ties = 1 + i % 2;
    s.tab = (q_ktable *)(uintptr_t)(0x1000 + 16 * (i % 7));
    s.kernel = s.found ? (const char *)(uintptr_t)(0x2000 + 16 * (i % 7)) : NULL;
    s.best.lat = i % 4 == 0 ? 0.0 : i % 4 == 1 ? 1.0 : 0.5 + (double)i;
    s.best.conf = i % 2 ? 1.0 : -0.0;
    s.best.dist = (double)i / 8;
    s.best.rule = (const char *)(uintptr_t)(0x3000 + 16 * (i % 3));
    s.reason = i % 3 == 0 ? "csv_not_found" : "";
    return s;
}

static bool hit_get(q_hitmap *m, size_t i, uint64_t h, q_scan *o) {
    uint8_t key[32];
    memset(key, 'k', sizeof key);
    memcpy(key, &i, sizeof i);
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    q_ctx c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    bool got = q_hitmap_get(m, key, 10 + i % 20, h, &c, o);
    if (got) {
        q_scan w = numbered(i);
        assert_int_equal(o->found, w.found);
        assert_int_equal(o->kidx, w.kidx);
        assert_int_equal(o->row, w.row);
        assert_int_equal(o->ties, w.ties);
        assert_ptr_equal(o->tab, w.tab);
        assert_ptr_equal(o->kernel, w.kernel);
        assert_memory_equal(&o->best.lat, &w.best.lat, sizeof(double)); /* bit for bit: -0.0 stays -0.0 */
        assert_memory_equal(&o->best.conf, &w.best.conf, sizeof(double));
        assert_memory_equal(&o->best.dist, &w.best.dist, sizeof(double));
        assert_ptr_equal(o->best.rule, w.best.rule);
        assert_string_equal(o->reason, w.reason);
        assert_false(o->failed);
    }
    opdb_arena_free(&a);
    return got;
}

static void hit_put(q_hitmap *m, size_t i, uint64_t h) {
    uint8_t key[32];
    memset(key, 'k', sizeof key);
    memcpy(key, &i, sizeof i);
    q_scan s = numbered(i);
    q_hitmap_put(m, key, 10 + i % 20, h, &s);
}

/* Until half full every key is taken on its first sight; after that a key
 * seen once is only noted, and taken on its second sight. Without a
 * doorkeeper every key is taken until the map is full. */
static void test_hitmap_admission(void **state) {
    (void)state;
    q_scan o;
    q_hitmap *m = q_hitmap_new_door(16, 64);
    for (size_t i = 0; i < 8; i++) hit_put(m, i, opdb_hash_bytes(&i, sizeof i, 1));
    for (size_t i = 0; i < 8; i++) assert_true(hit_get(m, i, opdb_hash_bytes(&i, sizeof i, 1), &o));
    size_t i = 100;
    uint64_t h = opdb_hash_bytes(&i, sizeof i, 1);
    hit_put(m, i, h);
    assert_false(hit_get(m, i, h, &o)); /* seen once past half full: not kept */
    hit_put(m, i, h);
    assert_true(hit_get(m, i, h, &o)); /* seen twice: kept */
    q_hitmap_free(m);
    m = q_hitmap_new_door(16, 0);
    for (i = 0; i < 40; i++) hit_put(m, i, opdb_hash_bytes(&i, sizeof i, 1));
    size_t held = 0;
    for (i = 0; i < 40; i++) held += hit_get(m, i, opdb_hash_bytes(&i, sizeof i, 1), &o);
    assert_int_equal(held, 16);
    q_hitmap_free(m);
}

/* Entries whose hashes are all equal (the test hook cuts them to one bit)
 * still answer for their own key only: keys are compared in full. */
static void test_hitmap_colliding_hashes(void **state) {
    (void)state;
    q_scan o;
    q_hitmap *m = q_hitmap_new(256);
    q_hitmap_test_hash_mask(m, 1);
    for (size_t i = 0; i < 100; i++) hit_put(m, i, opdb_hash_bytes(&i, sizeof i, 1));
    for (size_t i = 0; i < 100; i++) assert_true(hit_get(m, i, opdb_hash_bytes(&i, sizeof i, 1), &o));
    for (size_t i = 100; i < 110; i++) assert_false(hit_get(m, i, opdb_hash_bytes(&i, sizeof i, 1), &o));
    q_hitmap_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hitmap_admission),
        cmocka_unit_test(test_hitmap_colliding_hashes),
        cmocka_unit_test(test_answer_round_trip),
        cmocka_unit_test(test_keys_distinct),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_hitmap_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
