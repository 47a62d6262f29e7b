/* The batch stream's line memo: the stream with the memo on (default size,
 * tiny, one that collides every key) gives the text and counts it gives
 * with the memo off, on traces of many repeats with ids in every form; the
 * memo answers repeats; messages through the handle's callback are the
 * same; and the memo itself keys lines as the result line writes ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "opdb/core.h"
#include "query/line_memo.h"
#include "query/query_internal.h"
#include "query_fixture.h"

static const char k_map[] = "operator_mappings:\n"
                            "  mm: {kernel_type: MatMulV2}\n"
                            "  add: {kernel_type: Add, query_mode: elementwise}\n"
                            "  view: {zero_cost: true}\n"
                            "  bad: {kernel_type: Bad}\n";
static const char k_mm[] = "Input Shapes,Input Data Types,Output Shapes,Output Data Types,Duration(us)\n"
                           "\"16,128;128,256\",DT_BF16;DT_BF16,\"16,256\",DT_BF16,5.0\n"
                           "\"32,128;128,256\",DT_BF16;DT_BF16,\"32,256\",DT_BF16,6.0\n"
                           "\"64,128;128,256\",DT_BF16;DT_BF16,\"64,256\",DT_BF16,9.0\n";
static const char k_add[] = "Output Shapes,Output Data Types,Duration(us)\n\"16,128\",DT_BF16,1.0\n\"64,128\",FLOAT,2.0\n";
/* its second row's cell cannot be read: skipped with one warning by default, an error result in quirks mode */
static const char k_bad[] = "Input Shapes,Input Data Types,Duration(us)\n\"4,16\",DT_BF16,1.0\nN/A,DT_BF16,2.0\n";

static char *g_dir;

static int setup(void **state) {
    (void)state;
    g_dir = qf_mkdir();
    qf_write(g_dir, "op_mapping.yaml", k_map);
    qf_write(g_dir, "MatMulV2.csv", k_mm);
    qf_write(g_dir, "Add.csv", k_add);
    qf_write(g_dir, "Bad.csv", k_bad);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    qf_rmdir(g_dir);
    return 0;
}

typedef struct msgs {
    opdb_strbuf text;
    pthread_mutex_t mu;
} msgs;

static void collect(void *ctx, const char *line) {
    msgs *m = ctx;
    pthread_mutex_lock(&m->mu);
    opdb_sb_adds(&m->text, line);
    opdb_sb_addc(&m->text, '\n');
    pthread_mutex_unlock(&m->mu);
}

static opdb_qdb *open_db(size_t memo, bool quirks, msgs *m) {
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    o.reference_quirks = quirks;
    o.tp_size = 1;
    o.line_memo = memo;
    o.warn = m ? collect : qf_quiet;
    o.warn_ctx = m;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_qdb *db = opdb_qdb_open(g_dir, &o, &err);
    assert_non_null(db);
    return db;
}

/* the query part of a line (no id, no braces): a few bodies, each in two spacings */
static const char *const k_body[] = {
    "\"op\": \"mm\", \"args\": [{\"shape\": [16, 128]}, {\"shape\": [128, 256]}]",
    "\"op\":\"mm\",\"args\":[{\"shape\":[16,128]},{\"shape\":[128,256]}]",
    "\"op\": \"mm\", \"args\": [{\"shape\": [48, 128]}, {\"shape\": [128, 256]}]",
    "\"op\": \"mm\", \"args\": [{\"shape\": [100, 128]}, {\"shape\": [128, 256]}]",
    "\"op\": \"add\", \"out\": {\"shape\": [16, 128], \"dtype\": \"bfloat16\"}",
    "\"op\":\"add\",\"out\":{\"shape\":[64,128],\"dtype\":\"float32\"}",
    "\"op\": \"view\"",
    "\"op\": \"nope\"",
    "\"op\": \"bad\", \"args\": [{\"shape\": [4, 16]}]",
    "\"kernel\": \"MatMulV2\", \"inputs\": [{\"shape\": [16, 128], \"dtype\": \"DT_BF16\"}, {\"shape\": [128, 256], "
    "\"dtype\": \"DT_BF16\"}]",
    "\"op\": \"mm\", \"args\": [{\"shape\": [16, 128]}, {\"shape\": [128, 256]}], \"kwargs\": {\"x\": \"a\\\"id\\\": 5\"}",
    "\"op\": \"mm\", \"kwargs\": {\"id\": 4}, \"args\": [{\"shape\": [16, 128]}, {\"shape\": [128, 256]}]",
};
#define NBODY (sizeof k_body / sizeof *k_body)

