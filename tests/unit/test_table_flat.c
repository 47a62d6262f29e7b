/* The table typed column by column on first use against the eager twin that
 * tokenizes and types every cell at load (tests/unit/table_eager.c): on
 * generated tables (every cell kind, NA spellings, quoting, short records,
 * line endings, blank lines, cells that start far into a long record) both
 * give the same columns, kinds, values, texts, lines and errors, whatever
 * order the columns are first read in and however many threads read them.
 * Tables whose quoting the block scan takes (canonical quotes, no line break
 * inside quotes) are also loaded by the exact scan and with the portable
 * block masks: the same records, lines and cell starts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/call.h"
#include "db/table.h"
#include "db/table_scan.h"
#include "opdb/fs.h"
#include "table_eager.h"

static uint64_t rng_s = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) {
    rng_s ^= rng_s << 13;
    rng_s ^= rng_s >> 7;
    rng_s ^= rng_s << 17;
    return rng_s;
}
static unsigned pick(unsigned n) { return (unsigned)(rnd() % n); }

/* cells the block scan takes: no quote inside an unquoted cell, none after a
 * closing one, no line break inside quotes */
static bool g_canon;

static const char *const k_words[] = {"DT_BF16;DT_BF16", "FLOAT", "ND;FRACTAL_NZ", "\"24,128;256,128\"", "MIX_AIC",
                                      "x", " ", "None", "a\"b", "é"};
static const char *const k_na[] = {"", "NA", "nan", "NaN", "#N/A", "-nan", "<NA>", "NULL", "null", "n/a"};

/* one cell of a column of the given flavour */
static void cell(opdb_strbuf *b, unsigned flavour) {
    char tmp[64];
    if (flavour != 6 && pick(12) == 0) { /* an NA spelling, sometimes quoted */
        const char *na = k_na[pick(10)];
        if (pick(3) == 0) opdb_sb_addf(b, "\"%s\"", na);
        else opdb_sb_adds(b, na);
        return;
    }
    switch (flavour) {
    case 0: snprintf(tmp, sizeof tmp, "%lld", (long long)(rnd() % 200000) - 1000); break;
    case 1: snprintf(tmp, sizeof tmp, "%.*f", (int)pick(8), (double)(rnd() % 100000) / 7.0); break;
    case 2: /* ints, floats with exponents, infinities */
        switch (pick(5)) {
        case 0: snprintf(tmp, sizeof tmp, "%d", (int)pick(100)); break;
        case 1: snprintf(tmp, sizeof tmp, "%ge%d", (double)pick(1000) / 3, (int)pick(40) - 20); break;
        case 2: snprintf(tmp, sizeof tmp, "%s", pick(2) ? "inf" : "-Infinity"); break;
        case 3: snprintf(tmp, sizeof tmp, " %d.5 ", (int)pick(9)); break;
        default: snprintf(tmp, sizeof tmp, "1.%019llu", (unsigned long long)rnd() % 10000000000000000000u); break;
        }
        break;
    case 3: snprintf(tmp, sizeof tmp, "%s", (const char *[]){"True", "False", "TRUE", "false"}[pick(4)]); break;
    case 4: /* integers past int64 */
        snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)(rnd() | (pick(2) ? 0x8000000000000000u : 0)));
        break;
    case 5: /* text, quoted or not, with quotes, commas and line breaks inside */
        switch (g_canon ? 3 + pick(3) : pick(6)) {
        case 0: snprintf(tmp, sizeof tmp, "\"a,b\"\"c\""); break;
        case 1: snprintf(tmp, sizeof tmp, "\"line\nbreak\r\nx\""); break;
        case 2: snprintf(tmp, sizeof tmp, "\"q\"tail"); break;
        case 3: snprintf(tmp, sizeof tmp, "\"%s\"", k_words[pick(3)]); break;
        default: snprintf(tmp, sizeof tmp, "%s", k_words[g_canon ? pick(8) : pick(10)]); break;
        }
        break;
    case 6: snprintf(tmp, sizeof tmp, "%s", k_na[pick(3)]); break; /* all NA */
    default: /* mostly numbers, now and then a word */
        if (pick(20) == 0) snprintf(tmp, sizeof tmp, "%s", k_words[g_canon ? pick(8) : pick(10)]);
        else snprintf(tmp, sizeof tmp, "%u", pick(5000));
        break;
    }
    if (flavour <= 4 && pick(10) == 0) opdb_sb_addf(b, "\"%s\"", tmp); /* quoting does not change a type */
    else opdb_sb_adds(b, tmp);
}

