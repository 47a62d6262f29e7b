/* `opdb bench` as a whole (see bench.h): lock the database, benchmark the
 * rows of each selected CSV (or the built-in grid) into the journal, turn the
 * journal into an op_summary file and the MicroBench statistics, and merge
 * them with opdb_update_run under the same lock. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/bench.h"
#include "core/call.h"
#include "opdb/csv.h"
#include "opdb/db.h"
#include "opdb/fs.h"
#include "opdb/progress.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/signature.h"
#include "opdb/update.h"
#include "db/text_table.h"
#include "replay/bench_rows.h"
#include "replay/bench_json.h"
#include "replay/bench_writeback.h"


char *opdb_bench_default_dir(const opdb_backend *b, const char *data_root) {
    const char *root = data_root ? data_root : opdb_setting(OPDB_DATA_ROOT_ENV);
    if (!root || !*root) root = "data";
    char *dev = opdb_sanitize_type_name(b->device_name, strlen(b->device_name));
    char *stack = opdb_sanitize_type_name(b->stack, strlen(b->stack));
    size_t n = strlen(root) + strlen(dev) + strlen(stack) + strlen(b->name) + 16;
    char *joined = opdb_xmalloc(n);
    snprintf(joined, n, "%s/%s/opdb_%s/%s", root, dev, b->name, stack);
    char *out = opdb_path_normalize(joined);
    free(joined), free(dev), free(stack);
    return out;
}

static bool selected(const opdb_bench_opts *o, const char *stem) {
    if (!o->nops) return true;
    for (size_t i = 0; i < o->nops; i++)
        if (strcmp(o->ops[i], stem) == 0) return true;
    return false;
}

/* ---- the database's CSVs */

static int cmp_str(const void *a, const void *b) { return opdb_path_cmp(*(char *const *)a, *(char *const *)b); }

/* Catalogue CSVs directly in the database folder, selected, sorted. */
static char **list_csvs(const opdb_bench_opts *o, size_t *n) {
    char **v = NULL;
    *n = 0;
    DIR *d = opendir(o->db_dir);
    if (!d) return NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0) continue;
        char norm[256];
        opdb_normalize_op_name(e->d_name, len - 4, norm, sizeof norm);
        if (!opdb_is_replay_op(norm) || !selected(o, norm)) continue;
        char *p = opdb_path_join(o->db_dir, e->d_name);
        if (opdb_is_file(p)) {
            v = opdb_xrealloc(v, (*n + 1) * sizeof *v);
            v[(*n)++] = p;
        } else {
            free(p);
        }
    }
    closedir(d);
    if (*n > 1) qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

static bool row_complete(const bench_row *r) {
    const char *a = bench_row_cell(r, OPDB_COL_MB_DUR), *p = bench_row_cell(r, OPDB_COL_PROF_AVG_DUR);
    if (!*a) a = bench_row_cell(r, OPDB_COL_LEGACY_MB_DUR);
    return opdb_py_float_or_zero(a, strlen(a)) > 0 || opdb_py_float_or_zero(p, strlen(p)) > 0;
}

/* A database CSV as bench_row reads it: names and cells as C strings. */
typedef struct loaded {
    db_text_table t;
    const char **name; /* t's header names */
    const char **val;  /* nrows x ncol cells, row-major */
    int ncol;
    size_t nrows;
} loaded;

static void loaded_free(loaded *l) {
    free(l->name);
    free(l->val);
    db_text_free(&l->t);
}

static int load_csv(const char *path, loaded *l, opdb_err *err) {
    memset(l, 0, sizeof *l);
    db_text_opts o = {.open = {.need_header = true, .lfs = true}};
    if (db_text_load(&l->t, path, &o, NULL, err)) return -1;
    size_t nc = l->t.ncols;
    l->ncol = (int)nc;
    l->nrows = l->t.nrows;
    l->name = opdb_xmalloc(nc * sizeof *l->name);
    for (size_t i = 0; i < nc; i++) l->name[i] = l->t.names[i].p;
    l->val = opdb_xmalloc((l->nrows * nc + 1) * sizeof *l->val);
    for (size_t r = 0; r < l->nrows; r++)
        for (size_t i = 0; i < nc; i++) l->val[r * nc + i] = l->t.rows[r][i].p;
    return 0;
}

