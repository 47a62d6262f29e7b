/* The streaming batch (opdb_query_stream) against the simple one
 * (opdb_query_batch_text on one thread): the same text for any thread count
 * and any way the input arrives (pieces of 1 byte to many blocks, lines
 * longer than a block, CRLF and blank lines, a last line without newline),
 * write never called twice at once, a refused write stopping the batch with
 * its code and a prefix of the text written, and a failed read answering
 * what came before it, and lines arriving a few at a time each answered and
 * written before more input comes (a pipe from a program that waits for
 * its answers). (Run under the TSan build for the data-race check.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <cmocka.h>

#include "opdb/core.h"
#include "query_fixture.h"

static const char k_map[] = "operator_mappings:\n"
                            "  mm: {kernel_type: MatMulV2}\n"
                            "  add: {kernel_type: Add, query_mode: elementwise}\n"
                            "  view: {zero_cost: true}\n";
static const char k_mm[] = "Input Shapes,Input Data Types,Output Shapes,Output Data Types,Duration(us)\n"
                           "\"16,128;128,256\",DT_BF16;DT_BF16,\"16,256\",DT_BF16,5.0\n"
                           "\"32,128;128,256\",DT_BF16;DT_BF16,\"32,256\",DT_BF16,6.0\n"
                           "\"64,128;128,256\",DT_BF16;DT_BF16,\"64,256\",DT_BF16,9.0\n";
static const char k_add[] = "Output Shapes,Output Data Types,Duration(us)\n\"16,128\",DT_BF16,1.0\n\"64,128\",FLOAT,2.0\n";

/* A reader over a string, handing out pieces whose sizes follow a seeded sequence. */
typedef struct src {
    const char *p;
    size_t n, at;
    size_t max_piece; /* 0: as much as asked */
    uint32_t rng;
    size_t fail_at;   /* a failure once this many bytes were read (SIZE_MAX: never) */
} src;

static ptrdiff_t src_read(void *ctx, char *buf, size_t cap) {
    src *s = ctx;
    if (s->at >= s->fail_at) return -1;
    size_t k = s->n - s->at < cap ? s->n - s->at : cap;
    if (s->max_piece) {
        s->rng = s->rng * 1103515245u + 12345u;
        size_t piece = 1 + (s->rng >> 8) % s->max_piece;
        if (k > piece) k = piece;
    }
    if (s->fail_at != SIZE_MAX && k > s->fail_at - s->at) k = s->fail_at - s->at;
    memcpy(buf, s->p + s->at, k);
    s->at += k;
    return (ptrdiff_t)k;
}

typedef struct sink {
    opdb_strbuf out;
    atomic_int inside; /* write entered and not yet left */
    size_t calls, refuse_at;
    bool overlapped;
} sink;

static int sink_write(void *ctx, const char *text, size_t n) {
    sink *k = ctx;
    if (atomic_fetch_add(&k->inside, 1) != 0) k->overlapped = true;
    if (n == 0 || text[n - 1] != '\n') k->overlapped = true; /* whole lines only */
    int rc = 0;
    if (++k->calls == k->refuse_at) rc = 7;
    else opdb_sb_add(&k->out, text, n);
    atomic_fetch_sub(&k->inside, 1);
    return rc;
}

/* ~3000 lines: hits, elementwise, zero-cost, misses, kernel level, bad lines,
 * blank and CRLF lines, a few lines longer than a block; no final newline. */
