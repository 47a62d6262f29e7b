/* See op_summary.h. */
#include <float.h>
#include "update/op_summary.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pub_slots.h"
#include "csv/batch.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/ingest.h"
#include "opdb/pystr.h"
#include "opdb/signature.h"

static const char *const k_base[8] = {"OP State", "Accelerator Core", "Input Shapes", "Input Data Types",
                                      "Input Formats", "Output Shapes", "Output Data Types", "Output Formats"};

/* ---- discovery */

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static void sl_push(strlist *l, char *s) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = opdb_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

static bool is_prof_name(const char *name) { return strncmp(name, "PROF_", 5) == 0; }

static void find_prof_dirs(const char *dir, strlist *out) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *child = opdb_path_join(dir, e->d_name);
        struct stat st;
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (is_prof_name(e->d_name)) sl_push(out, opdb_xstrdup(child));
            find_prof_dirs(child, out);
        }
        free(child);
    }
    closedir(d);
}

static int cmp_path(const void *a, const void *b) { return opdb_path_cmp(*(char *const *)a, *(char *const *)b); }

static bool is_op_summary(const char *name, void *ctx) {
    (void)ctx;
    size_t n = strlen(name);
    return strncmp(name, "op_summary_", 11) == 0 && n >= 15 && strcmp(name + n - 4, ".csv") == 0;
}

int op_summary_find_files(const char *const *paths, size_t n, char ***files, size_t *nfiles, opdb_err *err) {
    strlist dirs = {0}, out = {0};
    for (size_t i = 0; i < n; i++) {
        if (!opdb_is_dir(paths[i])) {
            for (size_t k = 0; k < dirs.n; k++) free(dirs.v[k]);
            free(dirs.v);
            return opdb_fail(err, OPDB_ERR_RUNTIME, "PROF path does not exist or is not a folder: %s", paths[i]);
        }
        char *norm = opdb_path_normalize(paths[i]);
        if (is_prof_name(opdb_path_basename(norm))) sl_push(&dirs, opdb_xstrdup(norm));
        find_prof_dirs(norm, &dirs);
        free(norm);
    }
    if (dirs.n > 1) qsort(dirs.v, dirs.n, sizeof *dirs.v, cmp_path);
    for (size_t i = 0; i < dirs.n; i++) {
        if (i && strcmp(dirs.v[i], dirs.v[i - 1]) == 0) continue; /* a set, as the reference */
        char *mso = opdb_path_join(dirs.v[i], "mindstudio_profiler_output");
        DIR *d = opendir(mso);
        if (d) {
            strlist here = {0};
            struct dirent *e;
            while ((e = readdir(d)) != NULL)
                if (is_op_summary(e->d_name, NULL)) sl_push(&here, opdb_path_join(mso, e->d_name));
            closedir(d);
            if (here.n > 1) qsort(here.v, here.n, sizeof *here.v, cmp_path);
            for (size_t k = 0; k < here.n; k++) sl_push(&out, here.v[k]);
            free(here.v);
        }
        free(mso);
    }
    for (size_t k = 0; k < dirs.n; k++) free(dirs.v[k]);
    free(dirs.v);
    if (out.n == 0) {
        free(out.v);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "No op_summary_*.csv found");
    }
    *files = out.v;
    *nfiles = out.n;
    return 0;
}

/* ---- aggregation */


/* A group's identity, immutable once published in the key table. */
typedef struct gkey {
    const char *op, *sig;       /* NUL-terminated, in the arena */
    size_t opn, sign;
    uint64_t hash;
    uint32_t index;             /* position in gtable.g */
    uint32_t opid;              /* the op's position in gtable.ops */
    /* in the cells table (set before the key enters it): the first row's
     * signature cells as stored in group.first, and their hash */
    const char *cells;
    uint64_t cells_hash;
} gkey;

