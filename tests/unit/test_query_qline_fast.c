/* The query line's fast JSON reader against yajl, differentially: on every
 * query line of the golden cases and of the fuzz corpus, and on variants of
 * them (every truncation, bytes replaced by JSON's structural and awkward
 * characters), whenever the fast reader accepts a line, yajl accepts it too
 * and delivers the same events with the same bytes; and the value tree the
 * query reader builds (fast path first) renders as the yajl-only tree does,
 * with the same error message when the line is bad. The query read from the
 * line (the direct form first) is the one read through yajl's value tree:
 * same id, op and canonical values, or the same error. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "query/qline_fast.h"
#include "query/query_internal.h"

/* ---- an event trace: one line per callback */
typedef struct trace {
    opdb_strbuf sb;
} trace;

static void ev(trace *t, const char *tag, const char *p, size_t n) {
    opdb_sb_adds(&t->sb, tag);
    opdb_sb_addf(&t->sb, "%zu:", n);
    if (n) opdb_sb_add(&t->sb, p, n);
    opdb_sb_addc(&t->sb, '\n');
}
static int t_null(void *c) { return ev(c, "N", "", 0), 1; }
static int t_bool(void *c, int b) { return ev(c, b ? "T" : "F", "", 0), 1; }
static int t_num(void *c, const char *s, size_t n) { return ev(c, "n", s, n), 1; }
static int t_str(void *c, const unsigned char *s, size_t n) { return ev(c, "s", (const char *)s, n), 1; }
static int t_key(void *c, const unsigned char *s, size_t n) { return ev(c, "k", (const char *)s, n), 1; }
static int t_om(void *c) { return ev(c, "{", "", 0), 1; }
static int t_em(void *c) { return ev(c, "}", "", 0), 1; }
static int t_oa(void *c) { return ev(c, "[", "", 0), 1; }
static int t_ea(void *c) { return ev(c, "]", "", 0), 1; }
static const yajl_callbacks k_rec = {t_null, t_bool, NULL, NULL, t_num, t_str, t_om, t_key, t_em, t_oa, t_ea};

static size_t n_checked, n_fast, n_direct;

/* what a parsed query is: its error, or its id, op and canonical values */
static void query_print(opdb_arena *a, const char *line, size_t n, int mode, opdb_strbuf *o) {
    q_query q;
    const char *code = NULL;
    char msg[512];
    msg[0] = 0;
    int rc = q_parse_line_mode(a, line, n, mode, &q, &code, msg, sizeof msg);
    if (rc) {
        opdb_sb_addf(o, "error %s: %s", code, msg);
        return;
    }
    opdb_sb_adds(o, "id=");
    size_t id_at = o->n;
    if (q.id) q_render_value(q.id, o);
    else opdb_sb_adds(o, "absent");
    /* the id's text kept from the line is the value written back */
    if (q.id_text && (o->n - id_at != q.id_len || memcmp(o->p + id_at, q.id_text, q.id_len) != 0))
        fail_msg("the id's text %.*s is written back as %.*s", (int)q.id_len, q.id_text, (int)(o->n - id_at), o->p + id_at);
    opdb_sb_addf(o, " op=%s kernel=%s out=%d key=", q.op ? q.op : "-", q.kernel ? q.kernel : "-", q.out != NULL);
    static uint8_t key[1 << 16];
    size_t kn = q_cache_key(&q, key, sizeof key);
    for (size_t i = 0; i < kn; i++) opdb_sb_addf(o, "%02x", key[i]);
    if (!q.kernel) {
        opdb_sb_adds(o, " args=");
        q_render_value(q.args, o);
        opdb_sb_adds(o, " out=");
        q_render_value(q.out, o);
    }
}

/* the query the line gives: as the direct form reads it, as yajl's tree does */
static void check_query(const char *line, size_t n) {
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    opdb_strbuf p1, p2;
    opdb_sb_init(&p1);
    opdb_sb_init(&p2);
    query_print(&a, line, n, Q_JSON_AUTO, &p1);
    query_print(&a, line, n, Q_JSON_YAJL, &p2);
    opdb_sb_addc(&p1, 0);
    opdb_sb_addc(&p2, 0);
    if (strcmp(p1.p, p2.p) != 0) fail_msg("the query read differs on: %.*s\nauto: %s\nyajl: %s", (int)n, line, p1.p, p2.p);
    opdb_sb_free(&p1);
    opdb_sb_free(&p2);
    opdb_arena_free(&a);
}

