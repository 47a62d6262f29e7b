/* opdb bench's journal: one CSV record per benchmarked row (measured or
 * failed), appended and synced as soon as the row is done, so a killed run
 * restarted with --resume skips what is already there. Rows are identified
 * by (CSV stem, row signature). */
#ifndef OPDB_REPLAY_BENCH_JOURNAL_H
#define OPDB_REPLAY_BENCH_JOURNAL_H

#include <stdbool.h>
#include "opdb/core.h"

enum {
    J_CSV, J_ROW, J_STATUS, J_ERROR,
    J_STATE, J_CORE, J_INSH, J_INDT, J_INFMT, J_OUTSH, J_OUTDT, J_OUTFMT, J_EP, /* row cells */
    J_MIN, J_MEDIAN, J_P20, J_P80, J_CI_LO, J_CI_HI, J_RSD, J_SAMPLES, J_CACHE, J_GFLOPS, J_GBS, J_BACKEND,
    J_CONVERGED, /* yes | no (timeout before the stop rule) | fixed (a fixed count) */
    J_N
};
#define J_CELL0 J_STATE /* the 8 base cells then EP Size */

extern const char *const journal_cols[J_N];

typedef struct jrec {
    char *f[J_N];
    char *key;          /* stem \x1e signature */
} jrec;

typedef struct bench_journal {
    char *path;
    int fd;
    jrec *r;
    size_t n, cap;
    opdb_hindex ix;
    size_t nbad;                 /* records dropped on load: a status, time or count that is not sane */
    unsigned long long first_bad_line;
} bench_journal;

/* resume: keep the records of an existing journal (a torn last line is cut
 * off); otherwise start an empty one. */
int journal_open(bench_journal *j, const char *path, bool resume, opdb_err *err);
/* Appends f (J_N cells, copied) and syncs it to disk. */
int journal_append(bench_journal *j, const char *const *f, opdb_err *err);
const jrec *journal_find(const bench_journal *j, const char *stem, const char *sig);
void journal_close(bench_journal *j);
/* The identity of a row: signature of its cells (J_CELL0 order) with op = stem. */
void journal_sig(const char *stem, const char *const *cells, opdb_strbuf *out);

#endif