typedef struct group {
    unsigned long long count;
    double min;
    double *half[2]; /* metric sums by half (agg_msum), in the arena; NULL while all zero */
    bool have_min;
    uint32_t opid;   /* key->opid, read here when the groups are walked in order */
    gkey *key;
    char *first;     /* base 8 + Task Type, stripped, each NUL-terminated, back to back */
} group;

/* The metrics of each half, in the order of their sums. */
static const unsigned char k_half_members[2][AGG_HALF0_N] = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 24},
                                                              {13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}};
static const int k_half_n[2] = {AGG_HALF0_N, AGG_HALF1_N};
const unsigned char agg_metric_half[OPDB_NMETRICS] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
const unsigned char agg_metric_pos[OPDB_NMETRICS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                     0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13};

/* Groups and keys are looked up in a table far bigger than the caches, one
 * row after another: rows ask for their cache lines this many rows ahead. */
enum { AHEAD = 8 };

static inline void prefetch_lines(const void *p, int lines) {
    for (int i = 0; i < lines; i++) __builtin_prefetch((const char *)p + 64 * i);
}

/* Groups in first-seen order.  The key table is append-only and published
 * with release/acquire atomics, so workers look rows up (gprobe) while the
 * caller's thread adds groups and accumulates in file order: the string
 * compares and their cache misses run in parallel, and a row the probe
 * misses is looked up again, authoritatively, by the caller.
 *
 * A second table finds a group by its first row's signature cells as
 * written (OP Type, Input Shapes .. Output Data Types, stripped): a row
 * with the same cells has the same signature, so a profile's repeated
 * launches skip computing it.  Rows with an EP Size cell (read by
 * DispatchFFNCombine's signature) take the signature path only. */
typedef struct gtable {
    group *g;
    size_t n, cap;
    _Atomic(opdb_pub_slots *) table; /* of gkey, by (op, signature) */
    _Atomic(opdb_pub_slots *) cells; /* of gkey, by the first row's cells (cells_hash) */
    opdb_arena *arena;          /* the group strings; handed on to the result */
    /* interned op names: a group's op is one of a few dozen */
    const char **ops;
    size_t *opn, nops, capops;
    uint32_t recent[64];        /* op id + 1 by op hash, the last seen */
    /* batch outputs of files read before, for the next file's pipeline (its
     * row arrays already faulted in: fresh memory is slow to get on a VM
     * that hands free pages back to its host) */
    void *spare_out[16];
    int nspare;
} gtable;

/* expect_groups: a guess that sizes the table, so it seldom grows (growing
 * places every key again, on the thread that accumulates). */
static void gtable_init(gtable *t, opdb_arena *arena, size_t expect_groups) {
    memset(t, 0, sizeof *t);
    t->arena = arena;
    size_t slots = 1024;
    while (slots < 2 * expect_groups && slots < ((size_t)1 << 22)) slots *= 2; /* 32 MiB at most */
    t->cap = expect_groups > 256 ? expect_groups : 256;
    t->g = opdb_big_alloc(t->cap * sizeof *t->g);
    atomic_init(&t->table, opdb_pub_slots_new(slots));
    atomic_init(&t->cells, opdb_pub_slots_new(slots));
}

static void os_release(void *out);

static void gtable_free(gtable *t) {
    while (t->nspare) os_release(t->spare_out[--t->nspare]);
    free(t->ops);
    free(t->opn);
    opdb_big_free(t->g, t->cap * sizeof *t->g);
    opdb_pub_slots_free(atomic_load(&t->table));
    opdb_pub_slots_free(atomic_load(&t->cells));
}

static bool key_is(const gkey *k, const char *op, size_t opn, const char *sig, size_t sign, uint64_t h) {
    return k->hash == h && k->sign == sign && k->opn == opn && memcmp(k->sig, sig, sign) == 0 &&
           memcmp(k->op, op, opn) == 0;
}

