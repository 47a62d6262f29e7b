/* See bench_journal.h. */
#include "replay/bench_journal.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/sig_cells.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"
#include "opdb/signature.h"

const char *const journal_cols[J_N] = {
#define JOURNAL_ITEM(name) name,
    "CSV", "Row", "Status", "Error", OPDB_BASE_COL_LIST(JOURNAL_ITEM) OPDB_COL_EP_SIZE, "Min(us)", "Median(us)",
    "P20(us)", "P80(us)", "CI Low(us)", "CI High(us)", "RSD(%)", "Samples", "Cache", "GFLOP/s", "GB/s", "Backend", "Converged",
};

void journal_sig(const char *stem, const char *const *cells, opdb_strbuf *out) {
    opdb_span key[OPDB_NKEY_COLS]; /* in opdb_key_cols order */
    for (int i = 0; i < OPDB_NKEY_COLS; i++) key[i] = opdb_span_cstr(cells[i] ? cells[i] : "");
    opdb_sig_cells c = db_sig_cells_from_row(db_sig_cols_of_key_cols(), key, OPDB_NKEY_COLS);
    opdb_signature(&c, stem, out);
}

static char *make_key(const char *stem, const char *sig) {
    size_t a = strlen(stem), b = strlen(sig);
    char *k = opdb_xmalloc(a + b + 2);
    memcpy(k, stem, a);
    k[a] = '\x1e';
    memcpy(k + a + 1, sig, b + 1);
    return k;
}

static void add_rec(bench_journal *j, const char *const *f) {
    OPDB_ALLOC_GROW(j->r, j->n + 1, j->cap);
    jrec *r = &j->r[j->n];
    for (int i = 0; i < J_N; i++) r->f[i] = opdb_xstrdup(f[i] ? f[i] : "");
    opdb_strbuf sig;
    opdb_sb_init(&sig);
    journal_sig(r->f[J_CSV], (const char *const *)&r->f[J_CELL0], &sig);
    r->key = make_key(r->f[J_CSV], sig.p ? sig.p : "");
    opdb_sb_free(&sig);
    opdb_hindex_add(&j->ix, opdb_hash_bytes(r->key, strlen(r->key), 3), (uint32_t)j->n++);
}

