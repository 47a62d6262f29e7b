/* Table columns (docs/INGEST.md §1 "Output rows"): 8 base columns, three
 * profiling durations, 25 metric means, and for FusedInferAttentionScore the
 * 16 runtime columns; every number as "%.6f". */
#include "ingest/kd_output.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "opdb/csv.h"
#include "opdb/db.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "ingest/table_merge.h"

#define NEXTRA 5 /* default mode: count, min, max, sum, sum of squares (exact merges) */
#define NCOLS_MAX (OPDB_NBASE_COLS + OPDB_NPROF_DUR_COLS + NEXTRA + OPDB_NMETRICS + FIA_NRUNTIME)
#define NNUM (OPDB_NPROF_DUR_COLS + NEXTRA + OPDB_NMETRICS)

typedef struct type_entry {
    opdb_span name;
    size_t *groups;
    size_t n, cap;
} type_entry;

static void header(opdb_strbuf *out, bool fia, bool extra) {
    opdb_span cells[NCOLS_MAX];
    char names[OPDB_NMETRICS][64];
    size_t n = 0;
    for (int i = 0; i < OPDB_NBASE_COLS; i++) cells[n++] = opdb_span_cstr(opdb_base_cols[i]);
    for (int i = 0; i < OPDB_NPROF_DUR_COLS; i++) cells[n++] = opdb_span_cstr(opdb_prof_dur_cols[i]);
    if (extra) {
        static const char *const x[NEXTRA] = {OPDB_COL_PROF_COUNT, OPDB_COL_PROF_MIN_DUR, OPDB_COL_PROF_MAX_DUR,
                                              OPDB_COL_PROF_SUM_DUR, OPDB_COL_PROF_SUMSQ_DUR};
        for (int i = 0; i < NEXTRA; i++) cells[n++] = opdb_span_cstr(x[i]);
    }
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        snprintf(names[m], sizeof names[m], OPDB_METRIC_PROF_PREFIX "%s", opdb_metric_names[m]);
        cells[n++] = opdb_span_cstr(names[m]);
    }
    if (fia)
        for (int i = 0; i < FIA_NRUNTIME; i++) cells[n++] = opdb_span_cstr(fia_runtime_columns[i]);
    opdb_csv_write_record(out, cells, n);
}

static void row(opdb_strbuf *out, kd_group *g, const fia_index *ix, bool fia, bool extra) {
    opdb_span cells[NCOLS_MAX];
    char num[NNUM][400];
    size_t n = 0;
    cells[n++] = g->desc[0];
    cells[n++] = g->desc[1];
    cells[n++] = g->key->in;
    cells[n++] = g->desc[2];
    cells[n++] = g->desc[3];
    cells[n++] = g->key->out;
    cells[n++] = g->desc[4];
    cells[n++] = g->desc[5];
    double count = (double)g->count;
    double stat[3] = {g->mean, g->median, g->std};
    for (int i = 0; i < 3; i++) {
        size_t k = opdb_py_fmt_fixed(num[i], sizeof num[i], stat[i], 6);
        cells[n++] = opdb_span_make(num[i], k);
    }
    if (extra) {
        char *c = num[3];
        cells[n++] = opdb_span_make(c, (size_t)snprintf(c, sizeof num[3], "%llu", (unsigned long long)g->count));
        double x[NEXTRA - 1] = {g->min, g->max, g->sum, g->sumsq};
        for (int i = 0; i < NEXTRA - 1; i++) {
            size_t k = opdb_py_fmt_fixed(num[4 + i], sizeof num[4 + i], x[i], 6);
            cells[n++] = opdb_span_make(num[4 + i], k);
        }
    }
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        if (!(g->metrics_seen & (1u << m))) {
            cells[n++] = opdb_span_make("", 0);
            continue;
        }
        size_t k = opdb_py_fmt_fixed(num[3 + NEXTRA + m], sizeof num[0], g->msum[m] / count, 6);
        cells[n++] = opdb_span_make(num[3 + NEXTRA + m], k);
    }
    if (fia) {
        const fia_meta *meta = fia_index_get(ix, g->key->in, g->key->out);
        for (int i = 0; i < FIA_NRUNTIME; i++) cells[n++] = opdb_span_cstr(meta ? meta->cells[i] : "");
    }
    opdb_csv_write_record(out, cells, n);
}

