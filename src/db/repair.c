/* `opdb validate --repair` (validate.h): under the folder lock, complete a
 * run that was killed while replacing its files, and remove the temp files
 * of killed runs (opdb_txn_recover does both whenever a writer locks). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "opdb/fs.h"
#include "opdb/validate.h"

int opdb_db_repair(const char *db_dir, opdb_err *err) {
    if (!opdb_is_dir(db_dir)) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: not a folder", db_dir);
    int lock = opdb_dir_lock(db_dir, err);
    if (lock < 0) return -1;
    opdb_dir_unlock(lock);
    return 0;
}

bool opdb_db_pending_run(const char *db_dir) {
    char *j = opdb_path_join(db_dir, OPDB_JOURNAL_NAME);
    bool pending = access(j, F_OK) == 0;
    free(j);
    return pending;
}
