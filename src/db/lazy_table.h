/* A database CSV held in memory for `opdb update` (docs/UPDATE.md
 * §2.2): its header as a key space and its rows as dict rows (dict_row.h),
 * read by the fast tokenizer as lazy rows (only the kept cells decoded, the
 * rest left in the mapped file) or, for anomalies and the reference path,
 * by the exact tokenizer as full dict rows. */
#ifndef OPDB_UPDATE_CSV_ROWS_H
#define OPDB_UPDATE_CSV_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "opdb/csv.h"
#include "opdb/fs.h"
#include "db/dict_row.h"
#include "update/op_summary.h"
#include "update/update_result.h"

/* The cells a lazy row keeps: what signatures, duplicate checks, pruning
 * and the gap report read.  Every other cell is read only when the row is
 * updated or has to be rendered again (row_mut).  The names are k_lazy_names (csv_rows.c); the first six are the signature
 * cells in opdb_sig_cells order. */
enum { NLAZY = 8 };

/* The readers keep this many cells of a record: a header that fills them
 * may have been cut, and writing it back would lose columns. */
enum { MAX_COLUMNS = 4096 };

typedef struct csvfile {
    keyspace ks;
    opdb_strvec fields;       /* header as read */
    char *buf;           /* the file's bytes after the header, as read (rows
                            point into it): view.data; NULL after the exact fallback */
    opdb_file_view view;
    int nh, *colkey;     /* header columns and their key ids */
    int header_keys;     /* key ids below this are the header's */
    int lazy_col[NLAZY], nlazy_cols; /* header columns of the kept cells */
    signed char *slot_of_key;        /* header key id -> kept cell, or -1 */
    int *col_of_key;     /* header key id -> its column */
    opdb_field *scratch; /* MAX_COLUMNS cells */
    struct row_patch *patch; /* per row read lazily (see row_patch) */
    size_t npatch;
    /* called for each lazy row as it is read (its cells still in cache) */
    void (*on_lazy_row)(void *ctx, struct csvfile *f, size_t r);
    void *on_lazy_row_ctx;
    size_t seen_lazy;    /* rows passed to on_lazy_row */
    bool reread;         /* the exact tokenizer read the file again */
    unsigned long long unterminated_line; /* a quote still open at EOF: its record's line (0: none) */
    drow *rows;
    size_t n, cap;
} csvfile;

/* A key set of aggregated rows in this file's key space: key ids, and for
 * every key id the key set position of the measured value apply() sets
 * there (MB_DUR and the metric means), else -1. */
typedef struct kset_ids {
    const agg_keyset *kset;
    int id[AGG_MAX_KEYS];
    int *measured;      /* ks.cap entries */
    /* the file's measured columns in order and each one's key set entry
     * (write_spliced) */
    int nsplice, splice_col[AGG_MAX_KEYS], splice_li[AGG_MAX_KEYS];
} kset_ids;

/* The measurement applied to a lazy row, kept instead of reading the row in
 * full: its values are spliced into the row's bytes when it is written, or
 * set again (drow_set) when the row is read in full. */
typedef struct row_patch {
    const agg_row *nr;
    const kset_ids *lk;
    const struct row_patch *prev; /* measurements applied before (MatMul aliases), oldest last */
} row_patch;

void push_row(csvfile *f, drow r);
void csvfile_free(csvfile *f);
/* A row's patches, oldest first (malloc'ed; *n of them). */
const row_patch **patch_chain(const row_patch *last, size_t *n);
/* Sets the measured values of nr (MB_DUR and the metric means) in t. */
void put_measured(keyspace *ks, drow *t, const agg_row *nr, const int *ids);
/* row.get(key, "") of a row, lazy or not (of a lazy row: kept cells only). */
opdb_span cell(const csvfile *f, const drow *r, int id);
/* The row with every cell (a lazy row is tokenized and its patches set again). */
drow *row_mut(csvfile *f, size_t i);
/* Whether this run takes the reference path (opts.eager or OPDB_UPDATE_EAGER=1). */
bool eager_rows(const opdb_update_opts *o);
/* Reads path into f: lazy rows by the fast tokenizer, else (eager, or an
 * anomaly) full dict rows by the exact one. */
int load_csv(const char *path, csvfile *f, bool eager, opdb_err *err);

#endif
