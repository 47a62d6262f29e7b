/* CSV tokenizers (fast and exact), batch cutting and the writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/call.h"
#include "csv/batch.h"
#include "opdb/csv.h"
#include "opdb/fs.h"

#define MAXF 64

/* ---- helpers ------------------------------------------------------------ */

/* Records serialised unambiguously: each record is `<ncells>[c1|c2|...]` with
 * `\`, `|`, `]`, CR and LF in cells escaped, so a record of zero cells (`0[]`)
 * differs from a record of one empty cell (`1[]`). */
static void ser_record(opdb_strbuf *sb, const opdb_field *f, int n) {
    opdb_sb_addf(sb, "%d[", n);
    for (int i = 0; i < n; i++) {
        if (i) opdb_sb_addc(sb, '|');
        for (uint32_t k = 0; k < f[i].n; k++) {
            char c = f[i].p[k];
            if (c == '\n') opdb_sb_adds(sb, "\\n");
            else if (c == '\r') opdb_sb_adds(sb, "\\r");
            else if (c == '\\' || c == '|' || c == ']') {
                opdb_sb_addc(sb, '\\');
                opdb_sb_addc(sb, c);
            } else opdb_sb_addc(sb, c);
        }
    }
    opdb_sb_addc(sb, ']');
}

typedef struct {
    char *text;       /* serialised records (malloc'd) */
    int rc;           /* last return: 0 end, -1 anomaly / error */
    int nrec;
    bool unterminated; /* exact: the last record's flag */
    uint64_t open_quote_line;
    int last_ncells;  /* exact: opdb_csv_exact_ncells after the last record */
    size_t offs[256]; /* record offsets (first 256) */
} parsed;

static void parsed_free(parsed *p) { free(p->text); }

/* Runs the fast tokenizer over a private exact-size copy of data (so that
 * ASan sees any overread); portable: with the portable block scan whatever
 * the CPU has. */
static parsed run_fast_scan(const char *data, size_t n, int max_fields, bool portable) {
    parsed r;
    memset(&r, 0, sizeof r);
    char *buf = malloc(n ? n : 1);
    assert_non_null(buf);
    if (n) memcpy(buf, data, n);
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, buf, n);
    if (portable) t.avx2 = false;
    opdb_field f[MAXF];
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_add(&sb, "", 0);
    int nf;
    size_t off;
    for (;;) {
        nf = -7;
        int k = opdb_csv_fast_next(&t, f, max_fields, &nf, &off);
        if (k != 1) {
            r.rc = k;
            break;
        }
        assert_true(nf >= 0 && nf <= max_fields);
        if (r.nrec < 256) r.offs[r.nrec] = off;
        r.nrec++;
        ser_record(&sb, f, nf);
    }
    r.text = sb.p;
    free(buf);
    return r;
}

static parsed run_fast(const char *data, size_t n, int max_fields) { return run_fast_scan(data, n, max_fields, false); }

static int memfd_with(const char *data, size_t n) {
    int fd = memfd_create("opdb_test_csv", 0);
    assert_true(fd >= 0);
    size_t w = 0;
    while (w < n) {
        ssize_t k = write(fd, data + w, n - w);
        assert_true(k > 0);
        w += (size_t)k;
    }
    return fd;
}

/* Runs the exact tokenizer over a memfd holding data; reader_cap small values
 * exercise refills in the middle of records and CRLF pairs. */
static parsed run_exact_cap(const char *data, size_t n, int max_fields, bool keep_blank, size_t reader_cap) {
    parsed r;
    memset(&r, 0, sizeof r);
    int fd = memfd_with(data, n);
    opdb_byte_reader br;
    opdb_byte_reader_init(&br, fd, 0, reader_cap);
    opdb_csv_exact x;
    opdb_csv_exact_init(&x, &br, 1);
    opdb_field f[MAXF];
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_add(&sb, "", 0);
    int nf;
    for (;;) {
        int k = opdb_csv_exact_next(&x, f, max_fields, &nf, keep_blank);
        if (k != 1) {
            r.rc = k;
            break;
        }
        if (r.nrec < 256) r.offs[r.nrec] = x.rec_off;
        r.nrec++;
        r.unterminated = x.unterminated;
        r.open_quote_line = x.open_quote_line;
        r.last_ncells = opdb_csv_exact_ncells(&x);
        ser_record(&sb, f, nf);
    }
    r.text = sb.p;
    opdb_csv_exact_free(&x);
    opdb_byte_reader_free(&br);
    close(fd);
    return r;
}

static parsed run_exact(const char *data, size_t n, int max_fields, bool keep_blank) {
    return run_exact_cap(data, n, max_fields, keep_blank, 0);
}

