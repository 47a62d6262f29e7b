/* The interpolation outcome map and the 1-D bounds path against the plain
 * reference (no_index: every interpolation recomputed, every coordinate
 * merged). Random matmul and generic-compute tables (duplicate coordinates
 * with different latencies, rows with only the alternate latency column,
 * rows with a third input, mixed dtypes and formats) and random queries at
 * op and kernel level that interpolate, miss a regime or fall outside the
 * points: a handle with the map (result cache off) must answer every query,
 * asked twice, as the reference does, in both modes. Queries that differ
 * only in a part of the key (the kernel list, the input count cut, the
 * output shape of the element-count axis, the dtypes) keep giving different
 * answers, so a key missing one of them is caught. With explain (which
 * bypasses the map) the 1-D path must name the same points, weights and
 * rows as the full merge. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "query/interp_internal.h"
#include "query_fixture.h"

static uint64_t g_rng = 0x243f6a8885a308d3ull;
static unsigned rnd(unsigned n) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((g_rng >> 33) % n);
}

static const int k_m[] = {1, 2, 4, 8, 16, 32, 64, 96, 128};
static const int k_kn[] = {64, 128, 256};
static const char *const k_rdt[] = {"DT_BF16", "FLOAT", "INT8"};
static const char *const k_qdt[] = {"bfloat16", "float32", "int8"};
#define NM (sizeof k_m / sizeof *k_m)

static const char *lat_cells(void) {
    /* Average Duration (preferred) or only the profiler's column (alternate); few values: medians of ties */
    static char b[64];
    static const char *const v[] = {"1.5", "2.5", "4.0", "7.25", "11.0"};
    if (rnd(5) == 0) snprintf(b, sizeof b, ",%s", v[rnd(5)]);
    else snprintf(b, sizeof b, "%s,", v[rnd(5)]);
    return b;
}

static void matmul_table(const char *dir, const char *kt) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_adds(&sb, "Input Shapes,Input Data Types,Input Formats,Average Duration(us),Profiling Average Duration(us),"
                      "Output Shapes,Output Data Types\n");
    for (int r = 0; r < 160; r++) {
        int m = k_m[rnd(NM)], k = k_kn[rnd(3)], n = k_kn[rnd(3)];
        const char *dt = k_rdt[rnd(8) == 0 ? 1 + rnd(2) : 0];
        bool bias = rnd(6) == 0;
        const char *fmt = rnd(10) == 0 ? "ND;FRACTAL_NZ" : "ND;ND";
        opdb_sb_addf(&sb, "\"%d,%d;%d,%d%s\",%s;%s%s,%s%s,%s,\"%d,%d\",DT_BF16\n", m, k, n, k, bias ? ";1,1" : "", dt,
                     dt, bias ? ";DT_BF16" : "", fmt, bias ? ";ND" : "", lat_cells(), m, n);
    }
    opdb_sb_addc(&sb, 0);
    char name[64];
    snprintf(name, sizeof name, "%s.csv", kt);
    qf_write(dir, name, sb.p);
    opdb_sb_free(&sb);
}

/* generic compute: the first input's leading dim (or the output's element count) as the axis */
static void generic_table(const char *dir, const char *kt) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_adds(&sb, "Input Shapes,Input Data Types,Input Formats,Average Duration(us),Profiling Average Duration(us),"
                      "Output Shapes,Output Data Types\n");
    for (int r = 0; r < 120; r++) {
        int t = k_m[rnd(NM)], h = k_kn[rnd(2)];
        const char *dt = k_rdt[rnd(6) == 0 ? 1 : 0];
        opdb_sb_addf(&sb, "\"%d,%d;%d\",%s;%s,ND;ND,%s,\"%d,%d\",DT_BF16\n", t, h, h, dt, dt, lat_cells(), t, h);
    }
    opdb_sb_addc(&sb, 0);
    char name[64];
    snprintf(name, sizeof name, "%s.csv", kt);
    qf_write(dir, name, sb.p);
    opdb_sb_free(&sb);
}

static const char k_mapping[] = "interpolation_policy:\n"
                                "  kernel_overrides:\n"
                                "    MatMulV2:\n"
                                "      max_interpolation_dim: 1\n"
                                "    GenB:\n"
                                "      generic_compute:\n"
                                "        axis: output_numel\n"
                                "operator_mappings:\n"
                                "  mm.a:\n"
                                "    kernel_type: MatMulV2\n"
                                "  mm.b:\n"
                                "    kernel_type: BatchMatMulV2\n"
                                "  mm.cut:\n"
                                "    kernel_type: MatMulV2\n"
                                "    tc_input_count: 2\n"
                                "  mm.ab:\n"
                                "    kernel_type: MatMulV2\n"
                                "    alternate_kernel_types: [BatchMatMulV2]\n"
                                "  gen.a:\n"
                                "    kernel_type: GenA\n"
                                "  gen.b:\n"
                                "    kernel_type: GenB\n";

