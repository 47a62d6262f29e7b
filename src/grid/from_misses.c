/* Theory rows for the misses of a query batch (docs/GRID.md "Rows from
 * query misses"): each MISS that carries a request (a kernel-level query,
 * default mode) becomes one row of its kernel's table, laid out as `opdb
 * grid` lays out its rows, so that `opdb bench` measures it. Shared by
 * `opdb grid --from-misses` and `opdb query --collect`. */
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "grid/grid_rows.h"
#include "db/sig_cells.h"
#include "core/call.h"
#include "grid/grid_table.h"
#include "opdb/fs.h"
#include "opdb/json_writer.h"
#include "opdb/limits.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/signature.h"

typedef struct mtensor {
    char *shape; /* "d,d" (no quotes); "" for a 0-d tensor */
    char *dtype, *format;
} mtensor;

/* Columns an attention or communication row needs beyond its tensors: the
 * request object and field they come from. */
static const struct {
    const char *obj, *field, *col;
} k_extra[] = {
    {"attention", "avg_seq_len", OPDB_COL_RT_AVG_SEQ_LEN},   {"attention", "avg_seq_len", "avg_seq_len"},
    {"attention", "sparse_mode", OPDB_COL_RT_SPARSE_MODE},   {"attention", "num_kv_heads", OPDB_COL_RT_NUM_KV_HEADS},
    {"attention", "input_layout", OPDB_COL_RT_INPUT_LAYOUT}, {"attention", "batch_size", "Runtime batch_size"},
    {"comm", "message_bytes", "message_bytes"},              {"comm", "num_devices", "num_devices"},
    {"comm", "topology_tier", "topology_tier"},
};
#define NX (sizeof k_extra / sizeof *k_extra)

typedef struct mreq {
    char *kernel;
    mtensor *in, *out;
    size_t nin, nout;
    bool obj[2];    /* the request carries an attention / comm object */
    char *xv[NX];   /* its fields' cell text (NULL: not given) */
} mreq;

struct opdb_grid_misses {
    mreq *r;
    size_t n, cap;
    size_t lines, misses, without_request;
};

opdb_grid_misses *opdb_grid_misses_new(void) { return opdb_xcalloc(1, sizeof(opdb_grid_misses)); }

static void free_tensors(mtensor *t, size_t n) {
    for (size_t i = 0; i < n; i++) free(t[i].shape), free(t[i].dtype), free(t[i].format);
    free(t);
}

void opdb_grid_misses_free(opdb_grid_misses *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        for (size_t k = 0; k < NX; k++) free(m->r[i].xv[k]);
        free(m->r[i].kernel);
        free_tensors(m->r[i].in, m->r[i].nin);
        free_tensors(m->r[i].out, m->r[i].nout);
    }
    free(m->r);
    free(m);
}

static yajl_val jget(yajl_val obj, const char *key) {
    yajl_val found = NULL;
    for (size_t i = 0; YAJL_IS_OBJECT(obj) && i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0) found = obj->u.object.values[i];
    return found;
}

/* A string's text, "" for anything else. */
static const char *jstr(yajl_val v) {
    const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
    return s ? s : "";
}

/* A cell value is written between CSV quotes as it is: these would make
 * another table of it. */
static bool plain_text(const char *s) { return !strpbrk(s, ";\"\r\n"); }

