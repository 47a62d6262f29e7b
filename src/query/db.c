/* Opening a database folder: the mapping at open, each kernel table on first
 * use (once, under its own guard), with every row's cells parsed once on the
 * first lookup that needs the table (an eager open only reads the files). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/pystr.h"
#include "core/alloc.h"
#include "query/query_internal.h"
#include "core/call.h"

const char *const q_lat_names[3] = {"Average Duration(us)", "Profiling Average Duration(us)", "Duration(us)"};

static void qdb_defaults(opdb_qdb_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->interpolation = true;
    o->result_cache = OPDB_QCACHE_DEFAULT;
    o->line_memo = OPDB_LINE_MEMO_DEFAULT;
}

OPDB_OPTS_INIT_SIZED(opdb_qdb_opts, qdb_defaults)

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

static char *join3(const char *a, const char *b, const char *c) {
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *o = opdb_xmalloc(n);
    snprintf(o, n, "%s%s%s", a, b, c);
    return o;
}

static void free_table(q_ktable *t);
static q_ktable *table_get(const opdb_qdb *db, const char *kt, bool rows);
static void snap_free(opdb_qdb *db);

static opdb_qdb *qdb_open(const char *dir, const opdb_qdb_opts *o, opdb_err *err) {
    opdb_qdb_opts def;
    if (!o) {
        opdb_qdb_opts_init(&def);
        o = &def;
    }
    if (!dir || !is_dir(dir) || access(dir, R_OK | X_OK) != 0) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "database folder is missing or unreadable: %s", dir ? dir : "(null)");
        return NULL;
    }
    opdb_qdb *db = opdb_xcalloc(1, sizeof *db);
    size_t dn = strlen(dir);
    while (dn > 1 && dir[dn - 1] == '/') dn--;
    db->dir = opdb_xmalloc(dn + 1);
    memcpy(db->dir, dir, dn);
    db->dir[dn] = 0;
    /* options added later are read only when the caller's struct has them */
    db->cfg.tp = o->tp_size;
    db->cfg.ep = o->ep_size;
    if (o->grid && o->grid_n) {
        db->cfg.grid = opdb_xmalloc(o->grid_n * sizeof *db->cfg.grid);
        memcpy(db->cfg.grid, o->grid, o->grid_n * sizeof *db->cfg.grid);
        db->cfg.grid_n = o->grid_n;
    }
    db->cfg.sp = o->sequence_parallel;
    db->cfg.interp = o->interpolation;
    db->cfg.quirks = o->reference_quirks;
    db->eager = o->eager_load;
    db->warn = o->warn;
    db->warn_ctx = o->warn_ctx;
    /* options added later are read only when the caller's struct has them */
    if (o->size >= offsetof(opdb_qdb_opts, result_cache) + sizeof o->result_cache)
        db->cache = q_cache_new(o->result_cache);
    if (o->size >= offsetof(opdb_qdb_opts, read_files) + sizeof o->read_files) db->read_files = o->read_files;
    db->line_memo = o->size >= offsetof(opdb_qdb_opts, line_memo) + sizeof o->line_memo ? o->line_memo
                                                                                         : OPDB_LINE_MEMO_DEFAULT;
    db->hitmap = q_hitmap_new(Q_HITMAP_ENTRIES);
    db->ipmap = ip_omap_new(IP_OMAP_ENTRIES);
    opdb_arena_init(&db->arena, 1 << 16);
    pthread_mutex_init(&db->tables_mu, NULL);
    q_shape_store_init(&db->shapes);
    if (q_mapping_load(db, err) < 0) {
        opdb_qdb_close(db);
        return NULL;
    }
    if (db->eager) {
        /* every CSV of the folder (and of the communication folder) now */
        const char *dirs[2] = {db->dir, db->map.comm_dir};
        for (int k = 0; k < 2; k++) {
            if (!dirs[k]) continue;
            DIR *d = opendir(dirs[k]);
            if (!d) continue;
            for (struct dirent *de; (de = readdir(d));) {
                size_t l = strlen(de->d_name);
                if (l <= 4 || strcmp(de->d_name + l - 4, ".csv") != 0 || de->d_name[0] == '.') continue;
                char *kt = opdb_xmalloc(l - 3);
                memcpy(kt, de->d_name, l - 4);
                kt[l - 4] = 0;
                /* the communication folder only holds tables for hcom_ kernels */
                if (k == 0 || strncmp(kt, "hcom_", 5) == 0) table_get(db, kt, false);
                free(kt);
            }
            closedir(d);
        }
    }
    return db;
}

