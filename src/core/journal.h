/* The commit journal of an all-or-nothing run (txn.c): its text form and the
 * rules an entry must follow before anything acts on it.  A journal only
 * ever names files directly inside the folder that holds it, so a journal
 * that came with a downloaded folder cannot move files anywhere else. */
#ifndef OPDB_CORE_JOURNAL_H
#define OPDB_CORE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include "opdb/core.h"

#define OPDB_JOURNAL_MAGIC "opdb-journal 2\n"
#define OPDB_JOURNAL_END "end\n"
#define OPDB_JOURNAL_MAX_BYTES (16u << 20)
/* The backup field: the table did not exist before the run (rolling back
 * removes it), or no backup could be made (the entry cannot be rolled back). */
#define OPDB_JOURNAL_ABSENT "-"
#define OPDB_JOURNAL_NO_BACKUP "!"

/* One entry: three plain names.  The table is a file of the journal's
 * folder (or a symbolic link there, written through); the temp and backup
 * files lie next to the file the table resolves to, and are named after it:
 * ".NAME.tmp.XXXXXX" and ".NAME.old.XXXXXX". */
typedef struct opdb_journal_entry {
    const char *tmp, *table, *backup; /* point into the parsed text */
} opdb_journal_entry;

typedef struct opdb_journal {
    opdb_journal_entry *e;
    size_t n;
} opdb_journal;

/* Parses and checks text[0..n); on any problem returns -1 with err naming
 * `where` (the journal's path) and what is wrong, and j empty.  The entries
 * point into text, which must outlive j. */
int opdb_journal_parse(const char *text, size_t n, const char *where, opdb_journal *j, opdb_err *err);
void opdb_journal_free(opdb_journal *j);

/* Whether name is one plain file name: not empty, no '/', not "." or "..",
 * no control byte or DEL, at most 255 bytes. */
bool opdb_journal_plain_name(const char *name);
/* Whether name is ".<target>.<kind>.XXXXXX" (kind "tmp" or "old", six
 * letters or digits); target NULL accepts any plain target. */
bool opdb_journal_aux_name(const char *name, const char *kind, const char *target);

/* NULL when name may be a table of a journal, else why not. */
const char *opdb_journal_table_problem(const char *name);

#endif