/* Both tokenizers must decode `in` to `want` (exact also with a 3-byte reader buffer). */
static void check_both(const char *in, const char *want) {
    size_t n = strlen(in);
    parsed a = run_fast(in, n, MAXF);
    assert_int_equal(a.rc, 0);
    assert_string_equal(a.text, want);
    parsed b = run_exact(in, n, MAXF, false);
    assert_int_equal(b.rc, 0);
    assert_string_equal(b.text, want);
    assert_false(b.unterminated);
    parsed c = run_exact_cap(in, n, MAXF, false, 3);
    assert_string_equal(c.text, want);
    parsed_free(&a);
    parsed_free(&b);
    parsed_free(&c);
}

static void check_exact(const char *in, bool keep_blank, const char *want) {
    size_t n = strlen(in);
    parsed b = run_exact(in, n, MAXF, keep_blank);
    assert_int_equal(b.rc, 0);
    assert_string_equal(b.text, want);
    parsed c = run_exact_cap(in, n, MAXF, keep_blank, 1);
    assert_string_equal(c.text, want);
    parsed_free(&b);
    parsed_free(&c);
}

static void check_fast_anomaly(const char *in) {
    parsed a = run_fast(in, strlen(in), MAXF);
    assert_int_equal(a.rc, -1);
    parsed_free(&a);
}

/* ---- both tokenizers ------------------------------------------------------ */

static void test_simple_records(void **s) {
    (void)s;
    check_both("a,b,c\nd,e,f\n", "3[a|b|c]3[d|e|f]");
}

static void test_quoted_comma_newline_and_doubled_quote(void **s) {
    (void)s;
    check_both("a,\"b,c\",\"d\ne\",\"f\"\"g\"\n", "4[a|b,c|d\\ne|f\"g]");
}

static void test_shape_cell_with_literal_quotes(void **s) {
    (void)s;
    check_both("\"\"\"32,3,224,224\"\"\",x\n", "2[\"32,3,224,224\"|x]");
}

static void test_crlf_records(void **s) {
    (void)s;
    check_both("a,b\r\nc,d\r\n", "2[a|b]2[c|d]");
}

static void test_lone_cr_ends_record(void **s) {
    (void)s;
    check_both("a,b\rc\r", "2[a|b]1[c]");
}

static void test_cr_inside_quotes_kept(void **s) {
    (void)s;
    check_both("\"x\ry\r\nz\"\n", "1[x\\ry\\r\\nz]");
}

static void test_blank_lines_skipped(void **s) {
    (void)s;
    check_both("\n\na\n\n\r\n\rb\n\n", "1[a]1[b]");
}

static void test_blank_lines_kept_with_keep_blank(void **s) {
    (void)s;
    check_exact("a\n\n\r\n\rb\n", true, "1[a]0[]0[]0[]1[b]");
}

static void test_missing_final_newline(void **s) {
    (void)s;
    check_both("a,b\nc", "2[a|b]1[c]");
}

static void test_missing_final_newline_quoted(void **s) {
    (void)s;
    check_both("a,\"b\"", "2[a|b]");
}

static void test_one_empty_quoted_cell(void **s) {
    (void)s;
    check_both("\"\"\nx\n", "1[]1[x]");
    check_both("\"\"", "1[]");
}

static void test_whitespace_only_line_is_a_record(void **s) {
    (void)s;
    check_both(" \n", "1[ ]");
}

static void test_trailing_comma_gives_empty_cell(void **s) {
    (void)s;
    check_both("a,\n,\n", "2[a|]2[|]");
    check_both("a,", "2[a|]");
}

static void test_empty_input_has_no_records(void **s) {
    (void)s;
    check_both("", "");
}

static void test_fast_cells_beyond_max_fields_dropped(void **s) {
    (void)s;
    const char *in = "a,b,c,d\ne\n";
    parsed a = run_fast(in, strlen(in), 2);
    assert_int_equal(a.rc, 0);
    assert_string_equal(a.text, "2[a|b]1[e]");
    parsed_free(&a);
}

static void test_exact_cells_beyond_max_fields_dropped_but_counted(void **s) {
    (void)s;
    const char *in = "a,b,c,d\n";
    parsed b = run_exact(in, strlen(in), 2, false);
    assert_string_equal(b.text, "2[a|b]");
    assert_int_equal(b.last_ncells, 4);
    parsed_free(&b);
}

static void test_record_across_block_boundary(void **s) {
    (void)s;
    /* A quoted cell spanning the 64-byte block edge, with "" right on it. */
    char in[256], want[512];
    memset(in, 0, sizeof in);
    strcpy(in, "k,\"");
    size_t o = strlen(in);
    while (o < 62) in[o++] = 'x';
    strcpy(in + o, "\"\"y,\nz\",end\n");
    char cell[128];
    memset(cell, 'x', 59);
    strcpy(cell + 59, "\"y,\\nz");
    snprintf(want, sizeof want, "3[k|%s|end]", cell);
    check_both(in, want);
}

