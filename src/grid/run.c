/* `opdb grid` run (docs/GRID.md §1-§2): discovery, start-up lines, the folder
 * lock, the per-file pipeline (file.c) over every CSV, the summary, the
 * plan (--plan, --json) and the coverage of the target models. */
#include <stdlib.h>
#include <string.h>
#include "grid/grid_file.h"
#include "core/call.h"
#include "opdb/fs.h"
#include "opdb/json_writer.h"
#include "opdb/pystr.h"

static bool keep_csv(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    return n >= 4 && !strcmp(name + n - 4, ".csv") && !strstr(name, ".tmp.csv");
}

/* Python repr of a list of str. */
static void list_repr(opdb_strbuf *sb, char **items, size_t n) {
    opdb_sb_addc(sb, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) opdb_sb_adds(sb, ", ");
        const char *s = items[i];
        char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
        opdb_sb_addc(sb, q);
        for (; *s; s++) {
            unsigned char c = (unsigned char)*s;
            if (c == '\\' || c == (unsigned char)q) opdb_sb_addc(sb, '\\'), opdb_sb_addc(sb, (char)c);
            else if (c == '\n') opdb_sb_adds(sb, "\\n");
            else if (c == '\r') opdb_sb_adds(sb, "\\r");
            else if (c == '\t') opdb_sb_adds(sb, "\\t");
            else if (c < 0x20 || c == 0x7f) opdb_sb_addf(sb, "\\x%02x", c);
            else opdb_sb_addc(sb, (char)c);
        }
        opdb_sb_addc(sb, q);
    }
    opdb_sb_addc(sb, ']');
}

static void json_counts(opdb_json *j, const size_t v[4]) {
    static const char *const keys[4] = {"candidates", "after_memory_filter", "after_dedup", "to_append"};
    for (int k = 0; k < 4; k++) {
        opdb_json_key(j, keys[k]);
        opdb_json_int(j, (long long)v[k]);
    }
}

/* The coverage table (text) of the target models. */
static void print_coverage(const grid_run *R) {
    FILE *out = R->o->out;
    fprintf(out, "Coverage of the target models (distinct shapes within the memory budget; measured: a row with a "
                 "duration; pending: a row without one):\n");
    fprintf(out, "%-32s %-32s %10s %10s %10s %10s\n", "model", "operator", "shapes", "measured", "pending", "new");
    for (size_t i = 0; i < R->ncov; i++) {
        const grid_cov *c = &R->cov[i];
        fprintf(out, "%-32s %-32s %10zu %10zu %10zu %10zu\n", c->model->hf, c->op, c->shapes, c->measured, c->pending,
                c->fresh);
    }
}

static void print_plan_json(const grid_run *R, char **files, size_t nfiles, const grid_file_result *res) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_json j;
    opdb_json_init(&j, &sb);
    size_t tot[4] = {0};
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "files");
    opdb_json_begin_array(&j);
    for (size_t i = 0; i < nfiles; i++) {
        const grid_file_result *r = &res[i];
        size_t v[4] = {r->candidates, r->after_memory, r->after_dedup, r->appended};
        for (int k = 0; k < 4; k++) tot[k] += v[k];
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "file");
        opdb_json_string(&j, files[i]);
        opdb_json_key(&j, "skipped");
        if (r->skip_reason) opdb_json_string(&j, r->skip_reason);
        else opdb_json_null(&j);
        json_counts(&j, v);
        opdb_json_end_object(&j);
    }
    opdb_json_end_array(&j);
    opdb_json_key(&j, "total");
    opdb_json_begin_object(&j);
    json_counts(&j, tot);
    opdb_json_end_object(&j);
    opdb_json_key(&j, "coverage"); /* null: no --target-models */
    if (R->coverage) {
        opdb_json_begin_array(&j);
        for (size_t i = 0; i < R->ncov; i++) {
            const grid_cov *c = &R->cov[i];
            opdb_json_begin_object(&j);
            opdb_json_key(&j, "model");
            opdb_json_string(&j, c->model->hf);
            opdb_json_key(&j, "operator");
            opdb_json_string(&j, c->op);
            opdb_json_key(&j, "file");
            opdb_json_string(&j, c->file);
            static const char *const keys[4] = {"shapes", "measured", "pending", "new"};
            size_t v[4] = {c->shapes, c->measured, c->pending, c->fresh};
            for (int k = 0; k < 4; k++) {
                opdb_json_key(&j, keys[k]);
                opdb_json_int(&j, (long long)v[k]);
            }
            opdb_json_end_object(&j);
        }
        opdb_json_end_array(&j);
    } else {
        opdb_json_null(&j);
    }
    opdb_json_end_object(&j);
    fprintf(R->o->out, "%s\n", sb.p);
    opdb_sb_free(&sb);
}

