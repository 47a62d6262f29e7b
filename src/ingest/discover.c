/* Input discovery.  Beyond the reference, a folder holding no kernel_details
 * file is searched for msprof op_summary files; never both, since torch_npu
 * folders hold both views of the same kernels. */
#include "ingest/discover.h"
#include "ingest/detect.h"

#include <stdlib.h>
#include <string.h>
#include "opdb/fs.h"
#include "opdb/ingest.h"
#include "opdb/pystr.h"

/* Path(name).stem.lower() contains `word`, for names matching "*.csv". */
static bool csv_stem_contains(const char *name, void *word) {
    size_t n = strlen(name);
    if (n < 4 || strcmp(name + n - 4, ".csv") != 0) return false;
    if (n == 4) return false; /* ".csv": its stem is ".csv" */
    char *stem = opdb_xmalloc(n - 3);
    memcpy(stem, name, n - 4);
    stem[n - 4] = '\0';
    opdb_ascii_lower(stem, n - 4);
    bool hit = strstr(stem, (const char *)word) != NULL;
    free(stem);
    return hit;
}

static bool ends_with(const char *s, size_t n, const char *suf) {
    size_t k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

/* Candidates for content detection in a folder: profiler SQLite exports and traces. */
static bool is_extra_candidate(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    return ends_with(name, n, ".db") || ends_with(name, n, ".json") || ends_with(name, n, ".gz");
}

static bool is_csv(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".csv") == 0;
}

static void push(char ***v, size_t *n, char *s) {
    *v = opdb_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = s;
}

/* Default mode: a folder's CSVs by content.  A file named like kernel_details
 * is always a candidate (so an empty or broken one is reported as before);
 * any other CSV whose header is a kernel_details one joins it.  Only when
 * there is none do op_summary files count (the same kernels otherwise).  The
 * rest, but operator_details.csv (FIA side file), are recognised-but-unusable
 * or unknown CSVs: listed in `unusable` to be reported. */
static int discover_by_content(const char *path, kd_inputs *in, opdb_err *err) {
    char **all = NULL, **os = NULL, **other = NULL;
    size_t nall = 0, nos = 0, nother = 0;
    if (opdb_find_files(path, is_csv, NULL, &all, &nall, err)) return -1;
    for (size_t i = 0; i < nall; i++) {
        const char *base = opdb_path_basename(all[i]);
        int kind = kd_csv_kind(all[i]);
        if (csv_stem_contains(base, "kernel_details") || kind == KD_CSV_KERNEL_DETAILS) push(&in->files, &in->nfiles, all[i]);
        else if (csv_stem_contains(base, "op_summary") || kind == KD_CSV_OP_SUMMARY) push(&os, &nos, all[i]);
        else if (strcmp(base, "operator_details.csv") == 0 || kind == KD_CSV_EMPTY) free(all[i]);
        else push(&other, &nother, all[i]);
    }
    free(all);
    if (in->nfiles == 0) {
        free(in->files);
        in->files = os;
        in->nfiles = nos;
        in->from_op_summary = nos > 0;
    } else {
        opdb_free_paths(os, nos);
    }
    in->unusable = other;
    in->nunusable = nother;
    return 0;
}

static bool is_operator_details(const char *name, void *ctx) {
    (void)ctx;
    return strcmp(name, "operator_details.csv") == 0;
}

int kd_discover(const char *path, bool quirks, kd_inputs *in, opdb_err *err) {
    memset(in, 0, sizeof *in);
    char *norm = opdb_path_normalize(path);
    if (!opdb_path_exists(path)) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "kernel_details source path not found: %s", norm);
        free(norm);
        return -1;
    }
    if (!opdb_is_dir(path)) {
        in->single = true;
        opdb_input_kind kind = OPDB_INPUT_CSV;
        if (!quirks && opdb_input_detect(path, &kind, err)) {
            free(norm);
            return -1;
        }
        char ***list = kind == OPDB_INPUT_CSV ? &in->files : &in->extra;
        *list = opdb_xmalloc(sizeof **list);
        (*list)[0] = norm;
        *(kind == OPDB_INPUT_CSV ? &in->nfiles : &in->nextra) = 1;
        return 0;
    }
    if (!quirks && opdb_find_files(path, is_extra_candidate, NULL, &in->extra, &in->nextra, err)) {
        free(norm);
        return -1;
    }
    int rc = quirks ? opdb_find_files(path, csv_stem_contains, "kernel_details", &in->files, &in->nfiles, err)
                    : discover_by_content(path, in, err);
    if (rc == 0 && in->nfiles == 0 && in->nextra == 0) {
        if (quirks)
            opdb_fail(err, OPDB_ERR_RUNTIME, "No CSV files with 'kernel_details' in the filename found under: %s", norm);
        else
            opdb_fail(err, OPDB_ERR_RUNTIME,
                      "No CSV files with 'kernel_details' (or 'op_summary') in the filename found under: %s", norm);
        rc = -1;
    }
    if (rc == 0) rc = opdb_find_files(path, is_operator_details, NULL, &in->operator_details, &in->nop, err);
    free(norm);
    if (rc) kd_inputs_free(in);
    return rc;
}

void kd_inputs_free(kd_inputs *in) {
    opdb_free_paths(in->files, in->nfiles);
    opdb_free_paths(in->operator_details, in->nop);
    opdb_free_paths(in->extra, in->nextra);
    opdb_free_paths(in->unusable, in->nunusable);
    memset(in, 0, sizeof *in);
}

const char *kd_operator_details_for(const kd_inputs *in, const char *file) {
    if (!in->nop) return NULL;
    char *dir = opdb_path_parent(file);
    const char *hit = NULL;
    for (size_t i = 0; i < in->nop && !hit; i++) {
        char *d = opdb_path_parent(in->operator_details[i]);
        if (strcmp(d, dir) == 0) hit = in->operator_details[i];
        free(d);
    }
    free(dir);
    return hit;
}
