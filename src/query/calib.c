/* Calibrated intervals for interpolated answers, from the file `opdb check
 * --write-calibration` leaves in the database folder (layout in
 * docs/CHECK.md). A table whose bytes differ from the ones checked has no
 * intervals: a stale calibration would claim a coverage it no longer has. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/check.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"
#include "query/loo.h"
#include "query/query_internal.h"

/* The spread and distance bucket of an answer's points (loo.h): here, with
 * the intervals that use them, so that the interpolation (which calls in
 * here) and the leave-one-out (which calls the interpolation) form no cycle. */
double q_loo_spread(const double *coords, int npts, int dim) {
    double s = 0;
    for (int d = 0; d < dim; d++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int k = 0; k < npts; k++) {
            double v = coords[k * dim + d];
            lo = fmin(lo, v), hi = fmax(hi, v);
        }
        if (!(lo > 0)) return INFINITY;
        s = fmax(s, log2(hi / lo));
    }
    return s;
}

int q_loo_bucket(double spread) {
    if (spread == 0) return 0;
    if (spread <= 1) return 1;
    if (spread <= 3) return 2;
    return 3;
}

const char *q_loo_bucket_name(int b) {
    static const char *const n[Q_LOO_NBUCKETS] = {"same", "near", "mid", "far"};
    return b >= 0 && b < Q_LOO_NBUCKETS ? n[b] : "*";
}

typedef struct cal_table {
    char *kernel;
    uint64_t hash;
    size_t size;
    _Atomic int state; /* 0 not yet compared, 1 unchanged, 2 changed */
} cal_table;

typedef struct cal_iv {
    char *kernel;      /* "*": every kernel type */
    int dim, bucket;   /* 0 / -1: any */
    double lo80, hi80, lo90, hi90, med;
} cal_iv;

struct q_calib {
    cal_table *t;
    size_t nt, capt;
    cal_iv *iv;
    size_t niv, capiv;
};

/* a folder without a (readable) calibration: loaded, nothing in it */
static struct q_calib k_none;

static char *dupn(const char *p, size_t n) {
    char *d = opdb_xmalloc(n + 1);
    memcpy(d, p, n);
    d[n] = 0;
    return d;
}

static int bucket_of(const char *s) {
    for (int b = 0; b < 4; b++)
        if (strcmp(s, q_loo_bucket_name(b)) == 0) return b;
    return strcmp(s, "*") == 0 ? -1 : -2;
}

/* one line split at tabs into at most 12 fields; the count */
static int split(char *line, char **f) {
    int n = 0;
    for (char *p = line; n < 12;) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t) break;
        *t = 0;
        p = t + 1;
    }
    return n;
}

static bool num(const char *s, double *x) {
    return opdb_py_float(s, strlen(s), x) && isfinite(*x);
}

static void calib_free(struct q_calib *c) {
    if (!c || c == &k_none) return;
    for (size_t i = 0; i < c->nt; i++) free(c->t[i].kernel);
    for (size_t i = 0; i < c->niv; i++) free(c->iv[i].kernel);
    free(c->t);
    free(c->iv);
    free(c);
}

static void db_calib_free(opdb_qdb *db) { calib_free(atomic_load(&db->calib)); }