/* Out of memory while opening: NULL with err (OPDB_ERR_NOMEM); the half
 * built handle is not freed. */
opdb_qdb *opdb_qdb_open(const char *dir, const opdb_qdb_opts *o, opdb_err *err) {
    opdb_call_scope saved = opdb_call_enter(NULL);
    OPDB_CALL_GUARD_THEN(saved, err, return NULL);
    opdb_qdb *db = qdb_open(dir, o, err);
    opdb_call_leave(&saved);
    return db;
}

void opdb_qdb_close(opdb_qdb *db) {
    if (!db) return;
    if (db->calib_free) db->calib_free(db); /* set by calib.c when it loaded a calibration */
    for (size_t i = 0; i < db->ntables; i++) free_table(db->tables[i]);
    free(db->tables);
    snap_free(db);
    q_cache_free(db->cache);
    q_hitmap_free(db->hitmap);
    ip_omap_free(db->ipmap);
    opdb_hindex_free(&db->tables_ix);
    pthread_mutex_destroy(&db->tables_mu);
    opdb_arena_free(&db->arena);
    q_shape_store_free(&db->shapes);
    free(db->map.comm_dir);
    opdb_hindex_free(&db->map.ops_ix);
    free(db->cfg.grid);
    free(db->dir);
    free(db);
}

void opdb_qdb_skipped(const opdb_qdb *db, size_t *rows, size_t *files) {
    *rows = atomic_load(&((opdb_qdb *)db)->skipped_rows);
    *files = atomic_load(&((opdb_qdb *)db)->skipped_files);
}

/* ---- per-row preparation */

/* the items of a list cell's text t (';'-separated, stripped, empty items dropped) */
static q_list *parse_list(opdb_arena *a, opdb_span t) {
    t = opdb_py_strip_chars(opdb_py_strip(t), "\"");
    size_t parts = 1;
    for (size_t i = 0; i < t.n; i++) parts += t.p[i] == ';';
    q_list *l = opdb_arena_alloc(a, sizeof *l);
    l->s = opdb_arena_alloc(a, parts * sizeof *l->s);
    l->len = opdb_arena_alloc(a, parts * sizeof *l->len);
    uint32_t k = 0;
    size_t i = 0;
    while (i <= t.n) {
        size_t j = i;
        while (j < t.n && t.p[j] != ';') j++;
        opdb_span it = opdb_py_strip(opdb_span_make(t.p + i, j - i));
        i = j + 1;
        if (!it.n) continue;
        l->s[k] = opdb_arena_strndup(a, it.p, it.n);
        l->len[k++] = (uint32_t)it.n;
    }
    l->n = k;
    return l;
}

/* appends the shapes of a row's cell to b (a missing column reads as "") */
static bool parse_shapes_cell(q_shape_buf *b, db_pass *t, size_t row, int col) {
    if (col < 0) return true;
    char buf[48];
    bool stable;
    opdb_span s = db_pass_str(t, row, col, buf, sizeof buf, &stable);
    return q_shape_buf_parse(b, s.p, s.n);
}

/* What the table's latency override says for every row: read once a table. */
typedef struct lat_rule {
    const qv *env;               /* the core envelope's ratio, or NULL */
    bool prefer_prof;            /* prefer_profiling_rows */
} lat_rule;