static const char *const *row_cells(const loaded *l, size_t r) { return l->val + r * (size_t)l->ncol; }

/* Whether backend b can run operator stem; sets the skip reason if not. */
static const opdb_op_def *runnable(bench_ctx *c, const char *stem, op_status *s) {
    const opdb_op_def *def = opdb_op_find(stem);
    const char *reason = NULL;
    if (!def) {
        bench_skip_op(c, s, "no replay definition for this operator in this build");
        return NULL;
    }
    if (!c->b->supports(c->b, def, &reason)) {
        bench_skip_op(c, s, reason ? reason : "not supported by this backend");
        return NULL;
    }
    return def;
}

static int bench_csv(bench_ctx *c, const char *path, opdb_err *err) {
    const char *file = opdb_path_basename(path);
    char stem[256];
    opdb_normalize_op_name(file, strlen(file) - 4, stem, sizeof stem);
    op_status *s = bench_status(c, stem);
    loaded l;
    opdb_err lerr;
    opdb_err_clear(&lerr);
    bool last = c->round == c->nrounds; /* earlier passes only measure: no status, no messages */
    if (load_csv(path, &l, &lerr)) {
        if (!last) {
            loaded_free(&l);
            return 0;
        }
        s->kind = ST_FAILED;
        free(s->reason);
        s->reason = opdb_xstrdup(lerr.msg);
        bench_say(c, "[FAIL] %s\n", lerr.msg);
        loaded_free(&l);
        if (c->o->fail_fast) c->stop = true;
        return 0;
    }
    size_t todo = 0;
    for (size_t r = 0; r < l.nrows; r++) {
        bench_row br = {file, (long)r + 2, l.name, row_cells(&l, r), l.ncol};
        todo += !(c->o->missing_only && row_complete(&br));
    }
    int rc = 0;
    const opdb_op_def *def = NULL;
    if (c->o->missing_only && todo == 0) {
        if (last)
            fprintf(c->o->out, "[SKIP] %s all %zu row(s) already have usable Average/Profiling durations.\n", path, l.nrows);
    } else if ((def = runnable(c, stem, s)) != NULL) {
        for (size_t r = 0; r < l.nrows && rc == 0 && !c->stop; r++) {
            bench_row br = {file, (long)r + 2, l.name, row_cells(&l, r), l.ncol};
            if (c->o->missing_only && row_complete(&br)) {
                s->skipped += last;
                continue;
            }
            rc = bench_one_row(c, stem, def, &br, err);
        }
    }
    loaded_free(&l);
    return rc;
}

/* Signatures of the complete rows of <db>/<op>.csv (missing-only grid runs skip them). */
static void complete_sigs(bench_ctx *c, const char *op, char ***sigs, size_t *n) {
    *sigs = NULL;
    *n = 0;
    char name[280];
    snprintf(name, sizeof name, "%s.csv", op);
    char *path = opdb_path_join(c->o->db_dir, name);
    loaded l;
    memset(&l, 0, sizeof l);
    opdb_err e;
    opdb_err_clear(&e);
    if (opdb_is_file(path) && load_csv(path, &l, &e) == 0) {
        for (size_t r = 0; r < l.nrows; r++) {
            bench_row br = {name, (long)r + 2, l.name, row_cells(&l, r), l.ncol};
            if (!row_complete(&br)) continue;
            const char *cells[OPDB_NKEY_COLS];
            for (int i = 0; i < OPDB_NKEY_COLS; i++) cells[i] = bench_row_cell(&br, opdb_key_cols[i]);
            journal_sig(op, cells, &c->sig);
            *sigs = opdb_xrealloc(*sigs, (*n + 1) * sizeof **sigs);
            (*sigs)[(*n)++] = opdb_xstrdup(c->sig.p ? c->sig.p : "");
        }
    }
    loaded_free(&l);
    free(path);
}

