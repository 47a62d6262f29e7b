/* See journal.h.  The text: the magic line, then per entry three
 * NUL-terminated names (temp, table, backup), then "end\n". */
#include "core/journal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/db.h"
#include "opdb/fs.h"

bool opdb_journal_plain_name(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > 255 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return false;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p == '/' || *p < 0x20 || *p == 0x7f) return false;
    return true;
}

bool opdb_journal_aux_name(const char *name, const char *kind, const char *target) {
    size_t n = strlen(name), k = strlen(kind);
    /* "." + target + "." + kind + "." + 6 */
    if (!opdb_journal_plain_name(name) || name[0] != '.' || n < k + 10) return false;
    const char *tail = name + n - (k + 8);
    if (tail[0] != '.' || memcmp(tail + 1, kind, k) != 0 || tail[k + 1] != '.') return false;
    for (const char *c = tail + k + 2; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))) return false;
    size_t tn = (size_t)(tail - name) - 1;
    if (tn == 0) return false;
    return !target || (strlen(target) == tn && memcmp(name + 1, target, tn) == 0);
}

/* A table name the journal may act on: one plain name within the length
 * every writer keeps to, and none of opdb's own bookkeeping files. */
const char *opdb_journal_table_problem(const char *name) {
    if (!opdb_journal_plain_name(name)) return "is not a plain file name inside the folder";
    if (strlen(name) > OPDB_NAME_MAX) return "is longer than a table name can be";
    if (strcmp(name, OPDB_JOURNAL_NAME) == 0 || opdb_journal_aux_name(name, "tmp", NULL) ||
        opdb_journal_aux_name(name, "old", NULL))
        return "names one of opdb's own temporary files";
    return NULL;
}

static char *shown(const char *s) {
    /* at most 80 bytes, control bytes as \xNN: the error stays one line */
    char *o = opdb_xmalloc(80 * 4 + 8);
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && k < 80 * 4; p++) {
        if (*p < 0x20 || *p == 0x7f) k += (size_t)snprintf(o + k, 8, "\\x%02x", *p);
        else o[k++] = (char)*p;
    }
    if (strlen(s) > 80) memcpy(o + k, "...", 3), k += 3;
    o[k] = '\0';
    return o;
}

static int bad(const char *where, size_t idx, const char *what, const char *name, const char *why, opdb_err *err) {
    char *s = shown(name);
    opdb_fail(err, OPDB_ERR_RUNTIME,
              "%s: invalid journal: entry %zu: %s '%s' %s; nothing was renamed "
              "(`opdb validate --repair --discard-journal` deletes it)",
              where, idx + 1, what, s, why);
    free(s);
    return -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int opdb_journal_parse(const char *text, size_t n, const char *where, opdb_journal *j, opdb_err *err) {
    memset(j, 0, sizeof *j);
    size_t ml = strlen(OPDB_JOURNAL_MAGIC), el = strlen(OPDB_JOURNAL_END);
    if (n < ml + el || memcmp(text, OPDB_JOURNAL_MAGIC, ml) != 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s: invalid journal: not an opdb journal; nothing was renamed "
                         "(`opdb validate --repair --discard-journal` deletes it)",
                         where);
    if (memcmp(text + n - el, OPDB_JOURNAL_END, el) != 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s: invalid journal: truncated (no end line); nothing was renamed "
                         "(`opdb validate --repair --discard-journal` deletes it)",
                         where);
    const char *p = text + ml, *end = text + n - el;
    size_t cap = 0;
    while (p < end) {
        const char *f[3];
        for (int k = 0; k < 3; k++) {
            const char *z = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
            if (!z) {
                opdb_journal_free(j);
                return opdb_fail(err, OPDB_ERR_RUNTIME,
                                 "%s: invalid journal: entry %zu is cut short; nothing was renamed "
                                 "(`opdb validate --repair --discard-journal` deletes it)",
                                 where, j->n + 1);
            }
            f[k] = p;
            p = z + 1;
        }
        size_t idx = j->n;
        const char *why = opdb_journal_table_problem(f[1]);
        int rc = 0;
        if (why) rc = bad(where, idx, "table", f[1], why, err);
        else if (!opdb_journal_aux_name(f[0], "tmp", NULL))
            rc = bad(where, idx, "temp file", f[0], "is not a name opdb gives its temp files", err);
        else if (strcmp(f[2], OPDB_JOURNAL_ABSENT) != 0 && strcmp(f[2], OPDB_JOURNAL_NO_BACKUP) != 0 &&
                 !opdb_journal_aux_name(f[2], "old", NULL))
            rc = bad(where, idx, "backup", f[2], "is not a name opdb gives its backups", err);
        if (rc) {
            opdb_journal_free(j);
            return -1;
        }
        OPDB_ALLOC_GROW(j->e, j->n + 1, cap);
        j->e[j->n++] = (opdb_journal_entry){f[0], f[1], f[2]};
    }
    /* one entry per table (sorted copy: a hostile journal may hold a million) */
    const char **t = opdb_xmalloc((j->n ? j->n : 1) * sizeof *t);
    for (size_t i = 0; i < j->n; i++) t[i] = j->e[i].table;
    qsort(t, j->n, sizeof *t, cmp_str);
    const char *twice = NULL;
    for (size_t i = 1; i < j->n && !twice; i++)
        if (strcmp(t[i - 1], t[i]) == 0) twice = t[i];
    int rc = 0;
    if (twice) {
        size_t idx = 0;
        while (strcmp(j->e[idx].table, twice) != 0) idx++;
        rc = bad(where, idx, "table", twice, "is listed twice", err);
        opdb_journal_free(j);
    }
    free(t);
    if (rc) return -1;
    if (j->n == 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s: invalid journal: no entries; nothing was renamed "
                         "(`opdb validate --repair --discard-journal` deletes it)",
                         where);
    return 0;
}

void opdb_journal_free(opdb_journal *j) {
    free(j->e);
    j->e = NULL;
    j->n = 0;
}