/* Any thread: the group index + 1 of (op, sig) if already published, else 0. */
static uint32_t gprobe(const gtable *t, const char *op, size_t opn, const char *sig, size_t sign, uint64_t h) {
    const opdb_pub_slots *s = atomic_load_explicit(&((gtable *)t)->table, memory_order_acquire);
    size_t mask = s->nslots - 1;
    for (size_t j = h & mask;; j = (j + 1) & mask) {
        const gkey *k = opdb_pub_slots_at(s, j);
        if (!k) return 0;
        if (key_is(k, op, opn, sig, sign, h)) return k->index + 1;
    }
}

/* Caller's thread: the id of op (hash hop), interned once. */
static uint32_t op_id(gtable *t, const char *op, size_t opn, uint64_t hop) {
    uint32_t *slot = &t->recent[hop & 63];
    if (*slot && t->opn[*slot - 1] == opn && memcmp(t->ops[*slot - 1], op, opn) == 0) return *slot - 1;
    size_t i;
    for (i = 0; i < t->nops; i++)
        if (t->opn[i] == opn && memcmp(t->ops[i], op, opn) == 0) break;
    if (i == t->nops) {
        if (t->nops == t->capops) {
            t->capops = t->capops ? t->capops * 2 : 64;
            t->ops = opdb_xrealloc(t->ops, t->capops * sizeof *t->ops);
            t->opn = opdb_xrealloc(t->opn, t->capops * sizeof *t->opn);
        }
        t->ops[i] = opdb_arena_strndup(t->arena, op, opn);
        t->opn[i] = opn;
        t->nops++;
    }
    *slot = (uint32_t)i + 1;
    return (uint32_t)i;
}

/* Caller's thread only. */
static group *gfind(gtable *t, const char *op, size_t opn, uint64_t hop, const char *sig, size_t sign, uint64_t h) {
    uint32_t hit = gprobe(t, op, opn, sig, sign, h);
    if (hit) return &t->g[hit - 1];
    if (t->n == t->cap) {
        t->g = opdb_big_realloc(t->g, t->cap * sizeof *t->g, 2 * t->cap * sizeof *t->g);
        t->cap *= 2;
    }
    uint32_t opid = op_id(t, op, opn, hop);
    gkey *k = opdb_arena_alloc(t->arena, sizeof *k);
    k->op = t->ops[opid];
    k->opid = opid;
    k->opn = opn;
    k->sig = opdb_arena_strndup(t->arena, sig, sign);
    k->sign = sign;
    k->hash = h;
    k->cells = NULL; /* not in the cells table (take) */
    k->cells_hash = 0;
    k->index = (uint32_t)t->n;
    group *g = &t->g[t->n++];
    memset(g, 0, sizeof *g);
    g->key = k;
    g->opid = opid;
    opdb_pub_slots *s = atomic_load_explicit(&t->table, memory_order_relaxed);
    if (t->n * 2 > s->nslots) {
        opdb_pub_slots *ns = opdb_pub_slots_new(s->nslots * 2);
        opdb_pub_slots *oc = atomic_load_explicit(&t->cells, memory_order_relaxed);
        opdb_pub_slots *nc = opdb_pub_slots_new(s->nslots * 2); /* as many keys at most */
        for (size_t i = 0; i + 1 < t->n; i++) {
            const gkey *old = t->g[i].key;
            opdb_pub_slots_place(ns, old, old->hash);
            if (old->cells) opdb_pub_slots_place(nc, old, old->cells_hash);
        }
        ns->retired = s;
        nc->retired = oc;
        atomic_store_explicit(&t->table, ns, memory_order_release);
        atomic_store_explicit(&t->cells, nc, memory_order_release);
        s = ns;
    }
    opdb_pub_slots_place(s, k, k->hash);
    return g;
}

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
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 4096;
        o->v = opdb_xrealloc(o->v, o->cap * sizeof *o->v);
    }
    os_row *r = &o->v[o->n++];
    r->group = 0; /* probe_cells, probe_batch */
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
        r->metric[m] = zero || !cell_float(ms, lo, hi, &v) ? 0.0 : v;
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
    opdb_sig_cells sc = {r->cell[2], r->cell[3], r->cell[4], r->cell[5], r->cell[6], r->ep};
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

