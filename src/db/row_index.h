/* A signature index: signature -> the rows holding it, in first-seen order
 * (the first row is the match target; more only for duplicates).  Rows may
 * be filed a few rows late (si_add_soon) so the slot each probes is asked
 * for from memory first. */
#ifndef OPDB_UPDATE_SIG_INDEX_H
#define OPDB_UPDATE_SIG_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opdb/core.h"
#include "update/prefetch.h"

typedef struct sig_entry {
    const char *sig;     /* in the index's arena */
    size_t len;
    uint64_t hash;
    size_t row0;         /* the first row; more only for duplicates */
    size_t *more;
    size_t n, cap;       /* rows in all; room in more */
} sig_entry;

/* Rows indexed as a file is read wait this many rows in a queue, so that
 * the index slot each will probe is asked for from memory first. */
#define SI_AHEAD 8

typedef struct si_pending {
    uint64_t hash;
    const char *sig;  /* in the index's arena */
    size_t len, row;
} si_pending;

typedef struct sig_index {
    sig_entry *e;   /* first-seen order */
    size_t n, cap;
    opdb_hindex ix;
    opdb_arena arena;
    si_pending pend[SI_AHEAD]; /* si_add_soon's queue, oldest at phead */
    int phead, npend;
} sig_index;

static inline size_t entry_row(const sig_entry *e, size_t k) { return k == 0 ? e->row0 : e->more[k - 1]; }
static inline uint64_t si_hash(const char *sig, size_t n) { return opdb_hash_bytes(sig, n, 5); }

/* The entry of sig (hash h = si_hash(sig)), or NULL. */
sig_entry *si_find_h(sig_index *si, const char *sig, size_t len, uint64_t h);
/* Files row under sig now (after the queued rows). */
void si_add(sig_index *si, const opdb_strbuf *sig, size_t row);
/* si_add a few rows later (si_flush files what is left). */
void si_add_soon(sig_index *si, const opdb_strbuf *sig, size_t row);
void si_flush(sig_index *si);
/* Room for n signatures. */
void si_reserve(sig_index *si, size_t n);
void si_free(sig_index *si);

#endif
