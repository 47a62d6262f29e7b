/* Row signatures: the fast path for cells in normal form must give exactly
 * what the general rules give, for every input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "opdb/pystr.h"
#include "opdb/signature.h"

static void expect_same(const opdb_sig_cells *c, const char *op) {
    opdb_strbuf fast, general;
    opdb_sb_init(&fast);
    opdb_sb_init(&general);
    opdb_signature(c, op, &fast);
    opdb_signature_general(c, op, &general);
    if (fast.n != general.n || memcmp(fast.p, general.p, fast.n) != 0) {
        print_error("op %s: in [%.*s] dt [%.*s] fm [%.*s] out [%.*s] odt [%.*s]\n  fast    [%s]\n  general [%s]\n", op,
                    (int)c->in_shapes.n, c->in_shapes.p, (int)c->in_dtypes.n, c->in_dtypes.p, (int)c->in_formats.n,
                    c->in_formats.p, (int)c->out_shapes.n, c->out_shapes.p, (int)c->out_dtypes.n, c->out_dtypes.p,
                    fast.p, general.p);
        fail();
    }
    opdb_sb_free(&fast);
    opdb_sb_free(&general);
}

static opdb_sig_cells cells(const char *in, const char *dt, const char *fm, const char *out, const char *odt,
                            const char *ep) {
    opdb_sig_cells c = {opdb_span_cstr(in), opdb_span_cstr(dt), opdb_span_cstr(fm), opdb_span_cstr(out),
                        opdb_span_cstr(odt), opdb_span_cstr(ep)};
    return c;
}

/* The forms seen in real files and opdb's own databases. */
static void test_known_forms(void **state) {
    (void)state;
    static const char *const ops[] = {"Add",       "SwiGlu",       "DispatchFFNCombine", "RmsNorm_run.py", " \"Sort\" ",
                                      "MatMulV2",  "MatMulCommon", "Index",              "Slice",          "Transpose",
                                      "MatMulV3_run"};
    static const char *const rows[][5] = {
        {"\"1,4096;1,4096\"", "DT_BF16;DT_BF16", "ND;ND", "\"1,4096\"", "DT_BF16"},
        {"1,4096;1,4096", "DT_BF16", "ND;ND;ND", "1,4096", "DT_BF16;INT64"},
        {"\"5,1989,28,128;4\"", "DT_BF16;INT64", "ND;ND", "\"5,28,1989,128\"", "DT_BF16"},
        {"", "DT_BF16", "ND", "", ""},
        {"1,4096;", "DT_BF16;DT_BF16", "ND;ND", "1,4096", "DT_BF16"},
        {";1,4096", "DT_BF16;DT_BF16", "ND;ND", "1,4096", "DT_BF16"},
        {"(1, 4096);(2,3)", "DT_BF16;DT_BF16", "ND;ND", "N/A", "DT_BF16"},
        {"1,,4096", "DT_BF16;;X", "ND; ND", "1,4096,", "DT_BF16;"},
        {"NULL;1", "A;B", "C;D", "none", "E"},
        {"1,4096", "\"DT_BF16\"", "\"\"", "\"\"", "\" \""},
        {"1,-1", "DT_BF16", "ND", "\xc2\xa0" "1", "DT_BF16"},
        {"1,4096", "DT_BF16;", ";ND", "1,4096", ";"},
        {"\"1,4096;6144,4096\"", "DT_BF16;DT_BF16", "ND;ND", "\"1,6144\"", "DT_BF16"},
        {"4096,1;4096,6144", "DT_BF16;DT_BF16;INT8", "ND;NZ;ND", "1,6144", "DT_BF16"},
        {"16,4096;6144,4096;6144", "DT_BF16;DT_BF16;FLOAT", "ND;ND;ND", "16,6144", "DT_BF16"},
        {"8,8;8,8", "DT_BF16;DT_BF16", "ND;ND", "8,8", "DT_BF16"},
        {"4,7168;4;1", "DT_BF16;INT64;BOOL", "ND;ND;ND", "3,7168", "DT_BF16"},
        {"1,4096", "A", "B", "1,4096", "C"},
        /* optional inputs and outputs left out: empty slots */
        {"\"167,2048;4;\"", "DT_BF16;INT64;DT_BF16", "ND;ND;ND", "\"167,2112\"", "DT_BF16"},
        {"\"61,2048;\"", "FLOAT16;DT_UNDEFINED", "ND;NULL", "\"61,2048;61\"", "INT8;FLOAT"},
        {"\"270,32,128;1024,128,1024;1024,128,1024;;2048,2048;6;6;;;;;;;;6,61;;;;\"",
         "DT_BF16;DT_BF16;DT_BF16;DT_UNDEFINED;INT8;INT64;INT64;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED",
         "ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND;ND", "\"270,32,128;;1,2\"", "DT_BF16;DT_BF16"},
        {";;1,2;", "A;B", "C;D;E;F", ";", "G"},
        {"1,2;\"\";3", "A;B;C", "C;D;E", "4;;", "G;H;I"},
        {"1,2; ;3", "A;B;C", "C;D;E", "4", "G"},
        {"1,2;,;3", "A;B;C", "C;D;E", "4", "G"},
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            opdb_sig_cells c = cells(rows[r][0], rows[r][1], rows[r][2], rows[r][3], rows[r][4], " 8 ");
            expect_same(&c, ops[o]);
        }
}

