/* Reading op_summary files into the group table (see op_summary_table.h):
 * rows decoded and signed on worker threads in batches, looked up in the
 * published tables, accumulated in file order by the caller's thread. */
#include "update/op_summary_table.h"

#include "update/op_summary.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv/batch.h"
#include "db/sig_cells.h"
#include "opdb/csv.h"
#include "opdb/ingest.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/signature.h"

/* The metrics of each half, in the order of their sums. */
static const unsigned char k_half_members[2][AGG_HALF0_N] = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 24},
                                                              {13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}};
static const int k_half_n[2] = {AGG_HALF0_N, AGG_HALF1_N};

enum { C_OPTYPE, C_DUR, C_TASKTYPE, C_EP, C_BASE0, C_METRIC0 = C_BASE0 + 8, C_N = C_METRIC0 + OPDB_NMETRICS };

/* One decoded op_summary row (worker side). */
typedef struct os_row {
    opdb_span op;
    opdb_span cell[9];          /* base 8 + Task Type, stripped */
    opdb_span ep;               /* EP Size, stripped */
    size_t sig_off, sig_len;    /* in the batch's signature buffer (sign_row) */
    uint64_t hash, ophash;
    uint64_t cells_hash;        /* of op and the signature cells, when ep is empty */
    uint32_t group;             /* index + 1 when the worker's probe found it */
    double dur;
    bool numeric;
    bool rejected;              /* a non-finite or negative number was skipped (default mode) */
    unsigned char nonzero;      /* bit h: a metric of half h is not 0 */
    double metric[OPDB_NMETRICS];
} os_row;

typedef struct os_out {
    os_row *v;
    size_t n, cap;
    opdb_strbuf sigs;
    opdb_strbuf scratch;        /* one row's signature */
} os_out;

typedef struct os_job {
    gtable *t;
    const int *col;             /* each needed column's position; a missing one: maxf */
    int maxf;
    bool quirks;
    unsigned long long *rows;
    unsigned long long *rejected; /* rows with a non-finite or negative number skipped */
} os_job;

/* The hash the cells table files a row under: OP Type and Input Shapes ..
 * Output Data Types, stripped. */
static uint64_t cells_hash_of(const os_row *r) {
    uint64_t h = opdb_hash_bytes(r->op.p, r->op.n, 17);
    for (int b = 2; b < 7; b++) h = opdb_hash_bytes(r->cell[b].p, r->cell[b].n, h);
    return h;
}

/* A number cell's value: cells inside [lo, hi], a batch with
 * OPDB_BATCH_PAD bytes after it, are read 16 bytes at a time. */
static inline bool cell_float(opdb_span c, const char *lo, const char *hi, double *v) {
    if ((uintptr_t)c.p - (uintptr_t)lo <= (uintptr_t)hi - (uintptr_t)lo) return opdb_py_float_padded(c.p, c.n, v);
    return opdb_py_float(c.p, c.n, v);
}

/* f: room for maxf + 1 fields (new_fields), f[maxf] empty; a short row's
 * missing cells are made empty here, so each cell is read without checks.
 * lo..hi: the batch the fields point into (NULL, NULL: no padding known). */