/* an id in one of its forms, as JSON text (v: a number from the trace) */
static void id_text(opdb_strbuf *o, unsigned form, uint32_t v) {
    switch (form) {
    case 0: opdb_sb_addf(o, "%u", v % 50); break;
    case 1: opdb_sb_addf(o, "-%u", 1 + v % 50); break;
    case 2: opdb_sb_adds(o, "0"); break;
    case 3: opdb_sb_adds(o, "-0"); break;
    case 4: opdb_sb_addf(o, "1234567890123456789%u", v % 10); break;        /* 20 digits */
    case 5: opdb_sb_addf(o, "%u23456789012345678", 1 + v % 9); break;      /* 18 digits */
    case 6: opdb_sb_addf(o, "-%u23456789012345678", 1 + v % 9); break;
    case 7: opdb_sb_addf(o, "%u.0", v % 5); break;
    case 8: opdb_sb_addf(o, "%ue3", 1 + v % 5); break;
    case 9: opdb_sb_addf(o, "\"q%u\"", v % 20); break;
    case 10: opdb_sb_addf(o, "\"a\\\"b%u\"", v % 3); break;               /* escaped quote */
    case 11: opdb_sb_addf(o, "\"\\u00e9%u\"", v % 3); break;             /* escape of a non-ASCII letter */
    case 12: opdb_sb_addf(o, "\"\xc3\xa9%u\"", v % 3); break;            /* raw UTF-8 */
    case 13: opdb_sb_adds(o, "null"); break;
    case 14: opdb_sb_addf(o, "\"tab\\t%u\"", v % 3); break;
    case 15: opdb_sb_addf(o, "\"/%u~\"", v % 3); break;
    case 16: opdb_sb_addf(o, "00%u", v % 3); break;                     /* not JSON */
    case 17: opdb_sb_addf(o, "[%u]", v % 3); break;
    default: opdb_sb_addf(o, "%u", v % 7); break;
    }
}
#define NFORM 19

/* Lines of many repeats: bodies with ids in every form and place (absent,
 * first, middle, last, twice, spaces around the colon), bad lines, blank lines. */
static void make_trace(opdb_strbuf *in, uint32_t seed, int lines) {
    uint32_t r = seed;
    for (int i = 0; i < lines; i++) {
        r = r * 1664525u + 1013904223u;
        const char *body = k_body[(r >> 8) % NBODY];
        unsigned form = (r >> 12) % NFORM, place = (r >> 17) % 9;
        uint32_t v = r >> 20;
        opdb_strbuf id;
        opdb_sb_init(&id);
        id_text(&id, form, v);
        switch (place) {
        case 0: opdb_sb_addf(in, "{%s}", body); break;
        case 1: opdb_sb_addf(in, "{\"id\": %s, %s}", id.p, body); break;
        case 2: /* the middle: after the first member */
            opdb_sb_addf(in, "{%.*s, \"id\": %s%s}", (int)(strchr(body, ',') ? strchr(body, ',') - body : 0), body,
                         id.p, strchr(body, ',') ? strchr(body, ',') : body);
            break;
        case 3: opdb_sb_addf(in, "{%s, \"id\" :  %s }", body, id.p); break;
        case 4: opdb_sb_addf(in, "{%s,\"id\":%s}", body, id.p); break;
        case 5: opdb_sb_addf(in, "{\"id\": %u, %s, \"id\": %s}", v % 2, body, id.p); break; /* twice */
        case 6: opdb_sb_addf(in, "{\"id\": %s, %s, \"id\": %u}", id.p, body, v % 2); break;
        case 7: opdb_sb_addf(in, (r >> 25) % 2 ? "not json %u" : "{\"id\": %u, \"op\": ", v % 4); break;
        default: opdb_sb_addf(in, "{%s, \"id\": %s}", body, id.p);
        }
        opdb_sb_free(&id);
        opdb_sb_adds(in, (r >> 27) % 8 == 0 ? "\r\n" : (r >> 27) % 8 == 1 ? "\n\n" : "\n");
    }
}

