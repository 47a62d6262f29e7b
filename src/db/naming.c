/* Names from input that become file names: the reference's sanitising and
 * opdb's one path policy (see db.h), used by every writer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opdb/db.h"
#include "opdb/fs.h"

char *opdb_sanitize_type_name(const char *type, size_t n) {
    if (n == 0) return opdb_xstrdup("UNKNOWN_TYPE");
    char *out = opdb_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)type[i];
        out[i] = (c < 0x20 || strchr("<>:\"/\\|?*", c)) ? '_' : (char)c;
    }
    out[n] = '\0';
    return out;
}

uint32_t opdb_name_hash(const char *p, size_t n) {
    uint32_t h = 2166136261u; /* FNV-1a: simple enough for the test oracle to recompute */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

/* Bytes of a direction mark or override at p (they reorder how a name is
 * shown: "abc\u202Etxt.csv"), else 0: U+061C, U+200E-200F, U+202A-202E, U+2066-2069. */
static size_t invisible_len(const unsigned char *p, size_t n) {
    if (n >= 2 && p[0] == 0xd8 && p[1] == 0x9c) return 2;
    if (n < 3 || p[0] != 0xe2) return 0;
    if (p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) return 3;
    if (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9) return 3;
    return 0;
}

char *opdb_safe_stem(const char *name, size_t n) {
    char *s = opdb_sanitize_type_name(name, n);
    size_t len = strlen(s);
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        size_t k = invisible_len((const unsigned char *)s + i, len - i);
        if (k) i += k - 1;
        s[o++] = k || (unsigned char)s[i] == 0x7f ? '_' : s[i];
    }
    s[o] = '\0';
    len = o;
    if (s[0] == '.') s[0] = '_'; /* ".", "..", ".x": no hidden or special names */
    if (len > OPDB_STEM_MAX) {
        /* keep a prefix cut on a UTF-8 boundary; the hash of the whole name
         * keeps distinct long names distinct */
        size_t keep = OPDB_STEM_MAX - 9;
        while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80) keep--;
        snprintf(s + keep, len + 1 - keep, "~%08x", (unsigned)opdb_name_hash(name, n));
    }
    return s;
}

/* Control bytes as \xNN, at most ~80 bytes of the name, for messages. */
static void shown(const char *name, char *out, size_t cap) {
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && o + 8 < cap; p++) {
        if (o >= 80) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (*p < 0x20 || *p == 0x7f) o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
        else out[o++] = (char)*p;
    }
    out[o] = '\0';
}

int opdb_check_file_name(const char *fname, opdb_err *err) {
    char s[128];
    shown(fname, s, sizeof s);
    if (!*fname || strcmp(fname, ".") == 0 || strcmp(fname, "..") == 0 || strchr(fname, '/'))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "file name '%s' would write outside the output folder", s);
    if (strlen(fname) > OPDB_NAME_MAX)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "file name '%s' is too long (%zu bytes, at most %d)", s,
                         strlen(fname), OPDB_NAME_MAX);
    return 0;
}

char *opdb_path_in_dir(const char *dir, const char *fname, opdb_err *err) {
    if (opdb_check_file_name(fname, err)) return NULL;
    char *path = opdb_path_join(dir, fname);
    char *parent = opdb_path_parent(path), *ndir = opdb_path_normalize(dir);
    bool inside = strcmp(parent, ndir) == 0 && strcmp(opdb_path_basename(path), fname) == 0;
    free(parent);
    free(ndir);
    if (!inside) {
        char s[128];
        shown(fname, s, sizeof s);
        opdb_fail(err, OPDB_ERR_RUNTIME, "file name '%s' would write outside the output folder %s", s, dir);
        free(path);
        return NULL;
    }
    return path;
}

static int casecmp_ascii(const char *a, const char *b) {
    for (;; a++, b++) {
        int x = (*a >= 'A' && *a <= 'Z') ? *a + 32 : *a, y = (*b >= 'A' && *b <= 'Z') ? *b + 32 : *b;
        if (x != y || !x) return x - y;
    }
}

const char *opdb_name_case_clash(const char *const *names, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (names[i] && strcmp(names[i], name) != 0 && casecmp_ascii(names[i], name) == 0) return names[i];
    return NULL;
}

char *opdb_table_file_name(const char *const *used, size_t nused, const char *name, size_t n) {
    char *base = opdb_safe_stem(name, n);
    char *fname = opdb_xmalloc(strlen(base) + 32);
    sprintf(fname, "%s.csv", base);
    bool taken = true;
    for (int k = 2; taken; k++) {
        taken = false;
        for (size_t i = 0; i < nused && !taken; i++) taken = used[i] && strcmp(used[i], fname) == 0;
        if (taken) sprintf(fname, "%s~%d.csv", base, k);
    }
    if (strcmp(fname + strlen(base), ".csv") != 0)
        opdb_warn("operator types '%.*s' and another sanitise to the same file name; writing %s", (int)(n > 80 ? 80 : n),
                  name, fname);
    const char *clash = opdb_name_case_clash(used, nused, fname);
    if (clash) opdb_warn("%s and %s differ only in case: one file on a case-insensitive file system", clash, fname);
    free(base);
    return fname;
}
