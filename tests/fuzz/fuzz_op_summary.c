/* libFuzzer target: the input is an msprof op_summary_*.csv; a whole
 * `opdb update` (default and --reference-quirks) merges it into a small
 * database. Must never crash, leak, or fail without an error message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/update.h"

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(data, 1, n, f) != n) abort();
    fclose(f);
}

static void rm_rf(const char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char root[] = "/tmp/opdb_fuzz_os.XXXXXX";
    if (!mkdtemp(root)) abort();
    char prof[600], mso[700], db[600], path[800];
    snprintf(prof, sizeof prof, "%s/PROF_000001_x", root);
    snprintf(mso, sizeof mso, "%s/mindstudio_profiler_output", prof);
    snprintf(db, sizeof db, "%s/db", root);
    mkdir(prof, 0777);
    mkdir(mso, 0777);
    static const char add_csv[] =
        "OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
        "Output Formats,Average Duration(us),Profiling Average Duration(us)\r\n"
        "dynamic,AI_CORE,\"\"\"8,128\"\"\",DT_BF16,ND,\"\"\"8,128\"\"\",DT_BF16,ND,,2.0\r\n";
    FILE *devnull = fopen("/dev/null", "w");
    for (int mode = 0; mode < 2; mode++) {
        rm_rf(db);
        mkdir(db, 0777);
        snprintf(path, sizeof path, "%s/Add.csv", db);
        write_file(path, add_csv, sizeof add_csv - 1);
        snprintf(path, sizeof path, "%s/MatMulV2.csv", db);
        write_file(path, add_csv, sizeof add_csv - 1);
        snprintf(path, sizeof path, "%s/op_summary_1.csv", mso);
        write_file(path, data, size);
        const char *paths[] = {root};
        opdb_update_opts o;
        opdb_update_opts_init(&o);
        o.db_dir = db, o.prof_paths = paths, o.nprof = 1, o.prune = mode == 0, o.quirks = mode == 1;
        o.ep_size = 16, o.timestamp = "20260101_000000", o.out = devnull;
        opdb_err err;
        opdb_err_clear(&err);
        if (opdb_update_run(&o, &err) != 0 && err.msg[0] == '\0') abort();
    }
    fclose(devnull);
    rm_rf(root);
    return 0;
}