/* a value a little off the measured ones now and then (interpolated between them) */
static int near_m(void) {
    unsigned i = rnd(NM - 1);
    int lo = k_m[i], hi = k_m[i + 1];
    return rnd(4) == 0 ? lo : lo + (int)rnd((unsigned)(hi - lo + 1));
}

static void tensor(opdb_strbuf *q, int a, int b, const char *dt) {
    opdb_sb_addf(q, "{\"shape\": [%d, %d], \"dtype\": \"%s\"}", a, b, dt);
}

static void query(opdb_strbuf *q) {
    opdb_sb_clear(q);
    int m = rnd(12) == 0 ? 200 : near_m(), k = k_kn[rnd(3)], n = k_kn[rnd(3)];
    const char *dt = k_qdt[rnd(10) == 0 ? 1 + rnd(2) : 0];
    switch (rnd(5)) {
    case 0: /* kernel level: the table cut to the given inputs (bias rows count), its own kernel list */
        opdb_sb_addf(q, "{\"id\": 1, \"kernel\": \"%s\", \"inputs\": [", rnd(2) ? "MatMulV2" : "BatchMatMulV2");
        opdb_sb_addf(q, "{\"shape\": [%d, %d], \"dtype\": \"DT_BF16\"}, {\"shape\": [%d, %d], \"dtype\": \"DT_BF16\"}]}",
                     m, k, n, k);
        break;
    case 1:
    case 2: { /* op level over one of three kernel lists, the same inputs */
        static const char *const ops[] = {"mm.a", "mm.b", "mm.ab", "mm.cut"};
        opdb_sb_addf(q, "{\"id\": 2, \"op\": \"%s\", \"args\": [", ops[rnd(4)]);
        tensor(q, m, k, dt);
        opdb_sb_adds(q, ", ");
        tensor(q, k, n, dt);
        opdb_sb_adds(q, "]}");
        break;
    }
    default: { /* generic compute: axis_0 (gen.a) or the output's element count (gen.b) */
        int h = k_kn[rnd(2)];
        opdb_sb_addf(q, "{\"id\": 3, \"op\": \"%s\", \"args\": [", rnd(2) ? "gen.a" : "gen.b");
        tensor(q, m, h, dt);
        opdb_sb_addf(q, ", {\"shape\": [%d], \"dtype\": \"%s\"}]", h, dt);
        if (rnd(4)) {
            opdb_sb_adds(q, ", \"out\": ");
            tensor(q, near_m(), h, dt);
        }
        opdb_sb_adds(q, "}");
        break;
    }
    }
    opdb_sb_addc(q, 0);
}

static void test_outcome_map_equals_plain(void **s) {
    (void)s;
    size_t compared = 0, interpolated = 0, missed = 0, map_answers = 0, one_d = 0;
    for (int round = 0; round < 3; round++) {
        char *dir = qf_mkdir();
        qf_write(dir, "op_mapping.yaml", k_mapping);
        matmul_table(dir, "MatMulV2");
        matmul_table(dir, "BatchMatMulV2");
        generic_table(dir, "GenA");
        generic_table(dir, "GenB");
        for (int quirks = 0; quirks < 2; quirks++) {
            opdb_qdb *plain = qf_open(dir, quirks, true, 0), *mapped = qf_open(dir, quirks, true, 0);
            assert_non_null(plain);
            assert_non_null(mapped);
            assert_non_null(mapped->ipmap);
            plain->no_index = true;
            q_cache_free(plain->cache);
            plain->cache = NULL;
            q_cache_free(mapped->cache);
            mapped->cache = NULL;
            opdb_strbuf q;
            opdb_sb_init(&q);
            for (int i = 0; i < 1500; i++) {
                query(&q);
                char *ref = qf_line(plain, q.p, false);
                for (int k = 0; k < 2; k++) {
                    char *x = qf_line(mapped, q.p, false);
                    if (strcmp(x, ref) != 0) fail_msg("query %s (ask %d)\n  map:   %s\n  plain: %s", q.p, k + 1, x, ref);
                    free(x);
                }
                interpolated += strstr(ref, "INTERPOLATED") != NULL;
                missed += strstr(ref, "\"MISS\"") != NULL;
                free(ref);
                /* explain: the 1-D bounds path names what the full merge names */
                if (i % 3 == 0) {
                    char *a = qf_line(mapped, q.p, true), *b = qf_line(plain, q.p, true);
                    if (strcmp(a, b) != 0) fail_msg("query %s (explain)\n  1-D:   %s\n  merge: %s", q.p, a, b);
                    one_d += strstr(a, "\"linear_1d\"") != NULL;
                    free(a);
                    free(b);
                }
                compared++;
            }
            opdb_sb_free(&q);
            map_answers += ip_omap_hits(mapped->ipmap);
            assert_int_equal(ip_omap_hits(plain->ipmap), 0);
            opdb_qdb_close(plain);
            opdb_qdb_close(mapped);
        }
        qf_rmdir(dir);
    }
    /* the comparison must reach interpolated answers, interpolation misses and the map's answers */
    assert_true(interpolated > compared / 5);
    assert_true(missed > compared / 20);
    assert_true(map_answers > compared / 2);
    assert_true(one_d > compared / 20);
    print_message("%zu queries compared, %zu interpolated, %zu misses, %zu map answers, %zu 1-D explained\n", compared,
                  interpolated, missed, map_answers, one_d);
}

