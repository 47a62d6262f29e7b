/* See db_columns.h: legacy columns dropped or renamed, the base columns
 * and Average Duration(us) forced, MicroBench <m> before each Profiling
 * Average <m>. */
#include "update/db_columns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/ingest.h"

void db_columns_new(opdb_strvec *cols) {
    for (int b = 0; b < OPDB_NBASE_COLS; b++) opdb_strvec_push(cols, opdb_base_cols[b]);
    opdb_strvec_push(cols, MB_DUR);
    opdb_strvec_push(cols, OPDB_COL_PROF_AVG_DUR);
    opdb_strvec_push(cols, OPDB_COL_PROF_MEDIAN_DUR);
    opdb_strvec_push(cols, OPDB_COL_PROF_STD_DUR);
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        char buf[96];
        snprintf(buf, sizeof buf, OPDB_METRIC_MB_PREFIX "%s", opdb_metric_names[m]);
        opdb_strvec_push(cols, buf);
        snprintf(buf, sizeof buf, OPDB_METRIC_PROF_PREFIX "%s", opdb_metric_names[m]);
        opdb_strvec_push(cols, buf);
    }
}

void db_columns_of_file(const opdb_strvec *fields, opdb_strvec *cols) {
    for (size_t i = 0; i < fields->n; i++)
        if (strcmp(fields->v[i], OPDB_COL_LEGACY_MB_TASK_DUR) && strcmp(fields->v[i], OPDB_COL_LEGACY_MB_KERNEL_DUR))
            opdb_strvec_push(cols, fields->v[i]);
    long legacy = opdb_strvec_find(cols, LEGACY_MB_DUR);
    if (legacy >= 0 && opdb_strvec_find(cols, MB_DUR) < 0) {
        free(cols->v[legacy]);
        cols->v[legacy] = opdb_xstrdup(MB_DUR);
    }
    if (opdb_strvec_find(cols, MB_DUR) < 0) {
        opdb_strvec c2 = {0};
        for (int b = 0; b < OPDB_NBASE_COLS; b++) opdb_strvec_push(&c2, opdb_base_cols[b]);
        opdb_strvec_push(&c2, MB_DUR);
        for (size_t i = 0; i < cols->n; i++) {
            bool base = false;
            for (int b = 0; b < OPDB_NBASE_COLS; b++) base |= strcmp(cols->v[i], opdb_base_cols[b]) == 0;
            if (!base) opdb_strvec_push(&c2, cols->v[i]);
        }
        opdb_strvec_free(cols);
        *cols = c2;
    }
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        char prof[96], mb[96];
        snprintf(prof, sizeof prof, OPDB_METRIC_PROF_PREFIX "%s", opdb_metric_names[m]);
        snprintf(mb, sizeof mb, OPDB_METRIC_MB_PREFIX "%s", opdb_metric_names[m]);
        long at = opdb_strvec_find(cols, prof);
        if (at >= 0 && opdb_strvec_find(cols, mb) < 0) opdb_strvec_insert_owned(cols, (size_t)at, opdb_xstrdup(mb));
    }
}