typedef struct src {
    const char *p;
    size_t n, at;
} src;

static ptrdiff_t src_read(void *ctx, char *buf, size_t cap) {
    src *s = ctx;
    size_t k = s->n - s->at < cap ? s->n - s->at : cap;
    if (k > 3000) k = 3000; /* many blocks */
    memcpy(buf, s->p + s->at, k);
    s->at += k;
    return (ptrdiff_t)k;
}

static int sb_write(void *ctx, const char *text, size_t n) {
    opdb_sb_add(ctx, text, n);
    return 0;
}

static void stream(opdb_qdb *db, const opdb_strbuf *in, unsigned threads, opdb_strbuf *out, opdb_qstats *st) {
    src s = {in->p, in->n, 0};
    opdb_sb_init(out);
    assert_int_equal(opdb_query_stream(db, threads, false, src_read, &s, sb_write, out, st), 0);
}

static void stats_equal(const opdb_qstats *a, const opdb_qstats *b) {
    assert_int_equal(a->queries, b->queries);
    assert_int_equal(a->measured, b->measured);
    assert_int_equal(a->interpolated, b->interpolated);
    assert_int_equal(a->partial, b->partial);
    assert_int_equal(a->miss, b->miss);
    assert_int_equal(a->error, b->error);
    assert_int_equal(a->unsupported, b->unsupported);
    assert_int_equal(a->skipped_rows, b->skipped_rows);
    assert_int_equal(a->skipped_files, b->skipped_files);
}

/* memo on (default, small, tiny) against off, threads 1, 2 and 4, both modes */
static void test_memo_same_text(void **state) {
    (void)state;
    opdb_strbuf in;
    opdb_sb_init(&in);
    make_trace(&in, 7, 6000);
    for (int quirks = 0; quirks < 2; quirks++) {
        msgs m0 = {{0}, PTHREAD_MUTEX_INITIALIZER};
        opdb_qdb *off = open_db(0, quirks, &m0);
        opdb_strbuf want;
        opdb_qstats ws;
        stream(off, &in, 1, &want, &ws);
        assert_true(ws.queries > 5000 && ws.error > 100 && ws.measured > 500 && ws.miss > 100);
        assert_int_equal(off->line_memo_hits, 0);
        static const size_t sizes[] = {OPDB_LINE_MEMO_DEFAULT, 8192, 1024, 1};
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
            for (unsigned t = 1; t <= 4; t *= 2) {
                msgs m = {{0}, PTHREAD_MUTEX_INITIALIZER};
                opdb_qdb *on = open_db(sizes[z], quirks, &m);
                opdb_strbuf got;
                opdb_qstats gs;
                stream(on, &in, t, &got, &gs);
                assert_int_equal(got.n, want.n);
                assert_memory_equal(got.p, want.p, want.n);
                stats_equal(&gs, &ws);
                /* the messages: the same ones, each once */
                assert_int_equal(m.text.n, m0.text.n);
                if (m0.text.n) assert_memory_equal(m.text.p, m0.text.p, m0.text.n);
                /* the default memo answers most repeats; the tiny ones fewer or none */
                if (z == 0) assert_true(on->line_memo_hits > 1000);
                if (z == 1) assert_true(on->line_memo_hits > 0);
                /* a second batch on the same handle: the same again (the memo is the batch's) */
                opdb_strbuf again;
                stream(on, &in, t, &again, &gs);
                assert_int_equal(again.n, want.n);
                assert_memory_equal(again.p, want.p, want.n);
                opdb_sb_free(&again);
                opdb_sb_free(&got);
                opdb_sb_free(&m.text);
                opdb_qdb_close(on);
            }
        if (!quirks) {
            assert_non_null(m0.text.p);
            assert_non_null(strstr(m0.text.p, "Bad.csv:3"));
        }
        opdb_sb_free(&want);
        opdb_sb_free(&m0.text);
        opdb_qdb_close(off);
    }
    opdb_sb_free(&in);
}