/* Group keys are kept as hashes, a group's key made again from its first row when hashes meet:
 * with the hashes cut to one bit (the handle's test hook) nearly every key meets others'. The
 * groups must come out as with whole hashes (one per distinct key text, the same points), and
 * every answer, explain included, as the plain reference gives it. */
static void test_colliding_group_hashes(void **s) {
    (void)s;
    size_t compared = 0, interpolated = 0, missed = 0;
    for (int round = 0; round < 2; round++) {
        char *dir = qf_mkdir();
        qf_write(dir, "op_mapping.yaml", k_mapping);
        matmul_table(dir, "MatMulV2");
        matmul_table(dir, "BatchMatMulV2");
        generic_table(dir, "GenA");
        generic_table(dir, "GenB");
        opdb_qdb *plain = qf_open(dir, false, true, 0), *whole = qf_open(dir, false, true, 0),
                 *tiny = qf_open(dir, false, true, 0);
        assert_non_null(plain);
        assert_non_null(whole);
        assert_non_null(tiny);
        plain->no_index = true;
        tiny->ip_hash_mask = 1;
        opdb_qdb *all[3] = {plain, whole, tiny};
        for (int h = 0; h < 3; h++) {
            q_cache_free(all[h]->cache);
            all[h]->cache = NULL;
        }
        /* the same groups with whole and one-bit hashes */
        static const char *const kts[] = {"GenA", "GenB", "MatMulV2"};
        for (int k = 0; k < 3; k++) {
            q_ktable *tw = q_table(whole, kts[k]), *tt = q_table(tiny, kts[k]);
            ip_index *iw = k < 2 ? ip_gen_index(whole, tw, 2, false) : ip_mm_index(whole, tw, 2);
            ip_index *it = k < 2 ? ip_gen_index(tiny, tt, 2, false) : ip_mm_index(tiny, tt, 2);
            assert_non_null(iw);
            assert_non_null(it);
            assert_true(iw->ng > 1);
            assert_int_equal(iw->ng, it->ng);
            assert_int_equal(iw->np, it->np);
            opdb_arena a;
            opdb_arena_init(&a, 4096);
            for (size_t g = 0; g < iw->ng; g++) {
                size_t nw, nt;
                const char *kw = ip_group_key(iw, g, &a, &nw), *kt = ip_group_key(it, g, &a, &nt);
                assert_int_equal(nw, nt);
                assert_memory_equal(kw, kt, nw);
                assert_int_equal(ip_gn(iw, g), ip_gn(it, g));
                assert_memory_equal(ip_gpts(iw, g), ip_gpts(it, g), ip_gn(iw, g) * sizeof(uint32_t));
                assert_true(it->g[g].hash <= 1);
                for (size_t x = 0; x < g; x++) { /* one group per key text */
                    size_t nx;
                    const char *kx = ip_group_key(iw, x, &a, &nx);
                    assert_false(nx == nw && memcmp(kx, kw, nw) == 0);
                }
            }
            opdb_arena_free(&a);
        }
        opdb_strbuf q;
        opdb_sb_init(&q);
        for (int i = 0; i < 1500; i++) {
            query(&q);
            bool explain = i % 4 == 0;
            char *ref = qf_line(plain, q.p, explain);
            for (int h = 1; h < 3; h++) {
                char *x = qf_line(all[h], q.p, explain);
                if (strcmp(x, ref) != 0) fail_msg("query %s (hash bits %s)\n  got:   %s\n  plain: %s", q.p,
                                                  h == 2 ? "1" : "64", x, ref);
                free(x);
            }
            interpolated += strstr(ref, "INTERPOLATED") != NULL;
            missed += strstr(ref, "\"MISS\"") != NULL;
            free(ref);
            compared++;
        }
        opdb_sb_free(&q);
        for (int h = 0; h < 3; h++) opdb_qdb_close(all[h]);
        qf_rmdir(dir);
    }
    assert_true(interpolated > compared / 5);
    assert_true(missed > compared / 20);
    print_message("%zu queries compared with one-bit group hashes, %zu interpolated, %zu misses\n", compared,
                  interpolated, missed);
}

