/* See bench_writeback.h. */
#include "replay/bench_writeback.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/csv.h"
#include "opdb/db.h"
#include "opdb/fs.h"
#include "opdb/schema.h"
#include "opdb/update.h"
#include "opdb/validate.h"

const char *const opdb_bench_extra_cols[] = {
    OPDB_COL_MB_MEDIAN_DUR, OPDB_COL_MB_P20_DUR, OPDB_COL_MB_P80_DUR, OPDB_COL_MB_CI_LOW, OPDB_COL_MB_CI_HIGH,
    OPDB_COL_MB_RSD, OPDB_COL_MB_SAMPLES, OPDB_COL_MB_CACHE, OPDB_COL_MB_GFLOPS, OPDB_COL_MB_GBS,
    OPDB_COL_MB_BACKEND, OPDB_MB_CONVERGED_COLUMN,
};
const size_t opdb_bench_nextra_cols = sizeof opdb_bench_extra_cols / sizeof opdb_bench_extra_cols[0];

/* The journal's measured rows as an msprof op_summary file. */
static int write_op_summary(bench_ctx *c, const char *work, opdb_err *err) {
    char *prof = opdb_path_join(work, BENCH_PROF_DIR "/mindstudio_profiler_output");
    int rc = opdb_mkdirs(prof, err);
    char *path = opdb_path_join(prof, "op_summary_0.csv");
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    static const char *const hdr[11] = {OPDB_OPSUM_COL_OP_TYPE,  OPDB_COL_OP_STATE,      OPDB_OPSUM_COL_TASK_TYPE,
                                        OPDB_OPSUM_COL_TASK_DUR, OPDB_COL_INPUT_SHAPES,  OPDB_COL_INPUT_DTYPES,
                                        OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_SHAPES, OPDB_COL_OUTPUT_DTYPES,
                                        OPDB_COL_OUTPUT_FORMATS, OPDB_COL_EP_SIZE};
    opdb_span cells[11];
    for (int i = 0; i < 11; i++) cells[i] = opdb_span_cstr(hdr[i]);
    opdb_csv_write_record(&sb, cells, 11);
    char task[32];
    snprintf(task, sizeof task, "%s", c->b->name);
    for (char *p = task; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    for (size_t i = 0; i < c->j.n; i++) {
        char *const *f = c->j.r[i].f;
        if (strcmp(f[J_STATUS], "ok") != 0) continue;
        const char *v[11] = {f[J_CSV], f[J_STATE], task, f[J_MIN], f[J_INSH], f[J_INDT], f[J_INFMT], f[J_OUTSH],
                             f[J_OUTDT], f[J_OUTFMT], f[J_EP]};
        for (int k = 0; k < 11; k++) cells[k] = opdb_span_cstr(v[k]);
        opdb_csv_write_record(&sb, cells, 11);
    }
    if (rc == 0) rc = opdb_atomic_write(path, sb.p, sb.n, err);
    opdb_sb_free(&sb);
    free(path);
    free(prof);
    return rc;
}

typedef struct extras {
    opdb_update_extra *v;
    char **sigs;
    const char **values; /* J.n * ncols */
    size_t n;
} extras;

static void build_extras(bench_ctx *c, extras *x) {
    size_t nc = opdb_bench_nextra_cols, n = c->j.n;
    x->v = opdb_xcalloc(n + 1, sizeof *x->v);
    x->sigs = opdb_xcalloc(n + 1, sizeof *x->sigs);
    x->values = opdb_xcalloc((n + 1) * nc, sizeof *x->values);
    x->n = 0;
    bool drop_failed = c->o->drop_failed || c->o->quirks;
    opdb_strbuf sig;
    opdb_sb_init(&sig);
    for (size_t i = 0; i < n; i++) {
        char *const *f = c->j.r[i].f;
        bool ok = strcmp(f[J_STATUS], "ok") == 0;
        if (!ok && !drop_failed) continue;
        journal_sig(f[J_CSV], (const char *const *)&f[J_CELL0], &sig);
        opdb_update_extra *e = &x->v[x->n];
        e->csv_stem = f[J_CSV];
        e->sig = x->sigs[x->n] = opdb_xstrdup(sig.p ? sig.p : "");
        e->drop = !ok;
        const char **vals = &x->values[x->n * nc];
        const int at[12] = {J_MEDIAN, J_P20, J_P80, J_CI_LO, J_CI_HI, J_RSD, J_SAMPLES, J_CACHE, J_GFLOPS, J_GBS, J_BACKEND, J_CONVERGED};
        for (size_t k = 0; k < nc; k++) vals[k] = f[at[k]];
        e->values = ok ? vals : NULL;
        x->n++;
    }
    opdb_sb_free(&sig);
}

static void free_extras(extras *x) {
    for (size_t i = 0; i < x->n; i++) free(x->sigs[i]);
    free(x->sigs);
    free(x->v);
    free(x->values);
}

/* Status entries, printed like the reference's run-all status and handed to the report. */
typedef struct status_lists {
    const char **success;
    opdb_update_status_entry *failed, *skipped;
    char **reasons;
    size_t ns, nf, nk, nr;
} status_lists;

static char *keep(status_lists *l, char *s) {
    l->reasons = opdb_xrealloc(l->reasons, (l->nr + 1) * sizeof *l->reasons);
    return l->reasons[l->nr++] = s;
}

static void summarise(bench_ctx *c, status_lists *l, opdb_update_status *us) {
    memset(l, 0, sizeof *l);
    size_t n = c->nst + 1;
    l->success = opdb_xcalloc(n, sizeof *l->success);
    l->failed = opdb_xcalloc(n, sizeof *l->failed);
    l->skipped = opdb_xcalloc(n, sizeof *l->skipped);
    l->reasons = NULL;
    FILE *out = c->o->out;
    long rows = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < c->nst; i++) {
        op_status *s = &c->st[i];
        rows += s->measured;
        failed += s->failed;
        skipped += s->skipped;
        char buf[1400];
        if (s->kind == ST_SKIPPED) {
            fprintf(out, "[STATUS] %s: skipped (%s)\n", s->op, s->reason);
            l->skipped[l->nk++] = (opdb_update_status_entry){s->op, s->reason};
        } else if (s->failed || s->unmeasured || s->kind == ST_FAILED) {
            if (s->kind == ST_FAILED)
                snprintf(buf, sizeof buf, "%s", s->reason);
            else if (s->unmeasured)
                snprintf(buf, sizeof buf, "%ld row(s) not measured: their MPI rank did not report them%s%s",
                         s->unmeasured, s->failed ? "; first failure: " : "", s->failed ? s->reason : "");
            else if (s->skipped && s->consecutive >= OPDB_BENCH_BREAKER)
                snprintf(buf, sizeof buf, "%ld row(s) failed, %ld skipped by the circuit breaker; first: %s", s->failed,
                         s->skipped, s->reason);
            else
                snprintf(buf, sizeof buf, "%ld row(s) failed; first: %s", s->failed, s->reason);
            fprintf(out, "[STATUS] %s: failed (%ld measured, %s)\n", s->op, s->measured, buf);
            l->failed[l->nf++] = (opdb_update_status_entry){s->op, keep(l, opdb_xstrdup(buf))};
        } else {
            fprintf(out, "[STATUS] %s: success (%ld measured, %ld skipped)\n", s->op, s->measured, s->skipped);
            l->success[l->ns++] = s->op;
        }
    }
    fprintf(out, "Benchmarked %ld row(s) of %zu operator(s) under %s: %ld failed, %ld skipped.\n", rows,
            l->ns + l->nf, c->o->db_dir, failed, skipped);
    fprintf(out, "[SUMMARY] Success: %zu, Failed: %zu, Skipped: %zu\n", l->ns, l->nf, l->nk);
    us->success = l->success;
    us->nsuccess = l->ns;
    us->failed = l->failed;
    us->nfailed = l->nf;
    us->skipped = l->skipped;
    us->nskipped = l->nk;
}