/* One line through both readers. */
static void check_line(const char *line, size_t n) {
    trace ty, tf;
    opdb_sb_init(&ty.sb);
    opdb_sb_init(&tf.sb);
    yajl_handle h = yajl_alloc(&k_rec, NULL, &ty);
    yajl_status st = yajl_parse(h, (const unsigned char *)line, n);
    if (st == yajl_status_ok) st = yajl_complete_parse(h);
    yajl_free(h);
    int fast = q_json_fast(&k_rec, &tf, line, n);
    n_checked++;
    if (fast) {
        n_fast++;
        if (st != yajl_status_ok || ty.sb.n != tf.sb.n || memcmp(ty.sb.p, tf.sb.p, ty.sb.n) != 0)
            fail_msg("fast reader and yajl differ on: %.*s\nyajl %s:\n%s\nfast:\n%s", (int)n, line,
                     st == yajl_status_ok ? "ok" : "error", ty.sb.p ? ty.sb.p : "", tf.sb.p ? tf.sb.p : "");
    }
    /* the trees the query reader builds, and their messages */
    opdb_arena a;
    opdb_arena_init(&a, 4096);
    char m1[512] = "", m2[512] = "";
    qv *auto_v = q_parse_json(&a, line, n, Q_JSON_AUTO, m1, sizeof m1);
    qv *yajl_v = q_parse_json(&a, line, n, Q_JSON_YAJL, m2, sizeof m2);
    assert_int_equal(auto_v == NULL, yajl_v == NULL);
    assert_string_equal(m1, m2);
    if (auto_v) {
        opdb_strbuf r1, r2;
        opdb_sb_init(&r1);
        opdb_sb_init(&r2);
        q_render_value(auto_v, &r1);
        q_render_value(yajl_v, &r2);
        opdb_sb_addc(&r1, 0);
        opdb_sb_addc(&r2, 0);
        assert_string_equal(r1.p, r2.p);
        opdb_sb_free(&r1);
        opdb_sb_free(&r2);
    }
    opdb_arena_free(&a);
    opdb_sb_free(&ty.sb);
    opdb_sb_free(&tf.sb);
    check_query(line, n);
}

/* The line, every prefix of it, and copies with one byte replaced. */
static void check_variants(const char *line, size_t n) {
    static const char subs[] = {'{', '}', '[', ']', ',', ':', '"', '\\', '0', '-', '.', 'e', ' ', '\t', '\v', 'x', 0, '\x80'};
    check_line(line, n);
    for (size_t k = 0; k < n; k++) check_line(line, k);
    char *v = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        memcpy(v, line, n);
        for (size_t s = 0; s < sizeof subs; s++) {
            v[i] = subs[s];
            check_line(v, n);
        }
    }
    free(v);
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) opdb_sb_add(&sb, buf, got);
    fclose(f);
    *n = sb.n;
    opdb_sb_reserve(&sb, 1);
    return sb.p;
}

/* every line of a file (variants for the first `variants` of them) */
static size_t check_file(const char *path, size_t variants) {
    size_t n, lines = 0;
    char *text = slurp(path, &n);
    if (!text) return 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(text + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - text) : n;
        if (e > i) {
            opdb_arena a;
            opdb_arena_init(&a, 4096);
            q_query q;
            const char *code;
            char msg[64];
            if (q_parse_line_mode(&a, text + i, e - i, Q_JSON_DIRECT, &q, &code, msg, sizeof msg) == 0) n_direct++;
            opdb_arena_free(&a);
            if (lines < variants) check_variants(text + i, e - i);
            else check_line(text + i, e - i);
            lines++;
        }
        i = e + 1;
    }
    free(text);
    return lines;
}

static char *tests_dir(void) {
    char *d = malloc(strlen(OPDB_TESTS_DIR) + 1);
    strcpy(d, OPDB_TESTS_DIR);
    return d;
}