static void os_release(void *out) {
    os_out *o = out;
    free(o->v);
    opdb_sb_free(&o->sigs);
    opdb_sb_free(&o->scratch);
    free(o);
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

static int aggregate_file(const char *path, gtable *t, bool quirks, unsigned long long *rows,
                          unsigned long long *rejected, opdb_err *err) {
    opdb_csv_file c;
    if (opdb_csv_file_open(&c, path, 4096, err)) return -1;
    int col[C_N];
    for (int i = 0; i < C_N; i++) col[i] = -1;
    int rc = opdb_csv_file_next(&c, true);
    uint64_t start = opdb_csv_file_offset(&c);
    int maxcol = 0;
    if (rc > 0) {
        col[C_OPTYPE] = opdb_csv_col(c.f, c.nf, "OP Type");
        col[C_DUR] = opdb_csv_col(c.f, c.nf, "Task Duration(us)");
        col[C_TASKTYPE] = opdb_csv_col(c.f, c.nf, "Task Type");
        col[C_EP] = opdb_csv_col(c.f, c.nf, "EP Size");
        for (int b = 0; b < 8; b++) col[C_BASE0 + b] = opdb_csv_col(c.f, c.nf, k_base[b]);
        for (int m = 0; m < OPDB_NMETRICS; m++) col[C_METRIC0 + m] = opdb_csv_col(c.f, c.nf, opdb_metric_names[m]);
        for (int i = 0; i < C_N; i++)
            if (col[i] + 1 > maxcol) maxcol = col[i] + 1;
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
                o->n = 0;
                opdb_sb_clear(&o->sigs);
                decode_row(&J, f, nf, o, NULL, NULL);
                if (o->n && o->v[0].op.n) sign_row(o, &o->v[0]);
                take(&J, o);
            }
            if (rc < 0) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path);
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

/* The op's entry in a (a new one at the end for a new op). */
static agg_op *op_slot(op_summary_agg *a, const char *op) {
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->ops[i].op, op) == 0) return &a->ops[i];
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 32;
        a->ops = opdb_xrealloc(a->ops, a->cap * sizeof *a->ops);
    }
    agg_op *o = &a->ops[a->n++];
    memset(o, 0, sizeof *o);
    o->op = opdb_xstrdup(op);
    opdb_normalize_op_name(op, strlen(op), o->norm, sizeof o->norm);
    return o;
}

static void put(agg_layout *l, const char *key, int num) {
    l->key[l->n] = key;
    l->num[l->n++] = (signed char)num;
}

/* The reference's row dict: the 8 descriptive cells, the duration, EP Size
 * (DispatchFFNCombine with --dispatch-ffn-combine-ep-size), the metric means. */
static agg_layout *make_layout(opdb_arena *a, bool with_ep, bool with_metrics) {
    static char mb_names[OPDB_NMETRICS][64];
    for (int m = 0; m < OPDB_NMETRICS; m++) snprintf(mb_names[m], sizeof mb_names[m], "MicroBench %s", opdb_metric_names[m]);
    agg_layout *l = opdb_arena_alloc(a, sizeof *l);
    memset(l, 0, sizeof *l);
    for (int b = 0; b < 8; b++) put(l, k_base[b], -1);
    put(l, "Average Duration(us)", 0);
    if (with_ep) put(l, "EP Size", -1);
    for (int m = 0; m < OPDB_NMETRICS && with_metrics; m++) put(l, mb_names[m], 1 + m);
    return l;
}

enum { K_DUR = AGG_K_DUR, K_EP = 9 }; /* key positions in a layout */