static void decode_row(const os_job *J, opdb_field *f, int nf, os_out *o, const char *lo, const char *hi) {
    const int *col = J->col;
    for (int i = nf; i < J->maxf; i++) f[i] = (opdb_field){(char *)"", 0};
#define CELL(c) opdb_span_make(f[col[c]].p, f[col[c]].n)
    OPDB_ALLOC_GROW(o->v, o->n + 1, o->cap);
    os_row *r = &o->v[o->n++];
    r->group = 0; /* probe_cells, probe_batch */
    r->rejected = false; /* take() reads it for skipped rows too */
    r->sig_len = 0; /* unsigned: every later pass skips the row (the array is reused) */
    r->op = opdb_py_strip(CELL(C_OPTYPE));
    if (r->op.n == 0 || r->op.n >= 512) {
        r->op.n = 0;
        return;
    }
    for (int b = 0; b < 8; b++) r->cell[b] = opdb_py_strip(CELL(C_BASE0 + b));
    r->cell[8] = opdb_py_strip(CELL(C_TASKTYPE));
    r->ep = opdb_py_strip(CELL(C_EP));
    r->cells_hash = r->ep.n ? 0 : cells_hash_of(r);
    opdb_span ds = CELL(C_DUR);
    r->numeric = cell_float(ds, lo, hi, &r->dur);
    /* inf, nan, 1e400 or a negative time is no measurement: skipped like
     * N/A (the reference averages it in: --reference-quirks) */
    r->rejected = r->numeric && !J->quirks && !(r->dur >= 0.0 && r->dur <= DBL_MAX);
    if (r->rejected) r->numeric = false;
    if (!r->numeric) r->dur = 0.0;
    unsigned nonzero = 0;
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        opdb_span ms = CELL(C_METRIC0 + m);
        /* half the counters of a row are those of the other core type: 0 */
        bool zero = (ms.n == 1 && ms.p[0] == '0') || (ms.n == 3 && ms.p[0] == '0' && ms.p[1] == '.' && ms.p[2] == '0');
        double v = 0.0;
        bool got = !zero && cell_float(ms, lo, hi, &v);
        /* a non-finite (nan, inf, 1e400) or negative counter is no measurement
         * either: 0 like N/A, the row counted (--reference-quirks sums it in) */
        if (got && !J->quirks && !(v >= 0.0 && v <= DBL_MAX)) got = false, r->rejected = true;
        r->metric[m] = got ? v : 0.0;
        nonzero |= (unsigned)(r->metric[m] != 0.0) << agg_metric_half[m]; /* NaN too */
    }
    r->nonzero = (unsigned char)nonzero;
#undef CELL
}

/* A row's signature and hashes, for the rows no group was found for by
 * their cells.  The signature of stripped cells is that of the cells as
 * written (every rule strips first). */
static void sign_row(os_out *o, os_row *r) {
    char opbuf[512];
    memcpy(opbuf, r->op.p, r->op.n);
    opbuf[r->op.n] = '\0';
    opdb_span key[OPDB_NKEY_COLS]; /* the base cells, then EP Size (opdb_key_cols order) */
    memcpy(key, r->cell, OPDB_NBASE_COLS * sizeof *key);
    key[OPDB_NBASE_COLS] = r->ep;
    opdb_sig_cells sc = db_sig_cells_from_row(db_sig_cols_of_key_cols(), key, OPDB_NKEY_COLS);
    opdb_strbuf *sig = &o->scratch;
    opdb_signature(&sc, opbuf, sig);
    r->sig_off = o->sigs.n;
    r->sig_len = sig->n;
    opdb_sb_add(&o->sigs, sig->p, sig->n);
    opdb_sb_addc(&o->sigs, '\0');
    r->ophash = opdb_hash_bytes(opbuf, r->op.n, 9);
    r->hash = opdb_hash_bytes(sig->p, sig->n, r->ophash);
}

/* Whether group key k was first seen with row r's op and signature cells
 * (stored each up to its first NUL byte: a cell with one never matches). */
static bool cells_match(const gkey *k, const os_row *r) {
    if (k->cells_hash != r->cells_hash || k->opn != r->op.n || memcmp(k->op, r->op.p, r->op.n) != 0) return false;
    const char *c = k->cells;
    for (int b = 2; b < 7; b++) {
        size_t n = strlen(c);
        if (n != r->cell[b].n || memcmp(c, r->cell[b].p, n) != 0) return false;
        c += n + 1;
    }
    return true;
}

/* Worker: the rows of a batch looked up by their cells; each row asks for
 * its slot, then its key, then the key's cells AHEAD rows before they are
 * read. */