static void test_long_file_many_blocks(void **s) {
    (void)s;
    opdb_strbuf in, want;
    opdb_sb_init(&in);
    opdb_sb_init(&want);
    for (int i = 0; i < 500; i++) {
        opdb_sb_addf(&in, "%d,\"q,%d\"\"\",tail%d%s", i, i * 7, i, i % 3 ? "\r\n" : "\n");
        opdb_sb_addf(&want, "3[%d|q,%d\"|tail%d]", i, i * 7, i);
    }
    check_both(in.p, want.p);
    opdb_sb_free(&in);
    opdb_sb_free(&want);
}

/* ---- anomalies and non-canonical quoting ------------------------------- */

static void test_fast_unterminated_quote_is_anomaly(void **s) {
    (void)s;
    check_fast_anomaly("a,\"bc\nd");
}

static void test_exact_unterminated_quote_returns_record(void **s) {
    (void)s;
    const char *in = "h\na,\"bc\nd";
    parsed b = run_exact(in, strlen(in), MAXF, false);
    assert_int_equal(b.rc, 0);
    assert_string_equal(b.text, "1[h]2[a|bc\\nd]");
    assert_true(b.unterminated);
    assert_int_equal(b.open_quote_line, 2);
    parsed_free(&b);
}

static void test_exact_unterminated_empty_quote(void **s) {
    (void)s;
    const char *in = "a,\"";
    parsed b = run_exact(in, strlen(in), MAXF, false);
    assert_string_equal(b.text, "2[a|]");
    assert_true(b.unterminated);
    parsed_free(&b);
}

static void test_fast_quote_inside_unquoted_cell_is_anomaly(void **s) {
    (void)s;
    check_fast_anomaly("ab\"c,d\n");
}

static void test_exact_quote_inside_unquoted_cell_is_literal(void **s) {
    (void)s;
    check_exact("ab\"c,d\n", false, "2[ab\"c|d]");
}

static void test_fast_text_after_closing_quote_is_anomaly(void **s) {
    (void)s;
    check_fast_anomaly("\"ab\"cd\n");
}

static void test_exact_text_after_closing_quote_appended(void **s) {
    (void)s;
    check_exact("\"ab\"cd\n", false, "1[abcd]");
    check_exact("\"ab\"c\"d\",e\n", false, "2[abc\"d\"|e]");
}

static void test_exact_line_numbers_and_offsets(void **s) {
    (void)s;
    const char *in = "a\r\n\"b\nc\"\n\nd\n";
    parsed b = run_exact(in, strlen(in), MAXF, false);
    assert_string_equal(b.text, "1[a]1[b\\nc]1[d]");
    assert_int_equal(b.offs[0], 0);
    assert_int_equal(b.offs[1], 3);
    assert_int_equal(b.offs[2], 10);
    parsed_free(&b);
}

static void test_fast_record_offsets(void **s) {
    (void)s;
    const char *in = "a\r\n\"b\nc\"\n\nd\n";
    parsed a = run_fast(in, strlen(in), MAXF);
    assert_int_equal(a.rc, 0);
    assert_string_equal(a.text, "1[a]1[b\\nc]1[d]");
    assert_int_equal(a.offs[0], 0);
    assert_int_equal(a.offs[1], 3);
    assert_int_equal(a.offs[2], 10);
    parsed_free(&a);
}

/* ---- differential: fast (when it decides) == exact ------------------------ */

static uint64_t rng_state;
static uint32_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static void differential(const char *alphabet, int iters, size_t maxlen, uint64_t seed, int *decided) {
    size_t na = strlen(alphabet);
    char buf[512];
    rng_state = seed;
    *decided = 0;
    for (int it = 0; it < iters; it++) {
        size_t n = rng() % (maxlen + 1);
        for (size_t i = 0; i < n; i++) buf[i] = alphabet[rng() % na];
        parsed a = run_fast(buf, n, MAXF);
        if (a.rc == 0) {
            (*decided)++;
            parsed b = run_exact(buf, n, MAXF, false);
            if (b.rc != 0 || strcmp(a.text, b.text) != 0 || a.nrec != b.nrec) {
                char esc[2048];
                size_t o = 0;
                for (size_t i = 0; i < n && o < sizeof esc - 8; i++) {
                    unsigned char c = (unsigned char)buf[i];
                    if (c == '\n') o += (size_t)snprintf(esc + o, sizeof esc - o, "\\n");
                    else if (c == '\r') o += (size_t)snprintf(esc + o, sizeof esc - o, "\\r");
                    else if (c == '"') o += (size_t)snprintf(esc + o, sizeof esc - o, "\\\"");
                    else esc[o++] = (char)c;
                }
                esc[o] = '\0';
                print_error("input \"%s\"\n fast : %s\n exact: %s\n", esc, a.text, b.text);
                fail();
            }
            int lim = a.nrec < 256 ? a.nrec : 256;
            for (int r = 0; r < lim; r++) {
                if (a.offs[r] != b.offs[r]) {
                    print_error("record %d offset: fast %zu exact %zu\n", r, a.offs[r], b.offs[r]);
                    fail();
                }
            }
            parsed_free(&b);
        }
        parsed_free(&a);
    }
}