/* Groups [from, to) into their agg_rows. */
typedef struct fill_job {
    const gtable *t;
    agg_row *rows;
    const agg_layout *plain, *with_ep;
    const char *ep_text;
    const bool *ep_of_op;
    bool with_metrics;
    size_t from, to;
} fill_job;

static void *fill_rows(void *arg) {
    const fill_job *J = arg;
    for (size_t i = J->from; i < J->to; i++) {
        if (i + AHEAD < J->to) __builtin_prefetch(J->t->g[i + AHEAD].key); /* keys lie in the arena, apart */
        const group *g = &J->t->g[i];
        agg_row *r = &J->rows[i];
        bool ep = J->ep_of_op[g->opid];
        r->lay = ep ? J->with_ep : J->plain;
        r->first = g->first;
        r->ep = ep ? J->ep_text : NULL;
        r->no_numeric_sample = !g->have_min;
        r->dur = g->min;
        r->half[0] = J->with_metrics ? g->half[0] : NULL;
        r->half[1] = J->with_metrics ? g->half[1] : NULL;
        r->samples = g->count;
        r->key_op = g->key->op;
        r->key_sig = g->key->sig;
        r->key_sig_len = g->key->sign;
    }
    return NULL;
}

int op_summary_aggregate(char **files, size_t nfiles, long ep_size, bool quirks, bool with_metrics, op_summary_agg *out,
                         opdb_err *err) {
    memset(out, 0, sizeof *out);
    /* op_summary rows take 300-400 bytes; a group has a few of them */
    size_t bytes = 0;
    for (size_t i = 0; i < nfiles; i++) {
        struct stat st;
        if (stat(files[i], &st) == 0) bytes += (size_t)st.st_size;
    }
    /* the groups' strings take about a quarter of the input; in 8 MiB chunks,
     * each populated whole when it is taken (so the last one wastes little) */
    opdb_arena_init(&out->arena, bytes > ((size_t)256 << 20) ? (size_t)8 << 20 : (size_t)1 << 20);
    /* the group tables and strings are faulted in ahead of the thread that
     * fills them, while the workers leave a CPU idle */
    opdb_prefault_begin();
    gtable t;
    gtable_init(&t, &out->arena, bytes / 1024);
    /* the aggregated rows too: one per group, as many as the table expects */
    out->rows_bytes = (t.cap + 1) * sizeof(agg_row);
    out->rows = opdb_big_alloc(out->rows_bytes);
    int rc = 0;
    for (size_t i = 0; i < nfiles && rc == 0; i++) rc = aggregate_file(files[i], &t, quirks, &out->rows_read, &out->rows_rejected, err);
    opdb_prefault_end();
    if (rc == 0 && out->rows_rejected)
        opdb_warn("%llu op_summary row(s) with a non-finite or negative duration or counter: those values skipped",
                  out->rows_rejected);
    const agg_layout *plain = make_layout(&out->arena, false, with_metrics);
    const agg_layout *with_ep = make_layout(&out->arena, true, with_metrics);
    const char *ep_text = "";
    if (ep_size) {
        char buf[32];
        snprintf(buf, sizeof buf, "%ld", ep_size);
        ep_text = opdb_arena_strndup(&out->arena, buf, strlen(buf));
    }
    /* In group order: each op's entry (first seen first) and its rows. */
    long *slot_of_op = opdb_xmalloc((t.nops + 1) * sizeof *slot_of_op); /* op id -> out->ops index */
    bool *ep_of_op = opdb_xcalloc(t.nops + 1, sizeof *ep_of_op);
    for (size_t i = 0; i < t.nops; i++) slot_of_op[i] = -1;
    if ((t.n + 1) * sizeof(agg_row) > out->rows_bytes) { /* more groups than expected */
        out->rows = opdb_big_realloc(out->rows, out->rows_bytes, (t.n + 1) * sizeof(agg_row));
        out->rows_bytes = (t.n + 1) * sizeof(agg_row);
    }
    for (size_t i = 0; i < t.n && rc == 0; i++) {
        uint32_t opid = t.g[i].opid;
        long *so = &slot_of_op[opid];
        if (*so < 0) {
            *so = op_slot(out, t.g[i].key->op) - out->ops;
            ep_of_op[opid] = strcmp(out->ops[*so].norm, "DispatchFFNCombine") == 0 && ep_size;
        }
        agg_op *o = &out->ops[*so];
        if (o->n == o->cap) {
            o->cap = o->cap ? o->cap * 2 : 16;
            o->rows = opdb_xrealloc(o->rows, o->cap * sizeof *o->rows);
        }
        o->rows[o->n++] = &((agg_row *)out->rows)[i];
    }
    /* The rows themselves: independent, two threads for many. */
    if (rc == 0) {
        fill_job jobs[2] = {{&t, out->rows, plain, with_ep, ep_text, ep_of_op, with_metrics, 0, t.n / 2},
                            {&t, out->rows, plain, with_ep, ep_text, ep_of_op, with_metrics, t.n / 2, t.n}};
        pthread_t th;
        bool two = t.n > 100000 && pthread_create(&th, NULL, fill_rows, &jobs[1]) == 0;
        if (!two) jobs[0].to = t.n;
        fill_rows(&jobs[0]);
        if (two) pthread_join(th, NULL);
    }
    free(ep_of_op);
    free(slot_of_op);
    gtable_free(&t); /* the rows point into the arena only */
    if (rc) op_summary_free(out);
    return rc;
}