static void test_golden_and_corpus_lines(void **state) {
    (void)state;
    char *root = tests_dir();
    char path[4096];
    size_t lines = 0;
    n_checked = n_fast = n_direct = 0;
    snprintf(path, sizeof path, "%s/cli", root);
    DIR *d = opendir(path);
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d));) {
        if (strncmp(de->d_name, "query_", 6) != 0) continue;
        snprintf(path, sizeof path, "%s/cli/%s/in/queries.jsonl", root, de->d_name);
        lines += check_file(path, 1);
    }
    closedir(d);
    snprintf(path, sizeof path, "%s/fuzz/corpus/query_line", root);
    d = opendir(path);
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/fuzz/corpus/query_line/%s", root, de->d_name);
        lines += check_file(path, 1000);
    }
    closedir(d);
    free(root);
    /* the inputs were found, and the fast reader took part of them (not only handed over) */
    assert_true(lines > 100);
    assert_true(n_fast > lines / 2);
    assert_true(n_direct > lines / 2);
    print_message("%zu lines, %zu checks, %zu read by the fast reader, %zu in the direct form\n", lines, n_checked,
                  n_fast, n_direct);
}

/* Lines the fast reader must hand over to yajl, and lines it must take. */
static void test_hand_over(void **state) {
    (void)state;
    static const char *const over[] = {
        "{\"op\": \"a\\u00e9\"}", "{\"op\": \"\xc3\xa9\"}", "[1]", "5", "{\"a\": 01}", "{\"a\": 1.}", "{\"a\": .5}",
        "{\"a\": -}", "{\"a\": 1e}", "{\"a\": tru}", "{\"a\": 1,}", "{,}", "{\"a\" 1}", "{\"a\": 1} x", "{\"a\": 1}{}",
        "{\"a\":\v1}", "", "{", "{\"a\": [1, 2}", "{\"a\": \"x\ty\"}", "{\"a\": nul}", "{\"a\": [,]}",
    };
    static const char *const take[] = {
        "{}", " {\"a\": []} ", "{\"a\": [1, -2.5e+3, 0, 0.0, -0, 1E5, true, false, null, \"\", {\"b\": {}}]}",
        "{\"op\": \"aten.mm.default\", \"args\": [{\"shape\": [2, 3], \"dtype\": \"bfloat16\"}], \"id\": 7}",
        "{\"a\": 1, \"a\": 2}", "{\"a\":1}\r\n",
    };
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
        trace t;
        opdb_sb_init(&t.sb);
        if (q_json_fast(&k_rec, &t, over[i], strlen(over[i]))) fail_msg("the fast reader took: %s", over[i]);
        opdb_sb_free(&t.sb);
        check_line(over[i], strlen(over[i]));
    }
    for (size_t i = 0; i < sizeof take / sizeof take[0]; i++) {
        trace t;
        opdb_sb_init(&t.sb);
        if (!q_json_fast(&k_rec, &t, take[i], strlen(take[i]))) fail_msg("the fast reader handed over: %s", take[i]);
        opdb_sb_free(&t.sb);
        check_line(take[i], strlen(take[i]));
    }
    /* nesting deeper than the reader's limit goes to yajl, which words it */
    char deep[300] = "{\"a\": ";
    size_t n = strlen(deep);
    for (int i = 0; i < 100; i++) deep[n++] = '[';
    for (int i = 0; i < 100; i++) deep[n++] = ']';
    deep[n++] = '}';
    trace t;
    opdb_sb_init(&t.sb);
    assert_int_equal(q_json_fast(&k_rec, &t, deep, n), 0);
    opdb_sb_free(&t.sb);
    check_line(deep, n);
}