static void make_input(opdb_strbuf *in) {
    static const int m[] = {1, 16, 20, 32, 48, 64, 100};
    uint32_t r = 12345;
    for (int i = 0; i < 3000; i++) {
        r = r * 1664525u + 1013904223u;
        switch ((r >> 10) % 9) {
        case 0:
        case 1:
            opdb_sb_addf(in, "{\"id\": %d, \"op\": \"mm\", \"args\": [{\"shape\": [%d, 128]}, {\"shape\": [128, 256]}]}", i,
                         m[(r >> 16) % 7]);
            break;
        case 2:
            opdb_sb_addf(in, "{\"id\": %d, \"op\": \"add\", \"out\": {\"shape\": [%d, 128], \"dtype\": \"%s\"}}", i,
                         m[(r >> 16) % 7], (r >> 20) % 2 ? "bfloat16" : "float32");
            break;
        case 3: opdb_sb_addf(in, "{\"id\": \"v%d\", \"op\": \"view\"}", i); break;
        case 4: opdb_sb_addf(in, "{\"id\": %d, \"op\": \"nope\"}", i); break;
        case 5: opdb_sb_adds(in, (r >> 16) % 2 ? "not json" : "{\"id\": 1, \"op\": "); break;
        case 6: opdb_sb_adds(in, (r >> 16) % 2 ? "   \t" : ""); break;
        case 7:
            opdb_sb_addf(in, "  {\"id\": %d, \"kernel\": \"MatMulV2\", \"inputs\": [{\"shape\": [16, 128], \"dtype\": "
                             "\"DT_BF16\"}, {\"shape\": [128, 256], \"dtype\": \"DT_BF16\"}]}\r", i);
            break;
        default:
            if (i % 500 == 8) { /* an id longer than two blocks */
                opdb_sb_addf(in, "{\"id\": \"");
                for (int k = 0; k < 150000; k++) opdb_sb_addc(in, (char)('a' + k % 26));
                opdb_sb_addf(in, "\", \"op\": \"view\"}");
            } else {
                opdb_sb_addf(in, "{\"id\": %d, \"op\": \"mm\", \"args\": [{\"shape\": [%d, 128]}, {\"shape\": [128, 256]}]}\r", i,
                             m[(r >> 16) % 7]);
            }
        }
        if (i + 1 < 3000) opdb_sb_addc(in, '\n');
    }
}

static char *g_dir;
static opdb_qdb *g_db;

static int setup(void **state) {
    (void)state;
    g_dir = qf_mkdir();
    qf_write(g_dir, "op_mapping.yaml", k_map);
    qf_write(g_dir, "MatMulV2.csv", k_mm);
    qf_write(g_dir, "Add.csv", k_add);
    g_db = qf_open(g_dir, false, true, 1);
    return g_db ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    opdb_qdb_close(g_db);
    qf_rmdir(g_dir);
    return 0;
}

static void test_same_text_any_threads_any_pieces(void **state) {
    (void)state;
    opdb_strbuf in;
    opdb_sb_init(&in);
    make_input(&in);
    for (int explain = 0; explain < 2; explain++) {
        char *want = NULL;
        size_t want_n = 0;
        opdb_qstats ws;
        assert_int_equal(opdb_query_batch_text(g_db, in.p, in.n, 1, explain, &want, &want_n, &ws), 0);
        assert_true(ws.queries > 2000 && ws.error > 100 && ws.measured > 100 && ws.miss > 100);
        static const unsigned threads[] = {0, 1, 2, 3, 8};
        static const size_t pieces[] = {0, 1, 7, 300, 5000, 200000};
        for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
            for (size_t p = 0; p < sizeof pieces / sizeof *pieces; p++) {
                if (pieces[p] == 1 && threads[t] > 2) continue; /* byte by byte: slow under TSan */
                src s = {in.p, in.n, 0, pieces[p], (uint32_t)(t * 31 + p), SIZE_MAX};
                sink k;
                memset(&k, 0, sizeof k);
                opdb_sb_init(&k.out);
                opdb_qstats st;
                assert_int_equal(opdb_query_stream(g_db, threads[t], explain, src_read, &s, sink_write, &k, &st), 0);
                assert_false(k.overlapped);
                assert_int_equal(k.out.n, want_n);
                assert_memory_equal(k.out.p, want, want_n);
                assert_int_equal(st.queries, ws.queries);
                assert_int_equal(st.measured, ws.measured);
                assert_int_equal(st.interpolated, ws.interpolated);
                assert_int_equal(st.miss, ws.miss);
                assert_int_equal(st.error, ws.error);
                opdb_sb_free(&k.out);
            }
        opdb_query_free_text(want);
    }
    /* an empty input, and one of blank lines only: nothing written */
    static const char *const empty[] = {"", "\n\n  \r\n\t"};
    for (int e = 0; e < 2; e++)
        for (unsigned t = 1; t <= 4; t += 3) {
            src s = {empty[e], strlen(empty[e]), 0, 0, 1, SIZE_MAX};
            sink k;
            memset(&k, 0, sizeof k);
            opdb_sb_init(&k.out);
            opdb_qstats st;
            assert_int_equal(opdb_query_stream(g_db, t, false, src_read, &s, sink_write, &k, &st), 0);
            assert_int_equal(k.calls, 0);
            assert_int_equal(st.queries, 0);
            opdb_sb_free(&k.out);
        }
    opdb_sb_free(&in);
}

