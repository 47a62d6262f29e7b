/* Shared helpers of the fuzz targets that run a command over files in a
 * per-input temporary folder: write a file, remove a tree (nftw: no fork
 * per input), list what a tree holds. */
#ifndef OPDB_FUZZ_TMP_H
#define OPDB_FUZZ_TMP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void fuzz_write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(data, 1, n, f) != n) abort();
    if (fclose(f) != 0) abort();
}

static int fuzz_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)ftw;
    if ((flag == FTW_DP ? rmdir(p) : unlink(p)) != 0) abort();
    return 0;
}

/* rm -rf dir (absent: nothing to do). */
static void fuzz_rm_rf(const char *dir) {
    struct stat st;
    if (lstat(dir, &st) != 0) return;
    if (nftw(dir, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0) abort();
}

/* A per-process temporary folder, removed when the fuzzer exits. */
static char fuzz_root[64];
static void fuzz_root_rm(void) { fuzz_rm_rf(fuzz_root); }
static const char *fuzz_root_make(const char *tag) {
    snprintf(fuzz_root, sizeof fuzz_root, "/tmp/opdb_fuzz_%s_XXXXXX", tag);
    if (!mkdtemp(fuzz_root)) abort();
    atexit(fuzz_root_rm);
    return fuzz_root;
}

#endif