static int tensors(yajl_val list, const char *what, mtensor **out, size_t *n, const char *src, unsigned long long line,
                   opdb_err *err) {
    *out = NULL;
    *n = 0;
    if (!list || YAJL_IS_NULL(list)) return 0;
    if (!YAJL_IS_ARRAY(list)) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: request.%s is not a list", src, line, what);
    *out = opdb_xcalloc(list->u.array.len + 1, sizeof **out);
    for (size_t i = 0; i < list->u.array.len; i++) {
        yajl_val t = list->u.array.values[i], sh = jget(t, "shape"), dt = jget(t, "dtype"), fm = jget(t, "format");
        if (!YAJL_IS_ARRAY(sh) || !YAJL_IS_STRING(dt) || (fm && !YAJL_IS_NULL(fm) && !YAJL_IS_STRING(fm)) ||
            !plain_text(jstr(dt)) || !plain_text(jstr(fm)))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: request.%s[%zu] needs a shape list, a dtype and a format",
                             src, line, what, i);
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        for (size_t k = 0; k < sh->u.array.len; k++) {
            yajl_val d = sh->u.array.values[k];
            if (!YAJL_IS_INTEGER(d) || YAJL_GET_INTEGER(d) < 0) {
                opdb_sb_free(&sb);
                return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: request.%s[%zu].shape: not a non-negative integer",
                                 src, line, what, i);
            }
            opdb_sb_addf(&sb, k ? ",%lld" : "%lld", (long long)YAJL_GET_INTEGER(d));
        }
        mtensor *x = &(*out)[(*n)++];
        x->shape = opdb_xstrdup(sb.p ? sb.p : "");
        opdb_sb_free(&sb);
        x->dtype = opdb_xstrdup(jstr(dt));
        x->format = opdb_xstrdup(YAJL_IS_STRING(fm) ? jstr(fm) : "ND");
    }
    return 0;
}

static int add_request(opdb_grid_misses *m, yajl_val rq, const char *src, unsigned long long line, opdb_err *err) {
    yajl_val k = jget(rq, "kernel");
    const char *kt = jstr(k);
    /* the table's file name: a plain name in the database folder */
    if (!*kt || kt[0] == '.' || strchr(kt, '/') || strchr(kt, '\\'))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: request.kernel is not a kernel type name", src, line);
    mreq r = {0};
    int rc = tensors(jget(rq, "inputs"), "inputs", &r.in, &r.nin, src, line, err);
    if (!rc) rc = tensors(jget(rq, "outputs"), "outputs", &r.out, &r.nout, src, line, err);
    if (rc) {
        free_tensors(r.in, r.nin);
        free_tensors(r.out, r.nout);
        return rc;
    }
    r.kernel = opdb_xstrdup(kt);
    for (size_t k = 0; k < NX; k++) {
        int o = strcmp(k_extra[k].obj, "comm") == 0;
        yajl_val ob = jget(rq, k_extra[k].obj), v = jget(ob, k_extra[k].field);
        r.obj[o] |= YAJL_IS_OBJECT(ob);
        if (YAJL_IS_INTEGER(v)) {
            char b[32];
            snprintf(b, sizeof b, "%lld", (long long)YAJL_GET_INTEGER(v));
            r.xv[k] = opdb_xstrdup(b);
        } else if (YAJL_IS_STRING(v) && plain_text(jstr(v))) {
            r.xv[k] = opdb_xstrdup(jstr(v));
        }
    }
    OPDB_ALLOC_GROW(m->r, m->n + 1, m->cap);
    m->r[m->n++] = r;
    return 0;
}

int opdb_grid_misses_add(opdb_grid_misses *m, const char *line, size_t n, const char *src, unsigned long long lineno,
                         opdb_err *err) {
    opdb_span s = opdb_py_strip(opdb_span_make(line, n));
    if (!s.n) return 0;
    if (opdb_json_limits_check(s.p, s.n, src, lineno, err)) return -1;
    char *text = opdb_xmalloc(s.n + 1);
    memcpy(text, s.p, s.n);
    text[s.n] = '\0';
    char ebuf[256];
    yajl_val v = yajl_tree_parse(text, ebuf, sizeof ebuf);
    free(text);
    int rc = 0;
    if (!YAJL_IS_OBJECT(v)) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: not a JSON object (expected an opdb query result line)", src, lineno);
    } else {
        m->lines++;
        yajl_val source = jget(v, "source"), rq = jget(v, "request");
        if (strcmp(jstr(source), "MISS") == 0) {
            m->misses++;
            if (YAJL_IS_OBJECT(rq)) rc = add_request(m, rq, src, lineno, err);
            else m->without_request++;
        }
    }
    yajl_tree_free(v);
    return rc;
}