static void free_lists(status_lists *l) {
    for (size_t i = 0; i < l->nr; i++) free(l->reasons[i]);
    free(l->reasons);
    free(l->success);
    free(l->failed);
    free(l->skipped);
}

/* Whether the database is this backend's own one (<device>/opdb_<backend>/<stack>):
 * only then were its profiled durations taken on the kind of device measured here. */
static bool own_database(const bench_ctx *c) {
    char *dir = opdb_path_normalize(c->o->db_dir), *up = opdb_path_parent(dir), *top = opdb_path_parent(up);
    char *dev = opdb_sanitize_type_name(c->b->device_name, strlen(c->b->device_name));
    char layer[160];
    snprintf(layer, sizeof layer, "opdb_%s", c->b->name);
    bool own = !strcmp(opdb_path_basename(up), layer) && !strcmp(opdb_path_basename(top), dev);
    free(dir), free(up), free(top), free(dev);
    return own;
}

int bench_write_back(bench_ctx *c, const char *work, opdb_err *err) {
    const opdb_bench_opts *o = c->o;
    if (write_op_summary(c, work, err)) return -1;
    extras x;
    build_extras(c, &x);
    status_lists l;
    opdb_update_status us;
    summarise(c, &l, &us);
    fflush(o->out);
    const char *paths[1] = {work};
    opdb_update_opts u;
    opdb_update_opts_init(&u);
    u.db_dir = o->db_dir;
    u.prof_paths = paths;
    u.nprof = 1;
    u.ops = o->ops;
    u.nops = o->nops;
    /* grid rows were already filtered against the database: missing ones are added */
    u.missing_only = o->missing_only && !o->grid;
    u.quirks = o->quirks;
    u.reference_signatures = o->quirks;
    u.add_new_ops = !o->quirks;
    u.timestamp = o->timestamp;
    u.out = o->out;
    if (!o->quirks) {
        u.extra_cols = opdb_bench_extra_cols;
        u.nextra_cols = opdb_bench_nextra_cols;
    }
    u.extra = x.v;
    u.nextra = x.n;
    u.lock_held = true;
    u.bench_rows = true;
    u.no_metrics = !o->quirks; /* no NPU counters here: empty cells, not zeros */
    u.status = &us;
    char why[512];
    if (!o->quirks) { /* the reference's title, and its gaps against any profile */
        u.title = "Bench Report";
        if (!own_database(c)) {
            snprintf(why, sizeof why, "measured here with the %s backend, while the profiled durations come from "
                                      "another device (only this machine's own database, <device>/opdb_%s/<stack>, "
                                      "compares them)", c->b->name, c->b->name);
            u.gaps_not_compared = why;
        }
    }
    /* --json: the report as JSON, kept for the run's own JSON object */
    size_t wbn = 0;
    FILE *mem = o->json ? open_memstream(&c->writeback_json, &wbn) : NULL;
    if (mem) {
        u.json = true;
        u.out = mem;
    }
    int rc = opdb_update_run(&u, err);
    if (mem) {
        fclose(mem);
        while (wbn && (c->writeback_json[wbn - 1] == '\n' || c->writeback_json[wbn - 1] == ' '))
            c->writeback_json[--wbn] = '\0';
    }
    free_lists(&l);
    free_extras(&x);
    return rc;
}

void bench_remove_work(const char *work, const char *journal) {
    char *prof = opdb_path_join(work, BENCH_PROF_DIR);
    char *mso = opdb_path_join(prof, "mindstudio_profiler_output");
    char *sum = opdb_path_join(mso, "op_summary_0.csv");
    unlink(sum);
    rmdir(mso);
    rmdir(prof);
    unlink(journal);
    rmdir(work);
    free(sum), free(mso), free(prof);
}