static lat_rule lat_rule_of(const qv *ov) {
    lat_rule L;
    L.env = qv_get(qv_get(ov, "profiling_core_envelope_fallback"), "max_duration_to_core_ratio");
    if (L.env && L.env->kind == QV_NULL) L.env = NULL;
    L.prefer_prof = qv_truthy(qv_get(ov, "prefer_profiling_rows"));
    return L;
}

static void row_latency(q_ktable *kt, db_pass *t, const lat_rule *L, size_t r, q_row *row) {
    int order[4] = {kt->c_pref, kt->c_lat[0], kt->c_lat[1], kt->c_lat[2]};
    row->lat = 0;
    row->latcol = QLAT_NONE;
    for (int k = 0; k < 4; k++) {
        int col = order[k];
        if (col < 0) continue;
        bool dup = false;
        for (int j = 0; j < k; j++) dup |= order[j] == col;
        if (dup) continue;
        double v;
        if (!db_cell_num(db_pass_cell(t, r, col), &v)) continue;
        if (isfinite(v) && v > 0) {
            row->lat = v;
            for (int j = 0; j < 3; j++)
                if (kt->c_lat[j] == col) row->latcol = (uint8_t)j;
            break;
        }
    }
    if (row->latcol == QLAT_NONE) return;
    /* the core envelope of mixed-core rows measured by the profiler */
    const qv *env = L->env;
    if (env && row->latcol == QLAT_PROF_AVG && kt->c_core >= 0) {
        char buf[48];
        opdb_span core = opdb_py_strip(db_cell_text(db_pass_cell(t, r, kt->c_core), buf, sizeof buf));
        double a, b, th = NAN;
        if (env->kind == QV_INT) th = (double)env->i;
        else if (env->kind == QV_FLOAT) th = env->f;
        else if (env->kind == QV_BOOL) th = env->b;
        else if (env->kind == QV_STR) opdb_py_float(env->s, env->n, &th);
        if (opdb_span_eq_cstr(core, "MIX_AIC") && kt->c_aic >= 0 && kt->c_aiv >= 0 &&
            db_cell_num(db_pass_cell(t, r, kt->c_aic), &a) && db_cell_num(db_pass_cell(t, r, kt->c_aiv), &b) &&
            isfinite(a) && a > 0 && isfinite(b) && b > 0 && isfinite(th) && th > 0) {
            double e = a > b ? a : b;
            if (row->lat / e > th) {
                row->lat = e;
                row->latcol = QLAT_ENVELOPE;
            }
        }
    }
    if (L->prefer_prof) row->prio = row->latcol == QLAT_PROF_AVG ? 0 : 1;
    else row->prio = row->latcol == QLAT_ENVELOPE ? 3 : row->latcol;
}

/* A table repeats its dtype and format lists on every row: rows with the
 * same cell text share one parsed list. */
typedef struct memo_ent {
    const char *key;             /* the text (copied into the arena when it would not last) */
    uint32_t keyn;
    uint64_t h;
    const q_list *l;
} memo_ent;
typedef struct list_memo {
    memo_ent *e;
    size_t cap, n;
} list_memo;

/* The entry of a cell's text t (stable: t lives as long as the memo), valid
 * until the next call. */