/* Lines the direct form must hand over to the general reader, and lines it must take. */
static void test_direct_form(void **state) {
    (void)state;
    static const char *const over[] = {
        "{\"op\": \"a\", \"args\": [{\"shape\": [2], \"dtype\": \"bfloat16\", \"values\": [1, 2]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [-0]}]}", "{\"op\": \"a\", \"args\": [{\"shape\": [1.0]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [123456789012345678]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [01]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [2], \"dtype\": \"float99\"}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [2], \"shape\": [3]}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [2], \"dtype\": 5}]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": 2}]}", "{\"op\": \"a\", \"args\": [{\"dtype_value\": \"float32\"}]}",
        "{\"op\": \"a\", \"args\": [{}]}", "{\"op\": \"a\", \"kwargs\": {\"dim\": 1}}",
        "{\"op\": \"a\", \"args\": null}", "{\"op\": \"a\", \"args\": {}}", "{\"op\": 5}", "{\"id\": 1}", "{}",
        "{\"op\": \"a\", \"op\": \"b\"}", "{\"op\": \"a\", \"note\": 1}", "{\"kernel\": \"MatMulV2\", \"inputs\": []}",
        "{\"op\": \"a\", \"id\": {\"shape\": [1]}}", "{\"op\": \"a\\u0062\"}", "{\"op\": \"a\"} x",
        "{\"op\": \"a\", \"args\": [1,]}", "{\"op\": \"a\",}", "[{\"op\": \"a\"}]",
    };
    static const char *const take[] = {
        "{\"op\":\"aten.mm.default\",\"args\":[{\"shape\":[512,4096],\"dtype\":\"bfloat16\"},{\"shape\":[4096,18432],"
        "\"dtype\":\"bfloat16\"}],\"out\":{\"shape\":[512,18432],\"dtype\":\"bfloat16\"},\"id\":0}",
        " { \"id\" : \"x\" , \"op\" : \"torch.ops.aten.view.default\" , \"args\" : [ { \"dtype\" : null , \"shape\" : [ ] } ,"
        " [ 16 , -32 , 1.5e3 , true , false , null , \"s\" , [ ] ] ] , \"out\" : null , \"kwargs\" : { } }\r\n",
        "{\"op\": \"a\", \"args\": [{\"shape\": [0, 12345678901234567]}], \"out\": [{\"shape\": [1]}], \"id\": -7}",
        "{\"op\": \"a\", \"id\": [1, [2.5, \"z\"]], \"args\": [99999999999999999999, -0, 0.0]}",
        "{\"op\": \"a\", \"args\": [{\"shape\": [2], \"dtype\": \"torch.float32\"}], \"out\": {\"dtype\": \"int64\", \"shape\": [3]}}",
    };
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
        opdb_arena a;
        opdb_arena_init(&a, 4096);
        q_query q;
        const char *code;
        char msg[64];
        if (q_parse_line_mode(&a, over[i], strlen(over[i]), Q_JSON_DIRECT, &q, &code, msg, sizeof msg) == 0)
            fail_msg("the direct form took: %s", over[i]);
        opdb_arena_free(&a);
        check_line(over[i], strlen(over[i]));
    }
    for (size_t i = 0; i < sizeof take / sizeof take[0]; i++) {
        opdb_arena a;
        opdb_arena_init(&a, 4096);
        q_query q;
        const char *code;
        char msg[64];
        if (q_parse_line_mode(&a, take[i], strlen(take[i]), Q_JSON_DIRECT, &q, &code, msg, sizeof msg) != 0)
            fail_msg("the direct form handed over: %s", take[i]);
        opdb_arena_free(&a);
        check_variants(take[i], strlen(take[i]));
    }
}

/* ---- random lines: the query form and everything near it */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnd(rng *g) {
    g->s ^= g->s << 13;
    g->s ^= g->s >> 7;
    g->s ^= g->s << 17;
    return g->s;
}
static unsigned rn(rng *g, unsigned n) { return (unsigned)(rnd(g) % n); }

typedef struct gen {
    rng g;
    opdb_strbuf o;
    bool spaced; /* ", " and ": " separators (json.dumps' default) instead of none */
} gen;

static void g_sep(gen *x, char c) {
    opdb_sb_addc(&x->o, c);
    if (x->spaced || rn(&x->g, 50) == 0) opdb_sb_adds(&x->o, rn(&x->g, 20) ? " " : "\t \r\n");
}

static void g_str(gen *x) {
    static const char *const pieces[] = {"aten", ".", "mm", "default", "bfloat16", "float32", "x", "shape", "dtype",
                                         "\\n", "\\\"", "\\\\", "\\/", "\\u00e9", "\\ud83d\\ude00", "\xc3\xa9",
                                         "\xf0\x9f\x98\x80", "\x7f", " ", "op", "torch.ops.", "\\u0000", "_"};
    opdb_sb_addc(&x->o, '"');
    unsigned k = rn(&x->g, 4);
    for (unsigned i = 0; i < k; i++) {
        unsigned p = rn(&x->g, sizeof pieces / sizeof pieces[0]);
        /* escapes and non-ASCII bytes now and then: plain names are the common case */
        if (p >= 9 && p < 18 && rn(&x->g, 4)) p = 0;
        opdb_sb_adds(&x->o, pieces[p]);
    }
    opdb_sb_addc(&x->o, '"');
}