/* Random cells over the bytes that matter to either path. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static unsigned next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 32);
}

static void random_cell(char *buf, size_t cap, bool shape) {
    static const char shape_bytes[] = "0123456789,,,;;\"( )\tNA/-";
    static const char attr_bytes[] = "DT_BF16ND;;;\" \t";
    /* half the cells from the normal-form bytes only, so both paths run */
    bool clean = next_rand() % 2;
    const char *alpha = shape ? (clean ? "0123456789,;" : shape_bytes) : (clean ? "DT_BF16ND;" : attr_bytes);
    size_t na = strlen(alpha);
    size_t n = next_rand() % (cap - 1);
    if (next_rand() % 4 == 0) n %= 6;
    for (size_t i = 0; i < n; i++) buf[i] = alpha[next_rand() % na];
    buf[n] = '\0';
}

/* Five random signature cells (their bytes in *row) and EP Size "16". */
typedef struct random_row {
    char in[24], dt[20], fm[20], out[24], odt[20];
} random_row;

static opdb_sig_cells random_sig_cells(random_row *row) {
    random_cell(row->in, sizeof row->in, true);
    random_cell(row->dt, sizeof row->dt, false);
    random_cell(row->fm, sizeof row->fm, false);
    random_cell(row->out, sizeof row->out, true);
    random_cell(row->odt, sizeof row->odt, false);
    return cells(row->in, row->dt, row->fm, row->out, row->odt, "16");
}

static void test_random_cells(void **state) {
    (void)state;
    static const char *const ops[] = {"Add", "DispatchFFNCombine", "SoftmaxV2", "MatMulV2",
                                      "Index", "Slice", "Transpose", "MatMulCommon"};
    random_row row;
    for (int i = 0; i < 300000; i++) {
        opdb_sig_cells c = random_sig_cells(&row);
        expect_same(&c, ops[i % (int)(sizeof ops / sizeof ops[0])]);
    }
}

/* Operators of one signature class sign equal cells alike (the merge reuses
 * a MatMulV2 group's signature in MatMulV3.csv on that ground); classes
 * that sign differently are told apart. */
static void test_signature_classes(void **state) {
    (void)state;
    static const char *const classes[][5] = {
        {"MatMulV2", "MatMulV3", "MatMulCommon", " \"MatMulV2\" ", "MatMulV3_run"},
        {"Index", "Index", "Index", "Index", "Index"},
        {"Slice", "SliceAiCore", "Transpose", "TransposeAiCore", "Slice_run.py"},
        {"DispatchFFNCombine", "DispatchFFNCombine", "DispatchFFNCombine", "DispatchFFNCombine", "DispatchFFNCombine"},
        {"Add", "SwiGlu", "RmsNorm", "SoftmaxV2", "GatherV2"},
    };
    enum { NC = sizeof classes / sizeof classes[0] };
    for (int a = 0; a < NC; a++)
        for (int b = 0; b < NC; b++)
            if ((opdb_signature_class(classes[a][0]) == opdb_signature_class(classes[b][0])) != (a == b))
                fail_msg("%s and %s: classes", classes[a][0], classes[b][0]);
    random_row row;
    opdb_strbuf x = {0}, y = {0};
    for (int i = 0; i < 100000; i++) {
        opdb_sig_cells c = random_sig_cells(&row);
        const char *const *k = classes[i % NC];
        assert_int_equal(opdb_signature_class(k[0]), opdb_signature_class(k[1 + i % 4]));
        opdb_signature(&c, k[0], &x);
        opdb_signature(&c, k[1 + i % 4], &y);
        assert_int_equal(x.n, y.n);
        assert_memory_equal(x.p, y.p, x.n);
    }
    opdb_sb_free(&x);
    opdb_sb_free(&y);
}

