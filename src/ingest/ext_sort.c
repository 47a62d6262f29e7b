/* See ext_sort.h. */
#include "ingest/ext_sort.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void xs_init(xsort *s, size_t rec, size_t budget, xs_cmp cmp) {
    memset(s, 0, sizeof *s);
    s->rec = rec;
    s->cmp = cmp;
    s->max_recs = budget / rec > 16 ? budget / rec : 16;
}

/* An unlinked temporary file in $TMPDIR (or /tmp): gone when closed, even after a crash. */
static FILE *temp_file(opdb_err *err) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    char *path = opdb_xmalloc(strlen(dir) + 32);
    sprintf(path, "%s/opdb-sort-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot create a temporary file for sorting: %s", dir, strerror(errno));
        free(path);
        return NULL;
    }
    unlink(path);
    free(path);
    FILE *f = fdopen(fd, "w+b");
    if (!f) {
        close(fd);
        opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot open a temporary file for sorting", dir);
    }
    return f;
}

static int write_fail(opdb_err *err) {
    return opdb_fail(err, OPDB_ERR_RUNTIME, "cannot write a temporary sort file (disk full? set TMPDIR): %s",
                     strerror(errno));
}

/* ---- merging the runs: a binary heap of run indices by current record */

static bool run_less(const xsort *s, size_t a, size_t b) {
    int c = s->cmp(s->runs[a].cur, s->runs[b].cur);
    return c < 0 || (c == 0 && a < b);
}

static void sift_down(xsort *s, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < s->nheap && run_less(s, s->heap[l], s->heap[m])) m = l;
        if (l + 1 < s->nheap && run_less(s, s->heap[l + 1], s->heap[m])) m = l + 1;
        if (m == i) return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

/* Reads run r's next record: 1 read, 0 at its end, -1 on error. */
static int run_read(xsort *s, size_t r, opdb_err *err) {
    if (!s->runs[r].f) { /* the buffer kept in memory */
        if (s->pos == s->n) return 0;
        memcpy(s->runs[r].cur, s->buf + s->rec * s->pos++, s->rec);
        return 1;
    }
    if (fread(s->runs[r].cur, s->rec, 1, s->runs[r].f) == 1) return 1;
    if (ferror(s->runs[r].f))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "cannot read a temporary sort file: %s", strerror(errno));
    return 0;
}

static int merge_start(xsort *s, opdb_err *err) {
    s->heap = opdb_xrealloc(s->heap, (s->nruns + 1) * sizeof *s->heap);
    s->nheap = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        if (s->runs[r].f && (fflush(s->runs[r].f) != 0 || fseek(s->runs[r].f, 0, SEEK_SET) != 0)) return write_fail(err);
        if (!s->runs[r].cur) s->runs[r].cur = opdb_xmalloc(s->rec);
        int rc = run_read(s, r, err);
        if (rc < 0) return -1;
        if (rc) s->heap[s->nheap++] = r;
    }
    for (size_t i = s->nheap; i-- > 0;) sift_down(s, i);
    return 0;
}

/* The smallest current record, then advances its run; NULL at the end. The
 * record is copied to out (the run's buffer is overwritten by the advance). */
static const void *merge_pop(xsort *s, void *out, int *rc, opdb_err *err) {
    if (!s->nheap) return NULL;
    size_t r = s->heap[0];
    memcpy(out, s->runs[r].cur, s->rec);
    int got = run_read(s, r, err);
    if (got < 0) {
        *rc = -1;
        return NULL;
    }
    if (!got) s->heap[0] = s->heap[--s->nheap];
    if (s->nheap) sift_down(s, 0);
    return out;
}

static void close_runs(xsort *s) {
    for (size_t r = 0; r < s->nruns; r++) {
        if (s->runs[r].f) fclose(s->runs[r].f);
        free(s->runs[r].cur);
        s->runs[r].f = NULL;
        s->runs[r].cur = NULL;
    }
    s->nruns = 0;
}

/* XS_MAX_RUNS runs: merge them into one, so the number of open runs stays bounded. */
static int compact(xsort *s, opdb_err *err) {
    FILE *f = temp_file(err);
    if (!f) return -1;
    int rc = merge_start(s, err);
    unsigned char *tmp = opdb_xmalloc(s->rec);
    while (rc == 0 && merge_pop(s, tmp, &rc, err))
        if (fwrite(tmp, s->rec, 1, f) != 1) rc = write_fail(err);
    free(tmp);
    close_runs(s);
    if (rc != 0) {
        fclose(f);
        return -1;
    }
    s->runs[0].f = f;
    s->nruns = 1;
    return 0;
}

static int spill(xsort *s, opdb_err *err) {
    if (s->nruns == XS_MAX_RUNS && compact(s, err) != 0) return -1;
    if (s->unsorted) qsort(s->buf, s->n, s->rec, s->cmp);
    s->unsorted = false;
    FILE *f = temp_file(err);
    if (!f) return -1;
    if (fwrite(s->buf, s->rec, s->n, f) != s->n) {
        fclose(f);
        return write_fail(err);
    }
    s->runs[s->nruns++].f = f;
    s->spilled += s->n;
    s->n = 0;
    return 0;
}

int xs_push(xsort *s, const void *record, opdb_err *err) {
    if (s->n == s->cap) {
        if (s->cap == s->max_recs) {
            if (spill(s, err) != 0) return -1;
        } else {
            /* past a first small buffer, the whole budget at once: pages are only touched as
             * records arrive, and no realloc copies the records again */
            size_t ncap = s->cap ? s->max_recs : 256;
            if (ncap > s->max_recs) ncap = s->max_recs;
            s->buf = opdb_xrealloc(s->buf, ncap * s->rec);
            s->cap = ncap;
        }
    }
    /* most streams arrive in order (a trace is mostly written in time order): then no sort */
    if (s->n && !s->unsorted && s->cmp(s->buf + (s->n - 1) * s->rec, record) > 0) s->unsorted = true;
    memcpy(s->buf + s->n * s->rec, record, s->rec);
    s->n++;
    s->total++;
    return 0;
}

int xs_finish(xsort *s, opdb_err *err) {
    s->reading = true;
    s->pos = 0;
    if (!s->nruns) {
        if (s->unsorted) qsort(s->buf, s->n, s->rec, s->cmp);
        return 0;
    }
    /* the last buffer joins the merge from memory: it is not written and read back */
    if (s->unsorted) qsort(s->buf, s->n, s->rec, s->cmp);
    s->runs[s->nruns++].f = NULL;
    s->out = opdb_xmalloc(s->rec);
    return merge_start(s, err);
}

const void *xs_next(xsort *s, int *rc, opdb_err *err) {
    if (!s->nruns) return s->pos < s->n ? s->buf + s->rec * s->pos++ : NULL;
    return merge_pop(s, s->out, rc, err);
}

void xs_free(xsort *s) {
    close_runs(s);
    free(s->buf);
    free(s->out);
    free(s->heap);
    memset(s, 0, sizeof *s);
}
