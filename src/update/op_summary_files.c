/* Finding op_summary files under PROF_* folders (spec update-and-report.md §1). */
#include "update/op_summary.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "opdb/fs.h"

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static void sl_push(strlist *l, char *s) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = opdb_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

static bool is_prof_name(const char *name) { return strncmp(name, "PROF_", 5) == 0; }

static void find_prof_dirs(const char *dir, strlist *out) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *child = opdb_path_join(dir, e->d_name);
        struct stat st;
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (is_prof_name(e->d_name)) sl_push(out, opdb_xstrdup(child));
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
    strlist dirs = {0}, out = {0};
    for (size_t i = 0; i < n; i++) {
        if (!opdb_is_dir(paths[i])) {
            for (size_t k = 0; k < dirs.n; k++) free(dirs.v[k]);
            free(dirs.v);
            return opdb_fail(err, OPDB_ERR_RUNTIME, "PROF path does not exist or is not a folder: %s", paths[i]);
        }
        char *norm = opdb_path_normalize(paths[i]);
        if (is_prof_name(opdb_path_basename(norm))) sl_push(&dirs, opdb_xstrdup(norm));
        find_prof_dirs(norm, &dirs);
        free(norm);
    }
    if (dirs.n > 1) qsort(dirs.v, dirs.n, sizeof *dirs.v, cmp_path);
    for (size_t i = 0; i < dirs.n; i++) {
        if (i && strcmp(dirs.v[i], dirs.v[i - 1]) == 0) continue; /* a set, as the reference */
        char *mso = opdb_path_join(dirs.v[i], "mindstudio_profiler_output");
        DIR *d = opendir(mso);
        if (d) {
            strlist here = {0};
            struct dirent *e;
            while ((e = readdir(d)) != NULL)
                if (is_op_summary(e->d_name, NULL)) sl_push(&here, opdb_path_join(mso, e->d_name));
            closedir(d);
            if (here.n > 1) qsort(here.v, here.n, sizeof *here.v, cmp_path);
            for (size_t k = 0; k < here.n; k++) sl_push(&out, here.v[k]);
            free(here.v);
        }
        free(mso);
    }
    for (size_t k = 0; k < dirs.n; k++) free(dirs.v[k]);
    free(dirs.v);
    if (out.n == 0) {
        free(out.v);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "No op_summary_*.csv found");
    }
    *files = out.v;
    *nfiles = out.n;
    return 0;
}