static const memo_ent *memo_list(list_memo *m, opdb_arena *a, opdb_span t, bool stable) {
    if (!t.p) t = opdb_span_make("", 0);
    if (2 * (m->n + 1) > m->cap) { /* grow: open addressing, at most half full */
        size_t cap = m->cap ? m->cap * 2 : 64;
        list_memo g = {opdb_xzeroed(cap, sizeof *m->e), cap, 0};
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->e[i].key) continue;
            size_t j = m->e[i].h & (cap - 1);
            while (g.e[j].key) j = (j + 1) & (cap - 1);
            g.e[j] = m->e[i];
            g.n++;
        }
        free(m->e);
        *m = g;
    }
    uint64_t h = opdb_hash_bytes(t.p, t.n, 1);
    size_t j = h & (m->cap - 1);
    while (m->e[j].key && !(m->e[j].h == h && m->e[j].keyn == t.n && memcmp(m->e[j].key, t.p, t.n) == 0))
        j = (j + 1) & (m->cap - 1);
    if (!m->e[j].key) {
        m->e[j].l = parse_list(a, t);
        m->e[j].key = stable ? t.p : opdb_arena_strndup(a, t.p, t.n);
        m->e[j].keyn = (uint32_t)t.n;
        m->e[j].h = h;
        m->n++;
    }
    return &m->e[j];
}

/* Rows repeat their three lists together: each distinct triple is kept once. */
typedef struct triple_memo {
    uint32_t *slot;              /* index + 1 into the table's rlists; 0 = empty */
    size_t cap, n, capl;
} triple_memo;

static uint64_t triple_hash(const q_list *a, const q_list *b, const q_list *c) {
    const q_list *k[3] = {a, b, c};
    return opdb_hash_bytes(k, sizeof k, 5);
}

static uint32_t memo_triple(triple_memo *m, q_ktable *kt, const q_list *a, const q_list *b, const q_list *c) {
    if (2 * (m->n + 1) > m->cap) { /* grow: open addressing, at most half full */
        size_t cap = m->cap ? m->cap * 2 : 16;
        uint32_t *g = opdb_xzeroed(cap, sizeof *g);
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->slot[i]) continue;
            const q_rlists *l = &kt->rlists[m->slot[i] - 1];
            size_t j = triple_hash(l->in_dt, l->in_fmt, l->out_dt) & (cap - 1);
            while (g[j]) j = (j + 1) & (cap - 1);
            g[j] = m->slot[i];
        }
        free(m->slot);
        m->slot = g;
        m->cap = cap;
    }
    size_t j = triple_hash(a, b, c) & (m->cap - 1);
    for (; m->slot[j]; j = (j + 1) & (m->cap - 1)) {
        const q_rlists *l = &kt->rlists[m->slot[j] - 1];
        if (l->in_dt == a && l->in_fmt == b && l->out_dt == c) return m->slot[j] - 1;
    }
    OPDB_ALLOC_GROW(kt->rlists, m->n + 1, m->capl);
    kt->rlists[m->n] = (q_rlists){a, b, c};
    m->slot[j] = (uint32_t)++m->n; /* at most one triple a row: rows are counted in 32 bits */
    return (uint32_t)(m->n - 1);
}

/* A list column read row after row: rows repeat the previous row's text
 * most of the time, which then needs no hash. */
typedef struct list_col {
    int col;
    const char *key;             /* the previous row's text, as the memo keeps it */
    size_t keyn;
    const q_list *l;
} list_col;

static const q_list *col_list(list_col *c, list_memo *m, opdb_arena *a, db_pass *P, size_t r) {
    char buf[48];
    bool stable = true;
    opdb_span t = c->col >= 0 ? db_pass_str(P, r, c->col, buf, sizeof buf, &stable) : opdb_span_make("", 0);
    if (c->l && t.n == c->keyn && memcmp(t.p, c->key, t.n) == 0) return c->l;
    const memo_ent *e = memo_list(m, a, t, stable);
    /* the memo's own key: the text itself may not outlive the call */
    c->key = e->key;
    c->keyn = e->keyn;
    return c->l = e->l;
}

