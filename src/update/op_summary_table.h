/* The group table of op_summary aggregation (op_summary_table.c), used by
 * the aggregation (op_summary.c) and the row readers (op_summary_read.c). */
#ifndef OPDB_UPDATE_OP_SUMMARY_TABLE_H
#define OPDB_UPDATE_OP_SUMMARY_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/pub_slots.h"
#include "opdb/core.h"
#include "update/prefetch.h"

/* A group's identity, immutable once published in the key table. */
typedef struct gkey {
    const char *op, *sig;       /* NUL-terminated, in the arena */
    size_t opn, sign;
    uint64_t hash;
    uint32_t index;             /* position in gtable.g */
    uint32_t opid;              /* the op's position in gtable.ops */
    /* in the cells table (set before the key enters it): the first row's
     * signature cells as stored in group.first, and their hash */
    const char *cells;
    uint64_t cells_hash;
} gkey;

typedef struct group {
    unsigned long long count;
    double min;
    double *half[2]; /* metric sums by half (agg_msum), in the arena; NULL while all zero */
    bool have_min;
    uint32_t opid;   /* key->opid, read here when the groups are walked in order */
    gkey *key;
    char *first;     /* base 8 + Task Type, stripped, each NUL-terminated, back to back */
} group;

/* Groups and keys are looked up in a table far bigger than the caches, one
 * row after another: rows ask for their cache lines this many rows ahead. */
enum { AHEAD = OS_PF_AHEAD };

static inline void prefetch_lines(const void *p, int lines) {
    for (int i = 0; i < lines; i++) __builtin_prefetch((const char *)p + 64 * i);
}

/* Groups in first-seen order.  The key table is append-only and published
 * with release/acquire atomics, so workers look rows up (gprobe) while the
 * caller's thread adds groups and accumulates in file order: the string
 * compares and their cache misses run in parallel, and a row the probe
 * misses is looked up again, authoritatively, by the caller.
 *
 * A second table finds a group by its first row's signature cells as
 * written (OP Type, Input Shapes .. Output Data Types, stripped): a row
 * with the same cells has the same signature, so a profile's repeated
 * launches skip computing it.  Rows with an EP Size cell (read by
 * DispatchFFNCombine's signature) take the signature path only. */
typedef struct gtable {
    group *g;
    size_t n, cap;
    _Atomic(opdb_pub_slots *) table; /* of gkey, by (op, signature) */
    _Atomic(opdb_pub_slots *) cells; /* of gkey, by the first row's cells (cells_hash) */
    opdb_arena *arena;          /* the group strings; handed on to the result */
    /* interned op names: a group's op is one of a few dozen */
    const char **ops;
    size_t *opn, nops, capops;
    uint32_t recent[64];        /* op id + 1 by op hash, the last seen */
    /* batch outputs of files read before, for the next file's pipeline (its
     * row arrays already faulted in: fresh memory is slow to get on a VM
     * that hands free pages back to its host) */
    void *spare_out[16];
    int nspare;
} gtable;

void gtable_init(gtable *t, opdb_arena *arena, size_t expect_groups);
/* Frees the table (its spare batch outputs are the reader's: os_release_spares first). */
void gtable_free(gtable *t);
bool key_is(const gkey *k, const char *op, size_t opn, const char *sig, size_t sign, uint64_t h);
/* A worker's lookup: the group's index + 1, or 0 (not published yet). */
uint32_t gprobe(const gtable *t, const char *op, size_t opn, const char *sig, size_t sign, uint64_t h);
/* The op's interned id (the caller's thread). */
uint32_t op_id(gtable *t, const char *op, size_t opn, uint64_t hop);
/* The group of (op, signature), a new one when none (the caller's thread). */
group *gfind(gtable *t, const char *op, size_t opn, uint64_t hop, const char *sig, size_t sign, uint64_t h);

/* op_summary_read.c: one file's rows into t (the fast tokenizer on worker
 * threads, the exact rules for the rest of a file that needs them). */
int aggregate_file(const char *path, gtable *t, bool quirks, unsigned long long *rows,
                   unsigned long long *rejected, opdb_err *err);
/* Frees a batch output kept in gtable.spare_out. */
void os_release(void *out);
/* Frees every batch output kept in t->spare_out. */
void os_release_spares(gtable *t);

#endif
