/* kernel_details ingest: header column map, row extraction, FIA runtime index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/columns.h"
#include "ingest/fia_runtime.h"
#include "ingest/kd_rows.h"
#include "opdb/pystr.h"

#define MAXH 80

/* The 35 canonical kernel_details column names, in role order. */
static const char *role_name(int r) { return r < KD_METRIC0 ? kd_role_names[r] : opdb_metric_names[r - KD_METRIC0]; }

typedef struct {
    opdb_field f[MAXH];
    char store[MAXH][64];
    int n;
} row_t;

static void row_add(row_t *r, const char *s) {
    assert_true(r->n < MAXH);
    size_t k = strlen(s);
    assert_true(k < 64);
    memcpy(r->store[r->n], s, k + 1);
    r->f[r->n].p = r->store[r->n];
    r->f[r->n].n = (uint32_t)k;
    r->n++;
}

/* Header of all 35 canonical names except those listed in `skip` (NULL-ended). */
static void full_header(row_t *h, const char *const *skip) {
    h->n = 0;
    for (int r = 0; r < KD_NROLES; r++) {
        bool sk = false;
        for (const char *const *q = skip; q && *q; q++)
            if (!strcmp(*q, role_name(r))) sk = true;
        if (!sk) row_add(h, role_name(r));
    }
}

static int missing(const kd_colmap *L, bool quirks, char *buf, size_t cap) { return kd_colmap_missing(L, quirks, buf, cap); }

/* ---- kd_colmap ---------------------------------------------------------------- */