static void print_plan(const grid_run *R, char **files, size_t nfiles, const grid_file_result *res) {
    const opdb_grid_opts *o = R->o;
    if (o->json) {
        print_plan_json(R, files, nfiles, res);
        return;
    }
    size_t tot[4] = {0};
    fprintf(o->out, "%-48s %12s %12s %12s %12s\n", "file", "candidates", "memory_ok", "new", "to_append");
    for (size_t i = 0; i < nfiles; i++) {
        const grid_file_result *r = &res[i];
        size_t v[4] = {r->candidates, r->after_memory, r->after_dedup, r->appended};
        for (int k = 0; k < 4; k++) tot[k] += v[k];
        const char *name = opdb_path_basename(files[i]);
        if (r->skip_reason) fprintf(o->out, "%-48s skipped: %s\n", name, r->skip_reason);
        else fprintf(o->out, "%-48s %12zu %12zu %12zu %12zu\n", name, v[0], v[1], v[2], v[3]);
    }
    fprintf(o->out, "%-48s %12zu %12zu %12zu %12zu\n", "total", tot[0], tot[1], tot[2], tot[3]);
    if (R->coverage) print_coverage(R);
}

static int resolve_models(grid_run *X, opdb_strbuf *names_repr, opdb_err *err) {
    char **names = NULL;
    size_t n = 0;
    if (X->o->target_models) {
        const char *s = X->o->target_models;
        while (*s) {
            const char *e = strchr(s, ',');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            opdb_span it = opdb_py_strip(opdb_span_make(s, len));
            if (it.n) {
                names = opdb_xrealloc(names, (n + 1) * sizeof *names);
                names[n] = opdb_xmalloc(it.n + 1);
                memcpy(names[n], it.p, it.n);
                names[n++][it.n] = '\0';
            }
            s += len + (e ? 1 : 0);
        }
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const grid_model *m = grid_model_find(names[i]);
        if (!m) {
            rc = opdb_fail(err, OPDB_ERR_USAGE,
                           "unknown model '%s' (known: deepseek-ai/DeepSeek-V3, Qwen/Qwen3-32B, "
                           "meta-llama/Meta-Llama-3-70B, zai-org/GLM-5.1, zai-org/GLM-5.2 and their short names)",
                           names[i]);
            break;
        }
        if (X->nmodels == 16) {
            rc = opdb_fail(err, OPDB_ERR_USAGE, "--target-models: at most 16 models");
            break;
        }
        X->models[X->nmodels++] = m; /* a name given twice counts twice, as in the original's list */
    }
    /* the reference prints Python's repr of the list; opdb plain names */
    if (n && X->o->quirks) list_repr(names_repr, names, n);
    else if (X->o->quirks) opdb_sb_adds(names_repr, "ALL (full grid)");
    for (size_t i = 0; i < n && !X->o->quirks; i++) opdb_sb_addf(names_repr, "%s%s", i ? ", " : "", names[i]);
    if (!n && !X->o->quirks) opdb_sb_adds(names_repr, "all presets (full grid)");
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    if (X->nmodels) {
        memcpy(X->all, X->models, X->nmodels * sizeof *X->all);
        X->nall = X->nmodels;
    } else {
        for (size_t i = 0; i < grid_npresets; i++) X->all[i] = &grid_presets[i];
        X->nall = grid_npresets;
    }
    return rc;
}

static opdb_grid_config *load_config(const opdb_grid_opts *o, opdb_err *err) {
    if (!o->config_path)
        return opdb_grid_config_load(opdb_grid_default_config, opdb_grid_default_config_len, "grid_config.yaml (built-in)", err);
    opdb_strbuf text;
    opdb_sb_init(&text);
    opdb_grid_config *c = NULL;
    if (!opdb_read_file(o->config_path, &text, err)) c = opdb_grid_config_load(text.p, text.n, o->config_path, err);
    opdb_sb_free(&text);
    return c;
}

/* The folders a run writes to: root and every folder below it that holds
 * one of the files, each locked on its own (a nested folder may be another
 * database, whose writers take only its lock).  Taken in path order, as
 * every run does, so that two runs never wait on each other in a cycle. */
typedef struct folder_locks {
    char **dir;
    int *fd;
    size_t n;
} folder_locks;

/* The folder whose lock covers file: its own, or the database folder above
 * when it lies in one of opdb's own subfolders (reports, bench work). */
