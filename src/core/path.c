/* Path text in pathlib's form, folder creation and sorted discovery. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "opdb/fs.h"

char *opdb_path_normalize(const char *p) {
    size_t n = strlen(p);
    char *out = opdb_xmalloc(n + 2);
    size_t o = 0;
    size_t i = 0;
    /* POSIX pathlib keeps exactly two leading slashes, collapses 3+ to one. */
    if (n >= 2 && p[0] == '/' && p[1] == '/' && (n == 2 || p[2] != '/')) {
        out[o++] = '/';
        out[o++] = '/';
        i = 2;
    } else if (n >= 1 && p[0] == '/') {
        out[o++] = '/';
        while (i < n && p[i] == '/') i++;
    }
    size_t root_len = o;
    while (i < n) {
        while (i < n && p[i] == '/') i++;
        size_t s = i;
        while (i < n && p[i] != '/') i++;
        size_t len = i - s;
        if (len == 0) break;
        if (len == 1 && p[s] == '.') continue;
        if (o > root_len) out[o++] = '/';
        memcpy(out + o, p + s, len);
        o += len;
    }
    if (o == 0) out[o++] = '.';
    out[o] = '\0';
    return out;
}

char *opdb_path_join(const char *a, const char *b) {
    if (b[0] == '/') return opdb_path_normalize(b);
    size_t na = strlen(a), nb = strlen(b);
    char *t = opdb_xmalloc(na + nb + 2);
    memcpy(t, a, na);
    t[na] = '/';
    memcpy(t + na + 1, b, nb + 1);
    char *r = opdb_path_normalize(t);
    free(t);
    return r;
}

const char *opdb_path_basename(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

char *opdb_path_parent(const char *p) {
    char *n = opdb_path_normalize(p);
    char *s = strrchr(n, '/');
    if (!s) {
        free(n);
        return opdb_xstrdup(".");
    }
    if (s == n) {
        n[1] = '\0';
        return n;
    }
    *s = '\0';
    return n;
}

char *opdb_path_parent_name(const char *p) {
    char *parent = opdb_path_parent(p);
    const char *b = opdb_path_basename(parent);
    char *r = opdb_xstrdup(strcmp(parent, ".") == 0 || strcmp(parent, "/") == 0 ? "" : b);
    free(parent);
    return r;
}

int opdb_path_cmp(const char *a, const char *b) {
    for (;;) {
        size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
        size_t m = la < lb ? la : lb;
        int c = memcmp(a, b, m);
        if (c) return c;
        if (la != lb) return la < lb ? -1 : 1;
        a += la;
        b += lb;
        if (!*a || !*b) return *a ? 1 : (*b ? -1 : 0);
        a++;
        b++;
    }
}

bool opdb_is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

bool opdb_is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

bool opdb_path_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

int opdb_mkdirs(const char *p, opdb_err *err) {
    char *t = opdb_xstrdup(p);
    size_t n = strlen(t);
    for (size_t i = 1; i <= n; i++) {
        if (t[i] == '/' || t[i] == '\0') {
            char saved = t[i];
            t[i] = '\0';
            if (mkdir(t, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot create folder: %s", t, strerror(e));
                free(t);
                return -1;
            }
            t[i] = saved;
        }
    }
    free(t);
    if (!opdb_is_dir(p))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: exists and is not a folder", p);
    return 0;
}

typedef struct {
    char **v;
    size_t n, cap;
} path_list;

static void list_push(path_list *l, char *s) {
    OPDB_ALLOC_GROW(l->v, l->n + 1, l->cap);
    l->v[l->n++] = s;
}

static int walk(const char *dir, opdb_name_filter keep, void *ctx, path_list *out, opdb_err *err) {
    DIR *d = opendir(dir);
    if (!d) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot read folder: %s", dir, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *child = opdb_path_join(dir, e->d_name);
        struct stat lst;
        if (lstat(child, &lst) != 0) {
            free(child);
            continue;
        }
        if (S_ISDIR(lst.st_mode)) {
            rc = walk(child, keep, ctx, out, err);
            free(child);
            if (rc) break;
            continue;
        }
        struct stat st;
        bool is_reg = S_ISREG(lst.st_mode) || (S_ISLNK(lst.st_mode) && stat(child, &st) == 0 && S_ISREG(st.st_mode));
        if (is_reg && keep(e->d_name, ctx))
            list_push(out, child);
        else
            free(child);
    }
    closedir(d);
    return rc;
}

static int cmp_paths(const void *a, const void *b) {
    return opdb_path_cmp(*(char *const *)a, *(char *const *)b);
}

int opdb_find_files(const char *root, opdb_name_filter keep, void *ctx, char ***out,
                    size_t *count, opdb_err *err) {
    path_list l = {0};
    char *r = opdb_path_normalize(root);
    int rc = walk(r, keep, ctx, &l, err);
    free(r);
    if (rc) {
        opdb_free_paths(l.v, l.n);
        return -1;
    }
    if (l.n > 1) qsort(l.v, l.n, sizeof *l.v, cmp_paths);
    *out = l.v;
    *count = l.n;
    return 0;
}

void opdb_free_paths(char **paths, size_t count) {
    for (size_t i = 0; i < count; i++) free(paths[i]);
    free(paths);
}