static void probe_cells(const os_job *J, os_out *o) {
    enum { RING = 4 * AHEAD };
    const opdb_pub_slots *s = atomic_load_explicit(&J->t->cells, memory_order_acquire);
    size_t mask = s->nslots - 1, n = o->n;
    const gkey *first[RING]; /* the key in each row's first slot */
    for (size_t i = 0; i < n + 3 * AHEAD; i++) {
        os_row *r;
        if (i < n && (r = &o->v[i])->op.n && !r->ep.n) __builtin_prefetch(&s->slot[r->cells_hash & mask]);
        if (i >= AHEAD && i - AHEAD < n) {
            r = &o->v[i - AHEAD];
            const gkey *k = r->op.n && !r->ep.n ? opdb_pub_slots_at(s, r->cells_hash & mask) : NULL;
            if (k) __builtin_prefetch(k);
            first[(i - AHEAD) % RING] = k;
        }
        if (i >= 2 * AHEAD && i - 2 * AHEAD < n) {
            const gkey *k = first[(i - 2 * AHEAD) % RING];
            if (k && k->cells_hash == o->v[i - 2 * AHEAD].cells_hash) prefetch_lines(k->cells, 3); /* ~130 bytes */
        }
        if (i >= 3 * AHEAD) {
            r = &o->v[i - 3 * AHEAD];
            size_t j = r->cells_hash & mask;
            for (const gkey *k = first[(i - 3 * AHEAD) % RING]; k; j = (j + 1) & mask, k = opdb_pub_slots_at(s, j)) {
                if (cells_match(k, r)) {
                    r->group = k->index + 1;
                    break;
                }
            }
        }
    }
}

/* Worker: every signed row of a batch (sig_len > 0: a signature has at
 * least its separators) looked up in the published keys,
 * with the slot and then the key of the rows AHEAD further on requested
 * from memory before they are needed. */
static void probe_batch(const os_job *J, os_out *o) {
    const opdb_pub_slots *s = atomic_load_explicit(&J->t->table, memory_order_acquire);
    size_t mask = s->nslots - 1, n = o->n;
    for (size_t i = 0; i < n + 2 * AHEAD; i++) {
        if (i < n && o->v[i].sig_len) __builtin_prefetch(&s->slot[o->v[i].hash & mask]);
        if (i >= AHEAD && i - AHEAD < n && o->v[i - AHEAD].sig_len) {
            const void *k = opdb_pub_slots_at(s, o->v[i - AHEAD].hash & mask);
            if (k) prefetch_lines(k, 3); /* the key and its signature after it */
        }
        if (i >= 2 * AHEAD) {
            os_row *r = &o->v[i - 2 * AHEAD];
            if (r->sig_len) r->group = gprobe(J->t, r->op.p, r->op.n, o->sigs.p + r->sig_off, r->sig_len, r->hash);
        }
    }
}

/* Adds the metrics of half h of r to g's sums (allocated on first use: a
 * half skipped while zero keeps its sums at 0.0, as adding zeros would). */
static inline void add_half(const os_job *J, group *g, const os_row *r, int h) {
    double *s = g->half[h];
    if (!s) {
        s = g->half[h] = opdb_arena_alloc(J->t->arena, (size_t)k_half_n[h] * sizeof *s);
        memset(s, 0, (size_t)k_half_n[h] * sizeof *s);
    }
    for (int j = 0; j < k_half_n[h]; j++) s[j] += r->metric[k_half_members[h][j]];
}

static void take(const os_job *J, const os_out *o) {
    for (size_t i = 0; i < o->n; i++) {
        if (i + AHEAD < o->n) {
            const os_row *a = &o->v[i + AHEAD];
            if (a->group) {
                prefetch_lines(&J->t->g[a->group - 1], 2);
            } else if (a->op.n) { /* a new group, or one published since: its slot */
                const opdb_pub_slots *s = atomic_load_explicit(&J->t->table, memory_order_relaxed);
                __builtin_prefetch(&s->slot[a->hash & (s->nslots - 1)]);
            }
        }
        if (i + AHEAD / 2 < o->n && o->v[i + AHEAD / 2].group) { /* its group was asked for: its sums */
            const os_row *a = &o->v[i + AHEAD / 2];
            const group *ga = &J->t->g[a->group - 1];
            for (int h = 0; h < 2; h++)
                if ((a->nonzero >> h & 1) && ga->half[h]) prefetch_lines(ga->half[h], 2);
        }
        const os_row *r = &o->v[i];
        (*J->rows)++;
        if (r->rejected) (*J->rejected)++;
        if (r->op.n == 0) continue;
        group *g = r->group ? &J->t->g[r->group - 1]
                            : gfind(J->t, r->op.p, r->op.n, r->ophash, o->sigs.p + r->sig_off, r->sig_len, r->hash);
        if (g->count == 0) { /* the first row's cells, in one piece of the arena */
            size_t total = 0;
            for (int b = 0; b < 9; b++) total += r->cell[b].n + 1;
            char *d = opdb_arena_alloc(J->t->arena, total);
            g->first = d;
            char *cells = NULL;
            for (int b = 0; b < 9; b++) {
                if (b == 2) cells = d;
                /* up to a NUL byte, as every reader of the C string sees it:
                 * the cells are found again by walking their terminators */
                const char *nul = memchr(r->cell[b].p, '\0', r->cell[b].n);
                size_t n = nul ? (size_t)(nul - r->cell[b].p) : r->cell[b].n;
                memcpy(d, r->cell[b].p, n);
                d[n] = '\0';
                d += n + 1;
            }
            if (!r->ep.n) { /* findable by its cells from now on */
                gkey *k = g->key;
                k->cells = cells;
                k->cells_hash = r->cells_hash;
                opdb_pub_slots_place(atomic_load_explicit(&J->t->cells, memory_order_relaxed), k, k->cells_hash);
            }
        }
        g->count++;
        if (r->numeric || J->quirks) {
            if (!g->have_min || r->dur < g->min) g->min = r->dur;
            g->have_min = true;
        }
        for (int h = 0; h < 2; h++)
            if (r->nonzero >> h & 1) add_half(J, g, r, h);
    }
}