static void test_colmap_full_header_nothing_missing(void **s) {
    (void)s;
    row_t h;
    full_header(&h, NULL);
    kd_colmap L;
    kd_colmap_build(&L, h.f, h.n, true);
    char buf[1024];
    assert_int_equal(missing(&L, false, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(missing(&L, true, buf, sizeof buf), 0);
    for (int r = 0; r < KD_NROLES; r++) assert_int_equal(L.col[r], r);
    assert_int_equal(L.max_col, KD_NROLES - 1);
    assert_int_equal(L.metrics_present, (1u << OPDB_NMETRICS) - 1);
}

static void test_colmap_aliases_stand_in_for_absent_names(void **s) {
    (void)s;
    row_t h = {.n = 0};
    row_add(&h, "OP Type");
    row_add(&h, "Task Type");
    row_add(&h, "Input Shapes");
    row_add(&h, "Output Shapes");
    row_add(&h, "Task Duration(us)");
    kd_colmap L;
    kd_colmap_build(&L, h.f, h.n, true);
    assert_int_equal(L.col[KD_TYPE], 0);
    assert_int_equal(L.col[KD_ACCEL_CORE], 1);
    assert_int_equal(L.col[KD_DURATION], 4);
    char buf[256];
    assert_int_equal(missing(&L, false, buf, sizeof buf), 0);
    assert_int_equal(L.metrics_present, 0);
}

static void test_colmap_aliases_off_without_use_aliases(void **s) {
    (void)s;
    row_t h = {.n = 0};
    row_add(&h, "OP Type");
    row_add(&h, "Input Shapes");
    row_add(&h, "Output Shapes");
    row_add(&h, "Task Duration(us)");
    kd_colmap L;
    kd_colmap_build(&L, h.f, h.n, false);
    assert_int_equal(L.col[KD_TYPE], -1);
    assert_int_equal(L.col[KD_DURATION], -1);
    char buf[256];
    assert_int_equal(missing(&L, false, buf, sizeof buf), 2);
    assert_string_equal(buf, "Duration(us), Type");
}

static void test_colmap_canonical_name_beats_alias(void **s) {
    (void)s;
    row_t h = {.n = 0};
    row_add(&h, "OP Type");
    row_add(&h, "Type");
    row_add(&h, "Duration(us)");
    row_add(&h, "Task Duration(us)");
    kd_colmap L;
    kd_colmap_build(&L, h.f, h.n, true);
    assert_int_equal(L.col[KD_TYPE], 1);
    assert_int_equal(L.col[KD_DURATION], 2);
}

static void test_colmap_last_duplicate_wins(void **s) {
    (void)s;
    row_t h = {.n = 0};
    row_add(&h, "Type");
    row_add(&h, "Input Shapes");
    row_add(&h, "Type");
    row_add(&h, "OP Type");
    row_add(&h, "x");
    row_add(&h, "Task Type");
    row_add(&h, "Task Type");
    kd_colmap L;
    kd_colmap_build(&L, h.f, h.n, true);
    assert_int_equal(L.col[KD_TYPE], 2);
    assert_int_equal(L.col[KD_ACCEL_CORE], 6);
    assert_int_equal(L.max_col, 6);
}

static void test_colmap_names_match_exactly(void **s) {
    (void)s;
    row_t h = {.n = 0};
    row_add(&h, " Type");
    row_add(&h, "type");
    row_add(&h, "Type ");
    kd_colmap L;
    kd_colmap_build(&L, h.f, h.n, true);
    assert_int_equal(L.col[KD_TYPE], -1);
    assert_int_equal(L.max_col, -1);
}

static void test_colmap_missing_sorted_and_joined(void **s) {
    (void)s;
    kd_colmap L;
    kd_colmap_build(&L, NULL, 0, true);
    char buf[2048];
    assert_int_equal(missing(&L, false, buf, sizeof buf), 4);
    assert_string_equal(buf, "Duration(us), Input Shapes, Output Shapes, Type");
}

static void test_colmap_quirks_requires_all_35(void **s) {
    (void)s;
    static const char *const skip[] = {"OP State", "aic_mac_ratio", NULL};
    row_t h;
    full_header(&h, skip);
    kd_colmap L;
    kd_colmap_build(&L, h.f, h.n, true);
    char buf[1024];
    assert_int_equal(missing(&L, false, buf, sizeof buf), 0);
    assert_int_equal(missing(&L, true, buf, sizeof buf), 2);
    assert_string_equal(buf, "OP State, aic_mac_ratio"); /* code-point order: 'O' < 'a' */
    assert_false(L.metrics_present & (1u << 3));
    assert_true(L.metrics_present & (1u << 2));
}

static void test_colmap_quirks_missing_order(void **s) {
    (void)s;
    static const char *const skip[] = {"aiv_time(us)", "Duration(us)", "Accelerator Core", "cube_utilization(%)", NULL};
    row_t h;
    full_header(&h, skip);
    kd_colmap L;
    kd_colmap_build(&L, h.f, h.n, true);
    char buf[1024];
    assert_int_equal(missing(&L, true, buf, sizeof buf), 4);
    assert_string_equal(buf, "Accelerator Core, Duration(us), aiv_time(us), cube_utilization(%)");
    assert_int_equal(missing(&L, false, buf, sizeof buf), 1);
    assert_string_equal(buf, "Duration(us)");
}

static void test_colmap_quirks_empty_header_lists_35(void **s) {
    (void)s;
    kd_colmap L;
    kd_colmap_build(&L, NULL, 0, false);
    char buf[4096];
    assert_int_equal(missing(&L, true, buf, sizeof buf), 35);
    /* sorted: every ", "-separated name is >= the previous one */
    char *save, *prev = NULL, *copy = strdup(buf);
    int n = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save), n++) {
        if (*t == ' ') t++;
        if (prev) assert_true(strcmp(prev, t) < 0);
        prev = t;
    }
    assert_int_equal(n, 35);
    free(copy);
}

static void test_colmap_missing_small_buffer_is_safe(void **s) {
    (void)s;
    kd_colmap L;
    kd_colmap_build(&L, NULL, 0, false);
    char buf[12];
    memset(buf, 'Z', sizeof buf);
    assert_int_equal(missing(&L, false, buf, 8), 4);
    assert_true(memchr(buf, '\0', 8) != NULL);
    assert_int_equal(buf[8], 'Z'); /* nothing written past cap */
}

/* ---- kd_row_extract ------------------------------------------------------------ */

typedef struct {
    row_t hdr;
    kd_colmap L;
    row_t row;
} fixture;

/* Sets every cell of a full-width row; cells beyond are left empty. */
static void make_row(fixture *fx, const char *type, const char *in, const char *out, const char *dur) {
    full_header(&fx->hdr, NULL);
    kd_colmap_build(&fx->L, fx->hdr.f, fx->hdr.n, true);
    fx->row.n = 0;
    for (int r = 0; r < KD_NROLES; r++) {
        const char *v = "";
        if (r == KD_TYPE) v = type;
        else if (r == KD_IN_SHAPES) v = in;
        else if (r == KD_OUT_SHAPES) v = out;
        else if (r == KD_DURATION) v = dur;
        row_add(&fx->row, v);
    }
}