/* Both maps bounded small enough to fill (so that past half full a key is
 * kept only on its second sight), with and without the doorkeeper, and with
 * their hashes cut to one bit (every key meets the others): each answer,
 * asked three times, is the one the handle without maps gives. */
static void test_small_maps_equal_plain(void **s) {
    (void)s;
    size_t compared = 0, hit_answers = 0, omap_answers = 0;
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_mapping);
    matmul_table(dir, "MatMulV2");
    matmul_table(dir, "BatchMatMulV2");
    generic_table(dir, "GenA");
    generic_table(dir, "GenB");
    enum { NH = 5 };
    opdb_qdb *h[NH];
    for (int i = 0; i < NH; i++) {
        h[i] = qf_open(dir, false, true, 0);
        assert_non_null(h[i]);
        q_cache_free(h[i]->cache);
        h[i]->cache = NULL;
    }
    /* 0: no maps; 1: the defaults; 2: tiny with the doorkeeper; 3: tiny without; 4: tiny, one-bit hashes */
    q_hitmap_free(h[0]->hitmap);
    h[0]->hitmap = NULL;
    ip_omap_free(h[0]->ipmap);
    h[0]->ipmap = NULL;
    for (int i = 2; i < NH; i++) {
        q_hitmap_free(h[i]->hitmap);
        ip_omap_free(h[i]->ipmap);
        size_t door = i == 3 ? 0 : 64;
        h[i]->hitmap = q_hitmap_new_door(64, door);
        h[i]->ipmap = ip_omap_new_door(64, door);
    }
    q_hitmap_test_hash_mask(h[4]->hitmap, 1);
    ip_omap_test_hash_mask(h[4]->ipmap, 1);
    opdb_strbuf q;
    opdb_sb_init(&q);
    for (int i = 0; i < 600; i++) {
        /* a key met once, then again a few queries later: the doorkeeper's second sight */
        if (i % 4 != 3) query(&q);
        char *ref = qf_line(h[0], q.p, false);
        for (int k = 1; k < NH; k++)
            for (int ask = 0; ask < 3; ask++) {
                char *x = qf_line(h[k], q.p, false);
                if (strcmp(x, ref) != 0)
                    fail_msg("query %s (maps %d, ask %d)\n  map:   %s\n  plain: %s", q.p, k, ask + 1, x, ref);
                free(x);
            }
        free(ref);
        compared++;
    }
    opdb_sb_free(&q);
    for (int i = 2; i < NH; i++) {
        hit_answers += q_hitmap_hits(h[i]->hitmap);
        omap_answers += ip_omap_hits(h[i]->ipmap);
    }
    for (int i = 0; i < NH; i++) opdb_qdb_close(h[i]);
    qf_rmdir(dir);
    /* the small maps answered (so the comparison reached them) */
    assert_true(hit_answers > compared / 4);
    assert_true(omap_answers > compared / 4);
    print_message("%zu queries compared with small maps, %zu exact-hit and %zu outcome map answers\n", compared,
                  hit_answers, omap_answers);
}


/* A query's probes start where its line hashes, so that different keys of one line (and of
 * lines whose hashes meet) share a start: each must still find its own outcome (the key is
 * compared in full), with whole hashes and with hashes cut to one bit, and a query without a
 * line hash probes at the key's own. */
