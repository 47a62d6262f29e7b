/* libFuzzer target: the input is an AIE trace file; `opdb aie` (default and
 * --reference-quirks) must never crash, leak, write outside its output
 * folder, or fail without an error message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/aie.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char root[] = "/tmp/opdb_fuzz_aie.XXXXXX";
    if (!mkdtemp(root)) abort();
    char trace[600], out[600], cmd[700];
    snprintf(trace, sizeof trace, "%s/trace.json", root);
    snprintf(out, sizeof out, "%s/out", root);
    FILE *f = fopen(trace, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    FILE *devnull = fopen("/dev/null", "w");
    for (int quirks = 0; quirks < 2; quirks++) {
        opdb_aie_opts o;
        opdb_aie_opts_init(&o);
        o.M = o.K = o.N = 64, o.m = o.k = o.n = 32, o.rows = 1, o.cols = 2, o.hwid = "fuzz", o.warmup = 1, o.iterations = 2;
        o.trace = trace, o.out_dir = out, o.quirks = quirks == 1, o.out = devnull;
        opdb_err err;
        opdb_err_clear(&err);
        if (opdb_aie_run(&o, &err) != 0 && err.msg[0] == '\0') abort();
    }
    fclose(devnull);
    /* nothing may appear next to the trace but the output folder */
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s' | grep -v -x -e trace.json -e out)\" = \"\"", root);
    if (system(cmd) != 0) abort();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) abort();
    return 0;
}