int opdb_grid_misses_read(opdb_grid_misses *m, const char *path, opdb_err *err) {
    FILE *f = fopen(path, "r");
    if (!f) return opdb_fail(err, OPDB_ERR_RUNTIME, "cannot open results file: %s", path);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long long lineno = 0;
    int rc = 0;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) rc = opdb_grid_misses_add(m, line, (size_t)len, path, ++lineno, err);
    if (!rc && ferror(f)) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read error", path);
    free(line);
    fclose(f);
    return rc;
}

/* ---- one table */

typedef struct mtab {
    const char *kernel;
    size_t first, n; /* its requests: order[first .. first + n) */
    const char *skip;
    size_t distinct, appended;
} mtab;

/* A new row: its cells (by header position), its input shape cell, and
 * its place among the requests (the sort is stable). */
typedef struct nrow {
    char **cell;
    const char *in;
    size_t order;
} nrow;

/* Entry i of a `;`-separated cell ("" past its end). */
static opdb_span nth_entry(opdb_span cell, size_t i) {
    size_t pos = 0;
    for (size_t k = 0; k < i; k++) {
        const char *semi = memchr(cell.p + pos, ';', cell.n - pos);
        if (!semi) return opdb_span_make("", 0);
        pos = (size_t)(semi - cell.p) + 1;
    }
    const char *semi = memchr(cell.p + pos, ';', cell.n - pos);
    return opdb_span_make(cell.p + pos, semi ? (size_t)(semi - cell.p) - pos : cell.n - pos);
}

enum { F_SHAPE, F_DTYPE, F_FORMAT };

/* The `;`-joined field of a request's tensors, padded to the template's
 * slot count: padded shapes empty, padded dtypes and formats the
 * template's (as grid rows keep the template's cells). */
static char *join_field(const mtensor *t, size_t n, size_t slots, int field, opdb_span tmpl) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    size_t total = n > slots ? n : slots;
    for (size_t i = 0; i < total; i++) {
        if (i) opdb_sb_addc(&sb, ';');
        if (i < n) opdb_sb_adds(&sb, field == F_SHAPE ? t[i].shape : field == F_DTYPE ? t[i].dtype : t[i].format);
        else if (field != F_SHAPE) {
            opdb_span e = nth_entry(tmpl, i);
            opdb_sb_add(&sb, e.p, e.n);
        }
    }
    char *s = opdb_xstrdup(sb.p ? sb.p : "");
    opdb_sb_free(&sb);
    return s;
}

/* A shape cell as grid writes it: the slots between literal quotes; no
 * slot: empty. */
static char *shape_cell(const mtensor *t, size_t n, size_t slots) {
    if (n == 0 && slots == 0) return opdb_xstrdup("");
    char *inner = join_field(t, n, slots, F_SHAPE, opdb_span_make("", 0));
    size_t k = strlen(inner);
    char *s = opdb_xmalloc(k + 3);
    s[0] = '"';
    memcpy(s + 1, inner, k);
    s[k + 1] = '"';
    s[k + 2] = '\0';
    free(inner);
    return s;
}

typedef struct tctx {
    grid_table t;
    int c_in, c_out, c_idt, c_ifm, c_odt, c_ofm;
    db_sig_cols sig;  /* the signature's columns (the first of equal names: the one build_row sets) */
    int xc[NX];       /* k_extra's columns in the table (-1: none) */
    size_t kin, kout;
    opdb_strvec keys; /* signatures: the table's rows, then the new rows */
    opdb_hindex ix;
} tctx;

static opdb_span cell_or_empty(const opdb_span *row, int col) { return col >= 0 ? row[col] : opdb_span_make("", 0); }

static void sign(const tctx *T, const char *kernel, opdb_span const *cells, opdb_strbuf *key) {
    opdb_sig_cells sc = db_sig_cells_from_row(&T->sig, cells, T->t.ncols);
    opdb_signature(&sc, kernel, key);
    /* attention and communication rows differ in their runtime and message cells too */
    for (size_t k = 0; k < NX; k++) {
        opdb_span x = cell_or_empty(cells, T->xc[k]);
        opdb_sb_addc(key, '\x1f');
        opdb_sb_add(key, x.p, x.n);
    }
}

