/* The compute row index against a plain scan of every row: random tables
 * (shapes that pad, transpose, flatten; dims on both sides of the index's
 * 64-blocks; mixed dtypes and slot counts; rows without a latency;
 * duplicates that tie) and random queries at op and kernel level must give
 * byte-identical result lines, explain included (rows used and tie counts),
 * in both modes, with and without interpolation (its kept filter maps against
 * scanning the points). A handle with the result cache, asked each query
 * twice, must answer as the plain scan does; so must a handle with the
 * exact-hit map alone, and its scans (row, candidate, tie count, reason),
 * first computed then answered from the map, must be the plain scan's.
 * Every row the matchers accept without padding must pass its exact-key
 * filter (the rows a nearest scan weighs first). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "query/query_internal.h"
#include "query_fixture.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((g_rng >> 33) % n);
}

static const int k_dims[] = {1, 4, 16, 24, 32, 64, 65, 72, 120, 128, 127, 129, 136, 192, 193, 250, 256};
static const char *const k_dt[] = {"DT_BF16", "FLOAT", "INT8", "DT_FLOAT"};
static const char *const k_qdt[] = {"bfloat16", "float32", "int8", "float16", "float64"};

static void shape(opdb_strbuf *sb, int rank) {
    for (int d = 0; d < rank; d++) opdb_sb_addf(sb, d ? ",%d" : "%d", k_dims[rnd(sizeof k_dims / sizeof k_dims[0])]);
}

static void write_table(const char *dir, const char *kt, int rows) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_adds(&sb, "Input Shapes,Input Data Types,Input Formats,Average Duration(us),Profiling Average Duration(us),"
                      "Output Shapes,Output Data Types\n");
    for (int r = 0; r < rows; r++) {
        int slots = 1 + rnd(3);
        opdb_strbuf sh, dt, fm;
        opdb_sb_init(&sh), opdb_sb_init(&dt), opdb_sb_init(&fm);
        for (int s = 0; s < slots; s++) {
            if (s) opdb_sb_addc(&sh, ';'), opdb_sb_addc(&dt, ';'), opdb_sb_addc(&fm, ';');
            bool nz = rnd(8) == 0;
            shape(&sh, nz ? 4 : 2 + rnd(2));
            opdb_sb_adds(&dt, k_dt[rnd(4)]);
            opdb_sb_adds(&fm, nz ? "FRACTAL_NZ" : "ND");
        }
        opdb_sb_addc(&sh, 0), opdb_sb_addc(&dt, 0), opdb_sb_addc(&fm, 0);
        /* latency in either column, sometimes none (invisible), few distinct values (ties) */
        unsigned lat = rnd(6);
        const char *avg = lat == 0 ? "" : lat < 4 ? (const char *[]){"1.5", "2.5", "1.5"}[lat - 1] : "";
        const char *prof = lat >= 4 ? (lat == 4 ? "3.0" : "1.5") : "";
        opdb_strbuf os;
        opdb_sb_init(&os);
        shape(&os, 1 + rnd(3));
        opdb_sb_addc(&os, 0);
        const char *odt = k_dt[rnd(4)];
        opdb_sb_addf(&sb, "\"%s\",%s,%s,%s,%s,\"%s\",%s\n", sh.p, dt.p, fm.p, avg, prof, os.p, odt);
        /* a repeated row now and then */
        if (rnd(5) == 0)
            opdb_sb_addf(&sb, "\"%s\",%s,%s,%s,%s,\"%s\",%s\n", sh.p, dt.p, fm.p, avg[0] ? "2.5" : "", prof, os.p, odt);
        opdb_sb_free(&sh), opdb_sb_free(&dt), opdb_sb_free(&fm), opdb_sb_free(&os);
    }
    opdb_sb_addc(&sb, 0);
    char name[64];
    snprintf(name, sizeof name, "%s.csv", kt);
    qf_write(dir, name, sb.p);
    opdb_sb_free(&sb);
}

