/* libFuzzer target: `opdb update --add-new-ops` end to end. The input is an
 * msprof op_summary_*.csv whose operators become new tables of a small
 * database, in default and --reference-quirks mode, inside a per-process
 * temporary folder (also the working directory). Fails on a crash, leak,
 * an error without message, or any file the run leaves outside the
 * database folder: a sub-folder other than reports/, a file anywhere else
 * in the temporary folder, and in default mode a hidden or control-byte
 * name (the path policy's names, no leftover journal or temp file). */
#include "fuzz_tmp.h"
#include "opdb/update.h"

static char g_root[128], g_in[160], g_mso[256], g_summary[300], g_db[160];
static size_t g_rootlen;
static int g_mode;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(g_root, sizeof g_root, "%s", fuzz_root_make("addops"));
    g_rootlen = strlen(g_root);
    snprintf(g_in, sizeof g_in, "%s/in", g_root);
    snprintf(g_mso, sizeof g_mso, "%s/PROF_000001_x/mindstudio_profiler_output", g_in);
    snprintf(g_summary, sizeof g_summary, "%s/op_summary_1.csv", g_mso);
    snprintf(g_db, sizeof g_db, "%s/out/db", g_root);
    char p[300];
    snprintf(p, sizeof p, "%s/out", g_root);
    if (mkdir(g_in, 0777) || mkdir(p, 0777) || chdir(p)) abort(); /* a relative write lands in out/ */
    snprintf(p, sizeof p, "%s/PROF_000001_x", g_in);
    if (mkdir(p, 0777) || mkdir(g_mso, 0777)) abort();
    return 0;
}

static void bad(const char *path, const char *why) {
    fprintf(stderr, "fuzz_add_new_ops: %s: %s (mode %s)\n", path, why, g_mode ? "--reference-quirks" : "default");
    abort();
}

/* Every entry of the temporary folder is an input, the database folder, a
 * file directly inside it, or a report. */
static int check_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)ftw;
    const char *rel = p + g_rootlen;
    if (!*rel || !strcmp(rel, "/out") || !strcmp(rel, "/out/db") || !strcmp(rel, "/in")) return 0;
    if (!strncmp(rel, "/in/", 4)) {
        if (strcmp(p, g_summary) && strncmp(g_summary, p, strlen(p))) bad(p, "unexpected file among the inputs");
        return 0;
    }
    if (strncmp(rel, "/out/db/", 8)) bad(p, "written outside the database folder");
    const char *name = rel + 8;
    if (!strcmp(name, "reports")) {
        if (flag != FTW_D) bad(p, "reports is not a folder");
        return 0;
    }
    if (!strncmp(name, "reports/", 8)) {
        if (strchr(name + 8, '/') || !S_ISREG(st->st_mode)) bad(p, "not a report file");
        return 0;
    }
    if (strchr(name, '/')) bad(p, "inside a sub-folder of the database");
    if (!S_ISREG(st->st_mode)) bad(p, "not a regular file");
    if (g_mode == 0) {
        if (name[0] == '.') bad(p, "hidden file (a leftover journal or temp file, or an unsafe name)");
        for (const unsigned char *c = (const unsigned char *)name; *c; c++)
            if (*c < 0x20 || *c == 0x7f) bad(p, "control byte in a file name");
    }
    return 0;
}

static const char k_table[] =
    "OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
    "Output Formats,Average Duration(us),Profiling Average Duration(us)\r\n"
    "dynamic,AI_CORE,\"\"\"8,128\"\"\",DT_BF16,ND,\"\"\"8,128\"\"\",DT_BF16,ND,,2.0\r\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_write_file(g_summary, data, size);
    FILE *devnull = fopen("/dev/null", "w");
    if (!devnull) abort();
    for (g_mode = 0; g_mode < 2; g_mode++) {
        fuzz_rm_rf(g_db);
        if (mkdir(g_db, 0777)) abort();
        char path[300];
        snprintf(path, sizeof path, "%s/Add.csv", g_db);
        fuzz_write_file(path, k_table, sizeof k_table - 1);
        snprintf(path, sizeof path, "%s/MatMulV2.csv", g_db);
        fuzz_write_file(path, k_table, sizeof k_table - 1);
        const char *paths[] = {g_in};
        opdb_update_opts o;
        opdb_update_opts_init(&o);
        o.db_dir = g_db, o.prof_paths = paths, o.nprof = 1, o.quirks = g_mode == 1;
        o.add_new_ops = true, o.timestamp = "20260101_000000", o.out = devnull;
        opdb_err err;
        opdb_err_clear(&err);
        if (opdb_update_run(&o, &err) != 0 && err.msg[0] == '\0') abort();
        if (nftw(g_root, check_entry, 16, FTW_PHYS) != 0) abort();
    }
    fuzz_rm_rf(g_db);
    fclose(devnull);
    return 0;
}