static void test_differential_small_alphabet(void **s) {
    (void)s;
    int decided;
    differential("ab,\"\n\r ", 4000, 24, 0x9e3779b97f4a7c15ULL, &decided);
    print_message("decided %d of 4000\n", decided);
    /* the comparison must actually happen for a fair share of inputs */
    assert_true(decided > 400);
}

static void test_differential_few_quotes_long(void **s) {
    (void)s;
    int decided;
    /* quotes rare, lengths across several 64-byte blocks */
    differential("aaaaaaaaaabbbbbbbbbb,,,,,,,,,,\n\n\n\n\r\r    \"", 3000, 300, 12345, &decided);
    print_message("decided %d of 3000\n", decided);
    assert_true(decided > 300);
}

static void test_differential_canonical_quoting(void **s) {
    (void)s;
    /* Random canonical CSV (quoted cells made of random content): the fast
     * tokenizer must decide all of them and agree with the exact one. */
    const char cellchars[] = "ab,\"\n\r ";
    rng_state = 777;
    for (int it = 0; it < 1500; it++) {
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        opdb_sb_add(&sb, "", 0);
        int nrec = (int)(rng() % 5);
        for (int r = 0; r < nrec; r++) {
            int nc = 1 + (int)(rng() % 4);
            for (int c = 0; c < nc; c++) {
                if (c) opdb_sb_addc(&sb, ',');
                int len = (int)(rng() % 6);
                bool quote = rng() % 2;
                if (quote) opdb_sb_addc(&sb, '"');
                for (int k = 0; k < len; k++) {
                    char ch = cellchars[rng() % (sizeof cellchars - 1)];
                    if (!quote && (ch == ',' || ch == '"' || ch == '\n' || ch == '\r')) ch = 'x';
                    if (ch == '"') opdb_sb_addc(&sb, '"');
                    opdb_sb_addc(&sb, ch);
                }
                if (quote) opdb_sb_addc(&sb, '"');
            }
            static const char *const ends[] = {"\n", "\r\n", "\r"};
            opdb_sb_adds(&sb, ends[rng() % 3]);
        }
        parsed a = run_fast(sb.p, sb.n, MAXF);
        assert_int_equal(a.rc, 0);
        parsed b = run_exact(sb.p, sb.n, MAXF, false);
        assert_string_equal(a.text, b.text);
        parsed_free(&a);
        parsed_free(&b);
        opdb_sb_free(&sb);
    }
}

/* ---- the block scans: AVX2 + PCLMUL == portable --------------------------- */

static bool cpu_has_avx2_scan(void) {
    opdb_csv_fast t;
    char c = 'a';
    opdb_csv_fast_init(&t, &c, 1);
    return t.avx2;
}

static void test_block_scans_agree(void **s) {
    (void)s;
    if (!cpu_has_avx2_scan()) {
        print_message("no AVX2/PCLMUL here: only the portable scan runs\n");
        skip();
    }
    const char *alphabets[] = {"ab,\"\n\r ", "aaaaaaaaaabbbbbbbbbb,,,,,,,,,,\n\n\r    \"", "1,\"\"\"\r\n;"};
    char buf[600];
    rng_state = 4242;
    int anomalies = 0, decided = 0;
    for (int it = 0; it < 6000; it++) {
        const char *alpha = alphabets[it % 3];
        size_t na = strlen(alpha), n = rng() % 500;
        for (size_t i = 0; i < n; i++) buf[i] = alpha[rng() % na];
        parsed a = run_fast_scan(buf, n, MAXF, true);
        parsed b = run_fast_scan(buf, n, MAXF, false);
        assert_int_equal(a.rc, b.rc);
        assert_int_equal(a.nrec, b.nrec);
        assert_string_equal(a.text, b.text);
        for (int r = 0; r < a.nrec && r < 256; r++) assert_int_equal(a.offs[r], b.offs[r]);
        anomalies += a.rc < 0;
        decided += a.rc == 0;
        parsed_free(&a);
        parsed_free(&b);
    }
    print_message("anomalies %d, decided %d of 6000\n", anomalies, decided);
    assert_true(anomalies > 300 && decided > 150); /* both outcomes compared */
}

