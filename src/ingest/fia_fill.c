/* See fia_fill.h.  Join key: (q, k, v shapes, number of KV sequences, mask
 * shape, block-table shape) from CSV Input Shapes slots 0,1,2,6,4,14 and from
 * the JSONL record; one output row per distinct runtime payload (1:N). */
#include "opdb/fia_fill.h"
#include "core/call.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/limits.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "db/text_table.h"

#define NPAY 11
static const char *const k_payload_cols[NPAY] = {
    OPDB_COL_RT_ASL_SHAPE,  OPDB_COL_RT_ASL_VALUES,  OPDB_COL_RT_ASLKV_SHAPE,  OPDB_COL_RT_ASLKV_VALUES,
    OPDB_COL_RT_AVG_SEQ_LEN, OPDB_COL_RT_BT_VALID,   OPDB_COL_RT_NUM_HEADS,    OPDB_COL_RT_NUM_KV_HEADS,
    OPDB_COL_RT_SPARSE_MODE, OPDB_COL_RT_INPUT_LAYOUT, OPDB_COL_RT_BLOCK_SIZE,
};
#define COMPLETENESS OPDB_COL_RT_COMPLETENESS
/* the payload's values and kv values: the pair payloads are de-duplicated by */
enum { PAY_VALUES = 1, PAY_KV_VALUES = 3 };

/* ---- Python str() of a JSON value */

static void py_str(yajl_val v, opdb_strbuf *out, bool in_container) {
    if (!v || YAJL_IS_NULL(v)) {
        if (in_container) opdb_sb_adds(out, "None");
    } else if (YAJL_IS_TRUE(v)) {
        opdb_sb_adds(out, "True");
    } else if (YAJL_IS_FALSE(v)) {
        opdb_sb_adds(out, "False");
    } else if (YAJL_IS_INTEGER(v)) {
        opdb_sb_addf(out, "%lld", (long long)YAJL_GET_INTEGER(v));
    } else if (YAJL_IS_NUMBER(v)) {
        char buf[64];
        opdb_py_fmt_repr(buf, sizeof buf, YAJL_GET_DOUBLE(v));
        opdb_sb_adds(out, buf);
    } else if (YAJL_IS_STRING(v)) {
        const char *s = YAJL_GET_STRING(v);
        if (in_container) {
            bool sq = strchr(s, '\'') && !strchr(s, '"');
            opdb_sb_addc(out, sq ? '"' : '\'');
            for (; *s; s++) {
                if (*s == '\\' || (!sq && *s == '\'')) opdb_sb_addc(out, '\\');
                opdb_sb_addc(out, *s);
            }
            opdb_sb_addc(out, sq ? '"' : '\'');
        } else {
            opdb_sb_adds(out, s);
        }
    } else if (YAJL_IS_ARRAY(v)) {
        opdb_sb_addc(out, '[');
        for (size_t i = 0; i < v->u.array.len; i++) {
            if (i) opdb_sb_adds(out, ", ");
            py_str(v->u.array.values[i], out, true);
        }
        opdb_sb_addc(out, ']');
    } else if (YAJL_IS_OBJECT(v)) {
        opdb_sb_addc(out, '{');
        for (size_t i = 0; i < v->u.object.len; i++) {
            if (i) opdb_sb_adds(out, ", ");
            opdb_sb_addf(out, "'%s': ", v->u.object.keys[i]);
            py_str(v->u.object.values[i], out, true);
        }
        opdb_sb_addc(out, '}');
    }
}

static yajl_val get(yajl_val obj, const char *key) {
    if (!YAJL_IS_OBJECT(obj)) return NULL;
    yajl_val found = NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0) found = obj->u.object.values[i]; /* last wins, like json.loads */
    return found;
}

/* A float equal to a long long (4.0 == 4 in a Python tuple key); one out of
 * range (1e300, inf, nan) cannot equal a CSV shape, and casting it is UB. */
static bool integral(double d) {
    return d >= -0x1p63 && d < 0x1p63 && d == (double)(long long)d;
}