/* Adds key unless present; false when it was there. */
static bool seen_add(tctx *T, const opdb_strbuf *key) {
    uint64_t h = opdb_hash_bytes(key->p ? key->p : "", key->n, 0);
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&T->ix, h); opdb_hprobe_next(&p, &i);)
        if (strlen(T->keys.v[i]) == key->n && memcmp(T->keys.v[i], key->p, key->n) == 0) return false;
    opdb_strvec_push(&T->keys, key->p ? key->p : "");
    opdb_hindex_add(&T->ix, h, (uint32_t)(T->keys.n - 1));
    return true;
}

static char *dup_span(opdb_span s) {
    char *p = opdb_xmalloc(s.n + 1);
    memcpy(p, s.p, s.n);
    p[s.n] = '\0';
    return p;
}

/* Measurement columns are 0, the sample statistics empty (a theory row was
 * never profiled), everything else the template's: grid's row layout. */
static char *fixed_cell(const grid_table *t, size_t col) {
    static const char *const copy[] = {OPDB_COL_OP_STATE,      OPDB_COL_ACCEL_CORE,     OPDB_COL_INPUT_DTYPES,
                                       OPDB_COL_OUTPUT_DTYPES, OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_FORMATS,
                                       OPDB_COL_OUTPUT_SHAPES};
    static const char *const stat[] = {OPDB_COL_PROF_COUNT, OPDB_COL_PROF_MIN_DUR, OPDB_COL_PROF_MAX_DUR,
                                       OPDB_COL_PROF_SUM_DUR, OPDB_COL_PROF_SUMSQ_DUR};
    const char *name = t->header[col];
    for (size_t k = 0; k < sizeof copy / sizeof *copy; k++)
        if (!strcmp(name, copy[k])) return dup_span(t->rows[0][col]);
    for (size_t k = 0; k < sizeof stat / sizeof *stat; k++)
        if (!strcmp(name, stat[k])) return opdb_xstrdup("");
    if (grid_zero_column(name)) return opdb_xstrdup("0");
    return dup_span(t->rows[0][col]);
}

static char **build_row(const tctx *T, const mreq *q) {
    const grid_table *t = &T->t;
    const opdb_span *tm = t->rows[0];
    char **cell = opdb_xcalloc(t->ncols, sizeof *cell);
    for (size_t i = 0; i < t->ncols; i++) {
        int c = (int)i;
        size_t x = NX;
        for (size_t k = 0; k < NX && x == NX; k++)
            if (T->xc[k] == c && q->obj[strcmp(k_extra[k].obj, "comm") == 0]) x = k;
        if (x < NX) cell[i] = opdb_xstrdup(q->xv[x] ? q->xv[x] : "");
        else if (c == T->c_in) cell[i] = shape_cell(q->in, q->nin, T->kin);
        else if (c == T->c_idt) cell[i] = join_field(q->in, q->nin, T->kin, F_DTYPE, tm[c]);
        else if (c == T->c_ifm) cell[i] = join_field(q->in, q->nin, T->kin, F_FORMAT, tm[c]);
        /* without outputs the row has no output shapes (the query gave none to copy) */
        else if (c == T->c_out) cell[i] = q->nout ? shape_cell(q->out, q->nout, T->kout) : opdb_xstrdup("");
        else if (c == T->c_odt && q->nout) cell[i] = join_field(q->out, q->nout, T->kout, F_DTYPE, tm[c]);
        else if (c == T->c_ofm && q->nout) cell[i] = join_field(q->out, q->nout, T->kout, F_FORMAT, tm[c]);
        else cell[i] = fixed_cell(t, i);
    }
    return cell;
}

static void free_row(char **cell, size_t n) {
    for (size_t i = 0; cell && i < n; i++) free(cell[i]);
    free(cell);
}