static void test_refused_write_stops(void **state) {
    (void)state;
    opdb_strbuf in;
    opdb_sb_init(&in);
    make_input(&in);
    char *want = NULL;
    size_t want_n = 0;
    assert_int_equal(opdb_query_batch_text(g_db, in.p, in.n, 1, false, &want, &want_n, NULL), 0);
    for (unsigned t = 1; t <= 4; t++)
        for (size_t refuse = 1; refuse <= 5; refuse += 2) {
            src s = {in.p, in.n, 0, 4000, 9, SIZE_MAX};
            sink k;
            memset(&k, 0, sizeof k);
            opdb_sb_init(&k.out);
            k.refuse_at = refuse;
            assert_int_equal(opdb_query_stream(g_db, t, false, src_read, &s, sink_write, &k, NULL), 7);
            assert_int_equal(k.calls, refuse); /* nothing written after the refusal */
            assert_true(k.out.n < want_n);
            if (k.out.n) assert_memory_equal(k.out.p, want, k.out.n);
            opdb_sb_free(&k.out);
        }
    opdb_query_free_text(want);
    opdb_sb_free(&in);
}

static void test_failed_read_answers_what_came(void **state) {
    (void)state;
    opdb_strbuf in;
    opdb_sb_init(&in);
    make_input(&in);
    size_t fail_at = in.n / 3;
    char *want = NULL;
    size_t want_n = 0;
    assert_int_equal(opdb_query_batch_text(g_db, in.p, fail_at, 1, false, &want, &want_n, NULL), 0);
    for (unsigned t = 1; t <= 4; t += 3) {
        src s = {in.p, in.n, 0, 3000, 5, fail_at};
        sink k;
        memset(&k, 0, sizeof k);
        opdb_sb_init(&k.out);
        assert_int_equal(opdb_query_stream(g_db, t, false, src_read, &s, sink_write, &k, NULL), -OPDB_ERR_RUNTIME);
        assert_int_equal(k.out.n, want_n);
        assert_memory_equal(k.out.p, want, want_n);
        opdb_sb_free(&k.out);
    }
    opdb_query_free_text(want);
    opdb_sb_free(&in);
}

/* Hands out rounds of 1 to 4 lines, each line by a read of its own, and
 * before each round waits until every line so far has its result written
 * (as a program that waits for its answers would); a wait that lasts 5 s
 * fails the read. */
typedef struct chat {
    int next, total, round_end;
    _Atomic size_t written; /* result lines written */
    bool timed_out;
} chat;

static ptrdiff_t chat_read(void *ctx, char *buf, size_t cap) {
    chat *c = ctx;
    if (c->next == c->round_end) {
        for (int ms = 0; atomic_load(&c->written) < (size_t)c->next; ms++) {
            if (ms == 5000) {
                c->timed_out = true;
                return -1;
            }
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        if (c->next == c->total) return 0;
        c->round_end = c->next + 1 + c->next % 4;
        if (c->round_end > c->total) c->round_end = c->total;
    }
    int n = snprintf(buf, cap, "{\"id\": %d, \"op\": \"mm\", \"args\": [{\"shape\": [16, 128]}, {\"shape\": [128, 256]}]}\n",
                     c->next);
    assert_true(n > 0 && (size_t)n < cap);
    c->next++;
    return n;
}

static int chat_write(void *ctx, const char *text, size_t n) {
    chat *c = ctx;
    size_t lines = 0;
    for (size_t i = 0; i < n; i++) lines += text[i] == '\n';
    atomic_fetch_add(&c->written, lines);
    return 0;
}

static void test_lines_answered_before_more_come(void **state) {
    (void)state;
    static const unsigned threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        chat c = {0, 200, 0, 0, false};
        opdb_qstats st;
        assert_int_equal(opdb_query_stream(g_db, threads[t], false, chat_read, &c, chat_write, &c, &st), 0);
        assert_false(c.timed_out);
        assert_int_equal(atomic_load(&c.written), 200);
        assert_int_equal(st.queries, 200);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_text_any_threads_any_pieces),
        cmocka_unit_test(test_refused_write_stops),
        cmocka_unit_test(test_failed_read_answers_what_came),
        cmocka_unit_test(test_lines_answered_before_more_come),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
