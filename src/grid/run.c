/* `opdb grid` run (grid.md §1-§2): discovery, start-up lines, the per-file
 * pipeline (candidates, sampling, slot alignment, memory filter, dedup,
 * order, atomic rewrite under the folder lock) and the summary. */
#include <stdlib.h>
#include <string.h>
#include "grid/grid_opmap.h"
#include "grid/grid_rows.h"
#include "grid/grid_table.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/signature.h"

typedef struct file_result {
    const char *skip_reason;  /* NULL: processed */
    size_t candidates, after_memory, after_dedup, appended;
} file_result;

typedef struct run_ctx {
    const opdb_grid_opts *o;
    opdb_grid_config *cfg;
    grid_opmap opmap;
    const grid_model *models[16];
    size_t nmodels;          /* target models (0: none given) */
    const grid_model *all[16];
    size_t nall;             /* target models or every preset */
    bool have_rng;
    opdb_pyrandom rng;
    uint64_t budget;
} run_ctx;

static bool keep_csv(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    return n >= 4 && !strcmp(name + n - 4, ".csv") && !strstr(name, ".tmp.csv");
}

static void stem_of(const char *path, char *out, size_t cap) {
    const char *b = opdb_path_basename(path);
    size_t n = strlen(b);
    if (n >= 4 && !strcmp(b + n - 4, ".csv")) n -= 4;
    snprintf(out, cap, "%.*s", (int)n, b);
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

/* The override columns a pattern's rows carry (for the up-front check). */
static size_t override_cols(const grid_pattern *p, const char **cols) {
    size_t n = 0;
    if (!p->generator) {
        for (int i = 0; i < 4; i++)
            if (p->over[i]) cols[n++] = grid_override_cols[i];
    } else if (!strcmp(p->generator, "dispatch_ffn_combine")) {
        cols[n++] = "EP Size";
    } else if (!strcmp(p->generator, "split_qkv_rmsnorm_rope")) {
        for (int i = 0; i < 4; i++) cols[n++] = grid_override_cols[i];
    } else if (!strcmp(p->generator, "fused_attention")) {
        cols[n++] = grid_override_cols[0];
        cols[n++] = grid_override_cols[1];
    }
    return n;
}

/* ---- dedup set over signature strings */
typedef struct sigset {
    opdb_hindex ix;
    opdb_arena arena;
    opdb_span *keys;
    size_t n, cap;
} sigset;

static bool sigset_add(sigset *s, const opdb_strbuf *k) {
    uint64_t h = opdb_hash_bytes(k->p, k->n, 0);
    uint32_t idx;
    for (opdb_hprobe p = opdb_hindex_probe(&s->ix, h); opdb_hprobe_next(&p, &idx);)
        if (s->keys[idx].n == k->n && !memcmp(s->keys[idx].p, k->p, k->n)) return false;
    if (s->n == s->cap) s->keys = opdb_xrealloc(s->keys, (s->cap = s->cap ? s->cap * 2 : 1024) * sizeof *s->keys);
    s->keys[s->n] = opdb_span_make(opdb_arena_strndup(&s->arena, k->p, k->n), k->n);
    opdb_hindex_add(&s->ix, h, (uint32_t)s->n);
    s->n++;
    return true;
}

static void sig_of(const grid_table *t, const opdb_span *row, const int *sc, const char *op, opdb_strbuf *out) {
    opdb_span e = opdb_span_make("", 0);
    opdb_sig_cells c = {sc[0] >= 0 ? row[sc[0]] : e, sc[1] >= 0 ? row[sc[1]] : e, sc[2] >= 0 ? row[sc[2]] : e,
                        sc[3] >= 0 ? row[sc[3]] : e, sc[4] >= 0 ? row[sc[4]] : e, sc[5] >= 0 ? row[sc[5]] : e};
    (void)t;
    opdb_signature(&c, op, out);
}

typedef struct new_row {
    size_t cand;
    opdb_span *cells;
    int nin;
    grid_shape in[]; /* nin slots: the sort key */
} new_row;

static int cmp_new(const void *a, const void *b) {
    const new_row *x = *(new_row *const *)a, *y = *(new_row *const *)b;
    int c = grid_cmp_inputs(x->in, x->nin, y->in, y->nin);
    return c ? c : (x->cand < y->cand ? -1 : x->cand > y->cand); /* stable */
}

static int process_file(run_ctx *X, const char *path, file_result *res, opdb_err *err) {
    const opdb_grid_opts *o = X->o;
    memset(res, 0, sizeof *res);
    char kt[1024];
    stem_of(path, kt, sizeof kt);
    const grid_pattern *p = grid_resolve(X->cfg, &X->opmap, kt);
    if (!p) {
        res->skip_reason = "no theory generator";
        return 0;
    }
    grid_table t;
    if (grid_table_load(path, !o->quirks, 0, &t, err)) {
        grid_table_free(&t);
        return -1;
    }
    int c_in = grid_table_col(&t, "Input Shapes");
    if (!t.header || c_in < 0 || t.nrows == 0) {
        res->skip_reason = !t.header ? "empty file" : c_in < 0 ? "no 'Input Shapes' column" : "no data rows";
        grid_table_free(&t);
        return 0;
    }
    if (!strcmp(kt, "FusedInferAttentionScore"))
        for (int i = 0; i < 15; i++) grid_table_add_col(&t, grid_fia_columns[i]);
    const char *need[8];
    size_t nneed = override_cols(p, need);
    for (size_t i = 0; i < nneed; i++)
        if (grid_table_col(&t, need[i]) < 0) {
            opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: no '%s' column, which %s rows need; nothing written to this file",
                      path, need[i], p->name);
            grid_table_free(&t);
            return -1;
        }
    const opdb_span *tmpl = t.rows[0];
    grid_cands cs = {0};
    int rc = 0;
    if (p->generator) grid_generate(p->generator, X->cfg, X->all, X->nall, &cs);
    else rc = grid_expand_template(X->cfg, p, X->nmodels ? X->models : NULL, X->nmodels, !o->quirks, &cs, err);
    if (rc) {
        grid_cands_free(&cs);
        grid_table_free(&t);
        return -1;
    }
    size_t cap = o->rows > 0 ? (size_t)o->rows : 0;
    size_t norder = cs.n, *order = opdb_xmalloc((cs.n ? cs.n : 1) * sizeof *order);
    if (o->quirks && cap && cs.n > cap) {
        opdb_pyrandom_sample(&X->rng, cs.n, cap, order);
        norder = cap;
    } else {
        for (size_t i = 0; i < cs.n; i++) order[i] = i;
    }
    res->candidates = norder;
    /* per-file column roles */
    int c_out = grid_table_col(&t, "Output Shapes");
    int sc[6] = {c_in, grid_table_col(&t, "Input Data Types"), grid_table_col(&t, "Input Formats"), c_out,
                 grid_table_col(&t, "Output Data Types"), grid_table_col(&t, "EP Size")};
    int attr_col[4];
    for (int i = 0; i < 4; i++) attr_col[i] = grid_table_col(&t, grid_override_cols[i]);
    int kin = grid_slot_count(tmpl[c_in]), kout = c_out >= 0 ? grid_slot_count(tmpl[c_out]) : 0;
    int isz[GRID_MAX_SLOTS * 2], osz[GRID_MAX_SLOTS * 2];
    int nisz = sc[1] >= 0 ? grid_dtype_sizes(tmpl[sc[1]], isz, GRID_MAX_SLOTS * 2) : 0;
    int nosz = sc[4] >= 0 ? grid_dtype_sizes(tmpl[sc[4]], osz, GRID_MAX_SLOTS * 2) : 0;
    char *zero = opdb_xmalloc(t.ncols + 1);
    static const char *const copy_cols[] = {"OP State", "Accelerator Core", "Input Data Types", "Output Data Types",
                                            "Input Formats", "Output Formats", "Output Shapes"};
    for (size_t i = 0; i < t.ncols; i++) {
        bool copy = false;
        for (size_t k = 0; k < 7; k++) copy |= !strcmp(t.header[i], copy_cols[k]);
        zero[i] = !copy && (int)i != c_in && grid_zero_column(t.header[i]);
    }
    sigset seen = {0};
    opdb_arena_init(&seen.arena, 1 << 20);
    opdb_strbuf key, cell;
    opdb_sb_init(&key);
    opdb_sb_init(&cell);
    for (size_t r = 0; r < t.nrows; r++) {
        sig_of(&t, t.rows[r], sc, kt, &key);
        sigset_add(&seen, &key);
    }
    new_row **nrows = NULL;
    size_t nnew = 0, newcap = 0, dropped = 0;
    for (size_t oi = 0; oi < norder; oi++) {
        size_t ci = order[oi];
        grid_shape in[GRID_MAX_SLOTS], out[GRID_MAX_SLOTS];
        int nin, nout;
        grid_cands_get(&cs, ci, in, &nin, out, &nout);
        for (; nin < kin && nin < GRID_MAX_SLOTS; nin++) in[nin].nd = 0;
        for (; nout < kout && nout < GRID_MAX_SLOTS; nout++) out[nout].nd = 0;
        const grid_over *ov = cs.over + cs.c[ci].over_off;
        int nov = cs.c[ci].nover;
        for (int a = 0; a < 4; a++) {
            opdb_span attr = attr_col[a] >= 0 ? tmpl[attr_col[a]] : opdb_span_make(NULL, 0);
            bool have = attr_col[a] >= 0;
            for (int k = 0; k < nov; k++)
                if (!strcmp(ov[k].col, grid_override_cols[a])) attr = opdb_span_cstr(ov[k].val), have = true;
            if (have) grid_clear_absent(a < 2 ? in : out, a < 2 ? nin : nout, attr);
        }
        if (X->budget && grid_row_bytes(in, nin, out, nout, isz, nisz, osz, nosz) > X->budget) {
            dropped++;
            continue;
        }
        opdb_span *cells = opdb_arena_alloc(&seen.arena, t.ncols * sizeof *cells);
        for (size_t i = 0; i < t.ncols; i++) cells[i] = zero[i] ? opdb_span_make("0", 1) : tmpl[i];
        opdb_sb_clear(&cell);
        grid_shape_cell(&cell, in, nin);
        cells[c_in] = opdb_span_make(opdb_arena_strndup(&seen.arena, cell.p ? cell.p : "", cell.n), cell.n);
        if (c_out >= 0) {
            opdb_sb_clear(&cell);
            grid_shape_cell(&cell, out, nout);
            cells[c_out] = opdb_span_make(opdb_arena_strndup(&seen.arena, cell.p ? cell.p : "", cell.n), cell.n);
        }
        for (int k = 0; k < nov; k++) {
            int col = grid_table_col(&t, ov[k].col);
            if (col >= 0) cells[col] = opdb_span_cstr(opdb_arena_strndup(&seen.arena, ov[k].val, strlen(ov[k].val)));
        }
        sig_of(&t, cells, sc, kt, &key);
        if (!sigset_add(&seen, &key)) continue;
        if (nnew == newcap) nrows = opdb_xrealloc(nrows, (newcap = newcap ? newcap * 2 : 256) * sizeof *nrows);
        new_row *nr = opdb_arena_alloc(&seen.arena, sizeof *nr + (size_t)nin * sizeof nr->in[0]);
        nr->cand = oi;
        nr->cells = cells;
        nr->nin = nin;
        memcpy(nr->in, in, (size_t)nin * sizeof *in);
        nrows[nnew++] = nr;
    }
    res->after_memory = norder - dropped;
    res->after_dedup = nnew;
    if (dropped) {
        char b[64];
        grid_fmt_budget(X->budget, b, sizeof b);
        fflush(o->out);
        fprintf(stderr, "\n[MEMORY] %s: filtered %zu/%zu rows exceeding %s HBM budget\n", opdb_path_basename(path),
                dropped, norder, b);
    }
    if (!o->quirks && cap && nnew > cap) { /* opdb: sample among rows that will really be appended */
        size_t *pick = opdb_xmalloc(cap * sizeof *pick);
        opdb_pyrandom_sample(&X->rng, nnew, cap, pick);
        new_row **kept = opdb_xmalloc(cap * sizeof *kept);
        for (size_t i = 0; i < cap; i++) kept[i] = nrows[pick[i]], kept[i]->cand = i;
        free(nrows);
        free(pick);
        nrows = kept;
        nnew = cap;
    }
    res->appended = nnew;
    if (nnew) qsort(nrows, nnew, sizeof *nrows, cmp_new);
    if (!o->plan) {
        opdb_atomic_file af;
        rc = opdb_atomic_open(&af, path, err);
        if (!rc) {
            opdb_span *hdr = opdb_xmalloc(t.ncols * sizeof *hdr);
            for (size_t i = 0; i < t.ncols; i++) hdr[i] = opdb_span_cstr(t.header[i]);
            opdb_csv_write_record(&af.buf, hdr, t.ncols);
            free(hdr);
            for (size_t r = 0; r < t.nrows + nnew && !rc; r++) {
                opdb_csv_write_record(&af.buf, r < t.nrows ? t.rows[r] : nrows[r - t.nrows]->cells, t.ncols);
                if (af.buf.n > (1u << 20)) rc = opdb_atomic_flush(&af);
            }
            if (rc) {
                opdb_atomic_abort(&af);
                opdb_fail(err, OPDB_ERR_RUNTIME, "%s: write failed", path);
            } else {
                rc = opdb_atomic_commit(&af, err);
            }
        }
    }
    free(nrows);
    free(order);
    free(zero);
    opdb_sb_free(&key);
    opdb_sb_free(&cell);
    opdb_hindex_free(&seen.ix);
    free(seen.keys);
    opdb_arena_free(&seen.arena);
    grid_cands_free(&cs);
    grid_table_free(&t);
    return rc;
}