static void g_num(gen *x) {
    static const char *const nums[] = {"0", "1", "-1", "7", "512", "4096", "18432", "-0", "0.0", "1.5", "-2.5e+3",
                                       "1E5", "1e-7", "12345678901234567", "123456789012345678",
                                       "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                       "99999999999999999999", "1234567", "-7654321", "12345678", "-12345678",
                                       "1234567.5", "7e3", "-1234567E2", "01", "1.", ".5", "-", "1e", "2.0e",
                                       "00", "-01", "0123456"};
    unsigned k = rn(&x->g, sizeof nums / sizeof nums[0]);
    if (k >= 26 && rn(&x->g, 3)) k = 3; /* malformed numbers now and then */
    opdb_sb_adds(&x->o, nums[k]);
}

static void g_value(gen *x, int depth);

/* a run of 1 to 19 digits: both sides of the readers' 8-byte and 18-digit steps */
static void g_digits(gen *x) {
    unsigned nd = 1 + rn(&x->g, 19);
    for (unsigned i = 0; i < nd; i++) opdb_sb_addc(&x->o, (char)('0' + ((i || rn(&x->g, 6) == 0) ? rn(&x->g, 10) : 1 + rn(&x->g, 9))));
}

static void g_shape(gen *x) {
    opdb_sb_addc(&x->o, '[');
    unsigned rank = rn(&x->g, 5);
    for (unsigned i = 0; i < rank; i++) {
        if (i) g_sep(x, ',');
        if (rn(&x->g, 12) == 0) g_num(x);
        else if (rn(&x->g, 8) == 0) g_digits(x); /* 1 to 19 digits, a leading zero now and then */
        else opdb_sb_addf(&x->o, "%u", (unsigned)(rnd(&x->g) % (rn(&x->g, 2) ? 20000 : 10)));
    }
    opdb_sb_addc(&x->o, ']');
}

static void g_tensor(gen *x) {
    static const char *const dts[] = {"\"bfloat16\"", "\"float32\"", "\"torch.float16\"", "\"int64\"", "null",
                                      "\"float99\"", "\"bool\"", "\"half\"", "5", "\"bfloat16x\""};
    opdb_sb_addc(&x->o, '{');
    bool dtype_first = rn(&x->g, 8) == 0, no_dtype = rn(&x->g, 10) == 0;
    unsigned extra = rn(&x->g, 12); /* a values member, a shape twice, or none */
    for (int part = 0; part < 2; part++) {
        bool shape = (part == 0) != dtype_first;
        if (!shape && no_dtype) continue;
        if (part && !(dtype_first && no_dtype)) g_sep(x, ',');
        if (shape) {
            opdb_sb_adds(&x->o, "\"shape\"");
            g_sep(x, ':');
            if (rn(&x->g, 30) == 0) g_num(x);
            else g_shape(x);
        } else {
            opdb_sb_adds(&x->o, "\"dtype\"");
            g_sep(x, ':');
            unsigned k = rn(&x->g, sizeof dts / sizeof dts[0]);
            opdb_sb_adds(&x->o, rn(&x->g, 2) ? dts[0] : dts[k]);
        }
    }
    if (extra == 0) {
        g_sep(x, ',');
        opdb_sb_adds(&x->o, "\"values\"");
        g_sep(x, ':');
        g_value(x, 3);
    } else if (extra == 1) {
        g_sep(x, ',');
        opdb_sb_adds(&x->o, "\"shape\"");
        g_sep(x, ':');
        g_shape(x);
    }
    opdb_sb_addc(&x->o, '}');
}

static void g_dict(gen *x, int depth) {
    static const char *const keys[] = {"\"dim\"", "\"a\"", "\"keepdim\"", "\"dtype\"", "\"shape\"", "\"dtype_value\"",
                                       "\"a\"", "\"\\u0061\""};
    opdb_sb_addc(&x->o, '{');
    unsigned k = rn(&x->g, 4);
    for (unsigned i = 0; i < k; i++) {
        if (i) g_sep(x, ',');
        opdb_sb_adds(&x->o, keys[rn(&x->g, sizeof keys / sizeof keys[0])]);
        g_sep(x, ':');
        g_value(x, depth + 1);
    }
    opdb_sb_addc(&x->o, '}');
}