static void prepare(const opdb_qdb *db, q_ktable *kt) {
    db_table *t = &kt->t;
    kt->c_in_shapes = db_table_col(t, "Input Shapes");
    kt->c_in_dt = db_table_col(t, "Input Data Types");
    kt->c_in_fmt = db_table_col(t, "Input Formats");
    kt->c_out_shapes = db_table_col(t, "Output Shapes");
    kt->c_out_dt = db_table_col(t, "Output Data Types");
    kt->c_core = db_table_col(t, "Accelerator Core");
    kt->c_aic = db_table_col(t, "Profiling Average aicore_time(us)");
    kt->c_aiv = db_table_col(t, "Profiling Average aiv_time(us)");
    kt->c_pref = -1;
    for (int j = 0; j < 3; j++) {
        kt->c_lat[j] = db_table_col(t, q_lat_names[j]);
        if (kt->c_pref < 0 && kt->c_lat[j] >= 0) kt->c_pref = kt->c_lat[j];
    }
    bool bad = false;
    const qv *ov = q_override(db->map.ov_lat, kt->kernel, &bad);
    kt->lat_ov_bad = bad;
    lat_rule L = lat_rule_of(ov);
    list_col lc[3] = {{kt->c_in_dt, NULL, 0, NULL}, {kt->c_in_fmt, NULL, 0, NULL}, {kt->c_out_dt, NULL, 0, NULL}};
    const q_list *prev[3] = {NULL, NULL, NULL};
    uint32_t prev_lists = 0;
    kt->rows = opdb_xcalloc(t->nrows ? t->nrows : 1, sizeof *kt->rows);
    list_memo memo = {NULL, 0, 0};
    triple_memo tm = {NULL, 0, 0, 0};
    q_shape_store *ss = (q_shape_store *)&db->shapes; /* internally synchronised */
    q_shape_buf sb = {0};
    size_t nshp = 0, capshp = 0;
    kt->ss = ss;
    /* the rows keep what lookups read: the columns typed for this pass go with it */
    db_pass P;
    db_pass_begin(&P, t);
    for (size_t r = 0; r < t->nrows; r++) {
        q_row *row = &kt->rows[r];
        row_latency(kt, &P, &L, r, row);
        sb.n = sb.nd = 0;
        bool in_ok = parse_shapes_cell(&sb, &P, r, kt->c_in_shapes);
        size_t nin = sb.n;
        bool out_ok = parse_shapes_cell(&sb, &P, r, kt->c_out_shapes);
        size_t nout = sb.n - nin;
        bool many = nin >= Q_ROW_NMANY || nout >= Q_ROW_NMANY;
        /* the ids are found by 32-bit offsets */
        if (nshp + sb.n + 2 > UINT32_MAX) opdb_die_oom(SIZE_MAX);
        OPDB_ALLOC_GROW(kt->shp, nshp + sb.n + 2, capshp);
        if (many) {
            kt->shp[nshp++] = (uint32_t)nin;
            kt->shp[nshp++] = (uint32_t)nout;
        }
        row->shp = (uint32_t)nshp;
        row->nin16 = many ? Q_ROW_NMANY : (uint16_t)nin;
        row->nout16 = many ? Q_ROW_NMANY : (uint16_t)nout;
        row->ok = (uint8_t)((in_ok ? Q_ROW_IN_OK : 0) | (out_ok ? Q_ROW_OUT_OK : 0));
        q_shape_store_add(ss, &sb, kt->shp + nshp);
        nshp += sb.n;
        const q_list *in_dt = col_list(&lc[0], &memo, &t->arena, &P, r);
        const q_list *in_fmt = col_list(&lc[1], &memo, &t->arena, &P, r);
        const q_list *out_dt = col_list(&lc[2], &memo, &t->arena, &P, r);
        if (!(r && in_dt == prev[0] && in_fmt == prev[1] && out_dt == prev[2])) {
            prev_lists = memo_triple(&tm, kt, in_dt, in_fmt, out_dt);
            prev[0] = in_dt, prev[1] = in_fmt, prev[2] = out_dt;
        }
        row->lists = prev_lists;
    }
    /* the ids' array and the lists' as long as they are */
    kt->shp = opdb_xrealloc(kt->shp, (nshp ? nshp : 1) * sizeof *kt->shp);
    if (tm.n) kt->rlists = opdb_xrealloc(kt->rlists, tm.n * sizeof *kt->rlists);
    free(memo.e);
    free(tm.slot);
    q_shape_buf_free(&sb);
    db_pass_end(&P);
    db_table_trim(t);
}

