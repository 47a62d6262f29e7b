/* The staged set of an open all-or-nothing run: what an atomic file commit
 * adds to (atomic_file.c), what the end of the run renames (txn.c) and what
 * a signal handler removes.  Apart from txn.c so that atomic files need
 * nothing of the commit, which itself writes its journals as atomic files. */
#ifndef OPDB_CORE_TXN_STAGE_H
#define OPDB_CORE_TXN_STAGE_H

#include <stdbool.h>
#include "opdb/fs.h"

typedef struct opdb_staged {
    char *tmp, *path; /* absolute: the temp file and the file it replaces (a link's target) */
    char *table;      /* absolute: the name as written (the link itself), whose folder keeps the journal */
    char *backup;     /* hard link to the old file, or NULL */
    bool had_old, no_backup, renamed;
    opdb_file_id expect;
    struct opdb_staged *next;
} opdb_staged;

/* Closes one begin; true when it was the outermost, with *dir the run's
 * folder (absolute, still owned here) . */
bool opdb_txn_stage_close(const char **dir);
/* The staged files in the order they were written (call with the signals
 * held off: the list is reordered in place). */
opdb_staged *opdb_txn_stage_list(void);
void opdb_txn_stage_set_state(int state);
/* The end of one begin: its hold on the call let go (core/call.h). */
void opdb_txn_stage_drop(void);
/* Forgets the list (the caller frees it) and the folder. */
void opdb_txn_stage_reset(void);

#endif