/* opdb's default: before any file is rewritten, every file that will get
 * rows has the columns those rows need (a DispatchFFNCombine CSV without
 * `EP Size` made the reference crash half-way through a database). */
static int precheck_file(run_ctx *X, const char *path, opdb_err *err) {
    char kt[1024];
    stem_of(path, kt, sizeof kt);
    const grid_pattern *p = grid_resolve(X->cfg, &X->opmap, kt);
    if (!p) return 0;
    const char *need[8];
    size_t nneed = override_cols(p, need);
    if (!nneed) return 0;
    grid_table t;
    int rc = grid_table_load(path, true, 1, &t, err);
    if (!rc && t.header && grid_table_col(&t, "Input Shapes") >= 0 && t.nrows > 0) {
        if (!strcmp(kt, "FusedInferAttentionScore"))
            for (int i = 0; i < 15; i++) grid_table_add_col(&t, grid_fia_columns[i]);
        for (size_t i = 0; i < nneed && !rc; i++)
            if (grid_table_col(&t, need[i]) < 0)
                rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: no '%s' column, which %s rows need; no file was changed",
                               path, need[i], p->name);
    }
    grid_table_free(&t);
    return rc;
}

static void print_plan(const opdb_grid_opts *o, char **files, size_t nfiles, const file_result *res) {
    size_t tot[4] = {0};
    if (o->json) fprintf(o->out, "{\"files\": [");
    else fprintf(o->out, "%-48s %12s %12s %12s %12s\n", "file", "candidates", "memory_ok", "new", "to_append");
    for (size_t i = 0; i < nfiles; i++) {
        const file_result *r = &res[i];
        size_t v[4] = {r->candidates, r->after_memory, r->after_dedup, r->appended};
        for (int k = 0; k < 4; k++) tot[k] += v[k];
        const char *name = opdb_path_basename(files[i]);
        if (o->json) {
            opdb_strbuf sb;
            opdb_sb_init(&sb);
            for (const char *c = files[i]; *c; c++) {
                if (*c == '"' || *c == '\\') opdb_sb_addc(&sb, '\\');
                if ((unsigned char)*c < 0x20) opdb_sb_addf(&sb, "\\u%04x", (unsigned char)*c);
                else opdb_sb_addc(&sb, *c);
            }
            fprintf(o->out, "%s{\"file\": \"%s\", \"skipped\": %s%s%s, \"candidates\": %zu, \"after_memory_filter\": %zu, "
                            "\"after_dedup\": %zu, \"to_append\": %zu}",
                    i ? ", " : "", sb.p ? sb.p : "", r->skip_reason ? "\"" : "", r->skip_reason ? r->skip_reason : "null",
                    r->skip_reason ? "\"" : "", v[0], v[1], v[2], v[3]);
            opdb_sb_free(&sb);
        } else if (r->skip_reason) {
            fprintf(o->out, "%-48s skipped: %s\n", name, r->skip_reason);
        } else {
            fprintf(o->out, "%-48s %12zu %12zu %12zu %12zu\n", name, v[0], v[1], v[2], v[3]);
        }
    }
    if (o->json)
        fprintf(o->out, "], \"total\": {\"candidates\": %zu, \"after_memory_filter\": %zu, \"after_dedup\": %zu, "
                        "\"to_append\": %zu}}\n", tot[0], tot[1], tot[2], tot[3]);
    else fprintf(o->out, "%-48s %12zu %12zu %12zu %12zu\n", "total", tot[0], tot[1], tot[2], tot[3]);
}

