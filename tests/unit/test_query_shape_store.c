/* The database's shape store and the prepared rows' compact cells: every
 * shapes cell read through the store (and a row's through its accessors)
 * equals the plain parse of its text, cell for cell, with equal shapes one
 * id (across tables too); cells that do not parse fail the same way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_internal.h"
#include "query_fixture.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* a random shapes cell: "()" shapes, ranks 1 to 20 (past 16), few distinct
 * dims (so that shapes repeat), spaces, quotes, empty pieces and, when bad,
 * one piece that does not parse */
static void rand_cell(opdb_strbuf *sb, bool bad) {
    static const char *const dims[] = {"1", "7", "128", "-1", "0", " 4096 ", "9223372036854775807", "-9223372036854775808"};
    static const char *const broken[] = {"1,x", "1,,2", "( )", "(1)", "1.5", ","};
    bool quoted = next() % 4 == 0;
    if (quoted) opdb_sb_add(sb, "\"", 1);
    size_t n = next() % 5, badat = bad ? next() % (n + 1) : SIZE_MAX;
    for (size_t k = 0; k <= n; k++) {
        if (k) opdb_sb_add(sb, ";", 1);
        if (k == badat) {
            const char *b = broken[next() % (sizeof broken / sizeof broken[0])];
            opdb_sb_add(sb, b, strlen(b));
            continue;
        }
        uint64_t kind = next() % 10;
        if (kind == 0) {
            opdb_sb_add(sb, "()", 2);
        } else if (kind == 1) {
            opdb_sb_add(sb, " ", 1); /* an empty piece: dropped */
        } else {
            size_t r = kind == 2 ? 17 + next() % 4 : 1 + next() % 3;
            for (size_t i = 0; i < r; i++) {
                if (i) opdb_sb_add(sb, ",", 1);
                const char *d = dims[next() % (kind == 2 ? 2 : sizeof dims / sizeof dims[0])];
                opdb_sb_add(sb, d, strlen(d));
            }
        }
    }
    if (quoted) opdb_sb_add(sb, "\"", 1);
}

static void assert_same(q_shape a, q_shape b) {
    assert_int_equal(a.rank, b.rank);
    if (a.rank) assert_memory_equal(a.d, b.d, a.rank * sizeof *a.d);
    else assert_null(b.d);
}

static void test_store_equals_plain(void **state) {
    (void)state;
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    q_shape_store st;
    q_shape_store_init(&st);
    q_shape_buf b = {0};
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    for (int i = 0; i < 20000; i++) {
        sb.n = 0;
        rand_cell(&sb, next() % 8 == 0);
        q_shape *p;
        uint32_t np;
        int rp = q_parse_shapes(&a, sb.p, sb.n, &p, &np);
        /* after a cell already there: a bad cell leaves it as it was */
        b.n = b.nd = 0;
        assert_true(q_shape_buf_parse(&b, "3,5;()", 6));
        bool ok = q_shape_buf_parse(&b, sb.p, sb.n);
        assert_int_equal(ok, rp == 0);
        assert_int_equal(b.n, 2 + (ok ? np : 0));
        uint32_t ids[64];
        assert_true(b.n <= 64);
        q_shape_store_add(&st, &b, ids);
        assert_same(q_shape_of(&st, ids[0]), (q_shape){(const int64_t[]){3, 5}, 2});
        assert_same(q_shape_of(&st, ids[1]), (q_shape){NULL, 0});
        for (uint32_t k = 0; ok && k < np; k++) {
            q_shape s = q_shape_of(&st, ids[2 + k]);
            assert_same(p[k], s);
            /* equal shapes are one id, one dims array */
            for (uint32_t j = 0; j < k; j++)
                if (q_shape_eq(p[j], p[k])) {
                    assert_int_equal(ids[2 + j], ids[2 + k]);
                    assert_ptr_equal(q_shape_of(&st, ids[2 + j]).d, s.d);
                }
        }
    }
    /* the random cells filled several segments: every id names a distinct shape */
    assert_true(st.n > Q_SSEG0 * 7);
    for (uint32_t id = 1; id < st.n; id += 97) assert_false(q_shape_eq(q_shape_of(&st, id - 1), q_shape_of(&st, id)));
    q_shape_buf_free(&b);
    opdb_sb_free(&sb);
    q_shape_store_free(&st);
    opdb_arena_free(&a);
}

/* a cell mostly of digits, ',' and ';' (the form read in one pass), with
 * now and then what that pass leaves to the general reading: long and
 * overflowing dims, leading zeros, signs, spaces, underscores, empty dims and
 * pieces, "()", quotes and float or NaN forms */
