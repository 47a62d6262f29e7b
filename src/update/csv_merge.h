/* Merging aggregated rows into one database CSV (docs/UPDATE.md
 * §2.3-2.4): signatures of rows, matching through the signature index,
 * updating rows in place (lazy rows take patches), adding new ones, and the
 * one rule deciding whether a row changed. */
#ifndef OPDB_UPDATE_CSV_MERGE_H
#define OPDB_UPDATE_CSV_MERGE_H

#include "opdb/schema.h"
#include "db/row_index.h"
#include "db/sig_cells.h"
#include "update/row_patch.h"
#include "update/update_extra.h"
#include "update/update_result.h"

typedef struct ids {
    db_sig_cols sig; /* key ids of the signature cells */
    int mb_dur, prof_avg, legacy;
} ids;

enum { MAX_KSETS = 4 };

typedef struct merge_ctx {
    const opdb_update_opts *o;
    db_lazy_table *f;
    ids id;
    kset_ids *kset[MAX_KSETS]; /* key sets seen (in the key space's arena) */
    int nkset;
    db_row_index si;
    extra_index xi;      /* opdb bench's extra values for this CSV */
    update_result *res;
    opdb_strbuf *log;
    opdb_strbuf sig, disp;
    bool own_sig_reusable; /* signatures do not read EP Size here */
    int own_class;         /* opdb_signature_class of the file's operator */
    const char *class_op;  /* the last aggregated row's op looked at (interned), */
    bool class_same;       /* and whether its class is own_class */
} merge_ctx;

void sig_of_drow(const db_lazy_table *f, const db_drow *r, const ids *id, const char *op, opdb_strbuf *out,
                 bool display);
void sig_of_agg(const agg_row *r, const char *op, opdb_strbuf *out, bool display);
/* qsort order of duplicate signatures: most rows first, then by text. */
int cmp_dup(const void *a, const void *b);
/* Whether a row has a usable duration (MicroBench or profiling). */
bool row_valid(const db_lazy_table *f, const db_drow *r, const ids *id);
/* Whether row r (of norig rows read) differs from the file as read. */
bool row_changed(db_lazy_table *f, size_t r, size_t norig);
/* A dirty row measured more than once: row_changed leaves it to the next. */
bool row_unsettled(const db_lazy_table *f, size_t r, size_t norig);
/* Whether an unsettled row differs from its snapshot (the file at path read again). */
bool rows_differ_from_read(const char *path, db_lazy_table *f, size_t norig);
/* merge_row over a list of aggregated rows. */
void merge_list(merge_ctx *m, const agg_row *const *rows, size_t n, bool allow_add);
/* db_lazy_table.on_lazy_row: indexes a lazy row's signature as it is read. */
void index_at_load(void *ctx, db_lazy_table *f, size_t r);

#endif