static void set_cell(fixture *fx, int role, const char *v) {
    size_t k = strlen(v);
    memcpy(fx->row.store[role], v, k + 1);
    fx->row.f[role].n = (uint32_t)k;
}

static bool span_is(opdb_span s, const char *want) { return opdb_span_eq_cstr(s, want); }

static void test_row_extract_basic(void **s) {
    (void)s;
    fixture fx;
    make_row(&fx, " MatMulV2 ", "\"4,64;128,64\"", " \"4,128\"\t", "12.5\t");
    set_cell(&fx, KD_ACCEL_CORE, " AI_CORE ");
    set_cell(&fx, KD_METRIC0 + 0, "1.5");
    set_cell(&fx, KD_METRIC0 + 1, "abc");
    set_cell(&fx, KD_METRIC0 + 24, " 2e1 ");
    kd_row r;
    memset(&r, 0xab, sizeof r);
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_int_equal(r.flags, 0);
    assert_true(span_is(r.type, "MatMulV2"));
    assert_true(span_is(r.in, "\"4,64;128,64\""));  /* literal quotes kept */
    assert_true(span_is(r.out, "\"4,128\""));
    assert_true(span_is(r.desc[KD_ACCEL_CORE - KD_OP_STATE], "AI_CORE"));
    assert_true(span_is(r.desc[0], ""));
    assert_true(r.duration == 12.5);
    assert_true(r.metric[0] == 1.5);
    assert_true(r.metric[1] == 0.0);
    assert_true(r.metric[2] == 0.0);
    assert_true(r.metric[24] == 20.0);
    assert_true(r.hash == kd_key_hash(r.type, r.in, r.out));
}

static void test_row_na_shapes_detected(void **s) {
    (void)s;
    static const char *const na[] = {"N/A", "\"N/A\"", " n/a ", "\"\"N/a\"\"", "\t\"N/A\" "};
    for (size_t i = 0; i < sizeof na / sizeof na[0]; i++) {
        fixture fx;
        make_row(&fx, "Add", na[i], "1", "1");
        kd_row r;
        kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
        if (!(r.flags & KD_ROW_NA_SHAPES)) print_error("input shapes <%s> not N/A\n", na[i]);
        assert_true(r.flags & KD_ROW_NA_SHAPES);
        make_row(&fx, "Add", "1", na[i], "1");
        kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, true);
        assert_true(r.flags & KD_ROW_NA_SHAPES);
    }
}

static void test_row_na_lookalikes_not_na(void **s) {
    (void)s;
    static const char *const notna[] = {"NA", "N/A;N/A", "N /A", "'N/A'", "", "N/AA", "(N/A)"};
    for (size_t i = 0; i < sizeof notna / sizeof notna[0]; i++) {
        assert_false(kd_is_na_shape(opdb_span_cstr(notna[i])));
        fixture fx;
        make_row(&fx, "Add", notna[i], "1", "1");
        kd_row r;
        kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
        assert_false(r.flags & KD_ROW_NA_SHAPES);
    }
}

static void test_row_kernel_name_alias(void **s) {
    (void)s;
    fixture fx;
    kd_row r;
    make_row(&fx, "split_qkv_rmsnorm_rope_kernel_0", "1", "1", "1");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_true(span_is(r.type, "split_qkv_rmsnorm_rope_kernel"));
    assert_true(r.hash == kd_key_hash(opdb_span_cstr("split_qkv_rmsnorm_rope_kernel"), r.in, r.out));
    make_row(&fx, " muls_add_kernel_1 ", "1", "1", "1");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_true(span_is(r.type, "muls_add_kernel"));
}

static void test_row_kernel_alias_exact_only(void **s) {
    (void)s;
    fixture fx;
    kd_row r;
    make_row(&fx, "split_qkv_rmsnorm_rope_kernel_01", "1", "1", "1");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_true(span_is(r.type, "split_qkv_rmsnorm_rope_kernel_01"));
    make_row(&fx, "Split_qkv_rmsnorm_rope_kernel_0", "1", "1", "1");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_true(span_is(r.type, "Split_qkv_rmsnorm_rope_kernel_0"));
}

static void test_row_fia_flag(void **s) {
    (void)s;
    fixture fx;
    kd_row r;
    make_row(&fx, " FusedInferAttentionScore ", "1", "1", "1");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_true(r.flags & KD_ROW_FIA);
    make_row(&fx, "FusedInferAttentionScoreV2", "1", "1", "1");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_false(r.flags & KD_ROW_FIA);
}