/* The vector and the byte-at-a-time cell scanners agree, across the
 * 16-byte block edges. */
static void test_cell_scanners(void **state) {
    (void)state;
    char buf[64];
    for (int i = 0; i < 400000; i++) {
        bool shape = i % 2;
        random_cell(buf, 12 + (size_t)(i % 40), shape);
        opdb_span c = opdb_span_cstr(buf);
        int a = opdb_sig_cell_slots(c, shape, true), b = opdb_sig_cell_slots(c, shape, false);
        if (a != b) {
            print_error("cell [%s] (%s): vector %d, bytes %d\n", buf, shape ? "shape" : "attributes", a, b);
            fail();
        }
    }
}

/* A grouped operator can take hundreds of tensors: every slot counts, none is
 * dropped past a fixed number (the first 256 used to decide alone). */
static void test_many_slots(void **state) {
    (void)state;
    static char in_a[4000], in_b[4000], dt[4000];
    size_t a = 0, b = 0, d = 0;
    for (int i = 0; i < 300; i++) {
        a += (size_t)snprintf(in_a + a, sizeof in_a - a, "%s16,%d", i ? ";" : "", i == 290 ? 7 : 8);
        b += (size_t)snprintf(in_b + b, sizeof in_b - b, "%s16,%d", i ? ";" : "", i == 290 ? 9 : 8);
        d += (size_t)snprintf(dt + d, sizeof dt - d, "%sDT_BF16", i ? ";" : "");
    }
    static const char *const ops[] = {"GroupedMatmul", "Index", "MatMulV2", "Transpose"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        opdb_sig_cells ca = cells(in_a, dt, "ND", "16,8", "DT_BF16", ""), cb = cells(in_b, dt, "ND", "16,8", "DT_BF16", "");
        expect_same(&ca, ops[o]);
        expect_same(&cb, ops[o]);
        /* spaces force the general rules */
        opdb_sig_cells cs = cells(" 16,8 ; 16,8 ", dt, "ND", "16,8", "DT_BF16", "");
        expect_same(&cs, ops[o]);
    }
    opdb_strbuf sa, sb;
    opdb_sb_init(&sa);
    opdb_sb_init(&sb);
    opdb_sig_cells ca = cells(in_a, dt, "ND", "16,8", "DT_BF16", ""), cb = cells(in_b, dt, "ND", "16,8", "DT_BF16", "");
    opdb_signature(&ca, "GroupedMatmul", &sa);
    opdb_signature(&cb, "GroupedMatmul", &sb);
    assert_true(sa.n != sb.n || memcmp(sa.p, sb.p, sa.n) != 0);
    opdb_signature_general(&ca, "GroupedMatmul", &sa);
    opdb_signature_general(&cb, "GroupedMatmul", &sb);
    assert_true(sa.n != sb.n || memcmp(sa.p, sb.p, sa.n) != 0);
    opdb_sb_free(&sa);
    opdb_sb_free(&sb);
}

/* A random shape cell in normal form, shaped like the rewrites read it:
 * slots of 1-3 dimensions drawn from a few values (so MatMul inputs share
 * a dimension often), now and then a long or zero-padded dimension. */
static void shape_cell(char *buf, size_t cap, int slots) {
    static const char *const dims[] = {"1", "8", "16", "4096", "0016", "7", "8", "16", "9223372036854775807",
                                       "123456789012345678", "9999999999999999999", "1234567890123456789012345678901234567890123456789012345678901234"};
    size_t o = 0;
    for (int s = 0; s < slots; s++) {
        int nd = 1 + (int)(next_rand() % 4 == 0 ? next_rand() % 3 : 1);
        for (int d = 0; d < nd; d++)
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", d ? "," : (s ? ";" : ""),
                                  dims[next_rand() % (next_rand() % 8 ? 8 : sizeof dims / sizeof dims[0])]);
    }
}

static void attr_cell(char *buf, size_t cap, int slots) {
    static const char *const names[] = {"DT_BF16", "INT8", "FLOAT", "ND", "NZ", "INT64"};
    size_t o = 0;
    buf[0] = '\0';
    for (int s = 0; s < slots; s++) o += (size_t)snprintf(buf + o, cap - o, "%s%s", s ? ";" : "", names[next_rand() % 6]);
}

/* The rewriting operators (MatMul family, Index, Slice, Transpose) on cells
 * in normal form take their own fast path: it must agree with the rules. */
