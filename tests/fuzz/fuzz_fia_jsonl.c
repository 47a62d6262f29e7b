/* libFuzzer target: the input is the JSONL runtime dump of `opdb fia-fill`;
 * it is joined into a small FIA database table (two rows that match the
 * seeds' shapes, one that does not). Must never crash, leak or fail without
 * an error message; on success the output table exists. */
#include "fuzz_tmp.h"
#include "opdb/fia_fill.h"

static char g_csv[128], g_jsonl[128], g_outp[128];

static const char k_csv[] =
    "\xef\xbb\xbfOP State,Accelerator Core,Input Shapes,Input Data Types,Profiling Average Duration(us),"
    "Runtime num_heads,Runtime metadata_completeness\r\n"
    "dynamic,MIX_AIC,\"\"\"4,8,128;100,128,128;100,128,128;;2048,2048;4;4;;;;;;;;4,16\"\"\",DT_BF16,50.0,,x\r\n"
    "dynamic,MIX_AIC,\"\"\"2,8,128;100,128,128;100,128,128;;;2;2;;;;;;;;2,16\"\"\",DT_BF16,40.0,,x\r\n"
    "dynamic,MIX_AIC,\"\"\"1,8,128;100,128,128;100,128,128\"\"\",DT_BF16,30.0,,x\r\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *g_root = fuzz_root_make("fia");
    snprintf(g_csv, sizeof g_csv, "%s/FusedInferAttentionScore.csv", g_root);
    snprintf(g_jsonl, sizeof g_jsonl, "%s/fia_runtime.jsonl", g_root);
    snprintf(g_outp, sizeof g_outp, "%s/out.csv", g_root);
    fuzz_write_file(g_csv, k_csv, sizeof k_csv - 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_write_file(g_jsonl, data, size);
    unlink(g_outp);
    FILE *devnull = fopen("/dev/null", "w");
    if (!devnull) abort();
    opdb_fia_fill_opts o;
    opdb_fia_fill_opts_init(&o);
    o.csv_path = g_csv, o.jsonl_path = g_jsonl, o.output_path = g_outp, o.out = devnull;
    opdb_err err;
    opdb_err_clear(&err);
    int rc = opdb_fia_fill_run(&o, &err);
    if (rc != 0 && err.msg[0] == '\0') abort();
    if (rc == 0 && access(g_outp, F_OK) != 0) abort();
    fclose(devnull);
    return 0;
}
