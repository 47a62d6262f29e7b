/* Which CSVs a run touches, and the run over all of them: each CSV is
 * independent once the aggregation is done, so they are processed by a
 * small thread pool; messages and results are kept in target order. */
#include "update/update_db.h"
#include "core/call.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/db.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/signature.h"
#include "update/update_csv.h"

/* ---- which CSVs, and the whole database */

/* The other names of op's MatMul family in family order, NULL-terminated
 * (none for an op outside it): the lists are built once from the family's
 * one list, each leaving one name out. */
#define MATMUL_ITEM(name) name,
static const char *const k_matmul_family[OPDB_NMATMUL_FAMILY] = {OPDB_MATMUL_FAMILY_LIST(MATMUL_ITEM)};
#undef MATMUL_ITEM
static const char *k_matmul_aliases[OPDB_NMATMUL_FAMILY][OPDB_NMATMUL_FAMILY];
static pthread_once_t k_matmul_aliases_once = PTHREAD_ONCE_INIT;

static void build_matmul_aliases(void) {
    for (int i = 0; i < OPDB_NMATMUL_FAMILY; i++) {
        int n = 0;
        for (int k = 0; k < OPDB_NMATMUL_FAMILY; k++)
            if (k != i) k_matmul_aliases[i][n++] = k_matmul_family[k];
        k_matmul_aliases[i][n] = NULL;
    }
}

static const char *const *matmul_aliases(const char *op) {
    static const char *const none[] = {NULL};
    pthread_once(&k_matmul_aliases_once, build_matmul_aliases);
    for (int i = 0; i < OPDB_NMATMUL_FAMILY; i++)
        if (strcmp(op, k_matmul_family[i]) == 0) return k_matmul_aliases[i];
    return none;
}

/* opdb bench measured each CSV's own rows: no cross-CSV aliasing. */
static const char *const *target_aliases(const opdb_update_opts *o, const char *op) {
    static const char *const none[] = {NULL};
    return o->bench_rows ? none : matmul_aliases(op);
}

static bool name_is(const char *name, void *want) { return strcmp(name, (const char *)want) == 0; }

static bool catalogue_csv(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    if (n < 4 || strcmp(name + n - 4, ".csv") != 0) return false;
    char norm[256];
    opdb_normalize_op_name(name, n - 4, norm, sizeof norm);
    return opdb_is_replay_op(norm);
}

int update_target_csvs(const opdb_update_opts *o, opdb_strvec *paths, opdb_err *err) {
    memset(paths, 0, sizeof *paths);
    if (o->nops) {
        for (size_t i = 0; i < o->nops; i++) {
            char name[300];
            snprintf(name, sizeof name, "%s.csv", o->ops[i]);
            if (!o->quirks) {
                char *p = opdb_path_join(o->db_dir, name);
                if (opdb_is_file(p)) opdb_strvec_push_owned(paths, p);
                else free(p);
                continue;
            }
            char **found;
            size_t nf;
            if (opdb_is_dir(o->db_dir)) {
                if (opdb_find_files(o->db_dir, name_is, name, &found, &nf, err)) return -1;
                for (size_t k = 0; k < nf; k++) opdb_strvec_push_owned(paths, found[k]);
                free(found);
            }
        }
        return 0;
    }
    DIR *d = opendir(o->db_dir);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!catalogue_csv(e->d_name, NULL)) continue;
        char *p = opdb_path_join(o->db_dir, e->d_name);
        if (opdb_is_file(p)) opdb_strvec_push_owned(paths, p);
        else free(p);
    }
    closedir(d);
    for (size_t i = 1; i < paths->n; i++)
        for (size_t j = i; j > 0 && opdb_path_cmp(paths->v[j - 1], paths->v[j]) > 0; j--) {
            char *t = paths->v[j];
            paths->v[j] = paths->v[j - 1];
            paths->v[j - 1] = t;
        }
    return 0;
}

typedef struct target {
    char *stem, *path;
} target;

static int cmp_target(const void *a, const void *b) { return strcmp(((const target *)a)->stem, ((const target *)b)->stem); }

static bool selected(const opdb_update_opts *o, const char *norm) {
    if (!o->nops) return true;
    for (size_t i = 0; i < o->nops; i++) {
        if (strcmp(o->ops[i], norm) == 0) return true;
        for (const char *const *a = matmul_aliases(o->ops[i]); *a; a++)
            if (strcmp(*a, norm) == 0) return true;
    }
    return false;
}

