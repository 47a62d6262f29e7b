/* See db_columns.h: legacy columns dropped or renamed, the base columns
 * and Average Duration(us) forced, MicroBench <m> before each Profiling
 * Average <m>. */
#include "update/db_columns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/ingest.h"

void db_columns_new(strvec *cols) {
    for (int b = 0; b < OPDB_NBASE_COLS; b++) sv_push(cols, opdb_xstrdup(opdb_base_cols[b]));
    sv_push(cols, opdb_xstrdup(MB_DUR));
    sv_push(cols, opdb_xstrdup(OPDB_COL_PROF_AVG_DUR));
    sv_push(cols, opdb_xstrdup(OPDB_COL_PROF_MEDIAN_DUR));
    sv_push(cols, opdb_xstrdup(OPDB_COL_PROF_STD_DUR));
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        char buf[96];
        snprintf(buf, sizeof buf, OPDB_METRIC_MB_PREFIX "%s", opdb_metric_names[m]);
        sv_push(cols, opdb_xstrdup(buf));
        snprintf(buf, sizeof buf, OPDB_METRIC_PROF_PREFIX "%s", opdb_metric_names[m]);
        sv_push(cols, opdb_xstrdup(buf));
    }
}

long sv_index(const strvec *s, const char *x) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0) return (long)i;
    return -1;
}

static void sv_insert(strvec *s, size_t at, char *owned) {
    sv_push(s, owned);
    memmove(&s->v[at + 1], &s->v[at], (s->n - 1 - at) * sizeof *s->v);
    s->v[at] = owned;
}

void db_columns_of_file(const strvec *fields, strvec *cols) {
    for (size_t i = 0; i < fields->n; i++)
        if (strcmp(fields->v[i], "MicroBench Task Duration(us)") && strcmp(fields->v[i], "MicroBench Kernel Duration(us)"))
            sv_push(cols, opdb_xstrdup(fields->v[i]));
    long legacy = sv_index(cols, LEGACY_MB_DUR);
    if (legacy >= 0 && sv_index(cols, MB_DUR) < 0) {
        free(cols->v[legacy]);
        cols->v[legacy] = opdb_xstrdup(MB_DUR);
    }
    if (sv_index(cols, MB_DUR) < 0) {
        strvec c2 = {0};
        for (int b = 0; b < OPDB_NBASE_COLS; b++) sv_push(&c2, opdb_xstrdup(opdb_base_cols[b]));
        sv_push(&c2, opdb_xstrdup(MB_DUR));
        for (size_t i = 0; i < cols->n; i++) {
            bool base = false;
            for (int b = 0; b < OPDB_NBASE_COLS; b++) base |= strcmp(cols->v[i], opdb_base_cols[b]) == 0;
            if (!base) sv_push(&c2, opdb_xstrdup(cols->v[i]));
        }
        sv_free(cols);
        *cols = c2;
    }
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        char prof[96], mb[96];
        snprintf(prof, sizeof prof, OPDB_METRIC_PROF_PREFIX "%s", opdb_metric_names[m]);
        snprintf(mb, sizeof mb, OPDB_METRIC_MB_PREFIX "%s", opdb_metric_names[m]);
        long at = sv_index(cols, prof);
        if (at >= 0 && sv_index(cols, mb) < 0) sv_insert(cols, (size_t)at, opdb_xstrdup(mb));
    }
}