static void query(opdb_strbuf *q, int n_ops) {
    opdb_sb_clear(q);
    int slots = 1 + rnd(3);
    if (rnd(3) == 0) {
        static const char *const kts[] = {"MatMulV2", "BatchMatMulV2", "RmsNorm", "Add"};
        opdb_sb_addf(q, "{\"id\": 0, \"kernel\": \"%s\", \"alternates\": [\"MatMulV2\"], \"inputs\": [", kts[rnd(4)]);
        for (int s = 0; s < slots; s++) {
            opdb_sb_adds(q, s ? ", {\"shape\": [" : "{\"shape\": [");
            shape(q, 1 + rnd(3));
            opdb_sb_addf(q, "], \"dtype\": \"%s\"}", k_dt[rnd(4)]);
        }
        opdb_sb_adds(q, "]}");
    } else {
        opdb_sb_addf(q, "{\"id\": 0, \"op\": \"op%d\", \"args\": [", rnd((unsigned)n_ops));
        for (int s = 0; s < slots; s++) {
            opdb_sb_adds(q, s ? ", {\"shape\": [" : "{\"shape\": [");
            shape(q, 1 + rnd(3));
            opdb_sb_addf(q, "], \"dtype\": \"%s\"}", k_qdt[rnd(5)]);
        }
        opdb_sb_adds(q, "]");
        /* an output for the elementwise ops (op5) and the interpolation's output keys */
        if (rnd(2)) {
            opdb_sb_adds(q, ", \"out\": {\"shape\": [");
            shape(q, 1 + rnd(3));
            opdb_sb_addf(q, "], \"dtype\": \"%s\"}", k_qdt[rnd(5)]);
        }
        opdb_sb_adds(q, "}");
    }
    opdb_sb_addc(q, 0);
}

typedef struct scan_tally {
    size_t scans, found, tied, ambiguous;
    size_t exact_rows; /* rows accepted without padding, each passing its exact-key filter */
    size_t exact_scans; /* scans whose best is at distance 0 (the mapped handle's first pass answers from the subsets) */
    size_t aligned;     /* subset items whose run hash was compared with their row's */
} scan_tally;

static bool passes(const uint32_t *fh, const uint32_t *qh, size_t nq, size_t r) {
    for (size_t i = 0; i < nq; i++)
        if (fh[r] == qh[i]) return true;
    return false;
}

/* The exact-key filters pass every row the matchers accept without padding:
 * every row of every table is matched against the query and filtered. */
