/* libFuzzer target: `opdb comm validate`'s CSV reader over the input as a
 * hcom_*.csv (the first byte picks the op), in text and JSON mode, with and
 * without --reference-quirks.  Never crashes or leaks; the JSON report is
 * JSON; a fatal error has its one line. */
#include <yajl/yajl_tree.h>

#include "fuzz_tmp.h"
#include "opdb/comm.h"

static char g_dir[128];
static const char *const k_files[] = {"hcom_allReduce_.csv", "hcom_allGather_.csv", "hcom_reduceScatter_.csv",
                                      "hcom_alltoallv_.csv"};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(g_dir, sizeof g_dir, "%s/csv", fuzz_root_make("comm_validate"));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    fuzz_rm_rf(g_dir);
    if (mkdir(g_dir, 0700) != 0) abort();
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, k_files[data[0] % 4]);
    fuzz_write_file(path, data + 1, size - 1);
    for (int mode = 0; mode < 4; mode++) {
        opdb_comm_validate_opts o;
        opdb_comm_validate_opts_init(&o);
        o.csv_dir = g_dir, o.tolerance = 1.5 + (data[0] >> 2) % 4, o.verbose = mode & 1, o.reference_quirks = mode >= 2;
        o.json = (mode & 1) == 0;
        char *buf = NULL, *ebuf = NULL;
        size_t n = 0, en = 0;
        FILE *out = open_memstream(&buf, &n), *eout = open_memstream(&ebuf, &en);
        if (!out || !eout) abort();
        opdb_err err;
        opdb_err_clear(&err);
        int rc = opdb_comm_validate(&o, out, eout, &err);
        fclose(out);
        fclose(eout);
        if (rc < 0 && (!err.msg[0] || strchr(err.msg, '\n'))) abort();
        if (rc == 0 && o.json) {
            char msg[256];
            yajl_val v = yajl_tree_parse(buf, msg, sizeof msg);
            if (!v || !YAJL_IS_OBJECT(v)) {
                fprintf(stderr, "comm validate --json is not JSON: %s\n%s\n", msg, buf);
                abort();
            }
            yajl_tree_free(v);
        }
        free(buf);
        free(ebuf);
    }
    return 0;
}