/* ---- skim == next on the cells it keeps ----------------------------------- */

static void test_skim_matches_next(void **s) {
    (void)s;
    const char cellchars[] = "ab,\"\n\r 1";
    rng_state = 99;
    int skipped_quotes = 0;
    /* both block scans: the CPU's (with its search past the kept cells) and the portable one */
    for (int it = 0; it < 6000; it++) {
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        opdb_sb_add(&sb, "", 0);
        int nrec = 1 + (int)(rng() % 6);
        for (int r = 0; r < nrec; r++) {
            int nc = 1 + (int)(rng() % 9);
            for (int c = 0; c < nc; c++) {
                if (c) opdb_sb_addc(&sb, ',');
                int len = (int)(rng() % (it % 4 == 0 ? 40 : 6));
                bool quote = rng() % 3 == 0;
                if (quote) opdb_sb_addc(&sb, '"');
                for (int k = 0; k < len; k++) {
                    char ch = cellchars[rng() % (sizeof cellchars - 1)];
                    if (!quote && (ch == ',' || ch == '"' || ch == '\n' || ch == '\r')) ch = 'x';
                    if (ch == '"') opdb_sb_addc(&sb, '"');
                    opdb_sb_addc(&sb, ch);
                }
                if (quote) opdb_sb_addc(&sb, '"');
            }
            static const char *const ends[] = {"\n", "\r\n", "\r", "\n\n"};
            if (r + 1 < nrec || rng() % 2) opdb_sb_adds(&sb, ends[rng() % 4]);
        }
        int keep = 1 + (int)(rng() % 5);
        char *raw = malloc(sb.n + 1), *dec = malloc(sb.n + 1), *tmp = malloc(sb.n + 1);
        memcpy(raw, sb.p, sb.n);
        memcpy(dec, sb.p, sb.n);
        opdb_csv_fast ts, tn;
        opdb_csv_fast_init(&ts, raw, sb.n);
        opdb_csv_fast_init(&tn, dec, sb.n);
        opdb_csv_fast ta;
        opdb_csv_fast_init(&ta, raw, sb.n);
        if (it % 2) ts.avx2 = tn.avx2 = ta.avx2 = false; /* odd rounds: the portable scan */
        opdb_field fs[MAXF], fn[MAXF], fa[MAXF];
        for (;;) {
            int ns = -1, nn = -1;
            size_t os = 0, on = 0;
            bool qa = false;
            int ks = opdb_csv_fast_skim(&ts, fs, keep, &ns, &os, &qa);
            int kn = opdb_csv_fast_next(&tn, fn, MAXF, &nn, &on);
            int na = -1; /* every cell as written */
            size_t oa = 0;
            bool qall = false;
            int ka = opdb_csv_fast_skim(&ta, fa, MAXF, &na, &oa, &qall);
            assert_int_equal(ka, kn);
            assert_int_equal(ks, kn);
            if (ks != 1) break;
            assert_int_equal(ns, nn);
            assert_int_equal(os, on);
            bool quote_beyond = false;
            for (int c = 0; c < nn; c++) {
                if (c < keep) {
                    size_t k = opdb_csv_unquote(fs[c].p, fs[c].n, tmp);
                    assert_int_equal(k, fn[c].n);
                    assert_memory_equal(tmp, fn[c].p, k);
                    assert_true(fs[c].p >= raw && fs[c].p + fs[c].n <= raw + sb.n);
                } else {
                    /* a quote in a canonical cell means it is quoted */
                    quote_beyond |= fa[c].n && fa[c].p[0] == '"';
                }
            }
            if (qa != quote_beyond) print_error("keep %d record at %zu of \"%.*s\"\n", keep, os, (int)sb.n, sb.p);
            assert_int_equal(qa, quote_beyond);
            skipped_quotes += qa;
        }
        assert_memory_equal(raw, sb.p, sb.n); /* skim leaves the buffer alone */
        free(raw);
        free(dec);
        free(tmp);
        opdb_sb_free(&sb);
    }
    print_message("records with quotes past the kept cells: %d\n", skipped_quotes);
    assert_true(skipped_quotes > 100);
}

/* ---- opdb_batch_cut ------------------------------------------------------ */

static size_t simple_cut(const char *b, size_t n) {
    size_t cut = 0;
    int inq = 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i] == '"') inq ^= 1;
        else if ((b[i] == '\n' || b[i] == '\r') && !inq) cut = i + 1;
    }
    return cut;
}

/* The in-place view of a quoted cell equals its decoded value wherever it
 * is given, and is refused where bytes would have to move. */