/* a repeat of a warning line: the warning comes once, with the memo on or off */
static void test_memo_messages(void **state) {
    (void)state;
    static const char *const lines[] = {
        "{\"op\": \"bad\", \"args\": [{\"shape\": [4, 16]}], \"id\": 1}\n",
        "{\"op\": \"bad\", \"args\": [{\"shape\": [4, 16]}], \"id\": 2}\n",
        "{\"op\": \"bad\", \"args\": [{\"shape\": [4, 16]}], \"id\": 3}\n",
    };
    opdb_strbuf in;
    opdb_sb_init(&in);
    for (int k = 0; k < 30; k++) opdb_sb_adds(&in, lines[k % 3]);
    opdb_strbuf text[2];
    msgs m[2];
    for (int on = 0; on < 2; on++) {
        m[on] = (msgs){{0}, PTHREAD_MUTEX_INITIALIZER};
        opdb_qdb *db = open_db(on ? OPDB_LINE_MEMO_DEFAULT : 0, false, &m[on]);
        opdb_qstats st;
        stream(db, &in, 1, &text[on], &st);
        if (on) assert_true(db->line_memo_hits > 20);
        opdb_qdb_close(db);
    }
    assert_int_equal(text[0].n, text[1].n);
    assert_memory_equal(text[0].p, text[1].p, text[0].n);
    assert_non_null(m[0].text.p);
    assert_int_equal(m[0].text.n, m[1].text.n);
    assert_memory_equal(m[0].text.p, m[1].text.p, m[0].text.n);
    for (int on = 0; on < 2; on++) {
        opdb_sb_free(&text[on]);
        opdb_sb_free(&m[on].text);
    }
    opdb_sb_free(&in);
}

/* the memo's own keys: where the id is cut, and how */
static void key_is(const char *line, int kind, const char *id) {
    q_lmemo_line k;
    q_lmemo_key(line, strlen(line), &k);
    assert_int_equal(k.kind, kind);
    if (kind == Q_LM_FULL) {
        assert_int_equal(k.at, strlen(line));
        return;
    }
    assert_int_equal(k.end - k.at, strlen(id));
    assert_memory_equal(line + k.at, id, strlen(id));
}

static void test_memo_keys(void **state) {
    (void)state;
    key_is("{\"op\": \"x\", \"id\": 12}", Q_LM_INT, "12");
    key_is("{\"op\":\"x\",\"id\":-7}", Q_LM_INT, "-7");
    key_is("{\"op\":\"x\",\"id\":0}", Q_LM_INT, "0");
    key_is("{\"id\" : 123456789012345678 }", Q_LM_INT, "123456789012345678");
    key_is("{\"op\":\"x\",\"id\":\"ab c/~\"}", Q_LM_STR, "\"ab c/~\"");
    key_is("{\"op\":\"x\",\"id\":\"\"}", Q_LM_STR, "\"\"");
    /* first or in the middle: when it is the line's only "id" and the line has no backslash */
    key_is("{\"id\":1,\"op\":\"x\"}", Q_LM_INT, "1");
    key_is("{ \"id\" : \"q 1\" , \"op\":\"x\"}", Q_LM_STR, "\"q 1\"");
    key_is("{\"op\":\"x\", \"id\": -3, \"args\": []}", Q_LM_INT, "-3");
    /* (a nested one too: the result, whose id is then null, keeps it from being filed) */
    key_is("{\"op\":\"x\",\"k\":{\"id\":1}}", Q_LM_INT, "1");
    /* (and a line that is not JSON: its answer, an error, is never filed) */
    key_is("{\"op\":\"x\",\"id\":1}x", Q_LM_INT, "1");
    /* written otherwise in the result, or not the query's id: the whole line is the key */
    static const char *const whole[] = {
        "{\"op\":\"x\",\"id\":-0}",        "{\"op\":\"x\",\"id\":1234567890123456789}",
        "{\"op\":\"x\",\"id\":1.0}",       "{\"op\":\"x\",\"id\":1e3}",
        "{\"op\":\"x\",\"id\":01}",        "{\"op\":\"x\",\"id\":\"a\\\"b\"}",
        "{\"op\":\"x\",\"id\":\"\\u00e9\"}", "{\"op\":\"x\",\"id\":\"\xc3\xa9\"}",
        "{\"op\":\"x\",\"id\":null}",      "{\"op\":\"x\",\"id\":[1]}",
        "{\"id\":1,\"op\":\"x\",\"id\":2 ,\"a\":1}", "{\"id\":1,\"op\":\"x\\u0069\"}",
        "{\"op\":\"x\",\"k\\\"id\":1}",     "{\"op\":\"x\",\"id\":1.0,\"a\":1}",
        "{\"op\":\"id\",\"a\":1}",           "{\"op\":[\"id\", 1]}",
        "{\"id\":\"id\",\"op\":\"x\"}",      "{\"id\":1.5,\"op\":\"x\"}",
        "{\"op\":\"x\",\"id\":\"a\x7f\"}", "{\"op\":\"x\"}",
    };
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++) key_is(whole[i], Q_LM_FULL, NULL);
}