static void test_rewrites_on_normal_cells(void **state) {
    (void)state;
    static const char *const ops[] = {"MatMulV2", "MatMulV3_run", "MatMulCommon", "Index", "Slice",
                                      "SliceAiCore", "Transpose", "TransposeAiCore"};
    char in[400], dt[100], fm[100], out[400], odt[100];
    for (int i = 0; i < 200000; i++) {
        shape_cell(in, sizeof in, (int)(next_rand() % 4));
        shape_cell(out, sizeof out, (int)(next_rand() % 3));
        attr_cell(dt, sizeof dt, (int)(next_rand() % 4));
        attr_cell(fm, sizeof fm, (int)(next_rand() % 4));
        attr_cell(odt, sizeof odt, (int)(next_rand() % 3));
        opdb_sig_cells c = cells(in, dt, fm, out, odt, "4");
        expect_same(&c, ops[i % (int)(sizeof ops / sizeof ops[0])]);
    }
    /* A x B -> O with k found each way the reference looks for it */
    static const char *const mm[][2] = {{"16,4096;6144,4096", "16,6144"}, {"16,4096;4096,6144", "16,6144"},
                                        {"4096,16;4096,6144", "16,6144"}, {"8,8;8,8", "8,8"},
                                        {"16,4096;4096,16", "16,16"},     {"016,4096;4096,6144", "16,6144"},
                                        {"1,2;3,4", "5,6"}};
    for (size_t k = 0; k < sizeof mm / sizeof mm[0]; k++) {
        opdb_sig_cells c = cells(mm[k][0], "DT_BF16;DT_BF16;INT8", "ND;NZ;ND", mm[k][1], "DT_BF16", "");
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) expect_same(&c, ops[o]);
    }
}

/* opdb update signs profile rows from their stripped cells: the signature
 * of a cell with whitespace around it must be that of the stripped cell. */
static void test_stripped_cells_sign_alike(void **state) {
    (void)state;
    static const char *const pads[] = {"", " ", "\t", " \r\n", "\xc2\xa0", "\xe3\x80\x80 ", "\x1f", "\v\f"};
    static const char *const ops[] = {"Add", "DispatchFFNCombine", "MatMulV2", "Index", "Slice", "FusedInferAttentionScore"};
    enum { NPAD = sizeof pads / sizeof pads[0] };
    char raw[6][300], cell[6][40];
    for (int i = 0; i < 100000; i++) {
        random_cell(cell[0], 24, true);
        random_cell(cell[1], 20, false);
        random_cell(cell[2], 20, false);
        random_cell(cell[3], 24, true);
        random_cell(cell[4], 20, false);
        snprintf(cell[5], sizeof cell[5], "%s", i % 3 ? "16" : "");
        opdb_span stripped[6], padded[6];
        for (int c = 0; c < 6; c++) {
            snprintf(raw[c], sizeof raw[c], "%s%s%s", pads[next_rand() % NPAD], cell[c], pads[next_rand() % NPAD]);
            padded[c] = opdb_span_cstr(raw[c]);
            stripped[c] = opdb_py_strip(padded[c]);
        }
        opdb_sig_cells a = {padded[0], padded[1], padded[2], padded[3], padded[4], padded[5]};
        opdb_sig_cells b = {stripped[0], stripped[1], stripped[2], stripped[3], stripped[4], stripped[5]};
        opdb_strbuf sa, sb;
        opdb_sb_init(&sa);
        opdb_sb_init(&sb);
        const char *op = ops[i % (int)(sizeof ops / sizeof ops[0])];
        opdb_signature(&a, op, &sa);
        opdb_signature(&b, op, &sb);
        if (sa.n != sb.n || memcmp(sa.p, sb.p, sa.n) != 0) {
            print_error("op %s: cells [%s] [%s] [%s] [%s] [%s] [%s]\n  as written [%s]\n  stripped   [%s]\n", op, raw[0],
                        raw[1], raw[2], raw[3], raw[4], raw[5], sa.p, sb.p);
            fail();
        }
        opdb_sb_free(&sa);
        opdb_sb_free(&sb);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_forms),
        cmocka_unit_test(test_random_cells),
        cmocka_unit_test(test_signature_classes),
        cmocka_unit_test(test_cell_scanners),
        cmocka_unit_test(test_many_slots),
        cmocka_unit_test(test_rewrites_on_normal_cells),
        cmocka_unit_test(test_stripped_cells_sign_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