static void test_line_hash_probes(void **s) {
    (void)s;
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_mapping);
    generic_table(dir, "GenA");
    for (int cut = 0; cut < 2; cut++) {
        opdb_qdb *db = qf_open(dir, false, true, 0);
        assert_non_null(db);
        assert_non_null(db->ipmap);
        if (cut) ip_omap_test_hash_mask(db->ipmap, 1);
        opdb_arena a;
        opdb_arena_init(&a, 4096);
        q_query q;
        memset(&q, 0, sizeof q);
        q_ctx c;
        memset(&c, 0, sizeof c);
        c.db = db;
        c.cfg = &db->cfg;
        c.q = &q;
        c.a = &a;
        enum { NK = 300 };
        /* keys 0..NK-1 under line hashes that repeat every 7 keys; every third with none */
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < NK; i++) {
                q.line_hash = i % 3 == 2 ? 0 : 0x9e3779b97f4a7c15ull * (uint64_t)(1 + i % 7);
                ip_okey k;
                assert_true(ip_okey_init(&c, &k, 'g'));
                uint32_t v = (uint32_t)i * 2654435761u;
                ip_okey_add(&k, &v, sizeof v);
                ip_outcome o;
                bool got = ip_omap_get(&c, &k, &o);
                if (pass == 0) {
                    assert_false(got);
                    ip_outcome put = {.hit = true, .lat = 1.0 + i, .conf = 0.7, .spread = 0, .dim = 1,
                                      .rule = "interpolated_1d_linear"};
                    ip_omap_put(&c, &k, &put);
                } else {
                    if (!got) fail_msg("key %d (cut %d) not found", i, cut);
                    assert_true(o.hit);
                    if (o.lat != 1.0 + i) fail_msg("key %d (cut %d): outcome of another key (%g)", i, cut, o.lat);
                }
            }
        /* a key stored under its line's hash is not met from another start (whole hashes) */
        if (!cut) {
            q.line_hash = 12345;
            ip_okey k;
            assert_true(ip_okey_init(&c, &k, 'g'));
            uint32_t v = 0;
            ip_okey_add(&k, &v, sizeof v);
            ip_outcome o;
            assert_false(ip_omap_get(&c, &k, &o));
        }
        opdb_arena_free(&a);
        opdb_qdb_close(db);
    }
    qf_rmdir(dir);
}

/* A success kept in the outcome map, its points' spread found once, against
 * the plain pair (the answer, then the outcome finding the spread anew): the
 * same result and the same outcome, spread included, for random point sets
 * (one to four points, one to three axes, some coordinates not positive). */
static void test_success_outcome_equals_plain(void **s) {
    (void)s;
    static const double k_co[] = {1, 2, 3, 8, 64, 0.5, 1000, 0, -2};
    uint64_t rng = 12345;
    size_t finite = 0;
    for (int i = 0; i < 2000; i++) {
        ip_out o;
        memset(&o, 0, sizeof o);
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        o.dim = 1 + (int)((rng >> 33) % 3);
        o.npts = 1 + (int)((rng >> 40) % 4);
        for (int k = 0; k < o.npts; k++)
            for (int d = 0; d < o.dim; d++) {
                rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                o.coord[k][d] = k_co[(rng >> 33) % (i % 3 ? 7 : 9)];
            }
        o.lat = 1.0 + i;
        o.conf = 0.5;
        o.rule = "linear";
        ip_task tk;
        memset(&tk, 0, sizeof tk);
        tk.sqrt_axis = -1;
        q_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.quirks = i % 2;
        opdb_arena a;
        opdb_arena_init(&a, 1 << 10);
        q_result r1, r2;
        memset(&r1, 0, sizeof r1);
        memset(&r2, 0, sizeof r2);
        q_ctx c1 = {.cfg = &cfg, .a = &a, .r = &r1}, c2 = {.cfg = &cfg, .a = &a, .r = &r2};
        ip_outcome o1, o2;
        ip_success(&c1, &tk, &o, "K", NULL);
        ip_outcome_hit(&o1, (size_t)i, &o);
        ip_success_outcome(&c2, &tk, &o, "K", NULL, (size_t)i, &o2);
        assert_int_equal(r1.src, r2.src);
        assert_true(r1.lat == r2.lat && r1.conf == r2.conf);
        assert_string_equal(r1.rule, r2.rule);
        assert_string_equal(r1.kernel, r2.kernel);
        assert_int_equal(o1.hit, o2.hit);
        assert_int_equal(o1.kidx, o2.kidx);
        assert_true(o1.lat == o2.lat && o1.conf == o2.conf && o1.dim == o2.dim && o1.rule == o2.rule);
        assert_true(o1.spread == o2.spread || (isnan(o1.spread) && isnan(o2.spread)));
        assert_true(o1.spread == ip_out_spread(&o) || isnan(o1.spread));
        finite += isfinite(o1.spread) && o1.spread > 0;
        opdb_arena_free(&a);
    }
    assert_true(finite > 100);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_outcome_map_equals_plain),
                                       cmocka_unit_test(test_colliding_group_hashes),
                                       cmocka_unit_test(test_small_maps_equal_plain),
                                       cmocka_unit_test(test_line_hash_probes),
                                       cmocka_unit_test(test_success_outcome_equals_plain)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