static bool grid_row_done(bench_ctx *c, const char *op, const bench_row *br, char **sigs, size_t n) {
    const char *cells[OPDB_NKEY_COLS];
    for (int i = 0; i < OPDB_NBASE_COLS; i++) cells[i] = br->val[i];
    cells[OPDB_NBASE_COLS] = ""; /* EP Size */
    journal_sig(op, cells, &c->sig);
    for (size_t i = 0; i < n; i++)
        if (strcmp(sigs[i], c->sig.p ? c->sig.p : "") == 0) return true;
    return false;
}

static int bench_grid(bench_ctx *c, opdb_err *err) {
    opdb_grid_row *g;
    size_t n;
    if (opdb_grid_rows(c->o->grid, c->o->grid_limit, &g, &n, err)) return -1;
    int rc = 0;
    long line = 2;
    const char *prev = NULL;
    const opdb_op_def *def = NULL;
    char **done = NULL;
    size_t ndone = 0;
    for (size_t i = 0; i < n && rc == 0 && !c->stop; i++) {
        if (!selected(c->o, g[i].op)) continue;
        op_status *s = bench_status(c, g[i].op);
        if (!prev || strcmp(prev, g[i].op) != 0) {
            def = s->kind == ST_SKIPPED ? NULL : runnable(c, g[i].op, s);
            prev = g[i].op;
            line = 2;
            opdb_free_paths(done, ndone);
            done = NULL, ndone = 0;
            if (c->o->missing_only) complete_sigs(c, g[i].op, &done, &ndone);
        }
        if (!def) continue;
        char csv[280];
        snprintf(csv, sizeof csv, "%s.csv(grid)", g[i].op);
        bench_row br = {csv, line++, opdb_base_cols, g[i].cell, OPDB_NBASE_COLS};
        if (ndone && grid_row_done(c, g[i].op, &br, done, ndone)) {
            s->skipped += c->round == c->nrounds; /* missing-only: the database already has it */
            continue;
        }
        rc = bench_one_row(c, g[i].op, def, &br, err);
    }
    opdb_free_paths(done, ndone);
    opdb_grid_free(g, n);
    return rc;
}

static bool status_of(const bench_ctx *c, const char *op) {
    for (size_t i = 0; i < c->nst; i++)
        if (strcmp(c->st[i].op, op) == 0) return true;
    return false;
}

/* One pass over the selected rows: the built-in grid or the CSVs. */
static int bench_pass(bench_ctx *c, opdb_err *err) {
    if (c->o->grid) return bench_grid(c, err);
    size_t n;
    char **csvs = list_csvs(c->o, &n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) rc = bench_csv(c, csvs[i], err);
    opdb_free_paths(csvs, n);
    return rc;
}

/* --plan: every selected row planned and listed with its estimate; nothing
 * measured, nothing written. */
static int bench_plan(bench_ctx *c, opdb_err *err) {
    const opdb_bench_opts *o = c->o;
    c->round = c->nrounds = 1;
    int rc = 0;
    rc = bench_pass(c, err);
    for (size_t i = 0; i < c->nst; i++)
        if (c->st[i].kind == ST_SKIPPED) fprintf(o->out, "[PLAN] %s: skipped: %s\n", c->st[i].op, c->st[i].reason);
    const opdb_measure_opts *m = &o->measure;
    char modelled[96] = "";
    if (c->modelled)
        snprintf(modelled, sizeof modelled, "; %ld row(s) too large to pilot by model estimate", c->modelled);
    if (m->repeat_count > 0)
        fprintf(o->out, "[PLAN] %ld row(s) would run, %ld sample(s) each: about %.1f s (from a short pilot of each row%s)\n",
                c->planned, m->repeat_count, c->plan_lo_s, modelled);
    else
        fprintf(o->out, "[PLAN] %ld row(s) would run: about %.1f s (from a short pilot of each row: the samples its "
                        "spread needs for the stop rule, evictions included%s), at most %.0f s (%g s timeout per row)\n",
                c->planned, c->plan_lo_s, modelled, c->plan_hi_s, m->timeout_s);
    if (rc) return -1;
    if (!c->planned) {
        opdb_warn("no row would run (nothing selected, or every operator skipped)%s", o->strict ? " (--strict: exit 1)" : "");
        return o->strict ? 1 : 0;
    }
    return 0;
}

