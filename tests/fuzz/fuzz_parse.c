/* libFuzzer target: the input is a kernel_details.csv; a full parse (default
 * mode, then --reference-quirks) must never crash or leak.  Outputs go to a
 * per-process temporary folder that is emptied after every input. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/ingest.h"

static char g_root[64];
static char g_in[128], g_file[160], g_out[128];

static void rm_tree(const char *path) {
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    char child[1024];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        if (e->d_type == DT_DIR) rm_tree(child);
        else unlink(child);
    }
    closedir(d);
    rmdir(path);
}

static void cleanup(void) {
    if (g_root[0]) rm_tree(g_root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(g_root, sizeof g_root, "/tmp/opdb_fuzz_parse_XXXXXX");
    if (!mkdtemp(g_root)) abort();
    snprintf(g_in, sizeof g_in, "%s/in", g_root);
    snprintf(g_file, sizeof g_file, "%s/kernel_details.csv", g_in);
    snprintf(g_out, sizeof g_out, "%s/out", g_root);
    atexit(cleanup);
    return 0;
}

static void run_once(bool quirks, bool strict) {
    opdb_parse_opts o;
    opdb_parse_opts_init(&o);
    o.profiling_path = g_file;
    o.output_dir = g_out;
    o.reference_quirks = quirks;
    o.strict = strict;
    o.threads = 1;
    o.no_progress = true;
    o.reference_stdout = NULL;
    opdb_parse_result res;
    opdb_err err;
    opdb_err_clear(&err);
    int rc = opdb_parse_run(&o, &res, &err);
    if (rc != 0 && (err.code == 0 || err.msg[0] == '\0')) abort(); /* failures carry a message */
    if (rc == 0 && err.code != 0) abort();
    if (rc == 0 && res.ntables > res.files_written) abort();
    opdb_parse_result_free(&res);
    rm_tree(g_out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > (1u << 20)) return 0;
    rm_tree(g_in);
    if (mkdir(g_in, 0777) != 0) abort();
    FILE *f = fopen(g_file, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    run_once(false, false);
    run_once(true, false);
    run_once(false, true);
    rm_tree(g_in);
    return 0;
}