static void test_quoted_view_matches_unquote(void **s) {
    (void)s;
    static const char *const cells[] = {"\"x\"", "\"\"", "\"\"\"1,4096;1,4096\"\"\"", "\"\"\"\"\"\"",
                                        "\"a\"\"b\"", "\"\"\"a\"\"b\"\"\"", "\"\"\"\"", "\"\"\"a\"",
                                        "\"a\"\"\"", "plain", "\"", "\"\"\"x\"\"", "\"a,b\""};
    static const bool viewable[] = {true, true, true, true, false, false, false, false, false, false, false, false,
                                    true};
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        const char *c = cells[i], *v = NULL;
        size_t n = strlen(c), vn = 0;
        bool ok = opdb_csv_quoted_view(c, n, &v, &vn);
        assert_int_equal(ok, viewable[i]);
        if (!ok) continue;
        char out[64];
        size_t on = opdb_csv_unquote(c, n, out);
        assert_int_equal(vn, on);
        assert_memory_equal(v, out, on);
        assert_true(v >= c && v + vn <= c + n);
    }
}

/* opdb_batch_run: a mapped file and the same file read() into buffers
 * (mapping refused) give record-aligned batches (a quoted line end never
 * cuts, a record longer than a batch makes a longer batch) with
 * OPDB_BATCH_PAD readable bytes after each, consumed in order, together the
 * whole file from the start offset. */
typedef struct batch_log {
    opdb_strbuf all;       /* the batches' bytes, in consume order */
    uint64_t next_off;     /* where the next batch must start */
    size_t nbatches, nlong; /* batches; those longer than the batch size */
    bool misaligned;
} batch_log;

static void *log_new(void *ctx) { return ctx; }
static void log_free(void *out, void *ctx) { (void)out, (void)ctx; }
static void log_work(opdb_batch *b, void *ctx) {
    (void)ctx;
    volatile char sink = 0;
    for (size_t i = 0; i < OPDB_BATCH_PAD; i++) sink ^= b->data[b->len + i]; /* readable (ASan) */
    (void)sink;
}
static int log_consume(opdb_batch *b, void *ctx, opdb_err *err) {
    (void)err;
    batch_log *l = ctx;
    if (b->file_off != l->next_off) l->misaligned = true;
    l->next_off = b->file_off + b->len;
    opdb_sb_add(&l->all, b->data, b->len);
    l->nbatches++;
    l->nlong += b->len > 256;
    /* a batch ends at a line end outside quotes (the last may end anyhow) */
    if (opdb_batch_cut(b->data, b->len) != b->len) l->nlong += 1000;
    return 0;
}

static void run_batches(int fd, int threads, batch_log *l) {
    opdb_batch_ops ops = {log_new, log_free, log_work, log_consume, l};
    uint64_t resume = 0;
    opdb_err err = {0};
    l->next_off = 7;
    assert_int_equal(opdb_batch_run(fd, "t.csv", 7, threads, 256, &ops, &resume, &err), 0);
}

static void test_batch_run_mapped_and_read(void **s) {
    (void)s;
    opdb_strbuf text = {0};
    opdb_sb_adds(&text, "header\n");
    for (int i = 0; i < 400; i++) {
        if (i % 37 == 0) opdb_sb_addf(&text, "%d,\"quoted\nline end, %d\"\r\n", i, i * 3);
        else if (i == 100) { /* one record longer than a batch */
            opdb_sb_addf(&text, "%d,", i);
            for (int k = 0; k < 700; k++) opdb_sb_addc(&text, (char)('a' + k % 26));
            opdb_sb_addc(&text, '\n');
        } else opdb_sb_addf(&text, "%d,plain cell %d,%d.5\n", i, i * 7, i);
    }
    opdb_sb_adds(&text, "last,record,without,line,end\n");
    char path[] = "/tmp/opdb_batch_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text.p, text.n), (ssize_t)text.n);
    for (int threads = 1; threads <= 2; threads++)
        for (int mapped = 0; mapped < 2; mapped++) {
            batch_log l = {0};
            opdb_call_scope call = opdb_call_enter(NULL); /* a call of its own: its no_map ends with it */
            opdb_call_set_no_map(!mapped);
            opdb_file_view v;
            bool did_map = opdb_file_view_map(&v, fd, "t.csv", 0, text.n);
            assert_int_equal(did_map, mapped);
            if (did_map) opdb_file_view_close(&v);
            run_batches(fd, threads, &l);
            opdb_call_leave(&call);
            assert_false(opdb_call_now()->no_map);
            assert_false(l.misaligned);
            assert_int_equal(l.all.n, text.n - 7);
            assert_memory_equal(l.all.p, text.p + 7, text.n - 7);
            assert_true(l.nbatches > 20);
            assert_true(l.nlong >= 1 && l.nlong < 1000); /* the long record's batch; none cut mid-record */
            opdb_sb_free(&l.all);
        }
    close(fd);
    unlink(path);
    opdb_sb_free(&text);
}