/* The stop rule of one pass and the backend cell; the run's setup on err_out. */
static void setup_measure(bench_ctx *c) {
    const opdb_bench_opts *o = c->o;
    /* --rounds: interleaved passes, each with its share of the time budget,
     * so that a slow spell of the machine meets one pass of a row, not all */
    c->m = o->measure;
    c->nrounds = o->rounds > 1 && o->measure.repeat_count <= 0 && o->shard_rank != OPDB_BENCH_SHARD_MERGE ? o->rounds : 1;
    if (c->nrounds > 1) {
        c->m.min_time_s /= c->nrounds;
        c->m.timeout_s /= c->nrounds;
        c->m.keep_samples = true;
    }
    c->budget = opdb_bench_memory_budget(o);
    c->width = opdb_progress_width();
    snprintf(c->backend_cell, sizeof c->backend_cell, "%s; timer overhead %.3f us", c->b->description,
             opdb_timer_overhead_us());
}

static void print_setup(const bench_ctx *c) {
    const opdb_measure_opts *m = &c->o->measure;
    bench_say(c, "[BENCH] backend: %s\n", c->backend_cell);
    if (m->repeat_count > 0)
        bench_say(c, "[BENCH] fixed count: %ld sample(s) per row, %s cache\n", m->repeat_count,
                m->hot_cache ? "hot" : "cold");
    else
        bench_say(c, "[BENCH] stop rule: >= %ld samples, >= %g s, 95%% CI of the median within +-%g%%, or %g s "
                        "timeout; %s cache\n",
                m->min_samples, m->min_time_s, m->target_precision_pct, m->timeout_s, m->hot_cache ? "hot" : "cold");
    if (c->nrounds > 1)
        bench_say(c, "[BENCH] %d interleaved passes over the rows, each with 1/%d of the time budget; statistics "
                        "over the samples of all passes\n",
                c->nrounds, c->nrounds);
    if (c->nloaded) bench_say(c, "[BENCH] resuming: %zu row(s) already in the journal\n", c->nloaded);
}

/* Every pass over the selected rows (--rounds), the last one journaling. */
static int walk(bench_ctx *c, opdb_err *err) {
    const opdb_bench_opts *o = c->o;
    int rc = 0;
    /* a pass that measures nothing counts the rows for the progress line */
    opdb_progress_init(&c->prog, o->no_progress);
    if (c->prog.enabled) {
        c->counting = true;
        c->round = 0;
        c->ordinal = 0;
        rc = bench_pass(c, err);
        c->counting = false;
        opdb_progress_stage(&c->prog, "bench", c->total * (uint64_t)c->nrounds);
    }
    for (c->round = 1; c->round < c->nrounds && rc == 0 && !c->stop; c->round++) {
        c->ordinal = 0;
        rc = bench_pass(c, err);
    }
    c->round = c->nrounds; /* the last pass journals and reports */
    c->ordinal = 0;
    if (rc == 0 && o->grid) {
        rc = bench_grid(c, err);
    } else if (rc == 0) {
        size_t n;
        char **csvs = list_csvs(o, &n);
        for (size_t i = 0; i < n && rc == 0 && !c->stop; i++) rc = bench_csv(c, csvs[i], err);
        for (size_t i = 0; i < o->nops; i++)
            if (!c->stop && !status_of(c, o->ops[i])) { /* the reference's run-all message */
                char why[300];
                snprintf(why, sizeof why, "No %s.csv operator file found in this database.", o->ops[i]);
                bench_skip_op(c, bench_status(c, o->ops[i]), why);
            }
        opdb_free_paths(csvs, n);
    }
    return rc;
}