static int cmp_new(const void *a, const void *b) {
    const nrow *x = a, *y = b;
    int c = grid_cmp_shape_cells(x->in, strlen(x->in), y->in, strlen(y->in));
    return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

static int write_table(const char *path, const tctx *T, nrow *rows, size_t n, opdb_err *err) {
    const grid_table *t = &T->t;
    opdb_atomic_file af;
    if (opdb_atomic_open(&af, path, err)) return -1;
    opdb_span *cells = opdb_xmalloc((t->ncols + 1) * sizeof *cells);
    for (size_t i = 0; i < t->ncols; i++) cells[i] = opdb_span_cstr(t->header[i]);
    opdb_csv_write_record(&af.buf, cells, t->ncols);
    for (size_t r = 0; r < t->nrows; r++) opdb_csv_write_record(&af.buf, t->rows[r], t->ncols);
    for (size_t r = 0; r < n; r++) {
        for (size_t i = 0; i < t->ncols; i++) cells[i] = opdb_span_cstr(rows[r].cell[i]);
        opdb_csv_write_record(&af.buf, cells, t->ncols);
    }
    free(cells);
    return opdb_atomic_commit(&af, err);
}

/* One table: its new rows built, deduplicated and (unless plan) written. */
static int do_table(const opdb_grid_miss_opts *o, const opdb_grid_misses *m, const size_t *order, mtab *mt,
                    opdb_err *err) {
    char *name = opdb_xmalloc(strlen(mt->kernel) + 5);
    sprintf(name, "%s.csv", mt->kernel);
    char *path = opdb_path_join(o->root, name);
    free(name);
    int rc = 0;
    if (!opdb_is_file(path)) {
        mt->skip = "no such table"; /* a new table would have no row to copy the layout from */
        free(path);
        return 0;
    }
    tctx T;
    memset(&T, 0, sizeof T);
    if ((rc = grid_table_load(path, true, 0, &T.t, err))) goto done;
    grid_table *t = &T.t;
    T.c_in = t->header ? grid_table_col(t, OPDB_COL_INPUT_SHAPES) : -1;
    /* a communication table has no shapes: its rows are its message columns */
    bool comm = t->header && grid_table_col(t, "message_bytes") >= 0;
    if (!t->header || (T.c_in < 0 && !comm) || !t->nrows) {
        mt->skip = !t->header ? "empty file" : T.c_in < 0 ? "no 'Input Shapes' column" : "no data rows to copy the layout from";
        goto done;
    }
    T.c_out = grid_table_col(t, OPDB_COL_OUTPUT_SHAPES);
    T.c_idt = grid_table_col(t, OPDB_COL_INPUT_DTYPES);
    T.c_ifm = grid_table_col(t, OPDB_COL_INPUT_FORMATS);
    T.c_odt = grid_table_col(t, OPDB_COL_OUTPUT_DTYPES);
    T.c_ofm = grid_table_col(t, OPDB_COL_OUTPUT_FORMATS);
    for (int i = 0; i < OPDB_NSIG_CELLS; i++) T.sig.col[i] = grid_table_col(t, opdb_sig_cell_cols[i]);
    for (size_t k = 0; k < NX; k++) T.xc[k] = grid_table_col(t, k_extra[k].col);
    T.kin = T.c_in >= 0 ? (size_t)grid_slot_count(t->rows[0][T.c_in]) : 0;
    T.kout = T.c_out >= 0 ? (size_t)grid_slot_count(t->rows[0][T.c_out]) : 0;
    opdb_strbuf key;
    opdb_sb_init(&key);
    opdb_hindex_reserve(&T.ix, t->nrows + mt->n);
    for (size_t r = 0; r < t->nrows; r++) {
        sign(&T, mt->kernel, t->rows[r], &key);
        seen_add(&T, &key);
    }
    nrow *rows = opdb_xcalloc(mt->n + 1, sizeof *rows);
    size_t nnew = 0, ndistinct = 0;
    opdb_hindex own = {0}; /* the requests' own signatures, for the distinct count */
    opdb_strvec ownk = {0};
    opdb_span *sp = opdb_xmalloc(t->ncols * sizeof *sp);
    for (size_t k = 0; k < mt->n; k++) {
        char **cell = build_row(&T, &m->r[order[mt->first + k]]);
        for (size_t i = 0; i < t->ncols; i++) sp[i] = opdb_span_cstr(cell[i]);
        sign(&T, mt->kernel, sp, &key);
        uint64_t h = opdb_hash_bytes(key.p ? key.p : "", key.n, 0);
        bool dup = false;
        uint32_t j;
        for (opdb_hprobe p = opdb_hindex_probe(&own, h); !dup && opdb_hprobe_next(&p, &j);)
            dup = strlen(ownk.v[j]) == key.n && memcmp(ownk.v[j], key.p, key.n) == 0;
        if (!dup) {
            opdb_strvec_push(&ownk, key.p ? key.p : "");
            opdb_hindex_add(&own, h, (uint32_t)(ownk.n - 1));
            ndistinct++;
        }
        if (seen_add(&T, &key)) {
            rows[nnew] = (nrow){cell, T.c_in >= 0 ? cell[T.c_in] : "", nnew};
            nnew++;
        } else {
            free_row(cell, t->ncols);
        }
    }
    free(sp);
    opdb_sb_free(&key);
    opdb_hindex_free(&own);
    opdb_strvec_free(&ownk);
    mt->distinct = ndistinct;
    mt->appended = nnew;
    if (nnew > 1) qsort(rows, nnew, sizeof *rows, cmp_new);
    if (!o->plan && nnew) rc = write_table(path, &T, rows, nnew, err);
    for (size_t r = 0; r < nnew; r++) free_row(rows[r].cell, t->ncols);
    free(rows);
done:
    opdb_strvec_free(&T.keys);
    opdb_hindex_free(&T.ix);
    grid_table_free(&T.t);
    free(path);
    return rc;
}

/* ---- the run */

/* A request's place in the run: by kernel type, then in input order. */
typedef struct rplace {
    const char *kernel;
    size_t idx;
} rplace;

static int cmp_req(const void *a, const void *b) {
    const rplace *x = a, *y = b;
    int c = strcmp(x->kernel, y->kernel);
    return c ? c : x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void print_plan(const opdb_grid_miss_opts *o, const opdb_grid_misses *m, const mtab *tabs, size_t nt) {
    size_t tot[3] = {0};
    for (size_t i = 0; i < nt; i++) tot[0] += tabs[i].n, tot[1] += tabs[i].distinct, tot[2] += tabs[i].appended;
    if (o->json) {
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        opdb_json j;
        opdb_json_init(&j, &sb);
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "tables");
        opdb_json_begin_array(&j);
        for (size_t i = 0; i < nt; i++) {
            opdb_json_begin_object(&j);
            opdb_json_key(&j, "kernel_type");
            opdb_json_string(&j, tabs[i].kernel);
            opdb_json_key(&j, "skipped");
            if (tabs[i].skip) opdb_json_string(&j, tabs[i].skip);
            else opdb_json_null(&j);
            opdb_json_key(&j, "requests");
            opdb_json_int(&j, (long long)tabs[i].n);
            opdb_json_key(&j, "distinct");
            opdb_json_int(&j, (long long)tabs[i].distinct);
            opdb_json_key(&j, "to_append");
            opdb_json_int(&j, (long long)tabs[i].appended);
            opdb_json_end_object(&j);
        }
        opdb_json_end_array(&j);
        static const char *const keys[] = {"results", "misses", "without_request", "requests", "distinct", "to_append"};
        size_t v[] = {m->lines, m->misses, m->without_request, tot[0], tot[1], tot[2]};
        opdb_json_key(&j, "total");
        opdb_json_begin_object(&j);
        for (size_t k = 0; k < 6; k++) {
            opdb_json_key(&j, keys[k]);
            opdb_json_int(&j, (long long)v[k]);
        }
        opdb_json_end_object(&j);
        opdb_json_end_object(&j);
        fprintf(o->out, "%s\n", sb.p);
        opdb_sb_free(&sb);
        return;
    }
    fprintf(o->out, "%-48s %10s %10s %10s\n", "table", "requests", "distinct", "to_append");
    for (size_t i = 0; i < nt; i++) {
        char name[300];
        snprintf(name, sizeof name, "%s.csv", tabs[i].kernel);
        if (tabs[i].skip) fprintf(o->out, "%-48s %10zu skipped: %s\n", name, tabs[i].n, tabs[i].skip);
        else fprintf(o->out, "%-48s %10zu %10zu %10zu\n", name, tabs[i].n, tabs[i].distinct, tabs[i].appended);
    }
    fprintf(o->out, "%-48s %10zu %10zu %10zu\n", "total", tot[0], tot[1], tot[2]);
}

static void print_summary(const opdb_grid_miss_opts *o, const mtab *tabs, size_t nt) {
    size_t total = 0, written = 0, nskip = 0;
    for (size_t i = 0; i < nt; i++) {
        total += tabs[i].appended;
        written += tabs[i].appended > 0;
        nskip += tabs[i].skip != NULL;
    }
    fprintf(o->out, "Appended %zu rows across %zu CSV files under %s.\n", total, written, o->root);
    if (nskip) {
        fprintf(o->out, "Skipped %zu kernel types:\n", nskip);
        for (size_t i = 0; i < nt; i++)
            if (tabs[i].skip) fprintf(o->out, "  - %s.csv (%s)\n", tabs[i].kernel, tabs[i].skip);
    }
}

static int grid_from_misses(const opdb_grid_miss_opts *o, const opdb_grid_misses *m, opdb_err *err) {
    if (!o || !m || !o->root || !o->out) return opdb_fail(err, OPDB_ERR_USAGE, "opdb_grid_from_misses: missing options");
    if (!opdb_is_dir(o->root)) return opdb_fail(err, OPDB_ERR_RUNTIME, "Data directory does not exist: %s", o->root);
    rplace *pl = opdb_xmalloc((m->n + 1) * sizeof *pl);
    for (size_t i = 0; i < m->n; i++) pl[i] = (rplace){m->r[i].kernel, i};
    if (m->n > 1) qsort(pl, m->n, sizeof *pl, cmp_req);
    size_t *order = opdb_xmalloc((m->n + 1) * sizeof *order);
    for (size_t i = 0; i < m->n; i++) order[i] = pl[i].idx;
    free(pl);
    mtab *tabs = opdb_xcalloc(m->n + 1, sizeof *tabs);
    size_t nt = 0;
    for (size_t i = 0; i < m->n; i++) {
        const char *k = m->r[order[i]].kernel;
        if (nt && !strcmp(tabs[nt - 1].kernel, k)) tabs[nt - 1].n++;
        else tabs[nt++] = (mtab){k, i, 1, NULL, 0, 0};
    }
    int rc = 0, lock = -1;
    bool in_txn = false;
    if (!o->plan) {
        if ((lock = opdb_dir_lock(o->root, err)) < 0) {
            rc = -1;
            goto done;
        }
        in_txn = opdb_txn_begin(o->root) == 0; /* every table extended, or none */
    }
    for (size_t i = 0; i < nt && !rc; i++) rc = do_table(o, m, order, &tabs[i], err);
    if (rc) goto done;
    if (in_txn) {
        in_txn = false;
        if (opdb_txn_end(true, err)) {
            rc = -1;
            goto done;
        }
    }
    if (o->plan) print_plan(o, m, tabs, nt);
    else print_summary(o, tabs, nt);
    size_t total = 0;
    for (size_t i = 0; i < nt; i++) total += tabs[i].appended;
    /* a collection that adds nothing says why */
    if (m->without_request)
        opdb_warn("%zu of %zu misses carry no request (op-level queries: the query does not record which kernel "
                  "lookups missed; or --reference-quirks results): not collected",
                  m->without_request, m->misses);
    if (!m->n) opdb_warn_nothing("no kernel-level miss with a request in %zu result lines: no row to add", m->lines);
    else if (!total) opdb_warn_nothing("every request is already a row of its table (or has no table): no row added");
done:
    if (in_txn) {
        opdb_err ignored; /* the first error is the one reported */
        opdb_err_clear(&ignored);
        opdb_txn_end(false, &ignored);
    }
    if (lock >= 0) opdb_dir_unlock(lock);
    free(tabs);
    free(order);
    return rc;
}

static void grid_miss_defaults(opdb_grid_miss_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_grid_miss_opts, grid_miss_defaults)

int opdb_grid_from_misses(const opdb_grid_miss_opts *o, const opdb_grid_misses *m, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_grid_miss_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = grid_from_misses(o, m, err);
    opdb_call_leave(&saved);
    return rc;
}