static void test_batch_cut_after_last_newline(void **s) {
    (void)s;
    assert_int_equal(opdb_batch_cut("a,b\nc,d", 7), 4);
    assert_int_equal(opdb_batch_cut("a\nb\n", 4), 4);
}

static void test_batch_cut_crlf_and_cr(void **s) {
    (void)s;
    assert_int_equal(opdb_batch_cut("a\r\nb", 4), 3);
    assert_int_equal(opdb_batch_cut("a\rb", 3), 2);
}

static void test_batch_cut_skips_newline_inside_quotes(void **s) {
    (void)s;
    assert_int_equal(opdb_batch_cut("\"x\ny\"\nz", 7), 6);
    assert_int_equal(opdb_batch_cut("a\n\"x\ny", 6), 2);
}

static void test_batch_cut_none(void **s) {
    (void)s;
    assert_int_equal(opdb_batch_cut("abc", 3), 0);
    assert_int_equal(opdb_batch_cut("\"x\ny", 4), 0);
    assert_int_equal(opdb_batch_cut("", 0), 0);
}

static void test_batch_cut_long_buffers_match_simple(void **s) {
    (void)s;
    const char alpha[] = "aaaaaaa,\"\n\r";
    rng_state = 4242;
    for (int it = 0; it < 2000; it++) {
        size_t n = rng() % 400;
        char *b = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) b[i] = alpha[rng() % (sizeof alpha - 1)];
        size_t got = opdb_batch_cut(b, n), want = simple_cut(b, n);
        free(b);
        if (got != want) print_error("iteration %d, n=%zu\n", it, n);
        assert_int_equal(got, want);
    }
}

/* ---- writer -------------------------------------------------------------- */

static char *write_rec(const char *const *cells, size_t n) {
    opdb_span sp[16];
    for (size_t i = 0; i < n; i++) sp[i] = opdb_span_cstr(cells[i]);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_add(&sb, "", 0);
    opdb_csv_write_record(&sb, sp, n);
    return sb.p;
}

static void test_writer_minimal_quoting_crlf(void **s) {
    (void)s;
    const char *c[] = {"a", " b ", "\tc"};
    char *o = write_rec(c, 3);
    assert_string_equal(o, "a, b ,\tc\r\n");
    free(o);
}

static void test_writer_quotes_special_cells(void **s) {
    (void)s;
    const char *c[] = {"x,y", "q\"r", "l\nm", "c\rr", ""};
    char *o = write_rec(c, 5);
    assert_string_equal(o, "\"x,y\",\"q\"\"r\",\"l\nm\",\"c\rr\",\r\n");
    free(o);
}

/* The whole-record check (vector path) gives what quoting cell by cell gives,
 * for records long and short, with and without cells that need quotes. */
static void test_writer_record_matches_cells(void **s) {
    (void)s;
    const char alpha[] = "0123456789.abc,\"\r\n";
    rng_state = 777;
    for (int it = 0; it < 20000; it++) {
        size_t n = 1 + rng() % 40;
        bool clean = rng() % 2;
        char cells[40][24];
        opdb_span sp[40];
        for (size_t i = 0; i < n; i++) {
            size_t len = rng() % 20;
            for (size_t k = 0; k < len; k++) cells[i][k] = alpha[rng() % (clean ? 14 : sizeof alpha - 1)];
            cells[i][len] = '\0';
            sp[i] = opdb_span_make(cells[i], len);
        }
        opdb_strbuf got, want;
        opdb_sb_init(&got);
        opdb_sb_init(&want);
        opdb_csv_write_record(&got, sp, n);
        if (n == 1 && sp[0].n == 0) {
            opdb_sb_add(&want, "\"\"", 2);
        } else {
            for (size_t i = 0; i < n; i++) {
                if (i) opdb_sb_addc(&want, ',');
                opdb_csv_write_cell(&want, sp[i].p, sp[i].n);
            }
        }
        opdb_sb_add(&want, "\r\n", 2);
        if (got.n != want.n || memcmp(got.p, want.p, got.n) != 0) print_error("iteration %d\n", it);
        assert_int_equal(got.n, want.n);
        assert_memory_equal(got.p, want.p, got.n);
        opdb_sb_free(&got);
        opdb_sb_free(&want);
    }
}

static void test_writer_literal_quoted_shape(void **s) {
    (void)s;
    const char *c[] = {"\"1,2;3,4\""};
    char *o = write_rec(c, 1);
    assert_string_equal(o, "\"\"\"1,2;3,4\"\"\"\r\n");
    free(o);
}