void op_summary_free(op_summary_agg *a) {
    for (size_t i = 0; i < a->n; i++) {
        free(a->ops[i].rows);
        free(a->ops[i].op);
    }
    free(a->ops);
    opdb_big_free(a->rows, a->rows_bytes);
    opdb_arena_free(&a->arena);
    memset(a, 0, sizeof *a);
}

const agg_op *op_summary_get(const op_summary_agg *a, const char *op) {
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->ops[i].op, op) == 0) return &a->ops[i];
    return NULL;
}

/* Cell b (0..8) of a group's first-launch cells. */
static const char *first_cell(const char *first, int b) {
    for (; b > 0; b--) first += strlen(first) + 1;
    return first;
}

const char *agg_str(const agg_row *r, int i) {
    if (i == K_EP) return r->ep ? r->ep : "";
    if (i < 0 || i > 7) return "";
    return first_cell(r->first, i == 1 ? 8 : i); /* Accelerator Core := Task Type, in its position */
}

void agg_sig_cells(const agg_row *r, const char *out[6]) {
    const char *c = first_cell(r->first, 2);
    for (int k = 0; k < 5; k++, c += strlen(c) + 1) out[k] = c; /* Input Shapes .. Output Data Types */
    out[5] = r->ep ? r->ep : "";
}

opdb_span agg_span(const agg_row *r, int i, char buf[400]) {
    int num = r->lay->num[i];
    if (num < 0) return opdb_span_cstr(agg_str(r, i));
    if (num == 0 && r->no_numeric_sample) return opdb_span_make("", 0);
    double x = num == 0 ? r->dur : agg_msum(r, num - 1) / (double)r->samples; /* the mean */
    if (x == 0 && !signbit(x)) return opdb_span_make("0.000000", 8); /* most counter means */
    size_t n = opdb_py_fmt_fixed(buf, 400, x, 6);
    return opdb_span_make(buf, n);
}

const char *agg_val(const agg_row *r, int i, char buf[400]) { return agg_span(r, i, buf).p; }

const char *agg_get(const agg_row *r, const char *key, char buf[400]) {
    for (int i = 0; i < r->lay->n; i++)
        if (strcmp(r->lay->key[i], key) == 0) return agg_val(r, i, buf);
    return "";
}
