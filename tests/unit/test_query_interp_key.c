/* The regime key writer (ip_kb_*) against a plain model of its text: random sequences of
 * fields, strings (parentheses anywhere, every length the short copies split at), integers
 * (negative, every digit count up to 2^53, through both the integer and the double entry) and
 * tuples, nested. Each piece is a field mark, name and value mark; "'" and the string; "#" and
 * the digits %lld prints; "(" or ")"; an item inside a tuple (more "(" than ")" in the field's
 * text so far, a string's own parentheses counted) is closed by \x1d. A key that would pass
 * IP_KEYCAP - 1 bytes is over, and stays over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "query/interp_internal.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd64(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return g_rng >> 11;
}
static unsigned rnd(unsigned n) { return (unsigned)(rnd64() % n); }

typedef struct model {
    char s[8192];
    size_t n;
    int depth;
    bool over;
} model;

static void m_piece(model *m, const char *p, size_t n) {
    if (m->over || m->n + n + 1 > IP_KEYCAP) {
        m->over = true;
        return;
    }
    memcpy(m->s + m->n, p, n);
    m->n += n;
}

static void m_end(model *m) {
    if (m->depth > 0) m_piece(m, "\x1d", 1);
}

static void m_int(model *m, long long v, bool end) {
    char b[32];
    int n = snprintf(b, sizeof b, "#%lld%s", v, end && m->depth > 0 ? "\x1d" : "");
    m_piece(m, b, (size_t)n);
}

static void test_key_writer_matches_model(void **s) {
    (void)s;
    static const char *const names[] = {"kernel_type", "input_count", "input_dtypes", "batch_dims", "x",
                                        "shape_signature_that_is_long"};
    size_t keys = 0, overs = 0, parens = 0;
    for (int round = 0; round < 4000; round++) {
        ip_kb k;
        ip_kb_init(&k);
        model m = {.n = 0, .depth = 0, .over = false};
        int ops = 1 + (int)rnd(round % 10 == 0 ? 400 : 40);
        for (int o = 0; o < ops; o++) {
            switch (rnd(6)) {
            case 0: {
                if (k.nf >= 31) break; /* the field limit is its own rule */
                const char *nm = names[rnd(6)];
                ip_kb_field(&k, nm);
                m.depth = 0;
                char b[64];
                int n = snprintf(b, sizeof b, "\x1e%s\x1f", nm);
                m_piece(&m, b, (size_t)n);
                break;
            }
            case 1: {
                char str[48];
                size_t n = rnd(40);
                for (size_t i = 0; i < n; i++) {
                    unsigned r = rnd(20);
                    str[i] = r == 0 ? '(' : r == 1 ? ')' : (char)('a' + rnd(26));
                    parens += r < 2;
                }
                ip_kb_str(&k, str, n);
                char b[64];
                b[0] = '\'';
                memcpy(b + 1, str, n);
                m_piece(&m, b, n + 1);
                if (!m.over)
                    for (size_t i = 0; i < n; i++) m.depth += str[i] == '(' ? 1 : str[i] == ')' ? -1 : 0;
                m_end(&m);
                break;
            }
            case 2: {
                /* every digit count: a power of ten, one less, or random below 2^53 */
                int d = (int)rnd(16);
                long long p = 1;
                for (int i = 0; i < d; i++) p *= 10;
                long long v = rnd(3) == 0 ? p : rnd(3) == 0 ? p - 1 : (long long)(rnd64() % 9007199254740991ull);
                if (rnd(3) == 0) v = -v;
                if (rnd(2)) {
                    int64_t dims[1] = {v};
                    ip_kb_shape(&k, (q_shape){dims, 1});
                    m_piece(&m, "(", 1);
                    if (!m.over) m.depth++;
                    m_int(&m, v, true);
                    m_piece(&m, ")", 1);
                    if (!m.over) m.depth--;
                    m_end(&m);
                } else {
                    ip_kb_num(&k, (double)v);
                    m_int(&m, v, true);
                }
                break;
            }
            case 3:
                ip_kb_open(&k);
                m_piece(&m, "(", 1);
                if (!m.over) m.depth++;
                break;
            case 4:
                ip_kb_close(&k);
                m_piece(&m, ")", 1);
                if (!m.over) m.depth--;
                m_end(&m);
                break;
            default: {
                double v = (double)(rnd(2000) - 1000) / 8; /* fractions: the printf path */
                ip_kb_num(&k, v);
                char b[64];
                int n = snprintf(b, sizeof b, "#%.17g", v == 0 ? 0.0 : v);
                if (v == (long long)v) n = snprintf(b, sizeof b, "#%lld", (long long)v);
                m_piece(&m, b, (size_t)n);
                m_end(&m);
                break;
            }
            }
            if (m.over) break;
        }
        if (m.over != k.over) fail_msg("round %d: over %d, model %d", round, k.over, m.over);
        if (m.over) {
            overs++;
            continue;
        }
        if (k.n != m.n || memcmp(k.s, m.s, m.n) != 0 || k.s[k.n] != 0)
            fail_msg("round %d: key %zu bytes, model %zu bytes\n  key:   %.*s\n  model: %.*s", round, k.n, m.n,
                     (int)k.n, k.s, (int)m.n, m.s);
        if (k.depth != m.depth) fail_msg("round %d: depth %d, model %d", round, k.depth, m.depth);
        keys++;
    }
    assert_true(keys > 3000);
    assert_true(overs > 50);
    assert_true(parens > 1000);
    print_message("%zu keys compared, %zu over\n", keys, overs);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_key_writer_matches_model)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