static void test_row_bad_duration_flagged_without_quirks(void **s) {
    (void)s;
    static const char *const bad[] = {"abc", "", "1,5", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fixture fx;
        kd_row r;
        make_row(&fx, "Add", "1", "1", bad[i]);
        kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
        assert_true(r.flags & KD_ROW_BAD_DURATION);
        assert_true(span_is(r.dur_text, bad[i]));
    }
}

static void test_row_bad_duration_is_zero_with_quirks(void **s) {
    (void)s;
    fixture fx;
    kd_row r;
    make_row(&fx, "Add", "1", "1", "abc");
    set_cell(&fx, KD_METRIC0 + 5, "3");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, true);
    assert_false(r.flags & KD_ROW_BAD_DURATION);
    assert_true(r.duration == 0.0);
    assert_true(r.metric[5] == 3.0); /* the row is still fully decoded */
}

static void test_row_duration_python_forms(void **s) {
    (void)s;
    fixture fx;
    kd_row r;
    make_row(&fx, "Add", "1", "1", " 1_0 ");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_int_equal(r.flags, 0);
    assert_true(r.duration == 10.0);
    /* the reference's float() reads nan; it is kept only under --reference-quirks */
    make_row(&fx, "Add", "1", "1", "nan");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, true);
    assert_int_equal(r.flags, 0);
    assert_true(r.duration != r.duration);
}

/* Default mode never aggregates a non-finite or negative number. */
static void test_row_nonfinite_or_negative_default_mode(void **s) {
    (void)s;
    fixture fx;
    kd_row r;
    const char *bad[] = {"nan", "inf", "-inf", "1e400", "-2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        make_row(&fx, "Add", "1", "1", bad[i]);
        kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
        assert_true(r.flags & KD_ROW_BAD_DURATION);
    }
    make_row(&fx, "Add", "1", "1", "-0.0");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_int_equal(r.flags, 0);
    make_row(&fx, "Add", "1", "1", "2");
    set_cell(&fx, KD_METRIC0 + 5, "-inf");
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_int_equal(r.flags, KD_ROW_BAD_METRIC);
    assert_true(r.metric[5] == 0.0);
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, true);
    assert_int_equal(r.flags, 0);
    assert_true(r.metric[5] < 0);
}

static void test_row_short_record_cells_are_empty(void **s) {
    (void)s;
    fixture fx;
    kd_row r;
    make_row(&fx, "Add", "1", "2", "3");
    /* only Type, Input Shapes, Output Shapes present */
    kd_row_extract(&r, &fx.L, fx.row.f, 3, false);
    assert_true(span_is(r.type, "Add"));
    assert_true(span_is(r.out, "2"));
    assert_true(r.flags & KD_ROW_BAD_DURATION); /* missing -> "" */
    kd_row_extract(&r, &fx.L, fx.row.f, 4, false);
    assert_int_equal(r.flags, 0);
    for (int m = 0; m < OPDB_NMETRICS; m++) assert_true(r.metric[m] == 0.0);
    for (int d = 0; d < KD_NDESC; d++) assert_int_equal(r.desc[d].n, 0);
}

static void test_row_absent_metric_column_is_zero(void **s) {
    (void)s;
    static const char *const skip[] = {"aic_mac_ratio", NULL};
    fixture fx;
    full_header(&fx.hdr, skip);
    kd_colmap_build(&fx.L, fx.hdr.f, fx.hdr.n, true);
    fx.row.n = 0;
    for (int i = 0; i < fx.hdr.n; i++) row_add(&fx.row, i == KD_DURATION ? "1" : "7");
    kd_row r;
    kd_row_extract(&r, &fx.L, fx.row.f, fx.row.n, false);
    assert_true(r.metric[2] == 7.0);
    assert_true(r.metric[3] == 0.0);
    assert_true(r.metric[4] == 7.0);
}

/* ---- FIA runtime index ---------------------------------------------------------- */

static opdb_span sp(const char *s) { return opdb_span_cstr(s); }