static void free_table(q_ktable *t) {
    if (!t) return;
    /* the row indexes (slots 0 and 3) sit below the loader; the other slots' code sits above
     * it, so their builders leave their free function beside the slot */
    for (int k = 0; k < 4; k++) {
        if (!t->ext[k]) continue;
        if (t->ext_free[k]) t->ext_free[k](t->ext[k]);
        else if (k == 0 || k == 3) q_index_free(t->ext[k]);
    }
    free(t->kernel);
    free(t->path);
    free(t->shown);
    free(t->error);
    free(t->rows);
    free(t->shp);
    free(t->rlists);
    db_table_free(&t->t);
    pthread_mutex_destroy(&t->mu);
    pthread_mutex_destroy(&t->ext_mu);
    free(t);
}

static char *shown_path(const opdb_qdb *db, const char *path) {
    size_t dn = strlen(db->dir);
    if (strncmp(path, db->dir, dn) == 0 && path[dn] == '/') return join3(path + dn + 1, "", "");
    if (path[0] == '/') return join3(path, "", "");
    char *cwd = getcwd(NULL, 0);
    char *o = cwd ? join3(cwd, "/", path) : join3(path, "", "");
    free(cwd);
    return o;
}

/* Every lookup asks for its tables by name: readers probe a published
 * snapshot without the lock; a name not there yet is added under it. */
typedef struct q_tsnap {
    size_t cap; /* a power of two, kept at most half full */
    struct q_tsnap *prev;
    _Atomic(q_ktable *) slot[];
} q_tsnap;

static q_ktable *snap_find(const q_tsnap *s, uint64_t h, const char *kt) {
    if (!s) return NULL;
    for (size_t j = h & (s->cap - 1);; j = (j + 1) & (s->cap - 1)) {
        q_ktable *t = atomic_load_explicit(&((q_tsnap *)s)->slot[j], memory_order_acquire);
        if (!t) return NULL;
        if (t->khash == h && strcmp(t->kernel, kt) == 0) return t;
    }
}

static void snap_put(q_tsnap *s, q_ktable *t) {
    size_t j = t->khash & (s->cap - 1);
    while (atomic_load_explicit(&s->slot[j], memory_order_relaxed)) j = (j + 1) & (s->cap - 1);
    atomic_store_explicit(&s->slot[j], t, memory_order_release);
}

/* under tables_mu: t (just appended to db->tables) becomes visible to readers */
static void snap_publish(opdb_qdb *db, q_ktable *t) {
    q_tsnap *s = atomic_load_explicit(&db->tsnap, memory_order_relaxed);
    if (!s || 2 * db->ntables > s->cap) {
        size_t cap = s ? s->cap * 2 : 64;
        q_tsnap *ns = opdb_xcalloc(1, sizeof *ns + cap * sizeof ns->slot[0]);
        ns->cap = cap;
        ns->prev = s; /* a reader may still be probing it */
        for (size_t i = 0; i < db->ntables; i++) snap_put(ns, db->tables[i]);
        atomic_store_explicit(&db->tsnap, ns, memory_order_release);
        return;
    }
    snap_put(s, t);
}

static void snap_free(opdb_qdb *db) {
    for (q_tsnap *s = atomic_load(&db->tsnap); s;) {
        q_tsnap *p = s->prev;
        free(s);
        s = p;
    }
}