static void *os_new(void *ctx) {
    const os_job *J = ctx;
    if (J && J->t->nspare) return J->t->spare_out[--J->t->nspare];
    os_out *o = opdb_xcalloc(1, sizeof *o);
    opdb_sb_init(&o->sigs);
    opdb_sb_init(&o->scratch);
    return o;
}

static void os_free(void *out, void *ctx) {
    const os_job *J = ctx;
    if (J && J->t->nspare < (int)(sizeof J->t->spare_out / sizeof *J->t->spare_out)) {
        J->t->spare_out[J->t->nspare++] = out;
        return;
    }
    os_release(out);
}

void os_release(void *out) {
    os_out *o = out;
    free(o->v);
    opdb_sb_free(&o->sigs);
    opdb_sb_free(&o->scratch);
    free(o);
}

void os_release_spares(gtable *t) {
    while (t->nspare) os_release(t->spare_out[--t->nspare]);
}

/* Fields for decode_row: maxf, and an empty one after them for the columns
 * a file lacks. */
static opdb_field *new_fields(const os_job *J) {
    opdb_field *f = opdb_xmalloc(((size_t)J->maxf + 1) * sizeof *f);
    f[J->maxf] = (opdb_field){(char *)"", 0};
    return f;
}

static void os_work(opdb_batch *b, void *ctx) {
    const os_job *J = ctx;
    os_out *o = b->out;
    o->n = 0;
    opdb_sb_clear(&o->sigs);
    size_t want = b->len / 192 + 64; /* op_summary rows take 200-1000 bytes: seldom grown (and copied) */
    if (o->cap < want) {
        free(o->v);
        o->v = opdb_xmalloc(want * sizeof *o->v);
        o->cap = want;
    }
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, b->data, b->len);
    opdb_field *f = new_fields(J);
    int nf, rc;
    size_t off;
    while ((rc = opdb_csv_fast_next(&t, f, J->maxf, &nf, &off)) > 0) decode_row(J, f, nf, o, b->data, b->data + b->len);
    if (rc < 0) {
        b->anomaly = true;
    } else {
        probe_cells(J, o);
        for (size_t i = 0; i < o->n; i++)
            if (o->v[i].op.n && !o->v[i].group) sign_row(o, &o->v[i]);
        probe_batch(J, o);
    }
    free(f);
}

static int os_consume(opdb_batch *b, void *ctx, opdb_err *err) {
    (void)err;
    take(ctx, b->out);
    return 0;
}