static void test_fia_slots_5_6_14_to_runtime_columns(void **s) {
    (void)s;
    fia_index ix;
    fia_index_init(&ix);
    /* slots:       0   1 2 3 4   5      6    7 8 9 10 11 12 13   14 */
    const char *src = "\"1,2;3;;;4;6, 7 ;008;;;;;;;;9,10;11\"";
    opdb_err err;
    opdb_err_clear(&err);
    bool bad = false;
    assert_int_equal(fia_index_add(&ix, sp("in"), sp("out"), sp(src), "rank0", false, &bad, &err), 0);
    assert_false(bad);
    const fia_meta *m = fia_index_get(&ix, sp("in"), sp("out"));
    assert_non_null(m);
    assert_string_equal(m->cells[0], "rank0");
    assert_string_equal(m->cells[1], "6,7");
    assert_string_equal(m->cells[3], "8");
    assert_string_equal(m->cells[6], "9,10");
    assert_string_equal(m->cells[15], "profile_shapes_only");
    for (int c = 0; c < FIA_NRUNTIME; c++)
        if (c != 0 && c != 1 && c != 3 && c != 6 && c != 15) assert_string_equal(m->cells[c], "");
    assert_string_equal(fia_runtime_columns[1], "Runtime actual_seq_lengths_shape");
    assert_string_equal(fia_runtime_columns[3], "Runtime actual_seq_lengths_kv_shape");
    assert_string_equal(fia_runtime_columns[6], "Runtime block_table_shape");
    assert_string_equal(fia_runtime_columns[15], "Runtime metadata_completeness");
    fia_index_free(&ix);
}

static void test_fia_short_source_pads_absent_slots(void **s) {
    (void)s;
    fia_index ix;
    fia_index_init(&ix);
    opdb_err err;
    opdb_err_clear(&err);
    bool bad = false;
    assert_int_equal(fia_index_add(&ix, sp("a"), sp("b"), sp("1;2"), "p", false, &bad, &err), 0);
    const fia_meta *m = fia_index_get(&ix, sp("a"), sp("b"));
    assert_non_null(m);
    assert_string_equal(m->cells[1], "");
    assert_string_equal(m->cells[3], "");
    assert_string_equal(m->cells[6], "");
    assert_string_equal(m->cells[15], "profile_shapes_only");
    fia_index_free(&ix);
}

static void test_fia_get_unknown_key_is_null(void **s) {
    (void)s;
    fia_index ix;
    fia_index_init(&ix);
    opdb_err err;
    opdb_err_clear(&err);
    bool bad = false;
    assert_int_equal(fia_index_add(&ix, sp("a"), sp("b"), sp(""), "p", false, &bad, &err), 0);
    assert_null(fia_index_get(&ix, sp("a"), sp("c")));
    assert_null(fia_index_get(&ix, sp("b"), sp("a")));
    assert_null(fia_index_get(&ix, sp("ab"), sp("")));
    assert_true(fia_index_has(&ix, sp("a"), sp("b")));
    fia_index_free(&ix);
}

static void test_fia_many_keys_survive_rehash(void **s) {
    (void)s;
    fia_index ix;
    fia_index_init(&ix);
    opdb_err err;
    opdb_err_clear(&err);
    char in[32], src[96];
    for (int i = 0; i < 500; i++) {
        snprintf(in, sizeof in, "%d,16", i);
        snprintf(src, sizeof src, "0;0;0;0;0;%d;0;0;0;0;0;0;0;0;%d", i, i * 3);
        bool bad = false;
        assert_int_equal(fia_index_add(&ix, sp(in), sp("o"), sp(src), "p", false, &bad, &err), 0);
    }
    char want[32];
    for (int i = 0; i < 500; i++) {
        snprintf(in, sizeof in, "%d,16", i);
        const fia_meta *m = fia_index_get(&ix, sp(in), sp("o"));
        assert_non_null(m);
        snprintf(want, sizeof want, "%d", i);
        assert_string_equal(m->cells[1], want);
        snprintf(want, sizeof want, "%d", i * 3);
        assert_string_equal(m->cells[6], want);
    }
    fia_index_free(&ix);
}

static void test_fia_non_integer_token_is_error(void **s) {
    (void)s;
    fia_index ix;
    fia_index_init(&ix);
    opdb_err err;
    opdb_err_clear(&err);
    bool bad = false;
    assert_int_equal(fia_index_add(&ix, sp("a"), sp("b"), sp("1;2;x,3"), "p", false, &bad, &err), -1);
    assert_int_equal(err.code, OPDB_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "'x'"));
    assert_non_null(strstr(err.msg, "slot 2"));
    assert_null(fia_index_get(&ix, sp("a"), sp("b")));
    fia_index_free(&ix);
}