typedef struct job {
    const opdb_update_opts *o;
    const op_summary_agg *agg;
    const target *t;
    size_t nt;
    update_result *res;
    opdb_strbuf *log;
    opdb_err *err;
    int *rc;
    size_t next;
    const size_t *order; /* targets by estimated work, largest first */
    pthread_mutex_t mu;
} job;

/* merge = rows of exactly this operator; match-only = its MatMul aliases'
 * rows. MatMul-family CSVs never gain rows: everything is match-only. */
static void process_target(const job *J, size_t k) {
    const opdb_update_opts *o = J->o;
    const target *t = &J->t[k];
    const agg_op *own = op_summary_get(J->agg, t->stem);
    if (own && !selected(o, own->norm)) own = NULL;
    size_t cap = (own ? own->n : 0) + 1;
    for (const char *const *a = target_aliases(o, t->stem); *a; a++) {
        const agg_op *ao = op_summary_get(J->agg, *a);
        if (ao && selected(o, ao->norm)) cap += ao->n;
    }
    const agg_row **merge = opdb_xmalloc(cap * sizeof *merge), **match = opdb_xmalloc(cap * sizeof *match);
    size_t nmerge = 0, nmatch = 0;
    char norm[256];
    opdb_normalize_op_name(t->stem, strlen(t->stem), norm, sizeof norm);
    bool mm = opdb_is_matmul_family(norm) && !o->bench_rows;
    for (size_t i = 0; own && i < own->n; i++) {
        if (mm) match[nmatch++] = own->rows[i];
        else merge[nmerge++] = own->rows[i];
    }
    for (const char *const *a = target_aliases(o, t->stem); *a; a++) {
        const agg_op *ao = op_summary_get(J->agg, *a);
        if (ao && selected(o, ao->norm))
            for (size_t i = 0; i < ao->n; i++) match[nmatch++] = ao->rows[i];
    }
    opdb_err_clear(&J->err[k]);
    J->rc[k] = update_csv(o, t->path, (const agg_row *const *)merge, nmerge, (const agg_row *const *)match, nmatch,
                          &J->res[k], &J->log[k], &J->err[k]);
    free(merge);
    free(match);
}

/* The merge messages: the reference's "[WARN] ..." lines on stdout as it
 * prints them under --reference-quirks, else warnings; the others on stdout. */
static void print_log(const opdb_update_opts *o, const char *log) {
    if (o->quirks) {
        fputs(log, o->out);
        return;
    }
    for (const char *l = log; *l;) {
        const char *nl = strchr(l, '\n');
        int len = nl ? (int)(nl - l) : (int)strlen(l);
        if (strncmp(l, "[WARN] ", 7) == 0) opdb_warn("%.*s", len - 7, l + 7);
        else fprintf(o->out, "%.*s\n", len, l);
        l += len + (nl ? 1 : 0);
    }
}

static void *worker(void *arg) {
    job *J = arg;
    for (;;) {
        pthread_mutex_lock(&J->mu);
        size_t i = J->next++;
        pthread_mutex_unlock(&J->mu);
        if (i >= J->nt) return NULL;
        process_target(J, J->order[i]);
    }
}

/* The calling thread ran out of memory: the workers take no next target. */
static void stop_targets(void *arg) {
    job *J = arg;
    pthread_mutex_lock(&J->mu);
    J->next = J->nt;
    pthread_mutex_unlock(&J->mu);
}

/* A CSV for a profiled operator that has none, named by the path policy
 * (db.h): default mode makes the name safe; --reference-quirks keeps the
 * reference's raw name but refuses one that would leave the folder.  An
 * existing table of the same file (an earlier run's safe name) becomes this
 * operator's, so no two targets share a file. */