int aggregate_file(const char *path, gtable *t, bool quirks, unsigned long long *rows,
                   unsigned long long *rejected, opdb_err *err) {
    opdb_csv_file c;
    if (opdb_csv_file_open(&c, path, 4096, err)) return -1;
    int col[C_N];
    for (int i = 0; i < C_N; i++) col[i] = -1;
    int rc = opdb_csv_file_next(&c, true);
    uint64_t start = opdb_csv_file_offset(&c);
    int maxcol = 0;
    if (rc > 0) {
        col[C_OPTYPE] = opdb_csv_col(c.f, c.nf, OPDB_OPSUM_COL_OP_TYPE);
        col[C_DUR] = opdb_csv_col(c.f, c.nf, OPDB_OPSUM_COL_TASK_DUR);
        col[C_TASKTYPE] = opdb_csv_col(c.f, c.nf, OPDB_OPSUM_COL_TASK_TYPE);
        col[C_EP] = opdb_csv_col(c.f, c.nf, OPDB_COL_EP_SIZE);
        for (int b = 0; b < 8; b++) col[C_BASE0 + b] = opdb_csv_col(c.f, c.nf, opdb_base_cols[b]);
        for (int m = 0; m < OPDB_NMETRICS; m++) col[C_METRIC0 + m] = opdb_csv_col(c.f, c.nf, opdb_metric_names[m]);
        for (int i = 0; i < C_N; i++)
            if (col[i] + 1 > maxcol) maxcol = col[i] + 1;
    }
    /* like parse: a file that is not an op_summary (garbage, another table)
     * is an error, not zero rows; an empty one is said */
    if (!quirks && rc > 0 && (col[C_OPTYPE] < 0 || col[C_DUR] < 0)) {
        opdb_csv_file_close(&c);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: not an op_summary table: the header has no %s column", path,
                         col[C_OPTYPE] < 0 ? OPDB_OPSUM_COL_OP_TYPE : OPDB_OPSUM_COL_TASK_DUR);
    }
    if (!quirks && rc == 0) opdb_warn("%s: empty file: no op_summary rows", path);
    uint64_t cut_line = 0;
    int cut_nf = !quirks && rc > 0 ? opdb_csv_cut_tail(c.fd, start, c.nf, &cut_line) : 0;
    if (cut_nf) { /* the reference reads the missing cells as empty */
        int hdr_nf = c.nf;
        opdb_csv_file_close(&c);
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s:%llu: the last row has %d of the header's %d fields and no final newline (the file was "
                         "cut while being written)",
                         path, (unsigned long long)cut_line, cut_nf, hdr_nf);
    }
    int fd = c.fd;
    if (maxcol < 1) maxcol = 1;
    for (int i = 0; i < C_N; i++)
        if (col[i] < 0) col[i] = maxcol; /* new_fields: the empty field */
    os_job J = {t, col, maxcol, quirks, rows, rejected};
    if (rc > 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        opdb_batch_ops ops = {os_new, os_free, os_work, os_consume, &J};
        uint64_t resume = 0;
        /* 2 MiB batches; a small file in 8 or more, so that it keeps the
         * workers busy too and its later batches find earlier groups */
        struct stat st;
        size_t batch = 2u << 20;
        if (fstat(fd, &st) == 0 && (size_t)st.st_size / 8 < batch)
            batch = (size_t)st.st_size / 8 > (256u << 10) ? (size_t)st.st_size / 8 : 256u << 10;
        rc = opdb_batch_run(fd, path, start, n > 0 ? (int)n : 1, batch, &ops, &resume, err);
        if (rc == 1) { /* quoting only the exact rules decide: re-read the rest exactly */
            opdb_byte_reader br;
            opdb_byte_reader_init(&br, fd, resume, 1 << 18);
            opdb_csv_exact x;
            opdb_csv_exact_init(&x, &br, 1);
            opdb_field *f = new_fields(&J);
            os_out *o = os_new(NULL);
            int nf;
            while ((rc = opdb_csv_exact_next(&x, f, J.maxf, &nf, false)) > 0) {
                if (x.unterminated && !quirks) {
                    opdb_fail(err, OPDB_ERR_RUNTIME,
                              "%s:%llu: unterminated quoted field (the quote never closes before the end of the file)", path,
                              (unsigned long long)opdb_csv_line_of_offset(fd, x.rec_off));
                    rc = -2;
                    break;
                }
                o->n = 0;
                opdb_sb_clear(&o->sigs);
                decode_row(&J, f, nf, o, NULL, NULL);
                if (o->n && o->v[0].op.n) sign_row(o, &o->v[0]);
                take(&J, o);
            }
            if (rc == -1) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
            os_free(o, NULL);
            free(f);
            opdb_csv_exact_free(&x);
            opdb_byte_reader_free(&br);
        }
    } else if (rc < 0) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
    }
    opdb_csv_file_close(&c);
    return rc < 0 ? -1 : 0;
}