static char *lock_dir_of(const char *root, const char *file) {
    char *best = opdb_path_parent(file), *a = opdb_xstrdup(best);
    /* climb to root; the topmost own subfolder on the way decides */
    while (strcmp(a, root) != 0 && strcmp(a, ".") != 0 && strcmp(a, "/") != 0) {
        const char *b = opdb_path_basename(a);
        char *up = opdb_path_parent(a);
        if (!strcmp(b, OPDB_REPORTS_DIR) || !strcmp(b, OPDB_BENCH_WORK_DIR)) {
            free(best);
            best = opdb_xstrdup(up);
        }
        free(a);
        a = up;
    }
    free(a);
    return best;
}

static int cmp_dirs(const void *a, const void *b) { return opdb_path_cmp(*(char *const *)a, *(char *const *)b); }

static int lock_folders(folder_locks *L, const char *root, char **files, size_t nfiles, opdb_err *err) {
    L->dir = opdb_xmalloc((nfiles + 1) * sizeof *L->dir);
    L->fd = opdb_xmalloc((nfiles + 1) * sizeof *L->fd);
    L->n = 0;
    L->dir[L->n++] = opdb_xstrdup(root);
    for (size_t i = 0; i < nfiles; i++) L->dir[L->n++] = lock_dir_of(root, files[i]);
    qsort(L->dir, L->n, sizeof *L->dir, cmp_dirs);
    size_t k = 0;
    for (size_t i = 0; i < L->n; i++) {
        if (k && opdb_path_cmp(L->dir[k - 1], L->dir[i]) == 0) free(L->dir[i]);
        else L->dir[k++] = L->dir[i];
    }
    L->n = k;
    for (size_t i = 0; i < L->n; i++) L->fd[i] = -1;
    for (size_t i = 0; i < L->n; i++)
        if ((L->fd[i] = opdb_dir_lock(L->dir[i], err)) < 0) return -1;
    return 0;
}

static void unlock_folders(folder_locks *L) {
    for (size_t i = L->n; i-- > 0;) {
        opdb_dir_unlock(L->fd[i]);
        free(L->dir[i]);
    }
    free(L->dir);
    free(L->fd);
    memset(L, 0, sizeof *L);
}

static int relist(const folder_locks *L, const char *root, char ***files, size_t *nfiles, opdb_err *err) {
    char **now = NULL;
    size_t n = 0;
    if (opdb_find_files(root, keep_csv, NULL, &now, &n, err) < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        char *d = lock_dir_of(root, now[i]);
        bool locked = bsearch(&d, L->dir, L->n, sizeof *L->dir, cmp_dirs) != NULL;
        free(d);
        if (!locked) {
            opdb_fail(err, OPDB_ERR_RUNTIME, "%s: a folder created by another program during this run; nothing was "
                      "changed (run again)", now[i]);
            opdb_free_paths(now, n);
            return -1;
        }
    }
    opdb_free_paths(*files, *nfiles);
    *files = now;
    *nfiles = n;
    return 0;
}