static void g_value(gen *x, int depth) {
    unsigned k = rn(&x->g, depth > 4 ? 5 : 9);
    switch (k) {
    case 0: g_num(x); break;
    case 1: g_str(x); break;
    case 2: opdb_sb_adds(&x->o, rn(&x->g, 2) ? "true" : "false"); break;
    case 3: opdb_sb_adds(&x->o, rn(&x->g, 10) ? "null" : "nul"); break;
    case 4: g_num(x); break;
    case 5:
    case 6: g_tensor(x); break;
    case 7: {
        opdb_sb_addc(&x->o, '[');
        unsigned m = rn(&x->g, 4);
        for (unsigned i = 0; i < m; i++) {
            if (i) g_sep(x, ',');
            g_value(x, depth + 1);
        }
        opdb_sb_addc(&x->o, ']');
        break;
    }
    default: g_dict(x, depth); break;
    }
}

/* One query line: the members in a random order, now and then one twice or an unknown one. */
static void g_line(gen *x) {
    static const char *const ops[] = {"\"aten.mm.default\"", "\"torch.ops.aten.view.default\"",
                                      "\"bench.benchop168.default\"", "\"aten.add.Tensor\"", "\"\""};
    x->o.n = 0;
    x->spaced = rn(&x->g, 3) == 0;
    unsigned order[8], m = 0;
    for (unsigned k = 0; k < 5; k++)
        if (k == 0 || rn(&x->g, 5)) order[m++] = k;
    if (rn(&x->g, 15) == 0) order[m++] = rn(&x->g, 5); /* a member twice */
    if (rn(&x->g, 20) == 0) order[m++] = 5 + rn(&x->g, 2); /* kernel, or an unknown member */
    for (unsigned i = m; i > 1; i--) {
        unsigned j = rn(&x->g, i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    if (rn(&x->g, 30) == 0) opdb_sb_adds(&x->o, " ");
    opdb_sb_addc(&x->o, '{');
    for (unsigned i = 0; i < m; i++) {
        if (i) g_sep(x, ',');
        switch (order[i]) {
        case 0:
            opdb_sb_adds(&x->o, "\"op\"");
            g_sep(x, ':');
            if (rn(&x->g, 12)) opdb_sb_adds(&x->o, ops[rn(&x->g, sizeof ops / sizeof ops[0])]);
            else g_value(x, 1);
            break;
        case 1:
            opdb_sb_adds(&x->o, "\"id\"");
            g_sep(x, ':');
            if (rn(&x->g, 3)) opdb_sb_addf(&x->o, "%u", (unsigned)rn(&x->g, 100000));
            else if (rn(&x->g, 3) == 0) {
                if (rn(&x->g, 3) == 0) opdb_sb_addc(&x->o, '-');
                g_digits(x);
            } else g_value(x, 1);
            break;
        case 2: {
            opdb_sb_adds(&x->o, "\"args\"");
            g_sep(x, ':');
            if (rn(&x->g, 15) == 0) {
                g_value(x, 1);
                break;
            }
            opdb_sb_addc(&x->o, '[');
            unsigned a = rn(&x->g, 4);
            for (unsigned k = 0; k < a; k++) {
                if (k) g_sep(x, ',');
                if (rn(&x->g, 3)) g_tensor(x);
                else g_value(x, 2);
            }
            opdb_sb_addc(&x->o, ']');
            break;
        }
        case 3:
            opdb_sb_adds(&x->o, "\"out\"");
            g_sep(x, ':');
            if (rn(&x->g, 3)) g_tensor(x);
            else g_value(x, 2);
            break;
        case 4:
            opdb_sb_adds(&x->o, "\"kwargs\"");
            g_sep(x, ':');
            if (rn(&x->g, 3)) opdb_sb_adds(&x->o, "{}");
            else if (rn(&x->g, 8)) g_dict(x, 1);
            else g_value(x, 1);
            break;
        case 5:
            opdb_sb_adds(&x->o, "\"kernel\"");
            g_sep(x, ':');
            opdb_sb_adds(&x->o, "\"MatMulV2\"");
            break;
        default:
            opdb_sb_adds(&x->o, "\"note\"");
            g_sep(x, ':');
            g_value(x, 1);
            break;
        }
    }
    opdb_sb_addc(&x->o, '}');
    if (rn(&x->g, 30) == 0) opdb_sb_adds(&x->o, rn(&x->g, 2) ? "\r\n" : " x");
    /* a byte cut, dropped or replaced now and then: malformed lines */
    if (x->o.n && rn(&x->g, 6) == 0) {
        static const char subs[] = {'{', '}', '[', ']', ',', ':', '"', '\\', '0', '-', '.', 'e', ' ', 0, '\x80'};
        size_t at = rn(&x->g, (unsigned)x->o.n);
        switch (rn(&x->g, 3)) {
        case 0: x->o.n = at; break;
        case 1: memmove(x->o.p + at, x->o.p + at + 1, x->o.n - at - 1), x->o.n--; break;
        default: x->o.p[at] = subs[rn(&x->g, sizeof subs)]; break;
        }
    }
}

/* Random lines near the query form through every reader (check_line: the
 * fast reader's events against yajl's, the trees, and the query the direct
 * form reads against the one yajl's tree gives, error messages included). */
/* dims whose product overflows int64: the element count saturates instead
 * (signed overflow before: UBSan found it through a random line) and a
 * values list still gets its one-line error, through every reader */
static void test_absurd_dims(void **state) {
    (void)state;
    int64_t big[3] = {INT64_MAX, 93110848, 0}, neg[2] = {-3, INT64_MAX};
    assert_true(q_numel((q_shape){big, 2}) == INT64_MAX);
    assert_true(q_numel((q_shape){big, 3}) == 0);
    assert_true(q_numel((q_shape){neg, 2}) == INT64_MIN);
    assert_true(q_mul_sat(INT64_MIN, -1) == INT64_MAX);
    const char *line = "{\"id\":1,\"op\":\"aten.add.Tensor\",\"args\":[{\"shape\":[9223372036854775807,93110848],"
                       "\"dtype\":\"float32\",\"values\":[1,2]}]}";
    int modes[4] = {Q_JSON_AUTO, Q_JSON_YAJL, Q_JSON_FAST, Q_JSON_DIRECT};
    for (int m = 0; m < 4; m++) {
        opdb_arena a;
        opdb_arena_init(&a, 4096);
        q_query q;
        const char *code = NULL;
        char msg[512];
        msg[0] = 0;
        int rc = q_parse_line_mode(&a, line, strlen(line), modes[m], &q, &code, msg, sizeof msg);
        if (modes[m] == Q_JSON_DIRECT && rc == 1) {
            opdb_arena_free(&a);
            continue; /* the direct form hands a values member on */
        }
        assert_int_not_equal(rc, 0);
        assert_non_null(strstr(msg, "tensor has 2 values for 9223372036854775807 elements"));
        opdb_arena_free(&a);
    }
}

static void test_random_lines(void **state) {
    (void)state;
    const char *soak = getenv("OPDB_TEST_SOAK");
    size_t rounds = 40000 * (soak && atoi(soak) > 0 ? (size_t)atoi(soak) : 1);
    gen x = {{0x9e3779b97f4a7c15ULL}, {0}, false};
    opdb_sb_init(&x.o);
    size_t direct = 0, fast_before = n_fast, checked_before = n_checked;
    for (size_t i = 0; i < rounds; i++) {
        g_line(&x);
        opdb_arena a;
        opdb_arena_init(&a, 4096);
        q_query q;
        const char *code;
        char msg[64];
        /* an exact-size copy: a read past the line's end is one the sanitizers see */
        char *line = malloc(x.o.n ? x.o.n : 1);
        memcpy(line, x.o.p, x.o.n);
        if (q_parse_line_mode(&a, line, x.o.n, Q_JSON_DIRECT, &q, &code, msg, sizeof msg) == 0) direct++;
        opdb_arena_free(&a);
        check_line(line, x.o.n);
        free(line);
    }
    opdb_sb_free(&x.o);
    /* the generator reaches both sides of every reader */
    size_t fast = n_fast - fast_before, checked = n_checked - checked_before;
    print_message("%zu random lines: %zu read by the fast reader, %zu in the direct form\n", rounds, fast, direct);
    assert_int_equal(checked, rounds);
    assert_true(direct > rounds / 5 && direct < rounds * 4 / 5);
    assert_true(fast > rounds / 3 && fast < rounds);
}

/* The line's hash as it was first written, its last bytes gathered one by
 * one: the reader's word-wide gathering must give the same hashes. */
static uint64_t ref_lanes(const unsigned char *p, size_t n, uint64_t seed) {
    const uint64_t K = 0xbf58476d1ce4e5b9ULL;
    uint64_t a = seed ^ 0x9e3779b97f4a7c15ULL, b = seed + n, c = ~seed, d = seed * K;
    for (; n >= 32; p += 32, n -= 32) {
        uint64_t w[4];
        memcpy(w, p, 32);
        a = (a ^ w[0]) * K, a ^= a >> 29;
        b = (b ^ w[1]) * K, b ^= b >> 29;
        c = (c ^ w[2]) * K, c ^= c >> 29;
        d = (d ^ w[3]) * K, d ^= d >> 29;
    }
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        a = (a ^ w) * K, a ^= a >> 29;
    }
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++) t |= (uint64_t)p[i] << (8 * i);
    b = (b ^ t ^ ((uint64_t)n << 56)) * K;
    uint64_t h = a ^ (b * 0x94d049bb133111ebULL) ^ (c >> 7) ^ (d << 11) ^ (c * 31) ^ (d * 0x2545f4914f6cdd1dULL);
    h ^= h >> 31;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 29);
}

