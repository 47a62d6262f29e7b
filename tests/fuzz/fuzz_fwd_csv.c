/* libFuzzer target: the input is a forward-pass kernel CSV, read by every
 * tool that takes one against a small fixed TC trace: `opdb m6` (numbers,
 * report, JSON), `opdb shape-compare` (CSV on a null stream) and
 * `opdb compare`'s profiling side, each in default and --reference-quirks
 * mode. Must never crash, leak or fail without an error message. */
#include "fuzz_tmp.h"
#include "opdb/compare.h"
#include "opdb/m6.h"
#include "opdb/shape_compare.h"

static char g_tc[128], g_prof[128];

static const char k_tc[] =
    "{\"traceEvents\": ["
    "{\"ph\": \"X\", \"name\": \"aten.mm.default\", \"pid\": 1, \"ts\": 0, \"dur\": 9, \"args\": {\"kernel_type\": "
    "\"MatMulV2\", \"source\": \"MEASURED\", \"sub_kernel_durations\": \"[('MatMulV2', 9.0)]\", "
    "\"simulation_shapes\": \"[[1, 4096], [4096, 4096]]\"}},"
    "{\"ph\": \"X\", \"name\": \"aten.add.Tensor\", \"pid\": 1, \"ts\": 0, \"dur\": 3, \"args\": {\"kernel_type\": "
    "\"Add\", \"source\": \"INTERPOLATED\", \"simulation_shapes\": \"[[1, 4096], [1, 4096]]\"}},"
    "{\"ph\": \"X\", \"name\": \"hcom\", \"pid\": 1, \"ts\": 0, \"dur\": 5, \"args\": {\"kernel_type\": "
    "\"hcom_allReduce_\", \"source\": \"MEASURED\", \"simulation_shapes\": \"\\\"8,128\\\"\"}}]}";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *root = fuzz_root_make("fwd");
    snprintf(g_tc, sizeof g_tc, "%s/tc.json", root);
    snprintf(g_prof, sizeof g_prof, "%s/prof.csv", root);
    fuzz_write_file(g_tc, k_tc, sizeof k_tc - 1);
    return 0;
}

static void check(int rc, const opdb_err *err) {
    if (rc != 0 && err->msg[0] == '\0') abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_write_file(g_prof, data, size);
    FILE *devnull = fopen("/dev/null", "w");
    if (!devnull) abort();
    for (int quirks = 0; quirks < 2; quirks++) {
        opdb_err err;
        opdb_err_clear(&err);
        opdb_m6_opts mo;
        opdb_m6_opts_init(&mo);
        mo.tc_trace = g_tc, mo.prof_trace = g_prof, mo.quirks = quirks == 1;
        opdb_m6_result r;
        memset(&r, 0, sizeof r);
        int rc = opdb_m6_compute(&mo, &r, &err);
        check(rc, &err);
        if (rc == 0) {
            opdb_strbuf sb;
            opdb_sb_init(&sb);
            opdb_m6_report(&mo, &r, &sb);
            opdb_m6_json(&mo, &r, &sb);
            opdb_sb_free(&sb);
        }
        opdb_m6_result_free(&r);

        opdb_err_clear(&err);
        opdb_shapecmp_opts so;
        opdb_shapecmp_opts_init(&so);
        so.tc_trace = g_tc, so.prof_trace = g_prof, so.quirks = quirks == 1;
        size_t rows;
        check(opdb_shapecmp_run(&so, devnull, &rows, &err), &err);

        opdb_err_clear(&err);
        opdb_cmp_opts co;
        opdb_cmp_opts_init(&co);
        co.quirks = quirks == 1;
        opdb_cmp_stats st;
        memset(&st, 0, sizeof st);
        check(opdb_cmp_read_prof(g_prof, &co, &st, &err), &err);
        opdb_cmp_stats_free(&st);
    }
    fclose(devnull);
    return 0;
}