static void plain_cell(opdb_strbuf *sb) {
    static const char *const odd[] = {"",     " ",    "007",  "+4",   "-5",   " 3",   "3 ",   "1_000", "()",
                                      "\"",   "1.5",  "nan",  "inf",  "1e3",  "0x10", "९",    ";",     ","};
    static const char *const big[] = {"123456789012345678", "999999999999999999", "1234567890123456789",
                                      "9223372036854775807", "9223372036854775808", "99999999999999999999999"};
    size_t pieces = next() % 6;
    for (size_t k = 0; k < pieces; k++) {
        if (k) opdb_sb_add(sb, next() % 10 ? ";" : ";;", 1);
        size_t r = 1 + next() % 5;
        for (size_t i = 0; i < r; i++) {
            if (i) opdb_sb_add(sb, ",", 1);
            uint64_t w = next() % 40;
            char tmp[32];
            const char *d = tmp;
            if (w == 0) d = odd[next() % (sizeof odd / sizeof odd[0])];
            else if (w == 1) d = big[next() % (sizeof big / sizeof big[0])];
            else snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)(next() % (w < 20 ? 5000 : 100000000)));
            opdb_sb_add(sb, d, strlen(d));
        }
    }
    if (next() % 20 == 0) opdb_sb_add(sb, next() % 2 ? ";" : ",", 1);
}

/* Cells read in one pass equal the general reading's, shape for shape;
 * those it leaves fail or parse the same way. */
static void test_plain_cells_equal_plain_parse(void **state) {
    (void)state;
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    q_shape_buf b = {0};
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    size_t oks = 0;
    for (int i = 0; i < 100000; i++) {
        sb.n = 0;
        plain_cell(&sb);
        q_shape *p;
        uint32_t np;
        int rp = q_parse_shapes(&a, sb.p ? sb.p : "", sb.n, &p, &np);
        b.n = b.nd = 0;
        assert_true(q_shape_buf_parse(&b, "3,5;()", 6));
        bool ok = q_shape_buf_parse(&b, sb.p ? sb.p : "", sb.n);
        if (ok != (rp == 0)) fail_msg("'%.*s': %d, plain %d", (int)sb.n, sb.p, ok, rp);
        assert_int_equal(b.n, 2 + (ok ? np : 0));
        for (uint32_t k = 0; ok && k < np; k++) {
            const struct q_sbuf_shape *sh = &b.s[2 + k];
            assert_int_equal(sh->rank, p[k].rank);
            if (sh->rank) assert_memory_equal(b.d + sh->at, p[k].d, sh->rank * sizeof *p[k].d);
        }
        oks += ok;
        opdb_arena_reset(&a);
    }
    assert_true(oks > 30000 && oks < 100000); /* both outcomes, many times */
    q_shape_buf_free(&b);
    opdb_sb_free(&sb);
    opdb_arena_free(&a);
}

/* a cell's text as written in a CSV record */
static void csv_cell(opdb_strbuf *out, const char *p, size_t n) {
    opdb_sb_add(out, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"') opdb_sb_add(out, "\"", 1);
        opdb_sb_add(out, p + i, 1);
    }
    opdb_sb_add(out, "\"", 1);
}

static const char *const k_dts[] = {"DT_BF16", "DT_BF16;DT_BF16", "FLOAT;INT32;DT_BF16", "INT8"};
static const char *const k_fmts[] = {"ND", "ND;FRACTAL_NZ", "FRACTAL_NZ;ND;ND"};

static void check_list(const q_list *l, const char *text) {
    size_t k = 0;
    for (const char *s = text; *s;) {
        const char *e = strchr(s, ';');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        assert_true(k < l->n);
        assert_int_equal(l->len[k], n);
        assert_memory_equal(l->s[k], s, n);
        k++;
        s += n + (e != NULL);
    }
    assert_int_equal(l->n, k);
}

/* table NAME.csv of random cells (big: with two rows whose counts do not fit 16 bits) */
static void write_table(const char *dir, const char *name, bool big) {
    opdb_strbuf csv;
    opdb_sb_init(&csv);
    const char *head = "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
                       "Average Duration(us)\n";
    opdb_sb_add(&csv, head, strlen(head));
    for (int r = 0; r < 3000; r++) {
        opdb_strbuf c;
        opdb_sb_init(&c);
        if (big && r == 7) {
            for (int k = 0; k < 70000; k++) opdb_sb_add(&c, k ? ";2" : "2", k ? 2 : 1);
        } else {
            rand_cell(&c, next() % 8 == 0);
        }
        csv_cell(&csv, c.p, c.n);
        c.n = 0;
        char line[200];
        snprintf(line, sizeof line, ",%s,%s,", k_dts[r % 4], k_fmts[r % 3]);
        opdb_sb_add(&csv, line, strlen(line));
        if (big && r == 9) {
            for (int k = 0; k < 66000; k++) opdb_sb_add(&c, k ? ";()" : "()", k ? 3 : 2);
        } else {
            rand_cell(&c, next() % 8 == 0);
        }
        csv_cell(&csv, c.p, c.n);
        snprintf(line, sizeof line, ",%s,%d.5\n", k_dts[(r / 4) % 4], r + 1);
        opdb_sb_add(&csv, line, strlen(line));
        opdb_sb_free(&c);
    }
    opdb_sb_addc(&csv, 0);
    char file[64];
    snprintf(file, sizeof file, "%s.csv", name);
    qf_write(dir, file, csv.p);
    opdb_sb_free(&csv);
}