static void check_exact_subsets(q_ctx *c, const q_query *q, const q_tins *X, scan_tally *t) {
    static const char *const kts[] = {"MatMulV2", "BatchMatMulV2", "RmsNorm", "Add"};
    for (size_t k = 0; k < 4; k++) {
        q_ktable *tab = q_table(c->db, kts[k]);
        if (atomic_load(&tab->state) != QT_OK) continue;
        for (int hn = 0; hn < 2; hn++) {
            int64_t N = hn ? 2 : 0;
            const uint32_t *fh = NULL, *sh = NULL;
            uint32_t qh[2];
            size_t nq = 0, nsub = 0;
            bool subok = false;
            const uint32_t *sub = q_index_rows(c, tab, X, N, hn, true, &nsub, &subok);
            bool usable = q_index_exact_keys(c, tab, X, N, hn, true, sub, &fh, &sh, qh, &nq);
            /* the subset's own run of hashes is the rows' hashes in its order */
            for (size_t vi = 0; sh && vi < nsub; vi++) {
                if (sh[vi] != fh[sub[vi]]) fail_msg("%s subset item %zu: run hash %08x, row %u's %08x", kts[k], vi,
                                                    (unsigned)sh[vi], (unsigned)sub[vi], (unsigned)fh[sub[vi]]);
                t->aligned++;
            }
            /* a flattening kernel has no exact keys; the others always do */
            assert_int_equal(usable, !(tab->kflags & QK_FLATTEN) && X->n <= 64);
            if (!usable) continue;
            for (size_t r = 0; r < tab->t.nrows; r++) {
                if (tab->rows[r].latcol == QLAT_NONE) continue;
                q_match m;
                if (q_match_row(c, X, tab, r, N, hn, true, &m) != 1 || m.padded_any) continue;
                if (!passes(fh, qh, nq, r)) fail_msg("%s row %zu matches by %s but fails its exact-key filter", kts[k], r, m.rule);
                t->exact_rows++;
            }
        }
        /* the elementwise subsets: the first output shape as given, stripped, or the 3-D query flattened */
        const qv *o = q->out;
        if (!o || o->kind != QV_TENSOR || o->shape.rank == 0) continue;
        q_shape y = q_strip(o->shape);
        const uint32_t *fh = NULL, *sh = NULL;
        uint32_t qh[2];
        size_t nq = 0, nsub = 0;
        bool subok = false;
        const uint32_t *sub = q_index_out_rows(c, tab, y, &nsub, &subok);
        if (!q_index_out_exact_keys(c, tab, y, sub, &fh, &sh, qh, &nq)) continue;
        for (size_t vi = 0; sh && vi < nsub; vi++) {
            if (sh[vi] != fh[sub[vi]]) fail_msg("%s output subset item %zu: run hash differs from its row's", kts[k], vi);
            t->aligned++;
        }
        for (size_t r = 0; r < tab->t.nrows; r++) {
            const q_row *rw = &tab->rows[r];
            if (rw->latcol == QLAT_NONE || !q_row_out_ok(rw) || q_row_nout(tab, rw) == 0) continue;
            q_shape cs = q_row_out(tab, rw, 0), cp = q_strip(cs);
            bool same = q_shape_eq(y, cs) || q_shape_eq(y, cp);
            if (!same && y.rank == 3 && cs.rank == 2) {
                int64_t fd[2] = {y.d[0] * y.d[1], y.d[2]};
                q_shape f = {fd, 2};
                same = q_shape_eq(f, cs) || q_shape_eq(f, cp);
            }
            if (!same) continue;
            if (!passes(fh, qh, nq, r)) fail_msg("%s row %zu matches the output but fails its exact-key filter", kts[k], r);
            t->exact_rows++;
        }
    }
}

/* One compute scan of the query's tensor inputs over kernel list K on db, without explain. */
static q_scan one_scan(const opdb_qdb *db, const q_tins *X, const char *const *K, size_t nk, int64_t N, bool has_n,
                       opdb_arena *a) {
    q_result r;
    memset(&r, 0, sizeof r);
    q_ctx c = {.db = db, .cfg = &db->cfg, .a = a, .r = &r};
    q_scan s;
    const char *reason;
    q_find_compute(&c, K, nk, X, N, has_n, false, &s, &reason);
    assert_false(s.failed);
    return s;
}

/* The compute scans of an op-level query line's inputs over a few kernel lists:
 * on `mapped` (asked twice: computed, then from the map) as on `lin` (every row). */