/* A shape in canonical text: "N" = null, "(a,b)" = tuple. */
static void key_shape_json(yajl_val v, opdb_strbuf *k) {
    if (!v || YAJL_IS_NULL(v)) {
        opdb_sb_adds(k, "N|");
        return;
    }
    opdb_sb_addc(k, '(');
    if (YAJL_IS_ARRAY(v))
        for (size_t i = 0; i < v->u.array.len; i++) {
            yajl_val e = v->u.array.values[i];
            if (YAJL_IS_INTEGER(e)) opdb_sb_addf(k, "%lld,", (long long)YAJL_GET_INTEGER(e));
            else if (YAJL_IS_NUMBER(e) && integral(YAJL_GET_DOUBLE(e)))
                opdb_sb_addf(k, "%lld,", (long long)YAJL_GET_DOUBLE(e));
            else {
                opdb_strbuf t;
                opdb_sb_init(&t);
                py_str(e, &t, true);
                opdb_sb_addf(k, "?%s,", t.p ? t.p : "");
                opdb_sb_free(&t);
            }
        }
    opdb_sb_adds(k, ")|");
}

static int key_shape_csv(opdb_span slot, opdb_strbuf *k, const char *where, opdb_err *err) {
    slot = opdb_py_strip(slot);
    if (!slot.n) {
        opdb_sb_adds(k, "N|");
        return 0;
    }
    opdb_sb_addc(k, '(');
    size_t st = 0;
    for (size_t i = 0; i <= slot.n; i++) {
        if (i < slot.n && slot.p[i] != ',') continue;
        long long v;
        if (!opdb_py_int(slot.p + st, i - st, &v))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: invalid literal for int(): '%.*s'", where, (int)(i - st), slot.p + st);
        opdb_sb_addf(k, "%lld,", v);
        st = i + 1;
    }
    opdb_sb_adds(k, ")|");
    return 0;
}

typedef struct payload {
    char *val[NPAY];
    char *dedup;      /* (values, kv values) */
} payload;

typedef struct keyed {
    char *key;
    uint64_t hash;
    payload *p;
    size_t n, cap;
} keyed;

typedef struct index_t {
    keyed *k;
    size_t n, cap;
    opdb_hindex ix;
} index_t;

static keyed *ix_get(index_t *ix, const char *key, bool create) {
    uint64_t h = opdb_hash_bytes(key, strlen(key), 3);
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&ix->ix, h); opdb_hprobe_next(&p, &i);)
        if (strcmp(ix->k[i].key, key) == 0) return &ix->k[i];
    if (!create) return NULL;
    OPDB_ALLOC_GROW(ix->k, ix->n + 1, ix->cap);
    keyed *e = &ix->k[ix->n];
    memset(e, 0, sizeof *e);
    e->key = opdb_xstrdup(key);
    e->hash = h;
    opdb_hindex_add(&ix->ix, h, (uint32_t)ix->n++);
    return e;
}

static char *join_ints(yajl_val v) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_adds(&sb, "");
    if (YAJL_IS_ARRAY(v))
        for (size_t i = 0; i < v->u.array.len; i++) {
            if (i) opdb_sb_addc(&sb, ',');
            py_str(v->u.array.values[i], &sb, true);
        }
    return sb.p;
}

static char *len_or_empty(yajl_val v) {
    char buf[32] = "";
    if (YAJL_IS_ARRAY(v) && v->u.array.len) snprintf(buf, sizeof buf, "%zu", v->u.array.len);
    return opdb_xstrdup(buf);
}

static char *scalar(yajl_val v) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_adds(&sb, "");
    py_str(v, &sb, false);
    return sb.p;
}

