/* The database table's row index (signature -> rows) against a linear scan
 * over the same rows, on seeded random signatures with many duplicates,
 * filed now and a few rows late in turn; and the signature cells read by
 * column name, from a shuffled header and from a lazy table read both ways. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/lazy_table.h"
#include "db/row_index.h"
#include "db/sig_cells.h"

/* xorshift64*: the same rows on every run */
static uint64_t next_rand(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* A signature from a small space (duplicates are common); some share a
 * prefix with others, some are empty. */
static void random_sig(uint64_t *s, opdb_strbuf *out, unsigned space) {
    opdb_sb_clear(out);
    unsigned v = (unsigned)(next_rand(s) % space);
    if (v == 0) return;
    opdb_sb_addf(out, "%u\x1f%u,%u", v, v % 7, v * 13);
}

/* The rows holding sig, by a linear scan. */
static size_t scan(char **sigs, size_t n, const char *sig, size_t *rows) {
    size_t k = 0;
    for (size_t r = 0; r < n; r++)
        if (strcmp(sigs[r], sig) == 0) rows[k++] = r;
    return k;
}

static void check_against_scan(db_row_index *ri, char **sigs, size_t n) {
    size_t *rows = malloc((n + 1) * sizeof *rows);
    size_t distinct = 0;
    for (size_t r = 0; r < n; r++) {
        size_t len = strlen(sigs[r]);
        db_row_entry *e = db_row_index_find(ri, sigs[r], len, db_row_index_hash(sigs[r], len));
        assert_non_null(e);
        size_t k = scan(sigs, n, sigs[r], rows);
        assert_int_equal(e->n, k);
        for (size_t j = 0; j < k; j++) assert_int_equal(db_row_entry_row(e, j), rows[j]);
        if (rows[0] == r) { /* first seen here: entries are in first-seen order */
            assert_ptr_equal(e, &ri->e[distinct]);
            distinct++;
        }
    }
    assert_int_equal(ri->n, distinct);
    free(rows);
}

static void test_index_matches_linear_scan(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        uint64_t s = seed * 0x9e3779b97f4a7c15ull;
        size_t n = 1 + (size_t)(next_rand(&s) % 3000);
        unsigned space = 1 + (unsigned)(next_rand(&s) % (seed % 2 ? 50 : 5000));
        char **sigs = malloc(n * sizeof *sigs);
        db_row_index ri;
        memset(&ri, 0, sizeof ri);
        if (seed % 3 == 0) db_row_index_reserve(&ri, n / 2 + 1);
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        for (size_t r = 0; r < n; r++) {
            random_sig(&s, &sb, space);
            sigs[r] = strdup(sb.p ? sb.p : "");
            if (next_rand(&s) % 4 == 0) db_row_index_add(&ri, &sb, r); /* files the queued rows first */
            else db_row_index_add_soon(&ri, &sb, r);
        }
        db_row_index_flush(&ri);
        check_against_scan(&ri, sigs, n);
        /* signatures never filed are not found */
        for (int k = 0; k < 50; k++) {
            char absent[64];
            snprintf(absent, sizeof absent, "absent%d\x1f%u", k, (unsigned)next_rand(&s));
            assert_null(db_row_index_find(&ri, absent, strlen(absent), db_row_index_hash(absent, strlen(absent))));
        }
        opdb_sb_free(&sb);
        for (size_t r = 0; r < n; r++) free(sigs[r]);
        free(sigs);
        db_row_index_free(&ri);
    }
}

static opdb_span sp(const char *s) { return opdb_span_cstr(s); }

/* The cells of c in opdb_sig_cell_cols order. */
static void cells_of(const opdb_sig_cells *c, opdb_span out[OPDB_NSIG_CELLS]) { memcpy(out, c, sizeof *c); }