static int grid_run_call(const opdb_grid_opts *o, opdb_err *err) {
    grid_run X;
    memset(&X, 0, sizeof X);
    X.o = o;
    X.simple = o->simple;
    opdb_strbuf names;
    opdb_sb_init(&names);
    char **files = NULL;
    size_t nfiles = 0;
    folder_locks locks = {0};
    int rc = -1;
    bool in_txn = false;
    grid_file_result *res = NULL;
    char *root = opdb_path_normalize(o->root);
    if (!(X.cfg = load_config(o, err))) goto done;
    if (resolve_models(&X, &names, err)) goto done;
    if (!opdb_is_dir(root)) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "Data directory does not exist: %s", root);
        goto done;
    }
    if (opdb_find_files(root, keep_csv, NULL, &files, &nfiles, err) < 0) goto done;
    if (nfiles == 0) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "No CSV files found under: %s", root);
        goto done;
    }
    char *map_path = opdb_path_join(root, "op_mapping.yaml");
    bool have_map = opdb_is_file(map_path);
    int mrc = have_map ? grid_opmap_load(map_path, &X.opmap, err) : 0;
    free(map_path);
    if (!have_map && !o->quirks) /* the reference goes on silently */
        opdb_warn_nothing("%s has no op_mapping.yaml: rows are generated without its operator metadata (zero-cost, "
                          "communication, composite, elementwise and alternate-kernel entries)",
                          root);
    if (mrc) goto done;
    size_t cap = o->rows > 0 ? (size_t)o->rows : 0;
    if (!o->plan && !o->json && o->quirks) {
        fprintf(o->out, "Mode: theory | Target models: %s\n", names.p);
        if (cap) fprintf(o->out, "Config: config.yaml | op_mapping: %s | max_rows/csv: %zu\n", X.opmap.present ? "True" : "False", cap);
        else fprintf(o->out, "Config: config.yaml | op_mapping: %s | max_rows/csv: unlimited\n", X.opmap.present ? "True" : "False");
    } else if (!o->plan && !o->json) {
        fprintf(o->out, "Target models: %s\n", names.p);
        fprintf(o->out, "Configuration: %s; op_mapping.yaml: %s; ", o->config_path ? o->config_path : "built-in",
                X.opmap.present ? "read" : "none");
        if (cap) fprintf(o->out, "at most %zu new rows per CSV file\n", cap);
        else fprintf(o->out, "no cap on new rows per CSV file\n");
    }
    if (o->max_hbm_gb > 0) {
        X.budget = (uint64_t)(o->max_hbm_gb * 1073741824.0);
        if (!o->plan && !o->json) fprintf(o->out, "HBM budget: %.1f GiB per shape row\n", o->max_hbm_gb);
    }
    /* coverage: default mode, and --plan in both modes (the reference prints none) */
    X.coverage = X.nmodels > 0 && (!o->quirks || o->plan);
    if (cap) {
        if (o->have_seed) opdb_pyrandom_seed(&X.rng, o->seed);
        else opdb_pyrandom_seed_entropy(&X.rng);
    }
    if (!o->plan && lock_folders(&locks, root, files, nfiles, err)) goto done;
    /* the files as they are now that no other writer can change them (a
     * writer of a nested folder may have added some while this run waited) */
    if (!o->plan && relist(&locks, root, &files, &nfiles, err)) goto done;
    /* every file appended, or none (the reference appends file by file) */
    in_txn = !o->plan && !o->quirks && opdb_txn_begin(root) == 0;
    if (!o->quirks)
        for (size_t i = 0; i < nfiles; i++)
            if (grid_file_precheck(&X, files[i], err)) goto done;
    res = opdb_xcalloc(nfiles, sizeof *res);
    size_t total = 0, nskipped = 0;
    for (size_t i = 0; i < nfiles; i++) {
        if (grid_file_process(&X, files[i], &res[i], err)) goto done;
        total += res[i].appended;
        if (res[i].skip_reason || res[i].appended == 0) nskipped++;
    }
    if (o->totals) *o->totals = (opdb_grid_totals){total, nfiles, nfiles - nskipped};
    if (o->plan) {
        print_plan(&X, files, nfiles, res);
        rc = 0;
        goto done;
    }
    if (in_txn) {
        in_txn = false;
        if (opdb_txn_end(true, err)) goto done;
    }
    if (o->json) { /* the plan's object, its counts now the rows appended */
        print_plan_json(&X, files, nfiles, res);
        rc = 0;
        goto done;
    }
    if (o->quirks) fprintf(o->out, "Appended %zu rows across %zu CSV files under %s.\n", total, nfiles, root);
    else /* skipped files are not counted as appended to */
        fprintf(o->out, "Appended %zu rows to %zu of %zu CSV files under %s.\n", total, nfiles - nskipped, nfiles, root);
    if (nskipped) {
        if (o->quirks) fprintf(o->out, "Skipped %zu files (no theory generator):\n", nskipped);
        else fprintf(o->out, "Skipped %zu file%s:\n", nskipped, nskipped == 1 ? "" : "s");
        for (size_t i = 0; i < nfiles; i++) {
            if (!res[i].skip_reason && res[i].appended) continue;
            if (o->quirks) fprintf(o->out, "  - %s\n", opdb_path_basename(files[i]));
            else fprintf(o->out, "  - %s (%s)\n", opdb_path_basename(files[i]),
                         res[i].skip_reason ? res[i].skip_reason : "no new rows");
        }
    }
    if (X.coverage) print_coverage(&X);
    rc = 0;
done:
    if (in_txn) opdb_txn_end(false, err);
    unlock_folders(&locks);
    free(res);
    for (size_t i = 0; i < X.ncov; i++) free(X.cov[i].op), free(X.cov[i].file);
    free(X.cov);
    grid_scratch_free(&X);
    opdb_free_paths(files, nfiles);
    grid_opmap_free(&X.opmap);
    opdb_grid_config_free(X.cfg);
    opdb_sb_free(&names);
    free(root);
    return rc;
}

static void grid_defaults(opdb_grid_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_grid_opts, grid_defaults)

int opdb_grid_run(const opdb_grid_opts *o, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_grid_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = grid_run_call(o, err);
    opdb_call_leave(&saved);
    return rc;
}
