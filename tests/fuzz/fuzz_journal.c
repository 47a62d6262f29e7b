/* libFuzzer target: the commit journal of a database folder (core/journal.h),
 * parsed, then acted on as the next writer would (opdb_txn_recover) in a
 * folder that holds a few tables and opdb-named temp files, next to an
 * "outside" folder.  Whatever the journal says: nothing outside the folder
 * is created, changed or removed; an entry accepted by the parser is a plain
 * name of opdb's own files; a journal the parser refuses renames nothing. */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal.h"
#include "fuzz_tmp.h"
#include "opdb/fs.h"

/* Every file of dir (not below) and its bytes, as one text. */
static char *picture(const char *dir) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    struct dirent **v = NULL;
    int n = scandir(dir, &v, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, v[i]->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            opdb_strbuf c;
            opdb_sb_init(&c);
            opdb_err e;
            opdb_err_clear(&e);
            opdb_read_file(p, &c, &e);
            opdb_sb_addf(&sb, "%s:%zu:%s\n", v[i]->d_name, c.n, c.p ? c.p : "");
            opdb_sb_free(&c);
        } else {
            opdb_sb_addf(&sb, "%s:%o\n", v[i]->d_name, (unsigned)st.st_mode);
        }
        free(v[i]);
    }
    free(v);
    return sb.p ? sb.p : opdb_xstrdup("");
}

static void put(const char *dir, const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    fuzz_write_file(p, text, strlen(text));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *root;
    if (!root) root = fuzz_root_make("journal");
    opdb_journal j;
    opdb_err err;
    opdb_err_clear(&err);
    char *text = malloc(size + 1);
    if (size) memcpy(text, data, size);
    text[size] = '\0';
    if (opdb_journal_parse(text, size, "J", &j, &err) == 0) {
        for (size_t i = 0; i < j.n; i++) {
            if (!opdb_journal_plain_name(j.e[i].table) || strchr(j.e[i].table, '/') ||
                opdb_journal_table_problem(j.e[i].table) || !opdb_journal_aux_name(j.e[i].tmp, "tmp", NULL))
                abort();
            if (strcmp(j.e[i].backup, OPDB_JOURNAL_ABSENT) && strcmp(j.e[i].backup, OPDB_JOURNAL_NO_BACKUP) &&
                !opdb_journal_aux_name(j.e[i].backup, "old", NULL))
                abort();
        }
        opdb_journal_free(&j);
    } else if (!err.msg[0] || strchr(err.msg, '\n')) {
        abort(); /* one line naming what is wrong */
    }
    /* acted on: root/db holds the journal, root/out must never change */
    char db[256], out[256], sub[256];
    snprintf(db, sizeof db, "%s/db", root);
    snprintf(out, sizeof out, "%s/out", root);
    snprintf(sub, sizeof sub, "%s/db/sub", root);
    fuzz_rm_rf(db);
    fuzz_rm_rf(out);
    if (mkdir(db, 0700) || mkdir(out, 0700) || mkdir(sub, 0700)) abort();
    put(db, "A.csv", "old A\n");
    put(db, "B.csv", "old B\n");
    put(db, ".A.csv.tmp.AAAAAA", "new A\n");
    put(db, ".B.csv.tmp.BBBBBB", "new B\n");
    put(db, ".B.csv.old.CCCCCC", "old B\n");
    put(out, "victim", "the user's\n");
    put(out, ".victim.tmp.AAAAAA", "payload\n");
    put(sub, "C.csv", "another database\n");
    put(sub, ".C.csv.tmp.AAAAAA", "its staged file\n");
    char lk[300];
    snprintf(lk, sizeof lk, "%s/L.csv", db);
    if (symlink("../out/victim", lk) != 0) abort();
    char jp[300];
    snprintf(jp, sizeof jp, "%s/%s", db, OPDB_JOURNAL_NAME);
    fuzz_write_file(jp, data, size);
    char *out_before = picture(out), *sub_before = picture(sub), *db_before = picture(db);
    char msg[2048];
    int st = opdb_txn_journal_status(db, msg, sizeof msg);
    opdb_err_clear(&err);
    int rc = opdb_txn_recover(db, NULL, &err);
    char *out_after = picture(out), *sub_after = picture(sub), *db_after = picture(db);
    if (strcmp(out_before, out_after) != 0 || strcmp(sub_before, sub_after) != 0) abort();
    if (st == OPDB_JOURNAL_INVALID && (rc == 0 || strcmp(db_before, db_after) != 0)) abort();
    if (rc != 0 && (!err.msg[0] || strchr(err.msg, '\n'))) abort();
    free(out_before), free(out_after), free(sub_before), free(sub_after), free(db_before), free(db_after);
    free(text);
    return 0;
}