static void compare_scans(const opdb_qdb *mapped, const opdb_qdb *lin, const char *line, scan_tally *t) {
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    q_query q;
    const char *code;
    char msg[256];
    if (q_parse_line(&a, line, strlen(line), &q, &code, msg, sizeof msg) != 0 || q.kernel) {
        opdb_arena_free(&a);
        return;
    }
    q_result r;
    memset(&r, 0, sizeof r);
    q_ctx c = {.db = lin, .cfg = &lin->cfg, .q = &q, .a = &a, .r = &r};
    q_tins X = q_tensor_inputs(&c, q.args);
    {
        q_result r2;
        memset(&r2, 0, sizeof r2);
        q_ctx cm = {.db = mapped, .cfg = &mapped->cfg, .q = &q, .a = &a, .r = &r2};
        check_exact_subsets(&cm, &q, &X, t);
    }
    static const char *const k0[] = {"MatMulV2", "BatchMatMulV2"}, *const k1[] = {"BatchMatMulV2", "MatMulV2"},
                             *const k2[] = {"RmsNorm", "Add", "MatMulV2"}, *const k3[] = {"Absent", "Add"};
    static const struct {
        const char *const *k;
        size_t n;
    } lists[] = {{k0, 2}, {k1, 2}, {k2, 3}, {k3, 2}};
    for (size_t li = 0; li < 4; li++)
        for (int hn = 0; hn < 2; hn++) {
            int64_t N = hn ? 2 : 0;
            q_scan want = one_scan(lin, &X, lists[li].k, lists[li].n, N, hn, &a);
            for (int ask = 0; ask < 2; ask++) {
                q_scan got = one_scan(mapped, &X, lists[li].k, lists[li].n, N, hn, &a);
                bool same = got.found == want.found && strcmp(got.reason, want.reason) == 0;
                if (same && want.found)
                    same = got.kidx == want.kidx && got.row == want.row && got.ties == want.ties &&
                           strcmp(got.tab->kernel, want.tab->kernel) == 0 && got.best.lat == want.best.lat &&
                           got.best.conf == want.best.conf && got.best.dist == want.best.dist &&
                           strcmp(got.best.rule, want.best.rule) == 0;
                if (!same)
                    fail_msg("query %s, list %zu, N %d, ask %d\n  map:  found %d row %zu ties %zu reason %s\n"
                             "  scan: found %d row %zu ties %zu reason %s",
                             line, li, hn, ask + 1, got.found, got.row, got.ties, got.reason, want.found, want.row,
                             want.ties, want.reason);
            }
            t->scans++;
            t->found += want.found;
            t->tied += want.found && want.ties > 1;
            t->ambiguous += strncmp(want.reason, "ambiguous_semantic_match:", 25) == 0;
            t->exact_scans += want.found && want.best.dist == 0 && !mapped->cfg.quirks;
        }
    opdb_arena_free(&a);
}

