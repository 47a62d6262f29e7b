/* See device_mix.h.  A table's device is its first row's Accelerator Core:
 * "GPU" for tables from PyTorch traces, AI_CORE, AI_VECTOR_CORE, MIX_AIC ...
 * for Ascend ones; hcom_* and other tables without the column say nothing. */
#include "ingest/device_mix.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/schema.h"

enum { DEV_NONE, DEV_ASCEND, DEV_GPU };

static int device_of(const char *path, char *core, size_t cap) {
    opdb_csv_file c;
    opdb_err e;
    opdb_err_clear(&e);
    if (opdb_csv_file_open(&c, path, 4096, &e)) return DEV_NONE;
    int dev = DEV_NONE, col = -1;
    if (opdb_csv_file_next(&c, false) > 0) col = opdb_csv_col(c.f, c.nf, OPDB_COL_ACCEL_CORE);
    if (col >= 0 && opdb_csv_file_next(&c, false) > 0 && col < c.nf && c.f[col].n) {
        snprintf(core, cap, "%.*s", (int)c.f[col].n, c.f[col].p);
        dev = strcmp(core, "GPU") == 0 ? DEV_GPU : DEV_ASCEND;
    }
    opdb_csv_file_close(&c);
    return dev;
}

int device_mix_check(const char *outdir, bool writes_ascend, bool writes_gpu, bool strict, opdb_err *err) {
    char there[2][256] = {"", ""}, core[64];
    DIR *d = opendir(outdir);
    struct dirent *ent;
    while (d && (ent = readdir(d)) != NULL) {
        size_t n = strlen(ent->d_name);
        if (ent->d_name[0] == '.' || n < 5 || strcmp(ent->d_name + n - 4, ".csv") != 0) continue;
        char *p = opdb_path_join(outdir, ent->d_name);
        int dev = opdb_is_file(p) ? device_of(p, core, sizeof core) : DEV_NONE;
        free(p);
        if (dev != DEV_NONE && !there[dev - 1][0])
            snprintf(there[dev - 1], sizeof there[dev - 1], "%s (%s)", ent->d_name, core);
    }
    if (d) closedir(d);
    const char *mix = NULL, *old = NULL;
    if (writes_gpu && writes_ascend) mix = "this run writes tables from a GPU trace and from an Ascend profile together";
    else if (writes_gpu && there[DEV_ASCEND - 1][0]) mix = "tables from a GPU trace go beside Ascend tables", old = there[DEV_ASCEND - 1];
    else if (writes_ascend && there[DEV_GPU - 1][0]) mix = "tables from an Ascend profile go beside GPU tables", old = there[DEV_GPU - 1];
    if (!mix) return 0;
    if (strict)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "nothing written: %s in %s%s%s; one database folder holds one device's measurements (use "
                         "another --database-path)",
                         mix, outdir, old ? ", e.g. " : "", old ? old : "");
    opdb_warn("%s in %s%s%s; one database folder holds one device's measurements (use another --database-path; "
              "--strict makes this an error)",
              mix, outdir, old ? ", e.g. " : "", old ? old : "");
    return 0;
}