static int new_target(const opdb_update_opts *o, target **t, size_t *nt, size_t nexisting, const char *op,
                      opdb_err *err) {
    char *stem = o->quirks ? opdb_xstrdup(op) : opdb_safe_stem(op, strlen(op));
    char *name = opdb_xmalloc(strlen(stem) + 32);
    sprintf(name, "%s.csv", stem);
    for (int n = 2;; n++) { /* two new operators with one safe name: a ~N suffix */
        bool taken = false;
        for (size_t k = nexisting; k < *nt && !taken; k++) taken = strcmp(opdb_path_basename((*t)[k].path), name) == 0;
        if (!taken || o->quirks) break;
        sprintf(name, "%s~%d.csv", stem, n);
    }
    char *path = opdb_path_in_dir(o->db_dir, name, err);
    for (size_t k = 0; path && k < *nt; k++) {
        const char *other = opdb_path_basename((*t)[k].path);
        if (k < nexisting && strcmp(other, name) == 0) {
            free((*t)[k].stem);
            (*t)[k].stem = opdb_xstrdup(op);
            free(path), free(stem), free(name);
            return 0;
        }
        const char *clash = opdb_name_case_clash(&other, 1, name);
        if (clash) opdb_warn("%s and %s differ only in case: one file on a case-insensitive file system", clash, name);
    }
    if (path && strcmp(stem, op) != 0)
        opdb_warn("operator type '%s' is not a safe file name: its table is %s", op, name);
    free(stem), free(name);
    if (!path) return -1;
    *t = opdb_xrealloc(*t, (*nt + 1) * sizeof **t);
    (*t)[*nt].stem = opdb_xstrdup(op);
    (*t)[*nt].path = path;
    (*nt)++;
    return 0;
}

/* Default mode: a table is made only for a real operator name with at least
 * one row parse would keep (not an OP Type of "0" or "", not all N/A). */
static bool table_worthy(const agg_op *op) {
    if (opdb_op_type_is_bogus(op->op)) {
        opdb_warn("OP Type '%s' (%zu profiled row(s)) is not an operator name: no table made for it", op->op, op->n);
        return false;
    }
    for (size_t i = 0; i < op->n; i++)
        if (!agg_has_na_shape(op->rows[i])) return true;
    opdb_warn("every profiled row of %s has N/A shapes (parse skips them): no table made for it", op->op);
    return false;
}

/* Default mode: a profiled operator no CSV took. A catalogue operator has
 * no CSV yet; any other one is outside what update replays, whether or
 * not the database holds a table for it (which then stays as it is). */
static void report_unmatched(const opdb_update_opts *o, update_run *run, const agg_op *op) {
    bool foreign = !opdb_is_replay_op(op->norm) || opdb_op_type_is_bogus(op->op);
    opdb_strvec *v = foreign ? &run->foreign_ops : &run->unmatched_ops;
    unsigned long long **rows = foreign ? &run->foreign_rows : &run->unmatched_rows;
    opdb_strvec_push(v, op->op);
    *rows = opdb_xrealloc(*rows, v->n * sizeof **rows);
    (*rows)[v->n - 1] = op->n;
    if (!foreign) return;
    char *name = opdb_xmalloc(strlen(op->op) + 5);
    sprintf(name, "%s.csv", op->op);
    char *p = opdb_path_join(o->db_dir, name);
    if (!opdb_is_file(p)) name[0] = '\0';
    opdb_strvec_push_owned(&run->foreign_csv, name);
    free(p);
}

