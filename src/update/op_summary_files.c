/* Finding op_summary files under PROF_* folders (docs/UPDATE.md §1). */
#include "update/op_summary.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "opdb/fs.h"

static bool is_prof_name(const char *name) { return strncmp(name, "PROF_", 5) == 0; }

static void find_prof_dirs(const char *dir, opdb_strvec *out) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *child = opdb_path_join(dir, e->d_name);
        struct stat st;
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (is_prof_name(e->d_name)) opdb_strvec_push(out, child);
            find_prof_dirs(child, out);
        }
        free(child);
    }
    closedir(d);
}

static int cmp_path(const void *a, const void *b) { return opdb_path_cmp(*(char *const *)a, *(char *const *)b); }

static bool is_op_summary(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    return strncmp(name, "op_summary_", 11) == 0 && n >= 15 && strcmp(name + n - 4, ".csv") == 0;
}

int op_summary_find_files(const char *const *paths, size_t n, char ***files, size_t *nfiles, opdb_err *err) {
    opdb_strvec dirs = {0}, out = {0};
    for (size_t i = 0; i < n; i++) {
        if (!opdb_is_dir(paths[i])) {
            opdb_strvec_free(&dirs);
            return opdb_fail(err, OPDB_ERR_RUNTIME, "PROF path does not exist or is not a folder: %s", paths[i]);
        }
        char *norm = opdb_path_normalize(paths[i]);
        if (is_prof_name(opdb_path_basename(norm))) opdb_strvec_push(&dirs, norm);
        find_prof_dirs(norm, &dirs);
        free(norm);
    }
    if (dirs.n > 1) qsort(dirs.v, dirs.n, sizeof *dirs.v, cmp_path);
    for (size_t i = 0; i < dirs.n; i++) {
        if (i && strcmp(dirs.v[i], dirs.v[i - 1]) == 0) continue; /* a set, as the reference */
        char *mso = opdb_path_join(dirs.v[i], "mindstudio_profiler_output");
        DIR *d = opendir(mso);
        if (d) {
            opdb_strvec here = {0};
            struct dirent *e;
            while ((e = readdir(d)) != NULL)
                if (is_op_summary(e->d_name, NULL)) opdb_strvec_push_owned(&here, opdb_path_join(mso, e->d_name));
            closedir(d);
            if (here.n > 1) qsort(here.v, here.n, sizeof *here.v, cmp_path);
            for (size_t k = 0; k < here.n; k++) opdb_strvec_push_owned(&out, here.v[k]);
            free(here.v);
        }
        free(mso);
    }
    opdb_strvec_free(&dirs);
    if (out.n == 0) {
        free(out.v);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "No op_summary_*.csv found");
    }
    *files = out.v;
    *nfiles = out.n;
    return 0;
}
