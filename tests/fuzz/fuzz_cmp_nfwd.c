/* libFuzzer target: the M6 JSON of `opdb compare --m6` / `--nfwd-json`
 * (opdb_cmp_read_nfwd).  Never crashes or leaks; a refusal is one line
 * naming the file; an accepted file gives a number (1 when the key is absent). */
#include "fuzz_tmp.h"
#include "opdb/compare.h"

static char g_path[128];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(g_path, sizeof g_path, "%s/m6.json", fuzz_root_make("nfwd"));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_write_file(g_path, data, size);
    double n = -12345.0;
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_cmp_read_nfwd(g_path, &n, &err) == 0) {
        if (n == -12345.0) abort();
    } else if (!err.msg[0] || strchr(err.msg, '\n') || !strstr(err.msg, "m6.json")) {
        abort();
    }
    return 0;
}
