/* Where a database lives: <root>/<device>/vllm_ascend/vllm<v>_torch<t>_cann<c>. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "opdb/db.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"

const char *const opdb_devices[] = {
    "TEST_DEVICE",
    "ATLAS_800_A2_376T_64G",
    "ATLAS_800_A2_313T_64G",
    "ATLAS_800_A2_280T_64G",
    "ATLAS_800_A2_280T_64G_PCIE",
    "ATLAS_800_A2_280T_32G_PCIE",
    "ATLAS_800_A3_752T_128G_DIE",
    "ATLAS_800_A3_560T_128G_DIE",
};
const size_t opdb_ndevices = sizeof opdb_devices / sizeof opdb_devices[0];

const char *const opdb_version_hint =
    "invalid version value, expected something like 0.9.2, 2.9.0, 8.5, or vllm0.13.0_torch2.8.0_cann8.3";

bool opdb_device_valid(const char *device) {
    for (size_t i = 0; i < opdb_ndevices; i++)
        if (strcmp(device, opdb_devices[i]) == 0) return true;
    return false;
}

static bool alnum(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool opdb_version_valid(const char *v) {
    opdb_span s = opdb_py_strip(opdb_span_cstr(v));
    size_t i = 0;
    for (;;) {
        size_t start = i;
        while (i < s.n && alnum(s.p[i])) i++;
        if (i == start) return false;
        if (i == s.n) return true;
        if (!strchr("._+-", s.p[i])) return false;
        i++;
    }
}

static char *strip_dup(const char *v) {
    opdb_span s = opdb_py_strip(opdb_span_cstr(v));
    char *r = opdb_xmalloc(s.n + 1);
    memcpy(r, s.p, s.n);
    r[s.n] = '\0';
    return r;
}

static const char *drop_prefix_ci(const char *s, const char *prefix) {
    size_t n = strlen(prefix);
    return strncasecmp(s, prefix, n) == 0 ? s + n : s;
}

/* ^vllm.+_torch.+_cann.+$ */
static bool is_full_version_dir(const char *s) {
    if (strncmp(s, "vllm", 4) != 0 || strchr(s, '\n')) return false;
    for (const char *t = strstr(s + 5, "_torch"); t; t = strstr(t + 1, "_torch")) {
        if (t < s + 5) continue;
        for (const char *c = strstr(t + 7, "_cann"); c; c = strstr(c + 1, "_cann"))
            if (c >= t + 7 && c[5] != '\0') return true;
    }
    return false;
}

char *opdb_db_version_dir(const char *vllm, const char *torch, const char *cann, opdb_err *err) {
    const char *missing[3];
    int nm = 0;
    if (!vllm) missing[nm++] = "vLLM-Ascend";
    if (!torch) missing[nm++] = "PyTorch";
    if (!cann) missing[nm++] = "CANN";
    if (nm) {
        char list[64] = "";
        for (int i = 0; i < nm; i++) {
            if (i) strcat(list, ", ");
            strcat(list, missing[i]);
        }
        opdb_fail(err, OPDB_ERR_RUNTIME,
                  "cannot determine the database version folder: missing %s version (pass "
                  "--database-path, or --vllm-version, --torch-version and --cann-version)",
                  list);
        return NULL;
    }
    char *v = strip_dup(vllm), *t = strip_dup(torch), *c = strip_dup(cann);
    const char *vv = drop_prefix_ci(v, "vllm");
    if (vv == v && (*v == 'v' || *v == 'V')) vv = v + 1;
    const char *tt = drop_prefix_ci(t, "torch");
    char *plus = strchr(tt, '+');
    if (plus) *plus = '\0';
    const char *cc = drop_prefix_ci(c, "cann");
    char *sv = strip_dup(vv), *st = strip_dup(tt), *sc = strip_dup(cc);
    size_t n = strlen(sv) + strlen(st) + strlen(sc) + 16;
    char *out = opdb_xmalloc(n);
    snprintf(out, n, "vllm%s_torch%s_cann%s", sv, st, sc);
    free(v), free(t), free(c), free(sv), free(st), free(sc);
    return out;
}

char *opdb_db_resolve(const opdb_db_target *t, opdb_err *err) {
    if (t->database_path) return opdb_path_normalize(t->database_path);
    char *vdir;
    if (t->vllm_version && !t->torch_version && !t->cann_version) {
        char *s = strip_dup(t->vllm_version);
        if (is_full_version_dir(s)) {
            vdir = s;
        } else {
            free(s);
            vdir = opdb_db_version_dir(t->vllm_version, NULL, NULL, err);
        }
    } else {
        vdir = opdb_db_version_dir(t->vllm_version, t->torch_version, t->cann_version, err);
    }
    if (!vdir) return NULL;
    const char *root = t->data_root;
    if (!root) root = opdb_setting(OPDB_DATA_ROOT_ENV);
    if (!root || !*root) root = "data";
    opdb_span dev = opdb_py_strip(opdb_span_cstr(t->device ? t->device : OPDB_DEFAULT_DEVICE));
    size_t n = strlen(root) + dev.n + strlen(vdir) + 32;
    char *joined = opdb_xmalloc(n);
    snprintf(joined, n, "%s/%.*s/vllm_ascend/%s", root, (int)dev.n, dev.p, vdir);
    free(vdir);
    char *out = opdb_path_normalize(joined);
    free(joined);
    return out;
}