static void test_index_equals_scan(void **state) {
    (void)state;
    static const char k_map[] = "operator_mappings:\n"
                                "  op0: {kernel_type: MatMulV2, alternate_kernel_types: [BatchMatMulV2]}\n"
                                "  op1: {kernel_type: BatchMatMulV2, tc_input_count: 2}\n"
                                "  op2: {kernel_type: RmsNorm, alternate_kernel_types: [Add, MatMulV2]}\n"
                                "  op3: {kernel_type: Add, tc_input_count: -1}\n"
                                "  op4: {kernel_type: MatMulV2, kernel_types_by_input_rank: {3: [BatchMatMulV2]}}\n"
                                "  op5: {kernel_type: Add, query_mode: elementwise, alternate_kernel_types: [RmsNorm]}\n"
                                "query_selection_policy: {kernel_overrides: {BatchMatMulV2: {require_semantic_unique: true}}}\n";
    size_t compared = 0, hits = 0, interpolated = 0, elementwise = 0, map_answers = 0;
    scan_tally tally = {0};
    for (int round = 0; round < 6; round++) {
        char *dir = qf_mkdir();
        qf_write(dir, "op_mapping.yaml", k_map);
        write_table(dir, "MatMulV2", 150);
        write_table(dir, "BatchMatMulV2", 100);
        write_table(dir, "RmsNorm", 80);
        write_table(dir, "Add", 60);
        bool interp = round % 2;
        for (int quirks = 0; quirks < 2; quirks++) {
            opdb_qdb *ix = qf_open(dir, quirks, interp, 0), *lin = qf_open(dir, quirks, interp, 0);
            opdb_qdb *cached = qf_open(dir, quirks, interp, 0), *mapped = qf_open(dir, quirks, interp, 0);
            assert_non_null(mapped);
            assert_non_null(mapped->hitmap);
            q_cache_free(mapped->cache);
            mapped->cache = NULL;
            assert_non_null(ix);
            assert_non_null(lin);
            assert_non_null(cached);
            assert_non_null(cached->cache);
            lin->no_index = true;
            q_cache_free(lin->cache);
            lin->cache = NULL;
            q_cache_free(ix->cache);
            ix->cache = NULL;
            opdb_strbuf q;
            opdb_sb_init(&q);
            for (int i = 0; i < 1500; i++) {
                query(&q, 6);
                char *a = qf_line(ix, q.p, true), *b = qf_line(lin, q.p, true);
                if (strcmp(a, b) != 0) fail_msg("query %s\n  index: %s\n  scan:  %s", q.p, a, b);
                hits += strstr(a, "\"hit\": true") != NULL;
                interpolated += strstr(a, "INTERPOLATED") != NULL;
                elementwise += strstr(a, "\"shape_match_rule\": \"elementwise\"") != NULL;
                compared++;
                free(a);
                free(b);
                /* the cache, on a first and a repeated ask */
                char *l = qf_line(lin, q.p, false);
                for (int k = 0; k < 2; k++) {
                    char *x = qf_line(cached, q.p, false);
                    if (strcmp(x, l) != 0) fail_msg("query %s\n  cached: %s\n  scan:   %s", q.p, x, l);
                    free(x);
                    /* the exact-hit map: the first ask fills it, the second is answered from it */
                    char *y = qf_line(mapped, q.p, false);
                    if (strcmp(y, l) != 0) fail_msg("query %s (ask %d)\n  map:  %s\n  scan: %s", q.p, k + 1, y, l);
                    free(y);
                }
                free(l);
                compare_scans(mapped, lin, q.p, &tally);
            }
            opdb_sb_free(&q);
            opdb_qdb_close(ix);
            opdb_qdb_close(lin);
            opdb_qdb_close(cached);
            map_answers += q_hitmap_hits(mapped->hitmap);
            opdb_qdb_close(mapped);
        }
        qf_rmdir(dir);
    }
    /* the random queries must reach rows, or the comparison says little */
    assert_true(hits > compared / 50);
    assert_true(interpolated > 0);
    assert_true(elementwise > 0);
    /* the map must have answered, and its answers must reach rows, ties and ambiguous misses */
    assert_true(map_answers > compared);
    assert_true(tally.found > tally.scans / 100);
    assert_true(tally.tied > 0);
    assert_true(tally.ambiguous > 0);
    /* the exact-key filters must pass rows, and answer scans */
    assert_true(tally.exact_rows > compared / 10);
    assert_true(tally.aligned > compared); /* the subsets' runs of hashes were there to compare */
    assert_true(tally.exact_scans > 0);
    print_message("%zu queries compared, %zu hits, %zu interpolated, %zu elementwise, %zu map answers; scans: %zu, "
                  "%zu found, %zu tied, %zu ambiguous\n",
                  compared, hits, interpolated, elementwise, map_answers, tally.scans, tally.found, tally.tied,
                  tally.ambiguous);
    print_message("%zu rows matched without padding, each passing its exact-key filter; %zu scans at distance 0; %zu run hashes compared\n",
                  tally.exact_rows, tally.exact_scans, tally.aligned);
}

/* The compute index's rows' exact key hashes, made in the pass that files the
 * coarse keys, against those of the reference handle that makes them in a pass
 * of their own on first use: every row of every table, for every input count
 * cut, must hash alike (and both must have them, or neither). */