int update_db(const opdb_update_opts *o, const op_summary_agg *agg, update_run *run, opdb_err *err) {
    memset(run, 0, sizeof *run);
    opdb_strvec paths;
    if (update_target_csvs(o, &paths, err)) return -1;
    target *t = NULL;
    size_t nt = 0;
    /* {stem: path}: a later path with the same stem replaces the earlier one */
    for (size_t i = 0; i < paths.n; i++) {
        const char *name = opdb_path_basename(paths.v[i]);
        size_t n = strlen(name) - 4;
        size_t k;
        for (k = 0; k < nt; k++)
            if (strlen(t[k].stem) == n && strncmp(t[k].stem, name, n) == 0) break;
        if (k == nt) {
            t = opdb_xrealloc(t, (nt + 1) * sizeof *t);
            t[nt].stem = opdb_xmalloc(n + 1);
            memcpy(t[nt].stem, name, n);
            t[nt].stem[n] = '\0';
            t[nt].path = NULL;
            nt++;
        }
        free(t[k].path);
        t[k].path = opdb_xstrdup(paths.v[i]);
    }
    bool new_db = nt == 0;
    size_t nexisting = nt;
    int rc = 0;
    /* Profiled operators that no CSV takes (directly or as a MatMul alias). */
    for (size_t i = 0; i < agg->n; i++) {
        const agg_op *op = &agg->ops[i];
        if (!selected(o, op->norm)) continue;
        bool taken = new_db;
        for (size_t k = 0; k < nt && !taken; k++) {
            taken = strcmp(t[k].stem, op->op) == 0;
            for (const char *const *a = target_aliases(o, t[k].stem); *a && !taken; a++) taken = strcmp(*a, op->op) == 0;
        }
        if (taken) continue;
        if (!o->quirks && o->add_new_ops && table_worthy(op)) {
            if (new_target(o, &t, &nt, nexisting, op->op, err)) rc = -1;
        } else if (!o->quirks) {
            report_unmatched(o, run, op);
        }
    }
    if (new_db) {
        for (size_t i = 0; i < agg->n; i++) {
            if (!selected(o, agg->ops[i].norm)) continue;
            if (!o->quirks && !table_worthy(&agg->ops[i])) continue;
            if (new_target(o, &t, &nt, nexisting, agg->ops[i].op, err)) rc = -1;
        }
    }
    if (rc) { /* a name broke the path policy: nothing was written */
        for (size_t k = 0; k < nt; k++) free(t[k].stem), free(t[k].path);
        free(t);
        opdb_strvec_free(&paths);
        return -1;
    }
    if (nt > 1) qsort(t, nt, sizeof *t, cmp_target);
    run->r = opdb_xcalloc(nt + 1, sizeof *run->r);
    run->n = nt;
    job J = {o, agg, t, nt, run->r, opdb_xcalloc(nt + 1, sizeof(opdb_strbuf)), opdb_xcalloc(nt + 1, sizeof(opdb_err)),
             opdb_xcalloc(nt + 1, sizeof(int)), 0, NULL, PTHREAD_MUTEX_INITIALIZER};
    /* Largest first, so that the last CSVs to finish are small ones and no
     * thread waits long for another at the end (results stay in target order). */
    size_t *order = opdb_xmalloc((nt + 1) * sizeof *order);
    double *work = opdb_xmalloc((nt + 1) * sizeof *work);
    for (size_t k = 0; k < nt; k++) {
        struct stat st;
        const agg_op *own = op_summary_get(agg, t[k].stem);
        work[k] = (stat(t[k].path, &st) == 0 ? (double)st.st_size : 0.0) + 1000.0 * (own ? (double)own->n : 0.0);
        for (const char *const *a = target_aliases(o, t[k].stem); *a; a++) {
            const agg_op *ao = op_summary_get(agg, *a);
            if (ao) work[k] += 1000.0 * (double)ao->n;
        }
        order[k] = k;
    }
    for (size_t i = 1; i < nt; i++) /* insertion sort: a few dozen targets, stable */
        for (size_t j = i; j > 0 && work[order[j - 1]] < work[order[j]]; j--) {
            size_t x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    J.order = order;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nth = ncpu > 1 ? (int)(ncpu < 8 ? ncpu : 8) : 1;
    if ((size_t)nth > nt) nth = (int)nt;
    pthread_t th[8];
    bool up[8] = {false};
    opdb_call_workers held; /* held first: running out while starting them joins those started */
    opdb_call_hold_workers(&held, th, up, 8, stop_targets, &J);
    for (int i = 1; i < nth; i++) up[i] = opdb_thread_create(&th[i], worker, &J) == 0;
    worker(&J);
    opdb_call_drop_workers(&held);
    for (int i = 1; i < nth; i++)
        if (up[i]) pthread_join(th[i], NULL);
    opdb_call_check();
    for (size_t k = 0; k < nt; k++) {
        if (J.log[k].n) print_log(o, J.log[k].p);
        if (J.rc[k] && rc == 0) {
            *err = J.err[k];
            rc = -1;
        }
        opdb_sb_free(&J.log[k]);
    }
    free(order);
    free(work);
    free(J.log);
    free(J.err);
    free(J.rc);
    for (size_t k = 0; k < nt; k++) {
        free(t[k].stem);
        free(t[k].path);
    }
    free(t);
    opdb_strvec_free(&paths);
    return rc;
}

void update_run_free(update_run *run) {
    for (size_t i = 0; i < run->n; i++) {
        update_result *r = &run->r[i];
        free(r->path), free(r->stem), free(r->name);
        opdb_strvec_free(&r->missing), opdb_strvec_free(&r->deleted), opdb_strvec_free(&r->no_sample);
        opdb_strvec_free(&r->added_rows);
        for (size_t k = 0; k < r->ndups; k++) free(r->dups[k].sig);
        free(r->dups);
        for (size_t k = 0; k < r->ngaps; k++) free(r->gaps[k].op), free(r->gaps[k].csv_name), free(r->gaps[k].sig);
        free(r->gaps);
    }
    free(run->r);
    opdb_strvec_free(&run->unmatched_ops);
    free(run->unmatched_rows);
    opdb_strvec_free(&run->foreign_ops);
    free(run->foreign_rows);
    opdb_strvec_free(&run->foreign_csv);
    memset(run, 0, sizeof *run);
}