/* Regression (found by fuzz_parse under ASan): a quoted cell that grows past
 * the room reserved for the record must not let the following ',' separators
 * (around empty cells, which reserve nothing) overflow.  Every size is tried
 * so that some quoted cell ends exactly at the buffer's capacity. */
static void test_writer_growing_quoted_cell_then_more_cells(void **s) {
    (void)s;
    for (size_t k = 1; k < 700; k++) {
        char *q = malloc(k + 1);
        memset(q, '"', k);
        q[k] = '\0';
        const char *c[] = {q, "", "", "", "a"};
        char *o = write_rec(c, 5);
        size_t want = 2 + 2 * k + 4 + 1 + 2;
        assert_int_equal(strlen(o), want);
        assert_string_equal(o + want - 8, "\",,,,a\r\n");
        free(o);
        free(q);
    }
}

static void test_writer_lone_empty_cell(void **s) {
    (void)s;
    const char *c[] = {""};
    char *o = write_rec(c, 1);
    assert_string_equal(o, "\"\"\r\n");
    free(o);
    const char *c2[] = {"", ""};
    o = write_rec(c2, 2);
    assert_string_equal(o, ",\r\n");
    free(o);
}

static void test_writer_roundtrip_through_exact_reader(void **s) {
    (void)s;
    const char *c[] = {"", "a\"\"b", ",", "\r\n", "x y", "\"", "end"};
    char *o = write_rec(c, 7);
    parsed b = run_exact(o, strlen(o), MAXF, false);
    assert_string_equal(b.text, "7[|a\"\"b|,|\\r\\n|x y|\"|end]");
    parsed_free(&b);
    free(o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_records),
        cmocka_unit_test(test_batch_run_mapped_and_read),
        cmocka_unit_test(test_quoted_view_matches_unquote),
        cmocka_unit_test(test_quoted_comma_newline_and_doubled_quote),
        cmocka_unit_test(test_shape_cell_with_literal_quotes),
        cmocka_unit_test(test_crlf_records),
        cmocka_unit_test(test_lone_cr_ends_record),
        cmocka_unit_test(test_cr_inside_quotes_kept),
        cmocka_unit_test(test_blank_lines_skipped),
        cmocka_unit_test(test_blank_lines_kept_with_keep_blank),
        cmocka_unit_test(test_missing_final_newline),
        cmocka_unit_test(test_missing_final_newline_quoted),
        cmocka_unit_test(test_one_empty_quoted_cell),
        cmocka_unit_test(test_whitespace_only_line_is_a_record),
        cmocka_unit_test(test_trailing_comma_gives_empty_cell),
        cmocka_unit_test(test_empty_input_has_no_records),
        cmocka_unit_test(test_fast_cells_beyond_max_fields_dropped),
        cmocka_unit_test(test_exact_cells_beyond_max_fields_dropped_but_counted),
        cmocka_unit_test(test_record_across_block_boundary),
        cmocka_unit_test(test_long_file_many_blocks),
        cmocka_unit_test(test_fast_unterminated_quote_is_anomaly),
        cmocka_unit_test(test_exact_unterminated_quote_returns_record),
        cmocka_unit_test(test_exact_unterminated_empty_quote),
        cmocka_unit_test(test_fast_quote_inside_unquoted_cell_is_anomaly),
        cmocka_unit_test(test_exact_quote_inside_unquoted_cell_is_literal),
        cmocka_unit_test(test_fast_text_after_closing_quote_is_anomaly),
        cmocka_unit_test(test_exact_text_after_closing_quote_appended),
        cmocka_unit_test(test_exact_line_numbers_and_offsets),
        cmocka_unit_test(test_fast_record_offsets),
        cmocka_unit_test(test_differential_small_alphabet),
        cmocka_unit_test(test_differential_few_quotes_long),
        cmocka_unit_test(test_differential_canonical_quoting),
        cmocka_unit_test(test_block_scans_agree),
        cmocka_unit_test(test_skim_matches_next),
        cmocka_unit_test(test_batch_cut_after_last_newline),
        cmocka_unit_test(test_batch_cut_crlf_and_cr),
        cmocka_unit_test(test_batch_cut_skips_newline_inside_quotes),
        cmocka_unit_test(test_batch_cut_none),
        cmocka_unit_test(test_batch_cut_long_buffers_match_simple),
        cmocka_unit_test(test_writer_minimal_quoting_crlf),
        cmocka_unit_test(test_writer_quotes_special_cells),
        cmocka_unit_test(test_writer_literal_quoted_shape),
        cmocka_unit_test(test_writer_record_matches_cells),
        cmocka_unit_test(test_writer_lone_empty_cell),
        cmocka_unit_test(test_writer_growing_quoted_cell_then_more_cells),
        cmocka_unit_test(test_writer_roundtrip_through_exact_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
