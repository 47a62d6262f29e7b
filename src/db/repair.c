/* `opdb validate --repair` (validate.h): under the folder lock, complete a
 * run that was killed while replacing its files, and remove the temp files
 * of killed runs (opdb_txn_recover does both whenever a writer locks); an
 * invalid journal is only ever deleted, on request. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/call.h"
#include "opdb/fs.h"
#include "opdb/validate.h"

static int repair_call(const char *db_dir, bool discard_journal, opdb_err *err) {
    if (!opdb_is_dir(db_dir)) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: not a folder", db_dir);
    if (discard_journal) { /* the one thing done to an invalid journal: delete it, renaming nothing */
        int plain = opdb_dir_lock_plain(db_dir, err);
        if (plain < 0) return -1;
        int rc = opdb_txn_discard_journal(db_dir, err);
        opdb_dir_unlock(plain);
        if (rc) return -1;
    }
    int lock = opdb_dir_lock(db_dir, err);
    if (lock < 0) return -1;
    opdb_dir_unlock(lock);
    return 0;
}

int opdb_db_repair(const char *db_dir, bool discard_journal, opdb_err *err) {
    opdb_call_scope saved = opdb_call_enter(NULL);
    OPDB_CALL_GUARD(saved, err);
    int rc = repair_call(db_dir, discard_journal, err);
    opdb_call_leave(&saved);
    return rc;
}

bool opdb_db_pending_run(const char *db_dir) {
    char *j = opdb_path_join(db_dir, OPDB_JOURNAL_NAME);
    bool pending = access(j, F_OK) == 0;
    free(j);
    return pending;
}