static int resolve_models(run_ctx *X, opdb_strbuf *names_repr, opdb_err *err) {
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
        bool dup = false;
        for (size_t k = 0; k < X->nmodels; k++) dup |= X->models[k] == m;
        if (!dup && X->nmodels < 16) X->models[X->nmodels++] = m;
    }
    if (n) list_repr(names_repr, names, n);
    else opdb_sb_adds(names_repr, "ALL (full grid)");
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

int opdb_grid_run(const opdb_grid_opts *o, opdb_err *err) {
    run_ctx X;
    memset(&X, 0, sizeof X);
    X.o = o;
    opdb_strbuf names;
    opdb_sb_init(&names);
    char **files = NULL;
    size_t nfiles = 0;
    int lock = -1, rc = -1;
    bool in_txn = false;
    file_result *res = NULL;
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
    int mrc = opdb_is_file(map_path) ? grid_opmap_load(map_path, &X.opmap, err) : 0;
    free(map_path);
    if (mrc) goto done;
    size_t cap = o->rows > 0 ? (size_t)o->rows : 0;
    if (!o->plan) {
        fprintf(o->out, "Mode: theory | Target models: %s\n", names.p);
        if (cap) fprintf(o->out, "Config: config.yaml | op_mapping: %s | max_rows/csv: %zu\n", X.opmap.present ? "True" : "False", cap);
        else fprintf(o->out, "Config: config.yaml | op_mapping: %s | max_rows/csv: unlimited\n", X.opmap.present ? "True" : "False");
    }
    if (o->max_hbm_gb > 0) {
        X.budget = (uint64_t)(o->max_hbm_gb * 1073741824.0);
        if (!o->plan) fprintf(o->out, "HBM budget: %.1f GiB per shape row\n", o->max_hbm_gb);
    }
    if (cap) {
        X.have_rng = true;
        if (o->have_seed) opdb_pyrandom_seed(&X.rng, o->seed);
        else opdb_pyrandom_seed_entropy(&X.rng);
    }
    if (!o->plan && (lock = opdb_dir_lock(root, err)) < 0) goto done;
    /* every file appended, or none (the reference appends file by file) */
    in_txn = !o->plan && !o->quirks && opdb_txn_begin(root) == 0;
    if (!o->quirks)
        for (size_t i = 0; i < nfiles; i++)
            if (precheck_file(&X, files[i], err)) goto done;
    res = opdb_xcalloc(nfiles, sizeof *res);
    size_t total = 0, nskipped = 0;
    for (size_t i = 0; i < nfiles; i++) {
        if (process_file(&X, files[i], &res[i], err)) goto done;
        total += res[i].appended;
        if (res[i].skip_reason || res[i].appended == 0) nskipped++;
    }
    if (o->plan) {
        print_plan(o, files, nfiles, res);
        rc = 0;
        goto done;
    }
    if (in_txn) {
        in_txn = false;
        if (opdb_txn_end(true, err)) goto done;
    }
    fprintf(o->out, "Appended %zu rows across %zu CSV files under %s.\n", total, nfiles, root);
    if (nskipped) {
        fprintf(o->out, "Skipped %zu files (no theory generator):\n", nskipped);
        for (size_t i = 0; i < nfiles; i++) {
            if (!res[i].skip_reason && res[i].appended) continue;
            if (o->quirks) fprintf(o->out, "  - %s\n", opdb_path_basename(files[i]));
            else fprintf(o->out, "  - %s (%s)\n", opdb_path_basename(files[i]),
                         res[i].skip_reason ? res[i].skip_reason : "no new rows");
        }
    }
    rc = 0;
done:
    if (in_txn) opdb_txn_end(false, err);
    if (lock >= 0) opdb_dir_unlock(lock);
    free(res);
    opdb_free_paths(files, nfiles);
    grid_opmap_free(&X.opmap);
    opdb_grid_config_free(X.cfg);
    opdb_sb_free(&names);
    free(root);
    return rc;
}