static q_ktable *find_or_add(const opdb_qdb *cdb, const char *kt) {
    opdb_qdb *db = (opdb_qdb *)cdb; /* the table map is internally synchronised */
    uint64_t h = opdb_hash_bytes(kt, strlen(kt), 0);
    q_ktable *seen = snap_find(atomic_load_explicit(&db->tsnap, memory_order_acquire), h, kt);
    if (seen) return seen;
    opdb_call_lock(&db->tables_mu);
    uint32_t idx;
    for (opdb_hprobe p = opdb_hindex_probe(&db->tables_ix, h); opdb_hprobe_next(&p, &idx);)
        if (strcmp(db->tables[idx]->kernel, kt) == 0) {
            q_ktable *t = db->tables[idx];
            opdb_call_unlock(&db->tables_mu);
            return t;
        }
    q_ktable *t = opdb_xcalloc(1, sizeof *t);
    t->kernel = join3(kt, "", "");
    t->khash = h;
    t->kflags = q_kernel_flags(kt);
    pthread_mutex_init(&t->mu, NULL);
    pthread_mutex_init(&t->ext_mu, NULL);
    atomic_init(&t->state, QT_UNLOADED);
    atomic_init(&t->prepared, false);
    OPDB_ALLOC_GROW(db->tables, db->ntables + 1, db->captables);
    db->tables[db->ntables] = t;
    opdb_hindex_add(&db->tables_ix, h, (uint32_t)db->ntables++);
    snap_publish(db, t);
    opdb_call_unlock(&db->tables_mu);
    return t;
}

/* The table of kt read (an eager open), and with rows its rows prepared:
 * both once, under the table's guard. */
static q_ktable *table_get(const opdb_qdb *db, const char *kt, bool rows) {
    q_ktable *t = find_or_add(db, kt);
    int st0 = atomic_load_explicit(&t->state, memory_order_acquire);
    if (st0 != QT_UNLOADED && (st0 != QT_OK || !rows || atomic_load_explicit(&t->prepared, memory_order_acquire)))
        return t;
    opdb_call_lock(&t->mu);
    if (atomic_load_explicit(&t->state, memory_order_relaxed) == QT_UNLOADED) {
        char *path = NULL;
        if (strncmp(kt, "hcom_", 5) == 0 && db->map.comm_dir) {
            path = join3(db->map.comm_dir, "/", kt);
            char *p2 = join3(path, ".csv", "");
            free(path);
            path = p2;
            if (!is_file(path)) {
                free(path);
                path = NULL;
            }
        }
        if (!path) {
            size_t n = strlen(db->dir) + strlen(kt) + 6;
            path = opdb_xmalloc(n);
            snprintf(path, n, "%s/%s.csv", db->dir, kt);
        }
        t->path = path;
        t->shown = shown_path(db, path);
        int st;
        if (!is_file(path)) {
            st = QT_ABSENT;
        } else {
            opdb_err err;
            opdb_err_clear(&err);
            if ((db->read_files ? db_table_load_read : db_table_load)(&t->t, path, &err) != 0) {
                /* name the file relative to the database folder in every message */
                const char *m = err.msg;
                size_t pl = strlen(path);
                if (strncmp(m, path, pl) == 0) {
                    t->error = join3(t->shown, m + pl, "");
                } else {
                    t->error = join3(m, "", "");
                }
                st = QT_FAILED;
            } else {
                st = QT_OK;
                /* an eager open reads every file now and their rows later: the pages come back then */
                if (!rows) db_table_trim(&t->t);
            }
        }
        atomic_store_explicit(&t->state, st, memory_order_release);
    }
    if (rows && atomic_load_explicit(&t->state, memory_order_relaxed) == QT_OK &&
        !atomic_load_explicit(&t->prepared, memory_order_relaxed)) {
        prepare(db, t);
        atomic_store_explicit(&t->prepared, true, memory_order_release);
    }
    opdb_call_unlock(&t->mu);
    return t;
}

q_ktable *q_table(const opdb_qdb *db, const char *kt) { return table_get(db, kt, true); }

bool q_table_rows(q_ktable *t) { return atomic_load_explicit(&t->state, memory_order_acquire) == QT_OK; }