static int load_jsonl(const char *path, index_t *ix, opdb_err *err) {
    FILE *f = fopen(path, "r");
    if (!f) return opdb_fail(err, OPDB_ERR_RUNTIME, "JSONL not found: %s", path);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    int rc = 0;
    opdb_strbuf key, dd;
    opdb_sb_init(&key);
    opdb_sb_init(&dd);
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        opdb_span s = opdb_py_strip(opdb_span_make(line, (size_t)len));
        if (!s.n) continue;
        char ebuf[256];
        if (opdb_json_limits_check(s.p, s.n, path, (unsigned long long)lineno, err)) { /* size, depth, string length */
            rc = -1;
            break;
        }
        char *text = opdb_xmalloc(s.n + 1);
        memcpy(text, s.p, s.n);
        text[s.n] = '\0';
        yajl_val v = yajl_tree_parse(text, ebuf, sizeof ebuf);
        free(text);
        if (!v || !YAJL_IS_OBJECT(v)) {
            char *nl = strchr(ebuf, '\n');
            if (nl) *nl = '\0';
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%lu: malformed JSON record%s%s", path, lineno, v ? "" : ": ",
                           v ? " (not an object)" : ebuf);
            yajl_tree_free(v);
            break;
        }
        opdb_sb_clear(&key);
        key_shape_json(get(v, "query_shape"), &key);
        key_shape_json(get(v, "key_shape"), &key);
        key_shape_json(get(v, "value_shape"), &key);
        yajl_val kv = get(v, "actual_seq_lengths_kv");
        if (YAJL_IS_ARRAY(kv)) opdb_sb_addf(&key, "%zu|", kv->u.array.len);
        else opdb_sb_adds(&key, "N|");
        key_shape_json(get(v, "atten_mask_shape"), &key);
        key_shape_json(get(v, "block_table_shape"), &key);
        payload p;
        memset(&p, 0, sizeof p);
        yajl_val asl = get(v, "actual_seq_lengths");
        p.val[0] = len_or_empty(asl);
        p.val[PAY_VALUES] = join_ints(asl);
        p.val[2] = len_or_empty(kv);
        p.val[PAY_KV_VALUES] = join_ints(kv);
        p.val[4] = opdb_xstrdup("");
        if (YAJL_IS_ARRAY(kv) && kv->u.array.len) {
            long long sum = 0;
            long double wide = 0; /* Python's sum has no overflow: past int64, a wider sum */
            bool ints = true, overflow = false;
            for (size_t i = 0; i < kv->u.array.len; i++) {
                if (!YAJL_IS_INTEGER(kv->u.array.values[i])) {
                    ints = false;
                    continue;
                }
                long long x = YAJL_GET_INTEGER(kv->u.array.values[i]);
                wide += (long double)x;
                if (!overflow && __builtin_add_overflow(sum, x, &sum)) overflow = true;
            }
            if (ints) {
                char buf[400];
                double mean = overflow ? (double)(wide / (long double)kv->u.array.len)
                                       : (double)sum / (double)kv->u.array.len;
                opdb_py_fmt_fixed(buf, sizeof buf, mean, 6);
                free(p.val[4]);
                p.val[4] = opdb_xstrdup(buf);
            }
        }
        p.val[5] = join_ints(get(v, "block_table_valid_blocks"));
        p.val[6] = scalar(get(v, "num_heads"));
        p.val[7] = scalar(get(v, "num_key_value_heads"));
        p.val[8] = scalar(get(v, "sparse_mode"));
        p.val[9] = scalar(get(v, "input_layout"));
        p.val[10] = scalar(get(v, "block_size"));
        opdb_sb_clear(&dd);
        opdb_sb_addf(&dd, "%s\x1f%s", p.val[PAY_VALUES], p.val[PAY_KV_VALUES]);
        p.dedup = opdb_xstrdup(dd.p);
        keyed *e = ix_get(ix, key.p, true);
        size_t j;
        for (j = 0; j < e->n; j++)
            if (strcmp(e->p[j].dedup, p.dedup) == 0) break;
        if (j < e->n) { /* a later duplicate replaces the payload, keeps the position */
            for (int c = 0; c < NPAY; c++) free(e->p[j].val[c]);
            free(e->p[j].dedup);
            e->p[j] = p;
        } else {
            OPDB_ALLOC_GROW(e->p, e->n + 1, e->cap);
            e->p[e->n++] = p;
        }
        yajl_tree_free(v);
    }
    free(line);
    fclose(f);
    opdb_sb_free(&key);
    opdb_sb_free(&dd);
    return rc;
}

static void ix_free(index_t *ix) {
    for (size_t i = 0; i < ix->n; i++) {
        for (size_t j = 0; j < ix->k[i].n; j++) {
            for (int c = 0; c < NPAY; c++) free(ix->k[i].p[j].val[c]);
            free(ix->k[i].p[j].dedup);
        }
        free(ix->k[i].p);
        free(ix->k[i].key);
    }
    free(ix->k);
    opdb_hindex_free(&ix->ix);
}