static void status_free(bench_ctx *c) {
    for (size_t i = 0; i < c->nst; i++) {
        free(c->st[i].op);
        free(c->st[i].reason);
    }
    free(c->st);
    c->st = NULL;
    c->nst = 0;
}

/* One warning for the records a journal dropped on load (bench_journal.h). */
static void warn_dropped(const bench_journal *j, const char *then) {
    if (j->nbad)
        opdb_warn("%zu record(s) of %s ignored: a status, time or sample count that is not a "
                  "finite number >= 0 (first at line %llu); %s\n", j->nbad, j->path, j->first_bad_line, then);
}

/* One MPI rank's share (see opdb_bench_opts.shard_rank): measured into its
 * own journal, read without the lock; the merge writes it back. */
static int bench_shard(bench_ctx *c, opdb_err *err) {
    const opdb_bench_opts *o = c->o;
    int rc = journal_open(&c->j, o->shard_path, o->resume, err);
    if (rc == 0) warn_dropped(&c->j, "their rows are measured again");
    c->nloaded = c->j.n;
    if (rc == 0) print_setup(c);
    if (rc == 0) rc = walk(c, err);
    long measured = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < c->nst; i++) {
        measured += c->st[i].measured;
        failed += c->st[i].failed;
        skipped += c->st[i].skipped;
    }
    if (rc == 0)
        bench_say(c, "[RANK %d/%d] %ld row(s) measured, %ld failed, %ld skipped\n", o->shard_rank, o->shard_count,
                measured, failed, skipped);
    status_free(c);
    journal_close(&c->j);
    opdb_sb_free(&c->sig);
    bench_samples_free(c);
    return rc ? -1 : 0;
}

/* The merge: every rank's journal, read back for the rows in order. */
static int open_shards(bench_ctx *c, opdb_err *err) {
    int n = c->o->shard_count;
    c->shards = opdb_xcalloc((size_t)n, sizeof *c->shards);
    for (int r = 0; r < n; r++) {
        c->shards[r].fd = -1;
        char name[64];
        snprintf(name, sizeof name, OPDB_BENCH_SHARD_FILE, r);
        char *p = opdb_path_join(c->o->shard_path, name);
        int rc = opdb_path_exists(p) ? journal_open(&c->shards[r], p, true, err) : 0;
        if (rc == 0) warn_dropped(&c->shards[r], "their rows stay unmeasured");
        free(p);
        if (rc) return -1;
    }
    return 0;
}

static void close_shards(bench_ctx *c) {
    for (int r = 0; c->shards && r < c->o->shard_count; r++) journal_close(&c->shards[r]);
    free(c->shards);
}

/* The totals for the caller, and --json's object. */
static void bench_finish_json(bench_ctx *c) {
    bench_totals(c);
    if (!c->o->json) return;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    bench_json(c, c->writeback_json, &sb);
    fprintf(c->o->json, "%s\n", sb.p);
    fflush(c->o->json);
    opdb_sb_free(&sb);
}

