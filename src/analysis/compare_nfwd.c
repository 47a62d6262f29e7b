/* n_forward_passes of an M6 JSON for `compare` (1 when the key is absent). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "opdb/compare.h"
#include "opdb/fs.h"
#include "opdb/limits.h"

int opdb_cmp_read_nfwd(const char *path, double *n_fwd, opdb_err *err) {
    *n_fwd = 1.0;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    if (opdb_read_file(path, &sb, err)) {
        opdb_sb_free(&sb);
        return -1;
    }
    if (opdb_json_limits_check(sb.p, sb.n, path, 1, err)) { /* size, depth, string length */
        opdb_sb_free(&sb);
        return -1;
    }
    char msg[256] = "";
    yajl_val root = yajl_tree_parse(sb.p, msg, sizeof msg);
    opdb_sb_free(&sb);
    int rc = 0;
    if (!root) {
        for (char *c = msg; *c; c++)
            if (*c == '\n') *c = ' ';
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: invalid JSON: %s", path, msg[0] ? msg : "parse error");
    } else if (!YAJL_IS_OBJECT(root)) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the M6 result is not a JSON object", path);
    } else {
        yajl_val v = NULL; /* json.load keeps the last duplicate key */
        for (size_t i = 0; i < root->u.object.len; i++)
            if (strcmp(root->u.object.keys[i], "n_forward_passes") == 0) v = root->u.object.values[i];
        if (v && YAJL_IS_NUMBER(v)) *n_fwd = strtod(YAJL_GET_NUMBER(v), NULL);
        else if (v && (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v))) *n_fwd = YAJL_IS_TRUE(v) ? 1.0 : 0.0;
        else if (v) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: n_forward_passes is not a number", path);
    }
    yajl_tree_free(root);
    return rc;
}
