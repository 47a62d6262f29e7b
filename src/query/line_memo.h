/* The batch stream's line memo: a query line that repeats an earlier one but
 * for its id is answered by copying the earlier result line with the id put
 * back, without being read, dispatched or rendered again. */
#ifndef OPDB_QUERY_LINE_MEMO_H
#define OPDB_QUERY_LINE_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opdb/core.h"

typedef struct q_lmemo q_lmemo;

/* How a line is looked up: the key is the line without the id's value
 * [at, end) when that value is written as the result writes it (kind
 * Q_LM_INT or Q_LM_STR), else the whole line (Q_LM_FULL, at == end). */
enum { Q_LM_FULL, Q_LM_INT, Q_LM_STR };
typedef struct q_lmemo_line {
    const char *s;
    size_t n, at, end;
    uint8_t kind;
    uint64_t h;
} q_lmemo_line;

/* A memo of at most `bytes` bytes in all (NULL when 0). Shared by threads:
 * lookups take no lock, entries are published once and never change. */
q_lmemo *q_lmemo_new(size_t bytes);
void q_lmemo_free(q_lmemo *m);
/* The key of line s (n bytes, blanks trimmed) into k. */
void q_lmemo_key(const char *s, size_t n, q_lmemo_line *k);
/* Starts fetching the slot k's lookup begins at; then, once that has likely
 * arrived, the entry it holds when its tag is k's (false when not: the line
 * is likely not known). For lines read a few lines ahead. */
void q_lmemo_prefetch(const q_lmemo *m, const q_lmemo_line *k);
bool q_lmemo_prefetch_entry(const q_lmemo *m, const q_lmemo_line *k);
/* true when the line is known: its result line and newline appended to out,
 * its stats class in *cls. Otherwise *admit says whether the answer should
 * be offered to q_lmemo_put (third sight of the key, room left). */
bool q_lmemo_get(q_lmemo *m, const q_lmemo_line *k, opdb_strbuf *out, uint8_t *cls, bool *admit);
/* Files the line's result text (`text`, n bytes, its newline included) with
 * its class; taken only when the text echoes the key's id as the key says. */
void q_lmemo_put(q_lmemo *m, const q_lmemo_line *k, const char *text, size_t n, uint8_t cls);
/* entries filed so far */
size_t q_lmemo_entries(const q_lmemo *m);
/* tests: every hash cut to mask's bits, so that keys collide */
void q_lmemo_test_hash_mask(q_lmemo *m, uint64_t mask);

#endif