static uint64_t ref_line_hash(const char *s, size_t n, size_t at, size_t end) {
    uint64_t h = ref_lanes((const unsigned char *)s, at, 0x6c696e65);
    h = ref_lanes((const unsigned char *)s + end, n - end, h);
    return h ? h : 1;
}

static void test_line_hash(void **state) {
    (void)state;
    gen x = {{0x1234567887654321ULL}, {0}, false};
    opdb_sb_init(&x.o);
    for (size_t i = 0; i < 20000; i++) {
        g_line(&x);
        /* an exact-size copy: no byte past the line to read */
        char *line = malloc(x.o.n ? x.o.n : 1);
        memcpy(line, x.o.p, x.o.n);
        uint64_t h = q_line_hash(line, x.o.n);
        /* the id's span found as q_line_hash finds it */
        size_t n = x.o.n, at = 0, end = 0;
        for (size_t k = n >= 4 ? n - 4 : 0; k-- > 0;) {
            if (memcmp(line + k, "\"id\"", 4) != 0) continue;
            size_t i = k + 4;
            while (i < n && strchr(" \t\n\r", line[i]) && line[i]) i++;
            if (i >= n || line[i] != ':') continue;
            i++;
            while (i < n && strchr(" \t\n\r", line[i]) && line[i]) i++;
            size_t j = i;
            if (j < n && line[j] == '"') {
                const char *q = memchr(line + j + 1, '"', n - j - 1);
                j = q ? (size_t)(q - line) + 1 : j;
            } else {
                while (j < n && line[j] && strchr("0123456789-+.abcdefghijklmnopqrstuvwxyzE", line[j])) j++;
            }
            at = i, end = j;
            break;
        }
        if (ref_line_hash(line, n, at, end) != h) fail_msg("the hash differs from the plain one on: %.*s", (int)n, line);
        free(line);
    }
    /* lines that differ only in their id's value hash equal, and the tail's bytes count */
    const char *a = "{\"op\":\"aten.mm.default\",\"args\":[],\"id\":1}";
    const char *b = "{\"op\":\"aten.mm.default\",\"args\":[],\"id\":123456}";
    const char *c = "{\"op\":\"aten.mm.defaulu\",\"args\":[],\"id\":1}";
    assert_true(q_line_hash(a, strlen(a)) == q_line_hash(b, strlen(b)));
    assert_true(q_line_hash(a, strlen(a)) != q_line_hash(c, strlen(c)));
    opdb_sb_free(&x.o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_and_corpus_lines),
        cmocka_unit_test(test_hand_over),
        cmocka_unit_test(test_direct_form),
        cmocka_unit_test(test_random_lines),
        cmocka_unit_test(test_absurd_dims),
        cmocka_unit_test(test_line_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