/* Each signature cell read through the map is the cell under its name. */
static void test_sig_cells_by_name(void **state) {
    (void)state;
    uint64_t s = 7;
    const char *extra[] = {"OP State", "Accelerator Core", "Output Formats", "Average Duration(us)", "Other"};
    for (int round = 0; round < 200; round++) {
        const char *names[OPDB_NSIG_CELLS + 5];
        size_t n = 0;
        int drop = (int)(next_rand(&s) % (OPDB_NSIG_CELLS + 1)); /* == OPDB_NSIG_CELLS: none dropped */
        for (int k = 0; k < OPDB_NSIG_CELLS; k++)
            if (k != drop) names[n++] = opdb_sig_cell_cols[k];
        for (int k = 0; k < 5; k++) names[n++] = extra[k];
        for (size_t i = n - 1; i > 0; i--) { /* shuffle */
            size_t j = (size_t)(next_rand(&s) % (i + 1));
            const char *t = names[i];
            names[i] = names[j];
            names[j] = t;
        }
        opdb_span hdr[OPDB_NSIG_CELLS + 5], row[OPDB_NSIG_CELLS + 5];
        char vals[OPDB_NSIG_CELLS + 5][32];
        for (size_t i = 0; i < n; i++) {
            hdr[i] = sp(names[i]);
            snprintf(vals[i], sizeof vals[i], "v%zu:%s", i, names[i]);
            row[i] = sp(vals[i]);
        }
        db_sig_cols a, b;
        int rc = db_sig_cols_from_header(&a, hdr, n, DB_NAME_FIRST);
        assert_int_equal(rc, drop < OPDB_NSIG_CELLS ? -1 : 0);
        assert_int_equal(db_sig_cols_from_names(&b, names, n), rc);
        assert_memory_equal(&a, &b, sizeof a);
        opdb_sig_cells c = db_sig_cells_from_row(&a, row, n);
        opdb_span got[OPDB_NSIG_CELLS];
        cells_of(&c, got);
        for (int k = 0; k < OPDB_NSIG_CELLS; k++) {
            const char *want = "";
            for (size_t i = 0; i < n; i++)
                if (strcmp(names[i], opdb_sig_cell_cols[k]) == 0) want = vals[i];
            assert_true(opdb_span_eq_cstr(got[k], want));
        }
        /* a short row: cells past its end read "" */
        c = db_sig_cells_from_row(&a, row, 0);
        cells_of(&c, got);
        for (int k = 0; k < OPDB_NSIG_CELLS; k++) assert_int_equal(got[k].n, 0);
    }
    /* the key column layout: base columns, then EP Size */
    const db_sig_cols *kc = db_sig_cols_of_key_cols();
    for (int k = 0; k < OPDB_NSIG_CELLS; k++) assert_string_equal(opdb_key_cols[kc->col[k]], opdb_sig_cell_cols[k]);
}

/* A lazy row and the same row read in full give the same signature cells. */
static void test_lazy_and_full_sig_cells(void **state) {
    (void)state;
    char path[] = "/tmp/opdb_test_lazy_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    /* signature columns out of schema order, EP Size absent */
    fputs("Output Shapes,OP State,Input Shapes,Average Duration(us),Input Data Types,Output Data Types,Input Formats\r\n", f);
    fputs("\"1,2\",dyn,\"3,4\",1.5,DT_FLOAT,DT_FLOAT16,ND\r\n", f);
    fputs("\"5\",dyn,\"\"\"q\"\"\",2.5,INT8,INT32,NZ\r\n", f);
    fputs(",dyn,,,,,\r\n", f);
    fclose(f);
    db_lazy_table lazy, full;
    memset(&lazy, 0, sizeof lazy);
    memset(&full, 0, sizeof full);
    opdb_err err = {0};
    assert_int_equal(db_lazy_load(path, &lazy, false, &db_lazy_update_rules, NULL, &err), 0);
    assert_int_equal(db_lazy_load(path, &full, true, &db_lazy_update_rules, NULL, &err), 0);
    assert_true(lazy.lazy_rows);
    assert_false(full.lazy_rows);
    assert_int_equal(lazy.n, 3);
    assert_int_equal(full.n, 3);
    db_sig_cols kl, kf;
    db_sig_cols_from_names(&kl, (const char *const *)lazy.ks.name, (size_t)lazy.ks.n);
    db_sig_cols_from_names(&kf, (const char *const *)full.ks.name, (size_t)full.ks.n);
    for (size_t r = 0; r < 3; r++) {
        assert_true(lazy.rows[r].lazy);
        opdb_sig_cells a = db_lazy_sig_cells(&lazy, &lazy.rows[r], &kl);
        opdb_sig_cells b = db_lazy_sig_cells(&full, &full.rows[r], &kf);
        opdb_sig_cells c = db_lazy_sig_cells(&lazy, db_lazy_row_full(&lazy, r), &kl);
        opdb_span pa[OPDB_NSIG_CELLS], pb[OPDB_NSIG_CELLS], pc[OPDB_NSIG_CELLS];
        cells_of(&a, pa);
        cells_of(&b, pb);
        cells_of(&c, pc);
        for (int k = 0; k < OPDB_NSIG_CELLS; k++) {
            assert_true(opdb_span_eq(pa[k], pb[k]));
            assert_true(opdb_span_eq(pc[k], pb[k]));
        }
    }
    opdb_sig_cells b = db_lazy_sig_cells(&full, &full.rows[1], &kf);
    assert_true(opdb_span_eq_cstr(b.in_shapes, "\"q\""));
    assert_true(opdb_span_eq_cstr(b.out_shapes, "5"));
    assert_int_equal(b.ep_size.n, 0);
    db_lazy_free(&lazy);
    db_lazy_free(&full);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_matches_linear_scan),
        cmocka_unit_test(test_sig_cells_by_name),
        cmocka_unit_test(test_lazy_and_full_sig_cells),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
