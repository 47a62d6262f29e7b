/* libFuzzer target: `opdb parse --merge`'s reader of the table already in
 * the database: the input is db/Add.csv, merged with the Add rows of a small
 * fixed kernel_details.csv through the real parse run.  Never crashes or
 * leaks; a refusal is one line; an accepted merge leaves no nan/inf and no
 * negative count in the table written. */
#include "fuzz_tmp.h"
#include "opdb/csv.h"
#include "opdb/ingest.h"

static char g_db[128], g_in[128], g_table[160];

static const char k_details[] =
    "Name,Type,OP State,Accelerator Core,Duration(us),Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)\n"
    "Add_0,Add,dynamic,AI_VECTOR_CORE,2.5,\"\"\"8,128;8,128\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"8,128\"\"\",DT_BF16,ND,,,,,,,,,,,,,,1.5,,,,,,,,,,,\n"
    "Add_1,Add,dynamic,AI_VECTOR_CORE,6.25,\"\"\"32,128;32,128\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"32,128\"\"\",DT_BF16,ND,,,,,,,,,,,,,,5,,,,,,,,,,,\n"
    "Add_3,Add,dynamic,AI_VECTOR_CORE,4.0,\"\"\"8,128;8,128\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"8,128\"\"\",DT_BF16,ND,,,,,,,,,,,,,,3.5,,,,,,,,,,,\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *root = fuzz_root_make("merge");
    snprintf(g_db, sizeof g_db, "%s/db", root);
    snprintf(g_in, sizeof g_in, "%s/kernel_details.csv", root);
    snprintf(g_table, sizeof g_table, "%s/Add.csv", g_db);
    fuzz_write_file(g_in, k_details, sizeof k_details - 1);
    return 0;
}

/* After an accepted merge, in every row with a positive count: the count,
 * sum, sum of squares, min, max and median are finite numbers >= 0 (merged
 * from both sides, or checked before an unmatched row was kept). */
static void check_written(void) {
    static const char *const stat[] = {"Profiling Count", "Profiling Sum Duration(us)", "Profiling Sum Squares(us^2)",
                                       "Profiling Min Duration(us)", "Profiling Max Duration(us)",
                                       "Profiling Median Duration(us)"};
    opdb_csv_file c;
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_csv_file_open(&c, g_table, 4096, &err)) abort();
    if (opdb_csv_file_next(&c, false) <= 0) abort();
    int col[6];
    for (int k = 0; k < 6; k++) col[k] = opdb_csv_col(c.f, c.nf, stat[k]);
    if (col[0] < 0) abort(); /* merged tables always have the count */
    while (opdb_csv_file_next(&c, false) > 0) {
        double v[6];
        bool have[6] = {false};
        for (int k = 0; k < 6; k++) {
            if (col[k] < 0 || col[k] >= c.nf || !c.f[col[k]].n || c.f[col[k]].n >= 64) continue;
            char b[64];
            memcpy(b, c.f[col[k]].p, c.f[col[k]].n);
            b[c.f[col[k]].n] = '\0';
            char *e;
            v[k] = strtod(b, &e);
            have[k] = !*e;
        }
        if (!have[0] || !(v[0] > 0)) continue;
        for (int k = 0; k < 6; k++)
            if (have[k] && (v[k] != v[k] || v[k] - v[k] != 0 || v[k] < 0)) {
                fprintf(stderr, "merge wrote %s = %g\n", stat[k], v[k]);
                abort();
            }
    }
    opdb_csv_file_close(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_rm_rf(g_db);
    if (mkdir(g_db, 0700) != 0) abort();
    fuzz_write_file(g_table, data, size);
    opdb_parse_opts o;
    opdb_parse_opts_init(&o);
    o.profiling_path = g_in;
    o.output_dir = g_db;
    o.threads = 1;
    o.no_progress = true;
    o.merge = true;
    opdb_parse_result res;
    opdb_err err;
    opdb_err_clear(&err);
    int rc = opdb_parse_run(&o, &res, &err);
    if (rc != 0 && (!err.msg[0] || strchr(err.msg, '\n'))) abort();
    if (rc == 0) check_written();
    opdb_parse_result_free(&res);
    return 0;
}