static void gen(opdb_strbuf *b, bool allow_long_record) {
    static const char *const names[] = {"a", "b", "a", "a.1", "", "\"Input Shapes\"", "x"};
    static const char *const eol[] = {"\n", "\r\n", "\r"};
    unsigned ncols = 1 + pick(8), nrows = pick(50), flav[8];
    opdb_sb_clear(b);
    if (pick(4) == 0) opdb_sb_adds(b, "\xef\xbb\xbf");
    for (unsigned c = 0; c < ncols; c++) {
        flav[c] = pick(8);
        opdb_sb_adds(b, c ? "," : "");
        opdb_sb_adds(b, names[pick(7)]);
    }
    const char *nl = eol[pick(3)];
    opdb_sb_adds(b, nl);
    for (unsigned r = 0; r < nrows; r++) {
        if (pick(15) == 0) opdb_sb_adds(b, pick(2) ? "  \t" : ""), opdb_sb_adds(b, nl); /* a blank line */
        unsigned n = pick(10) == 0 ? pick(ncols) + 1 : ncols;
        if (allow_long_record && pick(40) == 0) n = ncols + 1;
        for (unsigned c = 0; c < n; c++) {
            if (c) opdb_sb_addc(b, ',');
            if (c < ncols && c + 1 < n && pick(60) == 0) { /* a long cell: the next ones start far */
                opdb_sb_adds(b, "\"");
                for (int k = 0; k < 70000; k++) opdb_sb_addc(b, (char)('a' + k % 26));
                opdb_sb_adds(b, "\"");
                continue;
            }
            cell(b, c < ncols ? flav[c] : 0);
        }
        if (r + 1 < nrows || pick(2)) opdb_sb_adds(b, nl);
    }
}

static void same_cell(const db_cell *e, const db_cell *l, size_t r, size_t c) {
    if (e->kind != l->kind) fail_msg("row %zu col %zu: kind %d, eager %d", r, c, l->kind, e->kind);
    switch (e->kind) {
    case DBC_INT: assert_true(e->v.i == l->v.i); break;
    case DBC_UINT: assert_true(e->v.u == l->v.u); break;
    case DBC_FLOAT: assert_memory_equal(&e->v.f, &l->v.f, sizeof(double)); break;
    case DBC_BOOL: assert_int_equal(e->v.b, l->v.b); break;
    case DBC_TEXT:
        assert_int_equal(e->n, l->n);
        assert_memory_equal(e->v.s, l->v.s, e->n);
        break;
    default: break;
    }
    char b1[48], b2[48];
    opdb_span s1 = db_cell_text(e, b1, sizeof b1), s2 = db_cell_text(l, b2, sizeof b2);
    assert_int_equal(s1.n, s2.n);
    assert_memory_equal(s1.p, s2.p, s1.n);
}

/* The table loaded again by the exact scan, and by the block scan with its
 * portable masks: the same records, lines and cell starts (typing a column
 * finds the block scan's). Returns whether t's records came from the block
 * scan. */
static bool same_scans(db_table *t, const char *text, size_t n) {
    /* the block scan leaves the cells' starts to the first column typed */
    assert_true(!t->fast || t->at == NULL);
    for (int k = 0; k < 2; k++) {
        db_table x;
        opdb_err err;
        opdb_err_clear(&err);
        int rc = db_table_load_mem_way(&x, "G.csv", text, n, k == 0 ? DB_SCAN_EXACT : DB_SCAN_PORTABLE, &err);
        assert_int_equal(rc, 0);
        assert_false(k == 0 && x.fast);
        assert_int_equal(x.fast, k == 0 ? false : t->fast);
        assert_int_equal(x.nrows, t->nrows);
        assert_int_equal(x.ncols, t->ncols);
        if (t->nrows) {
            /* a file under 4 GiB keeps 32-bit record starts */
            assert_non_null(t->rec32);
            assert_null(t->rec);
            assert_memory_equal(x.rec32, t->rec32, t->nrows * sizeof *t->rec32);
            assert_memory_equal(x.line, t->line, t->nrows * sizeof *t->line);
            int c0 = (int)pick((unsigned)t->ncols); /* any column first */
            (void)db_table_column(t, c0);
            (void)db_table_column(&x, c0);
            assert_non_null(t->at);
            assert_memory_equal(x.at, t->at, t->nrows * t->ncols * sizeof *t->at);
        }
        db_table_free(&x);
    }
    return t->fast;
}