/* every key colliding: lookups still compare keys whole, and the id and its place are part of the key */
static void test_memo_collisions(void **state) {
    (void)state;
    for (int masked = 0; masked < 2; masked++) {
        q_lmemo *m = q_lmemo_new(1 << 20); /* doorkeeper slots enough that few of the 40 keys meet */
        if (masked) q_lmemo_test_hash_mask(m, 0);
        char line[128], res[128];
        int admits = 0;
        for (int round = 0; round < 4; round++)
            for (int i = 0; i < 40; i++) {
                snprintf(line, sizeof line, "{\"op\": \"k%d\", \"id\": %d}", i, 100 + round);
                q_lmemo_line k;
                q_lmemo_key(line, strlen(line), &k);
                opdb_strbuf out;
                opdb_sb_init(&out);
                uint8_t cls = 9;
                bool admit = false;
                bool hit = q_lmemo_get(m, &k, &out, &cls, &admit);
                assert_int_equal(hit, round == 3); /* filed on its third sight */
                if (hit) {
                    snprintf(res, sizeof res, "{\"id\": %d, \"r\": %d}\n", 100 + round, i);
                    assert_string_equal(out.p, res);
                    assert_int_equal(cls, i % 5);
                } else if (round == 2) {
                    /* (keys that share a doorkeeper slot are forgotten or, with colliding hashes, pass early) */
                    admits += admit;
                    snprintf(res, sizeof res, "{\"id\": %d, \"r\": %d}\n", 100 + round, i);
                    q_lmemo_put(m, &k, res, strlen(res), (uint8_t)(i % 5));
                } else if (!masked) {
                    assert_false(admit); /* a first or second sight */
                }
                opdb_sb_free(&out);
            }
        assert_int_equal(q_lmemo_entries(m), 40);
        assert_true(admits >= 30);
        /* the same bytes but for where the id was cut, or how it is written: other keys */
        static const char *const other[] = {"{\"op\": \"k1\", \"id\":\"7\"}", "{\"op\": \"k1\", \"id\":7 }",
                                            "{\"op\": \"k1\", \"id\": -7}", "{\"op\": \"k1\", \"id\": }"};
        for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
            q_lmemo_line k;
            q_lmemo_key(other[i], strlen(other[i]), &k);
            opdb_strbuf out;
            opdb_sb_init(&out);
            uint8_t cls;
            bool admit;
            bool hit = q_lmemo_get(m, &k, &out, &cls, &admit);
            assert_int_equal(hit, i == 2); /* -7: an integer in the same place */
            opdb_sb_free(&out);
        }
        /* a result that does not echo the id as the line writes it is not filed */
        const char *line2 = "{\"op\": \"z\", \"id\": 5}";
        q_lmemo_line k;
        q_lmemo_key(line2, strlen(line2), &k);
        q_lmemo_put(m, &k, "{\"id\": 6, \"r\": 0}\n", 18, 0);
        q_lmemo_put(m, &k, "{\"id\": 55, \"r\": 0}\n", 19, 0);
        assert_int_equal(q_lmemo_entries(m), 40);
        q_lmemo_free(m);
    }
    /* a memo too small for any entry refuses them all */
    q_lmemo *m = q_lmemo_new(64);
    const char *line = "{\"op\": \"z\", \"id\": 5}";
    q_lmemo_line k;
    q_lmemo_key(line, strlen(line), &k);
    q_lmemo_put(m, &k, "{\"id\": 5, \"r\": 0}\n", 17, 0);
    assert_int_equal(q_lmemo_entries(m), 0);
    q_lmemo_free(m);
    assert_null(q_lmemo_new(0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memo_keys),
        cmocka_unit_test(test_memo_collisions),
        cmocka_unit_test(test_memo_messages),
        cmocka_unit_test(test_memo_same_text),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
