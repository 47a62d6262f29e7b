/* Header -> role mapping.  One alias table covers the msprof op_summary
 * spellings of the same columns, so there is one parser for both views. */
#include "ingest/columns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const kd_role_names[KD_NROLES] = {
    "Type", OPDB_COL_INPUT_SHAPES, OPDB_COL_OUTPUT_SHAPES, "Duration(us)", OPDB_COL_OP_STATE, OPDB_COL_ACCEL_CORE,
    OPDB_COL_INPUT_DTYPES, OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_DTYPES, OPDB_COL_OUTPUT_FORMATS,
    /* metrics filled from opdb_metric_names */
};

/* msprof op_summary spelling -> canonical kernel_details spelling. */
static const struct {
    const char *alias;
    int role;
} k_aliases[] = {
    {"OP Type", KD_TYPE},
    {"Task Type", KD_ACCEL_CORE},
    {"Task Duration(us)", KD_DURATION},
};

static const char *role_name(int r) { return r < KD_METRIC0 ? kd_role_names[r] : opdb_metric_names[r - KD_METRIC0]; }

static bool cell_is(const opdb_field *f, const char *s) {
    size_t n = strlen(s);
    return f->n == n && memcmp(f->p, s, n) == 0;
}

void kd_colmap_build(kd_colmap *L, const opdb_field *hdr, int n, bool use_aliases) {
    for (int r = 0; r < KD_NROLES; r++) L->col[r] = -1;
    /* DictReader semantics: with duplicate names the last column wins. */
    for (int i = 0; i < n; i++)
        for (int r = 0; r < KD_NROLES; r++)
            if (cell_is(&hdr[i], role_name(r))) L->col[r] = i;
    if (use_aliases) {
        for (size_t a = 0; a < sizeof k_aliases / sizeof k_aliases[0]; a++) {
            int r = k_aliases[a].role;
            if (L->col[r] >= 0) continue;
            for (int i = 0; i < n; i++)
                if (cell_is(&hdr[i], k_aliases[a].alias)) L->col[r] = i;
        }
    }
    L->max_col = -1;
    L->metrics_present = 0;
    for (int r = 0; r < KD_NROLES; r++) {
        if (L->col[r] > L->max_col) L->max_col = L->col[r];
        if (r >= KD_METRIC0 && L->col[r] >= 0) L->metrics_present |= 1u << (r - KD_METRIC0);
    }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int kd_colmap_missing(const kd_colmap *L, bool quirks, char *buf, size_t cap) {
    const char *names[KD_NROLES];
    int nm = 0;
    for (int r = 0; r < KD_NROLES; r++) {
        bool required = quirks || r <= KD_DURATION;
        if (required && L->col[r] < 0) names[nm++] = role_name(r);
    }
    qsort(names, (size_t)nm, sizeof names[0], cmp_str);
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < nm; i++) {
        int k = snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", names[i]);
        if (k < 0 || (size_t)k >= cap - o) break;
        o += (size_t)k;
    }
    return nm;
}