/* every row of t read through the accessors equals the plain parse of its cells */
static void check_table(q_ktable *t, bool big) {
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    assert_true(q_table_rows(t));
    assert_int_equal(t->t.nrows, 3000);
    int cols[2] = {t->c_in_shapes, t->c_out_shapes};
    for (size_t r = 0; r < t->t.nrows; r++) {
        const q_row *rw = &t->rows[r];
        for (int side = 0; side < 2; side++) {
            char buf[48];
            opdb_span s = db_cell_text(db_table_cell(&t->t, r, cols[side]), buf, sizeof buf);
            q_shape *p;
            uint32_t np;
            int rp = q_parse_shapes(&a, s.p, s.n, &p, &np);
            assert_int_equal(side ? q_row_out_ok(rw) : q_row_shapes_ok(rw), rp == 0);
            uint32_t n = side ? q_row_nout(t, rw) : q_row_nin(t, rw);
            assert_int_equal(n, rp == 0 ? np : 0);
            for (uint32_t k = 0; k < n; k++) assert_same(p[k], side ? q_row_out(t, rw, k) : q_row_in(t, rw, k));
        }
        if (big && (r == 7 || r == 9)) assert_int_equal(rw->nin16, Q_ROW_NMANY);
        check_list(q_row_in_dt(t, rw), k_dts[r % 4]);
        check_list(q_row_in_fmt(t, rw), k_fmts[r % 3]);
        check_list(q_row_out_dt(t, rw), k_dts[(r / 4) % 4]);
        assert_true(rw->lat == (double)r + 1.5);
        opdb_arena_reset(&a);
    }
    opdb_arena_free(&a);
}

static void test_rows_round_trip(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    write_table(dir, "A", false);
    write_table(dir, "B", true);
    opdb_qdb *db = qf_open(dir, false, true, 0);
    assert_non_null(db);
    q_ktable *ta = q_table(db, "A"), *tb = q_table(db, "B");
    check_table(ta, false);
    check_table(tb, true);
    /* the two tables' equal shapes are one shape */
    bool seen = false;
    for (size_t r = 0; r < 20 && !seen; r++) {
        if (!q_row_nin(ta, &ta->rows[r])) continue;
        q_shape x = q_row_in(ta, &ta->rows[r], 0);
        for (size_t rb = 0; rb < tb->t.nrows && x.rank && !seen; rb++)
            for (uint32_t k = 0; k < q_row_nin(tb, &tb->rows[rb]) && !seen; k++) {
                q_shape y = q_row_in(tb, &tb->rows[rb], k);
                if (q_shape_eq(x, y)) {
                    assert_ptr_equal(x.d, y.d);
                    seen = true;
                }
            }
    }
    assert_true(seen);
    opdb_qdb_close(db);
    qf_rmdir(dir);
}

/* Tables prepared on several threads at once add to one store. */
enum { NTAB = 8, NTHR = 4 };
static opdb_qdb *g_db;

static void *prep_worker(void *arg) {
    size_t k = (size_t)(uintptr_t)arg;
    for (size_t i = 0; i < NTAB; i++) {
        char name[8];
        snprintf(name, sizeof name, "T%zu", (i * 3 + k * 5) % NTAB);
        q_table(g_db, name);
    }
    return NULL;
}

static void test_threads_share_store(void **state) {
    (void)state;
    char *dir = qf_mkdir();
    for (int i = 0; i < NTAB; i++) {
        char name[8];
        snprintf(name, sizeof name, "T%d", i);
        write_table(dir, name, false);
    }
    g_db = qf_open(dir, false, true, 0);
    assert_non_null(g_db);
    pthread_t th[NTHR];
    for (size_t k = 0; k < NTHR; k++) assert_int_equal(pthread_create(&th[k], NULL, prep_worker, (void *)(uintptr_t)k), 0);
    for (size_t k = 0; k < NTHR; k++) pthread_join(th[k], NULL);
    for (int i = 0; i < NTAB; i++) {
        char name[8];
        snprintf(name, sizeof name, "T%d", i);
        check_table(q_table(g_db, name), false);
    }
    opdb_qdb_close(g_db);
    qf_rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_store_equals_plain),
                                       cmocka_unit_test(test_plain_cells_equal_plain_parse),
                                       cmocka_unit_test(test_rows_round_trip),
                                       cmocka_unit_test(test_threads_share_store)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