/* both loaders on text: the same outcome; cells read in a random column order */
static size_t g_fast_tables, g_fast_errors;
static void compare(const char *text, size_t n) {
    eager_table e;
    db_table t;
    opdb_err e1, e2;
    opdb_err_clear(&e1);
    opdb_err_clear(&e2);
    int r1 = eager_table_load_mem(&e, "G.csv", text, n, &e1), r2 = db_table_load_mem(&t, "G.csv", text, n, &e2);
    assert_int_equal(r1, r2);
    if (r1 != 0) {
        assert_string_equal(e1.msg, e2.msg);
        /* an error is worded by the exact scan, whatever found it */
        if (g_canon) g_fast_errors++;
    } else {
        if (same_scans(&t, text, n)) g_fast_tables++;
        assert_int_equal(e.ncols, t.ncols);
        assert_int_equal(e.nrows, t.nrows);
        for (size_t c = 0; c < t.ncols; c++) assert_string_equal(e.cols[c], t.cols[c]);
        for (size_t r = 0; r < t.nrows; r++) assert_int_equal(e.line[r], t.line[r]);
        size_t start = t.ncols ? pick((unsigned)t.ncols) : 0;
        for (size_t k = 0; k < t.ncols; k++) {
            size_t c = (start + k * 5) % t.ncols; /* a different first column each time */
            if (t.ncols % 5 == 0) c = (start + k) % t.ncols;
            assert_int_equal(db_table_col_kind(&t, (int)c), e.col_kind[c]);
            for (size_t r = 0; r < t.nrows; r++) same_cell(&e.cells[r * e.ncols + c], db_table_cell(&t, r, (int)c), r, c);
        }
    }
    eager_table_free(&e);
    db_table_free(&t);
}

static void test_generated_tables(void **state) {
    (void)state;
    opdb_strbuf b;
    opdb_sb_init(&b);
    for (int i = 0; i < 400; i++) {
        g_canon = i % 2 == 1;
        gen(&b, i % 4 == 3);
        compare(b.p, b.n);
        /* every prefix cut at a record boundary or inside one loads the same too */
        if (i % 20 == 0 || i % 20 == 1)
            for (size_t cut = 0; cut < b.n && cut < 400; cut += 7) compare(b.p, cut);
    }
    g_canon = false;
    /* both scans were exercised: most canonical tables by the block scan,
     * their records longer than the header as errors */
    assert_true(g_fast_tables >= 150);
    assert_true(g_fast_errors >= 10);
    opdb_sb_free(&b);
}

/* The block masks: every vector form as the portable one, on blocks of the
 * bytes they look for, ASCII and not. */
static void test_block_masks(void **state) {
    (void)state;
    static const char alphabet[] = {'"', ',', '\n', '\r', 'a', ' ', '\t', (char)0x80, (char)0xc3, (char)0xff, 0};
    char blk[64];
    for (int i = 0; i < 20000; i++) {
        unsigned mix = 1 + pick(11);
        for (int k = 0; k < 64; k++) blk[k] = pick(8) == 0 ? (char)pick(256) : alphabet[pick(mix)];
        if (i % 3 == 0)
            for (int k = 0; k < 64; k++) blk[k] &= 0x7f;
        db_block_masks p = db_block_masks_portable(blk);
        for (int avx2 = 0; avx2 < 2; avx2++) {
            db_block_masks v = db_block_masks_vec(blk, avx2);
            assert_true(v.quote == p.quote && v.comma == p.comma && v.lf == p.lf && v.cr == p.cr);
            assert_int_equal(v.high, p.high);
        }
    }
}

/* Hand-made cases at the block scan's edges: quotes and "\r\n" split across
 * blocks, quotes it leaves to the exact scan, blank lines, a last record
 * without a line end, records shorter and longer than the header. */
