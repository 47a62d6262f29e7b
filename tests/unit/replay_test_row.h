/* A database row for the replay unit tests: column -> cell pairs, ended by {NULL, NULL}. */
#ifndef OPDB_TEST_REPLAY_ROW_H
#define OPDB_TEST_REPLAY_ROW_H

#include <string.h>
#include "opdb/replay.h"

typedef struct kv {
    const char *k, *v;
} kv;

static inline const char *cell(const opdb_replay_row *row, const char *col) {
    for (const kv *p = row->ctx; p->k; p++)
        if (strcmp(p->k, col) == 0) return p->v;
    return "";
}

#endif