static void test_one_pass_exact_keys(void **state) {
    (void)state;
    static const char k_map[] = "operator_mappings:\n  op0: {kernel_type: MatMulV2}\n";
    static const char *const kts[] = {"MatMulV2", "BatchMatMulV2", "RmsNorm", "Add"};
    size_t hashed = 0, nz_rows = 0;
    for (int round = 0; round < 4; round++) {
        char *dir = qf_mkdir();
        qf_write(dir, "op_mapping.yaml", k_map);
        for (size_t k = 0; k < 4; k++) write_table(dir, kts[k], 120);
        opdb_qdb *one = qf_open(dir, false, false, 0), *ref = qf_open(dir, false, false, 0);
        assert_non_null(one);
        assert_non_null(ref);
        ref->index_lazy_exact = true;
        opdb_arena a;
        opdb_arena_init(&a, 1 << 12);
        q_query q;
        const char *code;
        char msg[256];
        static const char line[] = "{\"id\": 0, \"op\": \"op0\", \"args\": [{\"shape\": [64, 128], \"dtype\": "
                                   "\"bfloat16\"}, {\"shape\": [128, 256], \"dtype\": \"float32\"}]}";
        assert_int_equal(q_parse_line(&a, line, strlen(line), &q, &code, msg, sizeof msg), 0);
        q_result r1, r2;
        memset(&r1, 0, sizeof r1);
        memset(&r2, 0, sizeof r2);
        q_ctx c1 = {.db = one, .cfg = &one->cfg, .q = &q, .a = &a, .r = &r1};
        q_ctx c2 = {.db = ref, .cfg = &ref->cfg, .q = &q, .a = &a, .r = &r2};
        q_tins X = q_tensor_inputs(&c1, q.args);
        for (size_t k = 0; k < 4; k++) {
            q_ktable *t1 = q_table(one, kts[k]), *t2 = q_table(ref, kts[k]);
            assert_int_equal(atomic_load(&t1->state), QT_OK);
            assert_int_equal(atomic_load(&t2->state), QT_OK);
            for (int cut = 0; cut < 4; cut++) {
                bool hn = cut > 0;
                int64_t N = cut - 1; /* no cut; then 0, 1 and 2 inputs */
                size_t n;
                bool usable;
                /* a scan asks for its subset first, then the exact keys */
                (void)q_index_rows(&c1, t1, &X, N, hn, true, &n, &usable);
                (void)q_index_rows(&c2, t2, &X, N, hn, true, &n, &usable);
                const uint32_t *f1 = NULL, *f2 = NULL;
                uint32_t q1[2], q2[2];
                size_t n1 = 0, n2 = 0;
                bool u1 = q_index_exact_keys(&c1, t1, &X, N, hn, true, NULL, &f1, NULL, q1, &n1);
                bool u2 = q_index_exact_keys(&c2, t2, &X, N, hn, true, NULL, &f2, NULL, q2, &n2);
                assert_int_equal(u1, u2);
                assert_int_equal(n1, n2);
                if (!u1) continue;
                if (n1) assert_int_equal(q1[0], q2[0]);
                for (size_t r = 0; r < t1->t.nrows; r++) {
                    if (f1[r] != f2[r])
                        fail_msg("%s row %zu, cut %d: one-pass exact hash %08x, reference %08x", kts[k], r, cut,
                                 (unsigned)f1[r], (unsigned)f2[r]);
                    hashed += f1[r] != 0;
                }
            }
            for (size_t r = 0; r < t1->t.nrows; r++) {
                const q_list *fm = q_row_in_fmt(t1, &t1->rows[r]);
                for (uint32_t i = 0; i < fm->n; i++) nz_rows += fm->len[i] == 10 && memcmp(fm->s[i], "FRACTAL_NZ", 10) == 0;
            }
        }
        opdb_arena_free(&a);
        opdb_qdb_close(one);
        opdb_qdb_close(ref);
        qf_rmdir(dir);
    }
    /* the tables must have rows with exact keys, FRACTAL_NZ slots among them */
    assert_true(hashed > 1000);
    assert_true(nz_rows > 0);
    print_message("%zu exact row hashes compared (%zu FRACTAL_NZ slots)\n", hashed, nz_rows);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_index_equals_scan), cmocka_unit_test(test_one_pass_exact_keys)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