static void test_block_scan_edges(void **state) {
    (void)state;
    opdb_strbuf b;
    opdb_sb_init(&b);
    const char *tails[] = {"\"x\",y\r\n", "\"\"\"q\"\"\",2\n", "ab\"c,1\n", "\"q\"t,1\n", "\"a\nb\",1\n", " \t\r\n",
                           "1\r", "1,2,3\n", "\"\",\n", "x", "\"unclosed", "1,\"2\"", "\n\n"};
    size_t nt = sizeof tails / sizeof *tails;
    for (size_t pad = 0; pad < 140; pad++)
        for (size_t a = 0; a < nt; a++)
            for (size_t z = 0; z < nt; z += 3) {
                opdb_sb_clear(&b);
                opdb_sb_adds(&b, "h1,h2\n");
                for (size_t k = 0; k < pad; k++) opdb_sb_addc(&b, k % 9 == 8 ? '\n' : 'v');
                opdb_sb_adds(&b, ",\n");
                opdb_sb_adds(&b, tails[a]);
                opdb_sb_adds(&b, tails[z]);
                compare(b.p, b.n);
            }
    opdb_sb_free(&b);
}

/* The typed columns are 8 bytes a cell; a column nobody read holds nothing. */
static void test_columns_typed_on_first_use(void **state) {
    (void)state;
    db_table t;
    opdb_err err;
    opdb_err_clear(&err);
    const char *text = "a,b,c\n1,x,2.5\n2,\"y\"\"z\",\n";
    assert_int_equal(db_table_load_mem(&t, "T.csv", text, strlen(text), &err), 0);
    for (size_t c = 0; c < 3; c++) assert_int_equal(atomic_load(&t.ready[c]), 0);
    const db_cell *x = db_table_cell(&t, 1, 1);
    assert_int_equal(x->kind, DBC_TEXT);
    assert_int_equal(x->n, 3);
    assert_memory_equal(x->v.s, "y\"z", 3);
    assert_int_equal(atomic_load(&t.ready[1]), 1);
    assert_int_equal(atomic_load(&t.ready[0]), 0);
    assert_int_equal(db_table_col_kind(&t, 2), DBC_FLOAT);
    assert_int_equal(db_table_cell(&t, 1, 2)->kind, DBC_NA);
    db_table_free(&t);
}

typedef struct reader {
    const db_table *t;
    const eager_table *e;
    unsigned first;
    int bad;
} reader;

static void *read_all(void *p) {
    reader *rd = p;
    for (size_t k = 0; k < rd->t->ncols; k++) {
        size_t c = (rd->first + k) % rd->t->ncols;
        for (size_t r = 0; r < rd->t->nrows; r++) {
            const db_cell *l = db_table_cell(rd->t, r, (int)c), *e = &rd->e->cells[r * rd->e->ncols + c];
            char b1[48], b2[48];
            opdb_span s1 = db_cell_text(e, b1, sizeof b1), s2 = db_cell_text(l, b2, sizeof b2);
            if (l->kind != e->kind || s1.n != s2.n || memcmp(s1.p, s2.p, s1.n) != 0) rd->bad++;
        }
    }
    return NULL;
}

/* One table shared by many threads that read its columns in different
 * orders: each column is typed once and every thread sees it whole. */
static void test_threads_share_one_table(void **state) {
    (void)state;
    opdb_strbuf b;
    opdb_sb_init(&b);
    for (int round = 0; round < 20; round++) {
        g_canon = round % 2 == 1;
        do gen(&b, false);
        while (b.n < 200);
        eager_table e;
        db_table t;
        opdb_err err;
        opdb_err_clear(&err);
        assert_int_equal(eager_table_load_mem(&e, "G.csv", b.p, b.n, &err), 0);
        assert_int_equal(db_table_load_mem(&t, "G.csv", b.p, b.n, &err), 0);
        pthread_t th[8];
        reader rd[8];
        for (unsigned i = 0; i < 8; i++) {
            rd[i] = (reader){&t, &e, i, 0};
            assert_int_equal(pthread_create(&th[i], NULL, read_all, &rd[i]), 0);
        }
        for (unsigned i = 0; i < 8; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(rd[i].bad, 0);
        }
        eager_table_free(&e);
        db_table_free(&t);
    }
    g_canon = false;
    opdb_sb_free(&b);
}

/* A table read from its file, mapped and read into memory, as from memory:
 * the same records, lines, cells and errors. */
