/* See limits.h.  A conservative estimate of YAML nesting in one pass:
 * flow depth from brackets outside quoted scalars and comments, block depth
 * from the stack of indentation widths plus the "- " items that open a line. */
#include <stdbool.h>
#include <stdlib.h>
#include "opdb/limits.h"

static int too_deep(const char *path, size_t line, int max, opdb_err *err) {
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%zu: YAML nested deeper than %d levels", path, line, max);
}

int opdb_yaml_depth_check(const char *t, size_t n, int max, const char *path, opdb_err *err) {
    size_t line = 1, i = 0;
    int flow = 0;
    int *indents = opdb_xmalloc(((size_t)max + 2) * sizeof *indents);
    int nind = 0, rc = 0;
    while (i < n && rc == 0) {
        /* start of a line: its indentation and leading "- " items */
        size_t ind = 0;
        while (i < n && t[i] == ' ') i++, ind++;
        if (flow == 0 && i < n && t[i] != '\n' && t[i] != '\r' && t[i] != '#') {
            while (nind > 0 && (size_t)indents[nind - 1] > ind) nind--;
            if (nind == 0 || (size_t)indents[nind - 1] < ind) {
                if (nind >= max) {
                    rc = too_deep(path, line, max, err);
                    break;
                }
                indents[nind++] = (int)(ind > 1000000 ? 1000000 : ind);
            }
            int items = 0;
            while (i + 1 < n && t[i] == '-' && (t[i + 1] == ' ' || t[i + 1] == '\t')) {
                i += 2, items++;
                while (i < n && t[i] == ' ') i++;
            }
            if (nind + items > max) {
                rc = too_deep(path, line, max, err);
                break;
            }
        }
        char prev = ' ';
        while (i < n && t[i] != '\n') {
            char c = t[i];
            if (c == '#' && (prev == ' ' || prev == '\t')) {
                while (i < n && t[i] != '\n') i++;
                break;
            }
            bool at_value = prev == ' ' || prev == '\t' || prev == '[' || prev == '{' || prev == ',' || prev == ':';
            if ((c == '"' || c == '\'') && at_value) { /* a quoted scalar (may span lines) */
                char q = c;
                for (i++; i < n; i++) {
                    if (t[i] == '\n') line++;
                    if (q == '"' && t[i] == '\\') i++;
                    else if (t[i] == q) {
                        if (q == '\'' && i + 1 < n && t[i + 1] == '\'') i++;
                        else break;
                    }
                }
                prev = q;
                i++;
                continue;
            }
            if (c == '[' || c == '{') {
                if (++flow > max) {
                    rc = too_deep(path, line, max, err);
                    break;
                }
            } else if ((c == ']' || c == '}') && flow > 0) {
                flow--;
            }
            prev = c;
            i++;
        }
        if (i < n && t[i] == '\n') i++, line++;
    }
    free(indents);
    return rc;
}
