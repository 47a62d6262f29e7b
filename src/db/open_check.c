/* See open_check.h. */
#include "db/open_check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/pandas_cells.h"
#include "opdb/csv.h"

#define LFS_PREFIX "version https://git-lfs.github.com/spec/"
#define LFS_WHY "a Git LFS pointer, not CSV data (run git lfs pull)"

/* Sets *p and err: every refusal is worded here. */
static int refuse(const char *name, const db_open_opts *o, db_open_kind kind, unsigned line, const char *why,
                  db_open_problem *p, opdb_err *err) {
    if (p) {
        p->kind = kind;
        p->line = line;
        snprintf(p->why, sizeof p->why, "%s", why);
    }
    if (kind == DB_OPEN_LFS_POINTER) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s is " LFS_WHY, name);
    if (kind == DB_OPEN_NO_HEADER)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", name, o->no_header_msg ? o->no_header_msg : "CSV has no header");
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", name, why);
}

size_t db_open_bom_len(const void *data, size_t n) {
    const unsigned char *b = data;
    return n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;
}

int db_open_file(const char *path, const db_open_opts *o, uint64_t *body, db_open_problem *p, opdb_err *err) {
    if (p) *p = (db_open_problem){DB_OPEN_OK, 0, ""};
    char why[160];
    if (o->sniff && opdb_csv_sniff(path, why, sizeof why)) return refuse(path, o, DB_OPEN_NOT_TEXT, 1, why, p, err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, sizeof why, "cannot open: %s", strerror(errno));
        return refuse(path, o, DB_OPEN_CANNOT_OPEN, 0, why, p, err);
    }
    struct stat st;
    if (o->regular && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        return refuse(path, o, DB_OPEN_CANNOT_OPEN, 0, "not a regular file", p, err);
    }
    unsigned char bom[3];
    ssize_t k = pread(fd, bom, 3, 0);
    if (k < 0) {
        snprintf(why, sizeof why, "cannot read: %s", strerror(errno));
        close(fd);
        return refuse(path, o, DB_OPEN_CANNOT_OPEN, 0, why, p, err);
    }
    *body = o->keep_bom ? 0 : db_open_bom_len(bom, (size_t)k);
    return fd;
}

int db_open_check_bytes(const char *name, const char *data, size_t n, const db_open_opts *o, db_open_problem *p,
                        opdb_err *err) {
    if (p) *p = (db_open_problem){DB_OPEN_OK, 0, ""};
    if (o->utf8 && !db_utf8_valid((const unsigned char *)data, n))
        return refuse(name, o, DB_OPEN_NOT_TEXT, 0, "not UTF-8 text", p, err);
    return 0;
}

int db_open_check_header(const char *name, size_t ncells, const char *first, size_t nfirst, const db_open_opts *o,
                         db_open_problem *p, opdb_err *err) {
    if (p) *p = (db_open_problem){DB_OPEN_OK, 0, ""};
    if (ncells == 0 && o->need_header) return refuse(name, o, DB_OPEN_NO_HEADER, 0, "no header", p, err);
    size_t k = sizeof LFS_PREFIX - 1;
    if (o->lfs && ncells > 0 && nfirst >= k && !memcmp(first, LFS_PREFIX, k))
        return refuse(name, o, DB_OPEN_LFS_POINTER, 1, LFS_WHY, p, err);
    return 0;
}