static void test_file_mapped_and_read(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_table_flat_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/T.csv", dir);
    opdb_strbuf b;
    opdb_sb_init(&b);
    for (int i = 0; i < 60; i++) {
        g_canon = i % 2 == 0;
        gen(&b, i % 6 == 5);
        if (i == 58) opdb_sb_clear(&b); /* an empty file */
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(b.p ? b.p : "", 1, b.n, f), b.n);
        fclose(f);
        db_table m;
        opdb_err em, er, ex;
        opdb_err_clear(&em);
        opdb_err_clear(&er);
        opdb_err_clear(&ex);
        int rm = db_table_load(&m, path, &em);
        assert_true(rm != 0 || b.n == 0 || m.view.map != NULL); /* this file system maps */
        db_table r;
        opdb_call_scope call = opdb_call_enter(NULL); /* a call of its own: its no_map ends with it */
        opdb_call_set_no_map(true);
        int rr = db_table_load(&r, path, &er);
        opdb_call_leave(&call);
        assert_true(rr != 0 || r.view.map == NULL);
        db_table x;
        int rx = db_table_load_mem(&x, path, b.p ? b.p : "", b.n, &ex);
        assert_int_equal(rm, rr);
        assert_int_equal(rm, rx);
        if (rm) {
            assert_string_equal(em.msg, er.msg);
            assert_string_equal(em.msg, ex.msg);
        } else {
            const db_table *o[2] = {&r, &x};
            for (int k = 0; k < 2; k++) {
                assert_int_equal(o[k]->nrows, m.nrows);
                assert_int_equal(o[k]->ncols, m.ncols);
                for (size_t row = 0; row < m.nrows; row++) {
                    assert_int_equal(o[k]->line[row], m.line[row]);
                    for (size_t c = 0; c < m.ncols; c++)
                        same_cell(db_table_cell(o[k], row, (int)c), db_table_cell(&m, row, (int)c), row, c);
                }
            }
        }
        db_table_free(&m);
        db_table_free(&r);
        db_table_free(&x);
    }
    g_canon = false;
    unlink(path);
    rmdir(dir);
    opdb_sb_free(&b);
}

/* Every cell of t against the eager twin e: through a pass (no typed column
 * left behind) or through the table's own columns. */
/* A pass's str() of every cell, text columns read straight from their
 * bytes, against the eager twin's cell; a text said to last does, up to the
 * pass's end. Now and then a column is typed by the pass first. */
static void pass_str_all(const eager_table *e, db_table *t) {
    db_pass P;
    db_pass_begin(&P, t);
    size_t start = t->ncols ? pick((unsigned)t->ncols) : 0, nkept = 0;
    opdb_span *kept = malloc((t->nrows * t->ncols + 1) * sizeof *kept);
    size_t *kept_at = malloc((t->nrows * t->ncols + 1) * sizeof *kept_at);
    assert_non_null(kept);
    assert_non_null(kept_at);
    for (size_t k = 0; k < t->ncols; k++) {
        size_t c = (start + k) % t->ncols;
        if (t->nrows && pick(4) == 0) (void)db_pass_cell(&P, pick((unsigned)t->nrows), (int)c);
        for (size_t r = 0; r < t->nrows; r++) {
            char b1[48], b2[48];
            bool stable = false;
            opdb_span got = db_pass_str(&P, r, (int)c, b1, sizeof b1, &stable);
            opdb_span want = db_cell_text(&e->cells[r * e->ncols + c], b2, sizeof b2);
            if (got.n != want.n || memcmp(got.p, want.p, got.n) != 0)
                fail_msg("row %zu col %zu: str '%.*s', eager '%.*s'", r, c, (int)got.n, got.p, (int)want.n, want.p);
            if (stable) {
                kept[nkept] = got;
                kept_at[nkept++] = r * e->ncols + c;
            }
        }
    }
    for (size_t i = 0; i < nkept; i++) {
        char b2[48];
        opdb_span want = db_cell_text(&e->cells[kept_at[i]], b2, sizeof b2);
        assert_int_equal(kept[i].n, want.n);
        assert_memory_equal(kept[i].p, want.p, want.n);
    }
    free(kept);
    free(kept_at);
    db_pass_end(&P);
}

static void same_all(const eager_table *e, db_table *t, bool pass) {
    db_pass P;
    if (pass) db_pass_begin(&P, t);
    size_t start = t->ncols ? pick((unsigned)t->ncols) : 0;
    for (size_t k = 0; k < t->ncols; k++) {
        size_t c = (start + k) % t->ncols;
        for (size_t r = 0; r < t->nrows; r++)
            same_cell(&e->cells[r * e->ncols + c], pass ? db_pass_cell(&P, r, (int)c) : db_table_cell(t, r, (int)c), r,
                      c);
    }
    if (pass) db_pass_end(&P);
    if (pass) pass_str_all(e, t);
}