/* Cuts a torn last record (killed mid-write) at the last line end. */
static int cut_torn_tail(const char *path, opdb_err *err) {
    int fd = open(path, O_RDWR);
    if (fd < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", path, strerror(errno));
    struct stat st;
    off_t end = fstat(fd, &st) == 0 ? st.st_size : 0;
    char c = '\n';
    while (end > 0 && pread(fd, &c, 1, end - 1) == 1 && c != '\n') end--;
    int rc = ftruncate(fd, end) == 0 ? 0 : opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", path, strerror(errno));
    close(fd);
    return rc;
}

/* A record that can be trusted: status ok or failed; an ok record has a
 * median; every number it holds is finite and >= 0, its sample count a
 * whole number.  A journal is opdb's own file, but one cut short, edited or
 * corrupted must not write nan, inf or a negative time into a table. */
static bool record_sane(char *const *f) {
    bool ok = strcmp(f[J_STATUS], "ok") == 0;
    if (!ok && strcmp(f[J_STATUS], "failed") != 0) return false;
    if (ok && !f[J_MEDIAN][0]) return false;
    static const int num[] = {J_MIN, J_MEDIAN, J_P20, J_P80, J_CI_LO, J_CI_HI, J_RSD, J_GFLOPS, J_GBS};
    for (size_t i = 0; i < sizeof num / sizeof num[0]; i++) {
        const char *c = f[num[i]];
        double v;
        if (c[0] && !(opdb_py_float(c, strlen(c), &v) && isfinite(v) && v >= 0)) return false;
    }
    const char *n = f[J_SAMPLES];
    return !n[0] || (strspn(n, "0123456789") == strlen(n) && strlen(n) <= 15);
}

static int load(bench_journal *j, opdb_err *err) {
    if (cut_torn_tail(j->path, err)) return -1;
    opdb_csv_file c;
    if (opdb_csv_file_open(&c, j->path, J_N + 8, err)) return -1;
    int rc = opdb_csv_file_next(&c, false);
    if (rc > 0 && (c.nf != J_N || opdb_csv_col(c.f, c.nf, "Backend") != J_BACKEND))
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s:1: not an opdb bench journal (unexpected header)", j->path);
    while (rc > 0 && (rc = opdb_csv_file_next(&c, false)) > 0) {
        if (c.nf != J_N) continue; /* incomplete record: measured again */
        char *f[J_N];
        for (int i = 0; i < J_N; i++) {
            f[i] = opdb_xmalloc(c.f[i].n + 1);
            memcpy(f[i], c.f[i].p, c.f[i].n);
            f[i][c.f[i].n] = '\0';
        }
        if (record_sane(f)) {
            add_rec(j, (const char *const *)f);
        } else if (!j->nbad++) { /* dropped: measured again, or left unmeasured by a merge */
            j->first_bad_line = c.x.rec_line;
        }
        for (int i = 0; i < J_N; i++) free(f[i]);
    }
    if (rc < 0 && !err->code) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", j->path);
    opdb_csv_file_close(&c);
    return rc < 0 ? -1 : 0;
}

static int write_all(bench_journal *j, const opdb_strbuf *sb, opdb_err *err) {
    size_t off = 0;
    while (off < sb->n) {
        ssize_t k = write(j->fd, sb->p + off, sb->n - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: write failed: %s", j->path, strerror(errno));
        off += (size_t)k;
    }
    if (fdatasync(j->fd)) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: sync failed: %s", j->path, strerror(errno));
    return 0;
}

static void record(opdb_strbuf *sb, const char *const *f) {
    opdb_span cells[J_N];
    for (int i = 0; i < J_N; i++) cells[i] = opdb_span_cstr(f[i] ? f[i] : "");
    opdb_csv_write_record(sb, cells, J_N);
}

int journal_open(bench_journal *j, const char *path, bool resume, opdb_err *err) {
    memset(j, 0, sizeof *j);
    j->fd = -1;
    j->path = opdb_xstrdup(path);
    bool keep = resume && opdb_path_exists(path);
    if (keep && load(j, err)) return -1;
    j->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (keep ? O_APPEND : O_TRUNC), 0644);
    if (j->fd < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", path, strerror(errno));
    if (keep) return 0;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    record(&sb, journal_cols);
    int rc = write_all(j, &sb, err);
    opdb_sb_free(&sb);
    return rc;
}

int journal_append(bench_journal *j, const char *const *f, opdb_err *err) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    record(&sb, f);
    int rc = write_all(j, &sb, err); /* one write: a kill leaves the record whole or absent */
    opdb_sb_free(&sb);
    if (rc == 0) add_rec(j, f);
    return rc;
}

const jrec *journal_find(const bench_journal *j, const char *stem, const char *sig) {
    char *key = make_key(stem, sig);
    uint32_t i;
    const jrec *hit = NULL;
    for (opdb_hprobe p = opdb_hindex_probe(&j->ix, opdb_hash_bytes(key, strlen(key), 3)); opdb_hprobe_next(&p, &i);)
        if (strcmp(j->r[i].key, key) == 0 && (!hit || &j->r[i] > hit)) hit = &j->r[i]; /* the latest wins */
    free(key);
    return hit;
}

void journal_close(bench_journal *j) {
    if (j->fd >= 0) close(j->fd);
    for (size_t i = 0; i < j->n; i++) {
        for (int k = 0; k < J_N; k++) free(j->r[i].f[k]);
        free(j->r[i].key);
    }
    free(j->r);
    free(j->path);
    opdb_hindex_free(&j->ix);
    memset(j, 0, sizeof *j);
    j->fd = -1;
}