static void test_fia_float_and_empty_dims_are_errors(void **s) {
    (void)s;
    static const char *const bad_src[] = {"1.5", "1,,2", "1,", "1e3"};
    for (size_t i = 0; i < sizeof bad_src / sizeof bad_src[0]; i++) {
        fia_index ix;
        fia_index_init(&ix);
        opdb_err err;
        opdb_err_clear(&err);
        bool bad = false;
        if (fia_index_add(&ix, sp("a"), sp("b"), sp(bad_src[i]), "p", false, &bad, &err) != -1)
            print_error("source <%s> accepted\n", bad_src[i]);
        assert_int_not_equal(err.code, OPDB_OK);
        fia_index_free(&ix);
    }
}

static void test_fia_lenient_bad_token_leaves_slot_empty(void **s) {
    (void)s;
    fia_index ix;
    fia_index_init(&ix);
    opdb_err err;
    opdb_err_clear(&err);
    bool bad = false;
    const char *src = "0;0;0;0;0;5,x;6;0;0;0;0;0;0;0;14";
    assert_int_equal(fia_index_add(&ix, sp("a"), sp("b"), sp(src), "p", true, &bad, &err), 0);
    assert_true(bad);
    assert_int_equal(err.code, OPDB_OK);
    const fia_meta *m = fia_index_get(&ix, sp("a"), sp("b"));
    assert_non_null(m);
    assert_string_equal(m->cells[1], "");   /* slot 5 had the bad token */
    assert_string_equal(m->cells[3], "6");
    assert_string_equal(m->cells[6], "14");
    fia_index_free(&ix);
}

static void test_fia_lenient_good_source_keeps_flag_clear(void **s) {
    (void)s;
    fia_index ix;
    fia_index_init(&ix);
    opdb_err err;
    opdb_err_clear(&err);
    bool bad = false;
    assert_int_equal(fia_index_add(&ix, sp("a"), sp("b"), sp("1;2;3"), "p", true, &bad, &err), 0);
    assert_false(bad);
    fia_index_free(&ix);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_colmap_full_header_nothing_missing),
        cmocka_unit_test(test_colmap_aliases_stand_in_for_absent_names),
        cmocka_unit_test(test_colmap_aliases_off_without_use_aliases),
        cmocka_unit_test(test_colmap_canonical_name_beats_alias),
        cmocka_unit_test(test_colmap_last_duplicate_wins),
        cmocka_unit_test(test_colmap_names_match_exactly),
        cmocka_unit_test(test_colmap_missing_sorted_and_joined),
        cmocka_unit_test(test_colmap_quirks_requires_all_35),
        cmocka_unit_test(test_colmap_quirks_missing_order),
        cmocka_unit_test(test_colmap_quirks_empty_header_lists_35),
        cmocka_unit_test(test_colmap_missing_small_buffer_is_safe),
        cmocka_unit_test(test_row_extract_basic),
        cmocka_unit_test(test_row_na_shapes_detected),
        cmocka_unit_test(test_row_na_lookalikes_not_na),
        cmocka_unit_test(test_row_kernel_name_alias),
        cmocka_unit_test(test_row_kernel_alias_exact_only),
        cmocka_unit_test(test_row_fia_flag),
        cmocka_unit_test(test_row_bad_duration_flagged_without_quirks),
        cmocka_unit_test(test_row_bad_duration_is_zero_with_quirks),
        cmocka_unit_test(test_row_duration_python_forms),
        cmocka_unit_test(test_row_nonfinite_or_negative_default_mode),
        cmocka_unit_test(test_row_short_record_cells_are_empty),
        cmocka_unit_test(test_row_absent_metric_column_is_zero),
        cmocka_unit_test(test_fia_slots_5_6_14_to_runtime_columns),
        cmocka_unit_test(test_fia_short_source_pads_absent_slots),
        cmocka_unit_test(test_fia_get_unknown_key_is_null),
        cmocka_unit_test(test_fia_many_keys_survive_rehash),
        cmocka_unit_test(test_fia_non_integer_token_is_error),
        cmocka_unit_test(test_fia_float_and_empty_dims_are_errors),
        cmocka_unit_test(test_fia_lenient_bad_token_leaves_slot_empty),
        cmocka_unit_test(test_fia_lenient_good_source_keeps_flag_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