/* A pass types its columns for itself: the table keeps none; trimming gives
 * back the cells' starts and the mapped file's pages, and the table still
 * reads every cell the same (its columns typed again, or already typed,
 * their texts read from pages the file gives back). Mapped, read and from
 * memory. */
static void test_pass_and_trim(void **state) {
    (void)state;
    char dir[] = "/tmp/opdb_table_trim_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/T.csv", dir);
    opdb_strbuf b;
    opdb_sb_init(&b);
    for (int i = 0; i < 60; i++) {
        g_canon = i % 2 == 0;
        gen(&b, i % 6 == 5);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(b.p ? b.p : "", 1, b.n, f), b.n);
        fclose(f);
        eager_table e;
        opdb_err ee;
        opdb_err_clear(&ee);
        if (eager_table_load_mem(&e, "G.csv", b.p ? b.p : "", b.n, &ee) != 0) {
            eager_table_free(&e); /* a failed load keeps what it read so far */
            continue;
        }
        for (int k = 0; k < 4; k++) {
            db_table t;
            opdb_err err;
            opdb_err_clear(&err);
            int rc;
            if (k == 0) {
                rc = db_table_load(&t, path, &err);
                assert_true(rc != 0 || t.view.map != NULL);
            } else if (k == 1) {
                opdb_call_scope call = opdb_call_enter(NULL);
                opdb_call_set_no_map(true);
                rc = db_table_load(&t, path, &err);
                opdb_call_leave(&call);
            } else if (k == 2) {
                rc = db_table_load_mem(&t, "G.csv", b.p ? b.p : "", b.n, &err);
            } else {
                rc = db_table_load_mem_way(&t, "G.csv", b.p ? b.p : "", b.n, DB_SCAN_EXACT, &err);
            }
            assert_int_equal(rc, 0);
            /* sometimes a column is the table's before the pass: the pass reads it from there */
            /* sometimes the record starts as a file of 4 GiB or more keeps them (8 bytes each) */
            if (t.rec32 && pick(2)) {
                t.rec = malloc(t.nrows * sizeof *t.rec);
                assert_non_null(t.rec);
                for (size_t r = 0; r < t.nrows; r++) t.rec[r] = t.rec32[r];
                free(t.rec32);
                t.rec32 = NULL;
            }
            int pre = -1;
            if (t.ncols && pick(2)) (void)db_table_column(&t, pre = (int)pick((unsigned)t.ncols));
            size_t typed0 = 0;
            for (size_t c = 0; c < t.ncols; c++) typed0 += t.ready[c];
            same_all(&e, &t, true);
            size_t typed1 = 0;
            for (size_t c = 0; c < t.ncols; c++) typed1 += t.ready[c];
            assert_int_equal(typed1, typed0);
            db_table_trim(&t);
            assert_null(t.at); /* the exact scan's too: its records are read again */
            same_all(&e, &t, false); /* typed again, from records and pages given back */
            /* columns typed after the trim: their texts are their own, and the
             * cells' starts they were typed from went back */
            assert_null(t.at);
            if (t.nrows) assert_int_equal(t.late_typed, t.ncols - typed0);
            for (size_t c = 0; t.view.map && c < t.ncols; c++) {
                const db_col *col = &t.colv[c];
                if (col->kind != DBC_TEXT || (int)c == pre) continue;
                for (size_t r = 0; r < t.nrows; r++) {
                    db_cell cell;
                    db_col_cell_into(&t, col, r, &cell);
                    if (cell.kind == DBC_TEXT && cell.n) /* not a view of the file's bytes */
                        assert_true(cell.v.s < t.data || cell.v.s >= t.data + t.n);
                }
            }
            db_table_trim(&t);
            same_all(&e, &t, false); /* typed columns whose texts lie in pages given back */
            same_all(&e, &t, true);
            db_table_free(&t);
        }
        eager_table_free(&e);
    }
    g_canon = false;
    unlink(path);
    rmdir(dir);
    opdb_sb_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_tables),
        cmocka_unit_test(test_columns_typed_on_first_use),
        cmocka_unit_test(test_threads_share_one_table),
        cmocka_unit_test(test_block_masks),
        cmocka_unit_test(test_block_scan_edges),
        cmocka_unit_test(test_file_mapped_and_read),
        cmocka_unit_test(test_pass_and_trim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
