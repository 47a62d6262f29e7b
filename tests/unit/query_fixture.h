/* Shared by the query unit tests: a database folder written from strings
 * under a fresh temporary directory, and one query's result line. */
#ifndef OPDB_TEST_QUERY_FIXTURE_H
#define OPDB_TEST_QUERY_FIXTURE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/query.h"

static inline void qf_write(const char *dir, const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static inline char *qf_mkdir(void) {
    char tmpl[] = "/tmp/opdb_qtest.XXXXXX";
    char *d = mkdtemp(tmpl);
    if (!d) abort();
    return strdup(d);
}

static inline int qf_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)ftw;
    return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static inline void qf_rmdir(char *d) {
    nftw(d, qf_rm_one, 8, FTW_DEPTH | FTW_PHYS);
    free(d);
}

static inline void qf_quiet(void *ctx, const char *line) {
    (void)ctx, (void)line;
}

static inline opdb_qdb *qf_open(const char *dir, bool quirks, bool interp, int tp) {
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    o.reference_quirks = quirks;
    o.interpolation = interp;
    o.tp_size = tp;
    o.warn = qf_quiet;
    opdb_err err;
    opdb_err_clear(&err);
    return opdb_qdb_open(dir, &o, &err);
}

/* The result line of one JSON query (malloc'd). */
static inline char *qf_line(const opdb_qdb *db, const char *q, bool explain) {
    opdb_qresult r;
    if (opdb_query_json(db, q, strlen(q), explain, &r) != 0) abort();
    char *line;
    size_t n;
    if (opdb_qresult_json(&r, &line, &n) != 0) abort();
    opdb_qresult_free(&r);
    return line;
}

#endif
