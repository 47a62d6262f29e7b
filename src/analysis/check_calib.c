/* Calibrated intervals from the held-out answers (split-conformal): per
 * scope — kernel type x axis count x distance bucket, pooled step by step
 * when a scope holds too few answers — the quantiles of the residuals
 * actual / predicted - 1; their coverage measured on split halves; the
 * calibration file `opdb query` reads (layout in docs/CHECK.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check_internal.h"
#include "opdb/fs.h"

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the k-th order statistic the conformal bound at tail a needs (1-based): lower
 * floor((n + 1) a), upper ceil((n + 1)(1 - a)); 0 or > n: none */
static bool bounds(const double *e, size_t n, double a, double *lo, double *hi) {
    double kl = floor((double)(n + 1) * a), kh = ceil((double)(n + 1) * (1 - a));
    if (kl < 1 || kh > (double)n) return false;
    *lo = e[(size_t)kl - 1];
    *hi = e[(size_t)kh - 1];
    return true;
}

bool ck_interval_of(double *e, size_t n, ck_interval *iv) {
    if (n < 2) return false;
    qsort(e, n, sizeof *e, cmp_d);
    if (!bounds(e, n, 0.05, &iv->lo90, &iv->hi90) || !bounds(e, n, 0.10, &iv->lo80, &iv->hi80)) return false;
    double *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = fabs(e[i] / (1 + e[i])); /* |predicted - actual| / actual */
    qsort(a, n, sizeof *a, cmp_d);
    iv->median_abs = ck_percentile(a, n, 0.5);
    free(a);
    iv->n = n;
    return true;
}

/* Scopes from the finest to the widest; an answer uses the first that has an interval. */
#define NSCOPES 6
typedef struct scope_key {
    int64_t table; /* -1: every kernel type */
    int dim;       /* 0: any */
    int bucket;    /* -1: any */
} scope_key;

static scope_key scope_of(const ck_answer *a, int s) {
    static const int64_t kt[NSCOPES] = {1, 1, 1, 0, 0, 0};
    static const int dm[NSCOPES] = {1, 1, 0, 1, 1, 0}, bk[NSCOPES] = {1, 0, 0, 1, 0, 0};
    return (scope_key){kt[s] ? (int64_t)a->table : -1, dm[s] ? a->dim : 0, bk[s] ? a->bucket : -1};
}

static bool key_eq(scope_key x, scope_key y) { return x.table == y.table && x.dim == y.dim && x.bucket == y.bucket; }

typedef struct scope {
    scope_key k;
    double *e;
    size_t n, cap;
    bool ok;
    ck_interval iv;
} scope;

typedef struct scopes {
    scope *s;
    size_t n, cap;
} scopes;

static scope *find(scopes *S, scope_key k) {
    for (size_t i = 0; i < S->n; i++)
        if (key_eq(S->s[i].k, k)) return &S->s[i];
    return NULL;
}

/* residuals of the answers whose line parity is `half` (-1: all) into scopes */
static void build(const ck_run *r, int half, scopes *S) {
    memset(S, 0, sizeof *S);
    for (size_t i = 0; i < r->nans; i++) {
        const ck_answer *a = &r->ans[i];
        if (isnan(a->predicted) || (half >= 0 && (int)(a->line % 2) != half)) continue;
        double e = a->actual / a->predicted - 1;
        for (int s = 0; s < NSCOPES; s++) {
            scope_key k = scope_of(a, s);
            scope *x = find(S, k);
            if (!x) {
                OPDB_ALLOC_GROW(S->s, S->n + 1, S->cap);
                x = &S->s[S->n++];
                memset(x, 0, sizeof *x);
                x->k = k;
            }
            OPDB_ALLOC_GROW(x->e, x->n + 1, x->cap);
            x->e[x->n++] = e;
        }
    }
    for (size_t i = 0; i < S->n; i++) S->s[i].ok = ck_interval_of(S->s[i].e, S->s[i].n, &S->s[i].iv);
}

static void scopes_free(scopes *S) {
    for (size_t i = 0; i < S->n; i++) free(S->s[i].e);
    free(S->s);
}

static const ck_interval *lookup(scopes *S, const ck_answer *a) {
    for (int s = 0; s < NSCOPES; s++) {
        scope *x = find(S, scope_of(a, s));
        if (x && x->ok) return &x->iv;
    }
    return NULL;
}

void ck_coverage(ck_run *r) {
    size_t n = 0, in80 = 0, in90 = 0;
    for (int half = 0; half < 2; half++) {
        scopes S;
        build(r, half, &S);
        for (size_t i = 0; i < r->nans; i++) {
            const ck_answer *a = &r->ans[i];
            if (isnan(a->predicted) || (int)(a->line % 2) == half) continue;
            const ck_interval *iv = lookup(&S, a);
            if (!iv) continue;
            n++;
            double p = a->predicted, y = a->actual;
            in80 += y >= p * (1 + iv->lo80) && y <= p * (1 + iv->hi80);
            in90 += y >= p * (1 + iv->lo90) && y <= p * (1 + iv->hi90);
        }
        scopes_free(&S);
    }
    r->res->coverage_n = n;
    if (n) {
        r->res->coverage80 = (double)in80 / (double)n;
        r->res->coverage90 = (double)in90 / (double)n;
    }
}

static void g17(opdb_strbuf *sb, double x) { opdb_sb_addf(sb, "\t%.17g", x); }

int ck_write_calibration(ck_run *r, opdb_err *err) {
    scopes S;
    build(r, -1, &S);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_adds(&sb, "# opdb calibration 1: written by opdb check; read by opdb query (docs/CHECK.md)\n");
    int rc = 0;
    for (size_t t = 0; t < r->ntabs && rc == 0; t++) {
        const ck_table *T = &r->tabs[t];
        if (!T->t.covered) continue;
        char *path = opdb_path_join(r->dir, T->file);
        opdb_strbuf bytes;
        opdb_sb_init(&bytes);
        rc = opdb_read_file(path, &bytes, err);
        if (rc == 0)
            opdb_sb_addf(&sb, "table\t%s\t%016llx\t%zu\n", T->kernel,
                         (unsigned long long)opdb_hash_bytes(bytes.p, bytes.n, 0), bytes.n);
        opdb_sb_free(&bytes);
        free(path);
    }
    for (size_t i = 0; i < S.n && rc == 0; i++) {
        const scope *x = &S.s[i];
        if (!x->ok) continue;
        opdb_sb_addf(&sb, "interval\t%s\t%d\t%s\t%zu", x->k.table >= 0 ? r->tabs[x->k.table].kernel : "*", x->k.dim,
                     q_loo_bucket_name(x->k.bucket), x->iv.n);
        g17(&sb, x->iv.lo80), g17(&sb, x->iv.hi80), g17(&sb, x->iv.lo90), g17(&sb, x->iv.hi90);
        g17(&sb, x->iv.median_abs);
        opdb_sb_addc(&sb, '\n');
    }
    scopes_free(&S);
    if (rc == 0) {
        /* (the caller holds the folder lock since before the tables were read) */
        char *path = opdb_path_join(r->dir, OPDB_CALIBRATION_FILE);
        rc = opdb_atomic_write(path, sb.p, sb.n, err);
        free(path);
    }
    opdb_sb_free(&sb);
    return rc;
}