static int bench_run(const opdb_bench_opts *o, opdb_backend *b, opdb_err *err) {
    bool merge = o->shard_count > 1 && o->shard_rank == OPDB_BENCH_SHARD_MERGE;
    if (!opdb_is_dir(o->db_dir)) {
        if (!o->grid) return opdb_fail(err, OPDB_ERR_RUNTIME, "database folder not found: %s (use --grid default to create one)", o->db_dir);
        if (!o->plan_only && opdb_mkdirs(o->db_dir, err)) return -1; /* --plan writes nothing */
    }
    bench_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.b = b;
    opdb_sb_init(&c.sig);
    setup_measure(&c);
    if (o->shard_count > 1 && o->shard_rank >= 0 && !o->plan_only) return bench_shard(&c, err);
    /* --plan only reads: no lock, so a killed run's journal is left to the next writer */
    int lock = o->plan_only ? -1 : opdb_dir_lock(o->db_dir, err);
    if (lock < 0 && !o->plan_only) return opdb_sb_free(&c.sig), -1;
    char *work = opdb_path_join(o->db_dir, BENCH_WORK_DIR);
    char *journal = opdb_path_join(work, "journal.csv");
    if (o->plan_only) {
        int prc = bench_plan(&c, err);
        if (prc >= 0) bench_finish_json(&c);
        bench_samples_free(&c);
        opdb_sb_free(&c.sig);
        status_free(&c);
        free(work);
        free(journal);
        opdb_dir_unlock(lock);
        return prc;
    }
    int rc = opdb_mkdirs(work, err);
    bool resume = o->resume && !merge; /* the merge starts from the ranks' journals */
    if (rc == 0 && !resume && !merge && opdb_path_exists(journal))
        bench_say(&c, "[BENCH] discarding the journal of an unfinished run (--resume continues it): %s\n", journal);
    if (rc == 0) rc = journal_open(&c.j, journal, resume, err);
    if (rc == 0) warn_dropped(&c.j, "their rows are measured again");
    c.nloaded = c.j.n;
    if (rc == 0 && !merge) print_setup(&c);
    if (rc == 0 && merge) rc = open_shards(&c, err);
    if (rc == 0) rc = walk(&c, err);
    if (rc == 0) rc = bench_write_back(&c, work, err);
    if (rc == 0) bench_finish_json(&c);
    bool any_failed = false;
    long measured = 0, unmeasured = 0;
    for (size_t i = 0; i < c.nst; i++) {
        measured += c.st[i].measured;
        unmeasured += c.st[i].unmeasured;
        any_failed |= c.st[i].failed > 0 || c.st[i].unmeasured > 0 || c.st[i].kind == ST_FAILED;
    }
    free(c.writeback_json);
    status_free(&c);
    journal_close(&c.j);
    close_shards(&c);
    if (rc == 0 && unmeasured)
        bench_say(&c, "opdb bench: %ld row(s) not measured: the rank that had them did not report them (see above); "
                        "they keep their previous values\n", unmeasured);
    if (rc == 0) {
        bench_remove_work(work, journal);
        fprintf(o->out, "[CLEAN] removed %s\n", work);
    } else {
        bench_say(&c, "[PRESERVE] journal kept for --resume: %s\n", journal);
    }
    opdb_sb_free(&c.sig);
    bench_samples_free(&c);
    free(work);
    free(journal);
    opdb_dir_unlock(lock);
    if (rc) return -1;
    bool warned = false;
    if (c.unconverged) {
        opdb_warn("%ld row(s) never met the stop rule before the %g s timeout (a busy machine, or too short a timeout); "
                  "they are marked MicroBench Converged = no and opdb validate warns about them",
                  c.unconverged, c.m.timeout_s * c.nrounds);
        warned = true;
    }
    if (measured == 0) {
        opdb_warn("no row was measured");
        warned = true;
    }
    if (warned && o->strict) bench_say(&c, "opdb bench: --strict: exit 1 because of the warning(s) above\n");
    return any_failed || c.stop || (warned && o->strict) ? 1 : 0;
}

static void bench_defaults(opdb_bench_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    opdb_measure_opts_init(&o->measure);
}

OPDB_OPTS_INIT_SIZED(opdb_bench_opts, bench_defaults)

int opdb_bench_run(const opdb_bench_opts *o, opdb_backend *b, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_bench_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    opdb_call_set_reference_signatures(o->quirks); /* journal and write-back match rows as the reference does */
    int rc = bench_run(o, b, err);
    opdb_call_leave(&saved);
    return rc;
}