/* the folder's calibration file (k_none when absent or unreadable) */
static struct q_calib *calib_read(const opdb_qdb *db) {
    char *path = opdb_path_join(db->dir, OPDB_CALIBRATION_FILE);
    if (!opdb_is_file(path)) {
        free(path);
        return &k_none;
    }
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_err err;
    opdb_err_clear(&err);
    struct q_calib *c = opdb_xcalloc(1, sizeof *c);
    unsigned long ln = 0;
    bool bad = opdb_read_file(path, &sb, &err) != 0;
    opdb_sb_addc(&sb, 0);
    for (char *p = sb.p, *nl; !bad && p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl) *nl = 0;
        ln++;
        if (*p == '#' || !*p) continue;
        char *f[12];
        int n = split(p, f);
        double v[6];
        if (n == 4 && strcmp(f[0], "table") == 0) {
            char *end;
            unsigned long long h = strtoull(f[2], &end, 16);
            if (*end || !num(f[3], &v[0])) bad = true;
            else {
                OPDB_ALLOC_GROW(c->t, c->nt + 1, c->capt);
                cal_table *t = &c->t[c->nt++];
                t->kernel = dupn(f[1], strlen(f[1]));
                t->hash = h;
                t->size = (size_t)v[0];
                atomic_init(&t->state, 0);
            }
        } else if (n == 10 && strcmp(f[0], "interval") == 0) {
            int b = bucket_of(f[3]);
            double dim;
            bool ok = b >= -1 && num(f[2], &dim);
            for (int k = 0; ok && k < 5; k++) ok = num(f[5 + k], &v[k]);
            if (!ok) bad = true;
            else {
                OPDB_ALLOC_GROW(c->iv, c->niv + 1, c->capiv);
                c->iv[c->niv++] = (cal_iv){dupn(f[1], strlen(f[1])), (int)dim, b, v[0], v[1], v[2], v[3], v[4]};
            }
        } else {
            bad = true;
        }
    }
    opdb_sb_free(&sb);
    free(path);
    if (bad) {
        q_warn(db, "%s: line %lu: not a calibration line; no intervals (rerun opdb check --write-calibration)",
               OPDB_CALIBRATION_FILE, ln);
        calib_free(c);
        return &k_none;
    }
    return c;
}

/* the database's calibration, read once (threads racing to read it keep the first) */
static struct q_calib *calib_of(const opdb_qdb *cdb) {
    opdb_qdb *db = (opdb_qdb *)cdb; /* the calibration slot is internally synchronised */
    struct q_calib *c = atomic_load(&db->calib);
    if (c) return c;
    struct q_calib *mine = calib_read(db), *none = NULL;
    if (atomic_compare_exchange_strong(&db->calib, &none, mine)) {
        if (mine != &k_none) db->calib_free = db_calib_free; /* read only at close, after every query */
        return mine;
    }
    calib_free(mine);
    return none;
}

/* is kernel's table still the one checked? (compared once) */
static bool unchanged(const opdb_qdb *db, cal_table *t) {
    int st = atomic_load(&t->state);
    if (st) return st == 1;
    q_ktable *kt = q_table(db, t->kernel);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_err err;
    opdb_err_clear(&err);
    bool same = kt->path && opdb_read_file(kt->path, &sb, &err) == 0 && sb.n == t->size &&
                opdb_hash_bytes(sb.p, sb.n, 0) == t->hash;
    opdb_sb_free(&sb);
    if (atomic_exchange(&t->state, same ? 1 : 2) == 0 && !same)
        q_warn(db, "%s changed since %s was written: no intervals for it (rerun opdb check --write-calibration)",
               kt->shown ? kt->shown : t->kernel, OPDB_CALIBRATION_FILE);
    return same;
}

void q_calib_apply(q_ctx *c, const char *kernel, int dim, double spread) {
    if (c->cfg->quirks || !kernel) return;
    struct q_calib *k = calib_of(c->db);
    if (k == &k_none) return;
    cal_table *t = NULL;
    for (size_t i = 0; i < k->nt && !t; i++)
        if (strcmp(k->t[i].kernel, kernel) == 0) t = &k->t[i];
    if (!t || !unchanged(c->db, t)) return;
    int b = q_loo_bucket(spread);
    /* the finest scope first, as check formed them */
    const struct {
        bool own;
        int dim, bucket;
    } order[6] = {{true, dim, b}, {true, dim, -1}, {true, 0, -1}, {false, dim, b}, {false, dim, -1}, {false, 0, -1}};
    for (int s = 0; s < 6; s++)
        for (size_t i = 0; i < k->niv; i++) {
            const cal_iv *v = &k->iv[i];
            if (strcmp(v->kernel, order[s].own ? kernel : "*") != 0 || v->dim != order[s].dim ||
                v->bucket != order[s].bucket)
                continue;
            q_result *r = c->r;
            r->has_iv = true;
            r->iv_at = r->lat;
            r->iv90[0] = v->lo90, r->iv90[1] = v->hi90;
            r->iv80[0] = v->lo80, r->iv80[1] = v->hi80;
            r->iv_med = v->med;
            return;
        }
}