static type_entry *collect_types(const kd_agg *a, size_t *ntypes) {
    type_entry *t = NULL;
    size_t n = 0, cap = 0;
    opdb_hindex ix = {0};
    for (size_t i = 0; i < a->n; i++) {
        const kd_group *g = &a->g[i];
        opdb_span type = g->key->type;
        if (type.n == 0) continue; /* the reference drops empty types here */
        uint64_t h = opdb_hash_bytes(type.p, type.n, 3);
        uint32_t k = 0;
        bool found = false;
        for (opdb_hprobe p = opdb_hindex_probe(&ix, h); !found && opdb_hprobe_next(&p, &k);)
            found = opdb_span_eq(t[k].name, type);
        if (!found) {
            OPDB_ALLOC_GROW(t, n + 1, cap);
            memset(&t[n], 0, sizeof t[n]);
            t[n].name = type;
            k = (uint32_t)n;
            opdb_hindex_add(&ix, h, (uint32_t)n++);
        }
        type_entry *e = &t[k];
        OPDB_ALLOC_GROW(e->groups, e->n + 1, e->cap);
        e->groups[e->n++] = i;
    }
    opdb_hindex_free(&ix);
    *ntypes = n;
    return t;
}

/* Removes `.<name>.csv.tmp.XXXXXX` files a killed run left behind; safe
 * because the caller holds the folder lock. */
static void remove_stale_temps(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *t = e->d_name[0] == '.' ? strstr(e->d_name, ".csv.tmp.") : NULL;
        if (t && strlen(t) == strlen(".csv.tmp.XXXXXX")) {
            char *p = opdb_path_join(dir, e->d_name);
            unlink(p);
            free(p);
        }
    }
    closedir(d);
}

int kd_write_tables(kd_agg *a, const fia_index *ix, const char *outdir, bool quirks, tbl_writer *w,
                    opdb_progress *pg, opdb_parse_result *res, opdb_err *err) {
    size_t ntypes;
    type_entry *types = collect_types(a, &ntypes);
    char **used = opdb_xcalloc(ntypes + 1, sizeof *used);
    opdb_strbuf out;
    opdb_sb_init(&out);
    int rc = 0;
    remove_stale_temps(outdir);
    res->files_written = 0;
    res->tables = opdb_xcalloc(ntypes + 1, sizeof *res->tables);
    res->ntables = 0;
    /* Every file name is decided (and checked to stay inside outdir) before
     * anything is written, so a bad name changes nothing. */
    char **paths = opdb_xcalloc(ntypes + 1, sizeof *paths);
    for (size_t t = 0; t < ntypes && rc == 0; t++) {
        char *fname;
        if (quirks) {
            char *base = opdb_sanitize_type_name(types[t].name.p, types[t].name.n);
            fname = opdb_xmalloc(strlen(base) + 8);
            sprintf(fname, "%s.csv", base);
            free(base);
        } else {
            fname = opdb_table_file_name((const char *const *)used, t, types[t].name.p, types[t].name.n);
        }
        used[t] = fname;
        paths[t] = opdb_path_in_dir(outdir, fname, err);
        if (!paths[t]) rc = -1;
    }
    opdb_progress_stage(pg, "Write", ntypes);
    for (size_t t = 0; t < ntypes && rc == 0; t++) {
        const char *fname = used[t];
        bool fia = opdb_span_eq_cstr(types[t].name, KD_FIA_TYPE);
        opdb_sb_clear(&out);
        header(&out, fia, !quirks);
        for (size_t i = 0; i < types[t].n; i++) row(&out, &a->g[types[t].groups[i]], ix, fia, !quirks);
        rc = tbl_emit(w, paths[t], out.p, out.n, err);
        if (rc == 0) {
            res->files_written++;
            opdb_table_summary *sum = &res->tables[res->ntables++];
            sum->file = opdb_xstrdup(fname);
            sum->shapes = types[t].n;
            for (size_t i = 0; i < types[t].n; i++) {
                sum->launches += a->g[types[t].groups[i]].count;
                sum->total_us += a->g[types[t].groups[i]].sum;
            }
        }
        opdb_progress_update(pg, t + 1, fname);
    }
    for (size_t t = 0; t < ntypes; t++) free(paths[t]);
    free(paths);
    for (size_t t = 0; t < ntypes; t++) {
        free(types[t].groups);
        free(used[t]);
    }
    free(used);
    free(types);
    opdb_sb_free(&out);
    return rc;
}
