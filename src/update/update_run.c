/* `opdb update` as a whole: lock the database, the missing-only short-circuit,
 * aggregate op_summary files, merge, report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/fs.h"
#include "core/call.h"
#include "opdb/update.h"
#include "update/op_summary.h"
#include "update/update_db.h"
#include "update/update_report.h"
#include "db/text_table.h"
#include "opdb/csv.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"

/* csv_has_complete_microbench(load_csv_rows(p)): rows exist and each has a
 * valid duration. LFS pointers and header-less files are errors. */
static int csv_complete(const char *path, bool *complete, opdb_err *err) {
    opdb_csv_file c;
    db_open_opts oo = {.need_header = true, .lfs = true};
    *complete = false;
    if (db_csv_open(&c, path, &oo, NULL, err)) return -1;
    int rc;
    size_t rows = 0;
    bool all = true;
    int c_avg = opdb_csv_col(c.f, c.nf, OPDB_COL_MB_DUR);
    int c_prof = opdb_csv_col(c.f, c.nf, OPDB_COL_PROF_AVG_DUR);
    while ((rc = opdb_csv_file_next(&c, false)) > 0) {
        rows++;
        opdb_span a = opdb_csv_cell(c.f, c.nf, c_avg), p = opdb_csv_cell(c.f, c.nf, c_prof);
        if (!(opdb_py_float_or_zero(a.p, a.n) > 0 || opdb_py_float_or_zero(p.p, p.n) > 0)) all = false;
    }
    if (rc < 0) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    *complete = rows > 0 && all;
    opdb_csv_file_close(&c);
    return rc < 0 ? -1 : 0;
}

static int short_circuit(const opdb_update_opts *o, bool *done, opdb_err *err) {
    *done = false;
    opdb_strvec paths;
    if (update_target_csvs(o, &paths, err)) return -1;
    bool all = paths.n > 0;
    int rc = 0;
    for (size_t i = 0; i < paths.n && rc == 0; i++) {
        bool c;
        rc = csv_complete(paths.v[i], &c, err);
        all = all && c;
    }
    if (rc == 0 && all) {
        for (size_t i = 0; i < paths.n; i++) fprintf(o->out, "[SKIP] %s already has usable durations.\n", paths.v[i]);
        fprintf(o->out, "[SUMMARY] All target CSV files already have usable replay durations.\n");
        *done = true;
    }
    opdb_strvec_free(&paths);
    return rc;
}

static int run_update(const opdb_update_opts *o, opdb_err *err) {
    /* update adds to a database: a folder that does not exist is most likely
     * a mistyped path, so it is refused (the reference creates it). */
    if (!opdb_is_dir(o->db_dir)) {
        if (!o->quirks)
            return opdb_fail(err, OPDB_ERR_RUNTIME,
                             "database folder not found: %s (create it to start a new database from this profile)",
                             o->db_dir);
        if (opdb_mkdirs(o->db_dir, err)) return -1;
    }
    int lock = o->lock_held ? -1 : opdb_dir_lock(o->db_dir, err);
    if (lock < 0 && !o->lock_held) return -1;
    int rc = 0;
    if (o->missing_only) {
        bool done;
        rc = short_circuit(o, &done, err);
        if (rc || done) {
            opdb_dir_unlock(lock);
            return rc;
        }
    }
    char **files = NULL;
    size_t nfiles = 0;
    op_summary_agg agg;
    memset(&agg, 0, sizeof agg);
    rc = op_summary_find_files(o->prof_paths, o->nprof, &files, &nfiles, err);
    if (rc == 0) rc = op_summary_aggregate(files, nfiles, o->ep_size, o->quirks, !o->no_metrics, &agg, err);
    update_run run;
    memset(&run, 0, sizeof run);
    /* every table and report of the run is staged, then replaced together */
    opdb_txn_begin(o->db_dir);
    bool ended = false;
    if (rc == 0) rc = update_db(o, &agg, &run, err);
    if (rc == 0 && !o->quirks) {
        unsigned long merged = 0;
        for (size_t i = 0; i < run.n; i++) merged += run.r[i].matched + (unsigned long)run.r[i].added;
        if (!merged)
            opdb_warn_nothing("no profiled row was merged: %zu table(s) touched, %llu op_summary row(s) read", run.n,
                              agg.rows_read);
    }
    if (rc == 0 && o->totals) {
        *o->totals = (opdb_update_totals){run.n, 0, 0, 0};
        for (size_t i = 0; i < run.n; i++) {
            o->totals->updated += run.r[i].updated;
            o->totals->added += run.r[i].added;
            o->totals->deleted += (long)run.r[i].deleted.n;
        }
    }
    if (rc == 0) {
        opdb_strbuf text;
        opdb_sb_init(&text);
        update_report_text(o, &run, &text);
        char *md = NULL, *csv = NULL;
        rc = update_report_files(o, &run, text.p, &md, &csv, err);
        if (opdb_txn_end(rc == 0, err)) rc = -1; /* before the report says what was done */
        ended = true;
        if (o->json) {
            opdb_strbuf js;
            opdb_sb_init(&js);
            update_report_json(o, &run, md, csv, &js);
            fputs(js.p, o->out);
            opdb_sb_free(&js);
        } else {
            fprintf(o->out, "%s\n", text.p);
            if (rc == 0) fprintf(o->out, "\n[REPORT] %s\n[REPORT] %s\n", md, csv);
        }
        free(md);
        free(csv);
        opdb_sb_free(&text);
    }
    if (!ended) opdb_txn_end(false, err);
    update_run_free(&run);
    op_summary_free(&agg);
    opdb_free_paths(files, nfiles);
    opdb_dir_unlock(lock);
    return rc;
}

static void update_defaults(opdb_update_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->reference_signatures = true;
}

OPDB_OPTS_INIT_SIZED(opdb_update_opts, update_defaults)

int opdb_update_run(const opdb_update_opts *o, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_update_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    opdb_call_set_reference_signatures(o->reference_signatures);
    int rc = run_update(o, err);
    opdb_call_leave(&saved);
    return rc;
}
