/* Shared harness of the fuzz targets that give one input file to `opdb parse`
 * (fuzz_kineto, fuzz_sqlite): the input is written to a per-process temporary
 * folder under FUZZ_FILE_NAME, after fuzz_prefix() has written whatever makes
 * the format detector pick the reader under test; the run must never crash or
 * leak, and a failure or refusal always comes with a message. */
#ifndef OPDB_FUZZ_PARSE_FILE_H
#define OPDB_FUZZ_PARSE_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/ingest.h"

static void fuzz_prefix(const uint8_t *data, size_t size, FILE *f);

static char g_root[64], g_file[128], g_out[128];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(g_root, sizeof g_root, "/tmp/opdb_fuzz_parse_XXXXXX");
    if (!mkdtemp(g_root)) abort();
    snprintf(g_file, sizeof g_file, "%s/%s", g_root, FUZZ_FILE_NAME);
    snprintf(g_out, sizeof g_out, "%s/out", g_root);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FILE *f = fopen(g_file, "wb");
    if (!f) abort();
    fuzz_prefix(data, size, f);
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    opdb_parse_opts o;
    opdb_parse_opts_init(&o);
    o.profiling_path = g_file;
    o.output_dir = g_out;
    o.threads = 1;
    o.no_progress = true;
    opdb_parse_result res;
    opdb_err err;
    opdb_err_clear(&err);
    int rc = opdb_parse_run(&o, &res, &err);
    if (rc != 0 && err.msg[0] == '\0') abort();
    opdb_parse_result_free(&res);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_out);
    if (system(cmd) != 0) abort();
    return 0;
}

#endif