/* CSV-side key from Input Shapes. */
static int csv_key(opdb_span cell, opdb_strbuf *k, const char *where, opdb_err *err) {
    opdb_span t = opdb_py_strip_chars(opdb_py_strip(cell), "\"");
    opdb_span slot[15];
    int n = 0;
    size_t st = 0;
    for (size_t i = 0; i <= t.n && n < 15; i++) {
        if (i < t.n && t.p[i] != ';') continue;
        slot[n++] = opdb_py_strip(opdb_span_make(t.p + st, i - st));
        st = i + 1;
    }
    if (t.n == 0) n = 0;
    opdb_sb_clear(k);
    static const int order[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        if (key_shape_csv(order[i] < n ? slot[order[i]] : opdb_span_make("", 0), k, where, err)) return -1;
    long long nkv;
    if (n > 6 && opdb_py_int(slot[6].p, slot[6].n, &nkv)) opdb_sb_addf(k, "%lld|", nkv);
    else opdb_sb_adds(k, "N|");
    if (key_shape_csv(n > 4 ? slot[4] : opdb_span_make("", 0), k, where, err)) return -1;
    if (key_shape_csv(n > 14 ? slot[14] : opdb_span_make("", 0), k, where, err)) return -1;
    return 0;
}

/* Whether the file starts with a UTF-8 byte-order mark. */
static bool had_bom(const char *path) {
    unsigned char b[3] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    size_t n = fread(b, 1, 3, f);
    fclose(f);
    return n == 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf;
}

/* The CSV opened at its first row; the header in c->f. */
static int open_csv(opdb_csv_file *c, const char *path, const char *shown, opdb_err *err) {
    static const db_open_opts o = {.need_header = true};
    db_open_problem p;
    opdb_err e;
    opdb_err_clear(&e);
    if (db_csv_open(c, path, &o, &p, &e) == 0) return 0;
    if (p.kind == DB_OPEN_NO_HEADER) return opdb_fail(err, OPDB_ERR_RUNTIME, "CSV header is empty: %s", shown);
    return opdb_fail(err, e.code, "%s", e.msg);
}

/* A row this back-fill already filled: it carries the tag and one payload's
 * values and kv values (the payloads' de-duplication key); that payload's
 * index, else e->n. Such a row gets that payload alone, so running over the
 * back-fill's own output changes nothing; the reference (quirks) expands it
 * again, one row per payload each time. */
static size_t refilled(bool quirks, const opdb_span *cells, const int *pay_col, int comp_col, const char *tag,
                       const keyed *e) {
    if (quirks || !opdb_span_eq(cells[comp_col], opdb_span_cstr(tag))) return e->n;
    for (size_t j = 0; j < e->n; j++)
        if (opdb_span_eq(cells[pay_col[PAY_VALUES]], opdb_span_cstr(e->p[j].val[PAY_VALUES])) &&
            opdb_span_eq(cells[pay_col[PAY_KV_VALUES]], opdb_span_cstr(e->p[j].val[PAY_KV_VALUES])))
            return j;
    return e->n;
}

static int fia_fill_run(const opdb_fia_fill_opts *o, opdb_err *err) {
    const char *tag = o->metadata_tag ? o->metadata_tag : "runtime_values_dumped";
    const char *outp = o->output_path ? o->output_path : o->csv_path;
    char *csvn = opdb_path_normalize(o->csv_path), *jsn = opdb_path_normalize(o->jsonl_path),
         *outn = opdb_path_normalize(outp);
    int rc = 0;
    /* a writer like every other: under the lock of the folder written, the
     * output staged and replaced only if it is still the file it was when the
     * CSV was read (another program may have changed it meanwhile) */
    char *outdir = opdb_path_parent(outp);
    int lock = opdb_dir_lock(outdir, err);
    if (lock < 0) rc = -1;
    opdb_file_id out_id;
    opdb_file_id_take(outp, &out_id);
    if (rc == 0) opdb_txn_begin(outdir);
    if (rc == 0 && !opdb_is_file(o->csv_path)) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "CSV not found: %s", csvn);
    else if (rc == 0 && !opdb_is_file(o->jsonl_path)) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "JSONL not found: %s", jsn);
    index_t ix = {0};
    if (rc == 0) rc = load_jsonl(o->jsonl_path, &ix, err);
    opdb_csv_file c;
    memset(&c, 0, sizeof c);
    c.fd = -1;
    if (rc == 0) rc = open_csv(&c, o->csv_path, csvn, err);
    opdb_strbuf out, key;
    opdb_sb_init(&out);
    opdb_sb_init(&key);
    size_t n_in = 0, n_out = 0, matched = 0;
    if (rc == 0) {
        const opdb_field *f = c.f;
        int r;
        /* header, then the payload columns it lacks */
        int ncols = c.nf, in_col = -1, pay_col[NPAY], comp_col = -1;
        char **cols = opdb_xmalloc(((size_t)c.nf + NPAY + 2) * sizeof *cols);
        for (int i = 0; i < c.nf; i++) {
            cols[i] = opdb_xmalloc(f[i].n + 1);
            memcpy(cols[i], f[i].p, f[i].n);
            cols[i][f[i].n] = '\0';
            if (strcmp(cols[i], OPDB_COL_INPUT_SHAPES) == 0) in_col = i;
        }
        for (int c = 0; c <= NPAY; c++) {
            const char *name = c < NPAY ? k_payload_cols[c] : COMPLETENESS;
            int at = -1;
            for (int i = 0; i < ncols; i++)
                if (strcmp(cols[i], name) == 0) at = i;
            if (at < 0) {
                cols[ncols] = opdb_xstrdup(name);
                at = ncols++;
            }
            if (c < NPAY) pay_col[c] = at;
            else comp_col = at;
        }
        /* like parse and update: a CSV that is not a database table (random
         * bytes, another table) is refused, not passed through */
        if (in_col < 0)
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: not a database table: the header has no Input Shapes column",
                           csvn);
        /* the input's encoding is kept: a byte-order mark only where it had
         * one (the reference always writes one) */
        if (o->quirks || had_bom(o->csv_path)) opdb_sb_adds(&out, "\xef\xbb\xbf");
        opdb_span *cells = opdb_xmalloc((size_t)ncols * sizeof *cells);
        for (int i = 0; i < ncols; i++) cells[i] = opdb_span_cstr(cols[i]);
        opdb_csv_write_record(&out, cells, (size_t)ncols);
        int hdr_n = c.nf;
        while (rc == 0 && (r = opdb_csv_file_next(&c, false)) > 0) {
            if (c.x.unterminated) {
                rc = opdb_fail(err, OPDB_ERR_RUNTIME,
                               "%s:%llu: unterminated quoted field (the quote never closes before the end of the file)",
                               csvn, (unsigned long long)c.x.rec_line);
                break;
            }
            n_in++;
            for (int i = 0; i < ncols; i++)
                cells[i] = i < hdr_n && i < c.nf ? opdb_span_make(f[i].p, f[i].n) : opdb_span_make("", 0);
            opdb_span in = in_col >= 0 && in_col < c.nf ? opdb_span_make(f[in_col].p, f[in_col].n) : opdb_span_make("", 0);
            char where[600];
            snprintf(where, sizeof where, "%s:%llu", csvn, (unsigned long long)c.x.rec_line);
            if (csv_key(in, &key, where, err)) {
                rc = -1;
                break;
            }
            keyed *e = ix_get(&ix, key.p, false);
            if (!e || !e->n) {
                opdb_csv_write_record(&out, cells, (size_t)ncols);
                n_out++;
                continue;
            }
            matched++;
            size_t only = refilled(o->quirks, cells, pay_col, comp_col, tag, e);
            for (size_t j = 0; j < e->n; j++) {
                if (only < e->n && j != only) continue;
                for (int c = 0; c < NPAY; c++) cells[pay_col[c]] = opdb_span_cstr(e->p[j].val[c]);
                cells[comp_col] = opdb_span_cstr(tag);
                opdb_csv_write_record(&out, cells, (size_t)ncols);
                n_out++;
            }
        }
        for (int i = 0; i < ncols; i++) free(cols[i]);
        free(cols);
        free(cells);
    }
    opdb_csv_file_close(&c);
    if (rc == 0) {
        opdb_atomic_file af;
        rc = opdb_atomic_open(&af, outp, err);
        if (rc == 0) {
            opdb_atomic_expect(&af, &out_id);
            opdb_atomic_append_direct(&af, out.p, out.n);
            rc = opdb_atomic_commit(&af, err);
        }
    }
    if (lock >= 0 && opdb_txn_end(rc == 0, err)) rc = -1;
    opdb_dir_unlock(lock);
    free(outdir);
    if (rc == 0) {
        long long k = (long long)n_out - (long long)n_in;
        char delta[32];
        snprintf(delta, sizeof delta, k > 0 ? "+%lld" : "%lld", k);
        fprintf(o->out, "Backfilled %zu/%zu CSV rows matched, %zu output rows (%s from 1:N expansion) from %s into %s\n",
                matched, n_in, n_out, delta, jsn, outn);
        if (!matched) opdb_warn_nothing("no CSV row matched a JSONL record: nothing was back-filled");
        if (o->totals) *o->totals = (opdb_fia_fill_totals){n_in, matched, n_out};
    }
    opdb_sb_free(&out);
    opdb_sb_free(&key);
    ix_free(&ix);
    free(csvn), free(jsn), free(outn);
    return rc;
}

static void fia_fill_defaults(opdb_fia_fill_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_fia_fill_opts, fia_fill_defaults)

int opdb_fia_fill_run(const opdb_fia_fill_opts *o, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_fia_fill_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = fia_fill_run(o, err);
    opdb_call_leave(&saved);
    return rc;
}
