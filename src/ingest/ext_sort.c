/* See ext_sort.h. */
#include "ingest/ext_sort.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XS_BLOCK (8u << 10) /* bytes read or written at once per run */
#define XS_SLACK 8          /* bytes allocated past a block: whole 8-byte loads and stores */

void xs_init(xsort *s, size_t rec, size_t budget, xs_cmp cmp) {
    memset(s, 0, sizeof *s);
    s->rec = rec;
    s->cmp = cmp;
    s->max_recs = budget / rec > 16 ? budget / rec : 16;
}

/* Record copies of the two sizes the readers use stay inline (no memcpy call). */
static inline void copy_rec(unsigned char *dst, const void *src, size_t rec) {
    if (rec == 32) memcpy(dst, src, 32);
    else if (rec == 16) memcpy(dst, src, 16);
    else memcpy(dst, src, rec);
}

/* An unlinked temporary file in the TMPDIR setting (or /tmp): gone when closed, even after a crash. */
static int temp_file(opdb_err *err) {
    const char *dir = opdb_setting("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    char *path = opdb_xmalloc(strlen(dir) + 32);
    sprintf(path, "%s/opdb-sort-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot create a temporary file for sorting: %s", dir, strerror(errno));
    else
        unlink(path);
    free(path);
    return fd;
}

static int write_fail(opdb_err *err) {
    return opdb_fail(err, OPDB_ERR_RUNTIME, "cannot write a temporary sort file (disk full? set TMPDIR): %s",
                     strerror(errno));
}

/* ---- the run encoding: per 8-byte word, x = word XOR the previous record's; a header byte
 * (trailing zero bytes of x << 4 | bytes kept) then the kept bytes, low first; bytes past
 * the last whole word are written as they are. */

static size_t max_encoded(size_t rec) { return rec / 8 * 9 + rec % 8; }

static inline uint64_t load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline void store64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

static size_t encode(unsigned char *out, const unsigned char *r, const unsigned char *prev, size_t rec) {
    unsigned char *o = out;
    size_t w = 0;
    for (; w + 8 <= rec; w += 8) {
        uint64_t x = load64(r + w) ^ load64(prev + w);
        if (!x) {
            *o++ = 0;
            continue;
        }
        unsigned tz = (unsigned)__builtin_ctzll(x) / 8, nb = 8 - tz - (unsigned)__builtin_clzll(x) / 8;
        *o++ = (unsigned char)(tz << 4 | nb);
        x >>= 8 * tz;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        store64(o, x); /* 8 bytes, nb of them kept: out has XS_SLACK bytes to spare */
        o += nb;
#else
        for (unsigned i = 0; i < nb; i++, x >>= 8) *o++ = (unsigned char)x;
#endif
    }
    memcpy(o, r + w, rec - w);
    return (size_t)(o - out) + rec - w;
}

/* Decodes one record from p (at least max_encoded bytes, or the run's last bytes) into r
 * from prev; the bytes used, 0 when they do not hold a whole record. */
static size_t decode(unsigned char *r, const unsigned char *prev, const unsigned char *p, size_t avail, size_t rec) {
    const unsigned char *q = p, *end = p + avail;
    size_t w = 0;
    for (; w + 8 <= rec; w += 8) {
        if (q >= end) return 0;
        unsigned h = *q++, tz = h >> 4, nb = h & 15;
        if (nb > 8 || tz + nb > 8 || (size_t)(end - q) < nb) return 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint64_t x = nb ? load64(q) & (~0ull >> (64 - 8 * nb)) : 0; /* p's buffer has XS_SLACK bytes past end */
#else
        uint64_t x = 0;
        for (unsigned i = 0; i < nb; i++) x |= (uint64_t)q[i] << (8 * i);
#endif
        q += nb;
        store64(r + w, load64(prev + w) ^ (x << (8 * tz)));
    }
    if ((size_t)(end - q) < rec - w) return 0;
    memcpy(r + w, q, rec - w);
    return (size_t)(q - p) + rec - w;
}

static int write_all(int fd, const unsigned char *p, size_t n, opdb_err *err) {
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return write_fail(err);
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Appends one record (encoded against prev) to fd through s->wbuf. */
static int put_rec(xsort *s, int fd, const unsigned char *r, const unsigned char *prev, opdb_err *err) {
    if (!s->wbuf) s->wbuf = opdb_xmalloc(XS_BLOCK + XS_SLACK);
    if (XS_BLOCK - s->wn < max_encoded(s->rec)) {
        if (write_all(fd, s->wbuf, s->wn, err) != 0) return -1;
        s->wn = 0;
    }
    s->wn += encode(s->wbuf + s->wn, r, prev, s->rec);
    return 0;
}

static int put_end(xsort *s, int fd, opdb_err *err) {
    int rc = s->wn ? write_all(fd, s->wbuf, s->wn, err) : 0;
    s->wn = 0;
    return rc;
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

static int read_fail(opdb_err *err, const char *why) {
    return opdb_fail(err, OPDB_ERR_RUNTIME, "cannot read a temporary sort file: %s", why);
}

/* Makes run r's current record its next one: 1 read, 0 at its end, -1 on error. The record
 * it replaces stays valid until the next advance (the two halves of slot alternate). */
static int run_read(xsort *s, size_t r, opdb_err *err) {
    xs_run *run = &s->runs[r];
    if (run->mem) { /* the buffer kept in memory */
        if (s->pos == s->n) return 0;
        run->cur = s->buf + s->rec * s->pos++;
        return 1;
    }
    size_t need = max_encoded(s->rec);
    if (run->blen - run->bpos < need && !run->eof) {
        memmove(run->blk, run->blk + run->bpos, run->blen - run->bpos);
        run->blen -= run->bpos;
        run->bpos = 0;
        while (run->blen < XS_BLOCK && !run->eof) {
            unsigned long long left = run->len - run->done;
            size_t want = XS_BLOCK - run->blen < left ? XS_BLOCK - run->blen : (size_t)left;
            ssize_t k = want ? pread(s->fd, run->blk + run->blen, want, (off_t)(run->off + run->done)) : 0;
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) return read_fail(err, strerror(errno));
            if (k == 0) run->eof = true;
            run->blen += (size_t)k;
            run->done += (unsigned long long)k;
        }
    }
    if (run->bpos == run->blen) return 0;
    unsigned char *next = run->cur == run->slot ? run->slot + s->rec : run->slot;
    size_t used = decode(next, run->cur, run->blk + run->bpos, run->blen - run->bpos, s->rec);
    if (!used) return read_fail(err, "truncated run");
    run->bpos += used;
    run->cur = next;
    return 1;
}

static void close_run(xs_run *run) {
    free(run->slot);
    free(run->blk);
    memset(run, 0, sizeof *run);
}

static int merge_start(xsort *s, opdb_err *err) {
    s->heap = opdb_xrealloc(s->heap, (s->nruns + 1) * sizeof *s->heap);
    s->nheap = 0;
    for (size_t r = 0; r < s->nruns; r++) {
        xs_run *run = &s->runs[r];
        if (!run->mem) {
            run->done = 0;
            if (!run->slot) run->slot = opdb_xcalloc(2, s->rec); /* the first record is encoded against zeros */
            if (!run->blk) run->blk = opdb_xcalloc(1, XS_BLOCK + XS_SLACK);
            run->cur = run->slot;
            run->bpos = run->blen = 0;
            run->eof = false;
        }
        int rc = run_read(s, r, err);
        if (rc < 0) return -1;
        if (rc) s->heap[s->nheap++] = r;
    }
    for (size_t i = s->nheap; i-- > 0;) sift_down(s, i);
    return 0;
}

/* The smallest current record, then advances its run; NULL at the end. The record stays
 * valid until the next call. */
static const void *merge_pop(xsort *s, int *rc, opdb_err *err) {
    if (!s->nheap) return NULL;
    size_t r = s->heap[0];
    const unsigned char *out = s->runs[r].cur;
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
    for (size_t r = 0; r < s->nruns; r++) close_run(&s->runs[r]);
    s->nruns = 0;
    if (s->has_file) close(s->fd);
    s->has_file = false;
    s->fend = 0;
}

/* XS_MAX_RUNS runs: merge them into one, so the number of open runs stays bounded. */
static int compact(xsort *s, opdb_err *err) {
    int fd = temp_file(err);
    if (fd < 0) return -1;
    int rc = merge_start(s, err);
    unsigned char *prev = opdb_xcalloc(1, s->rec);
    for (const unsigned char *r; rc == 0 && (r = merge_pop(s, &rc, err));) {
        if (put_rec(s, fd, r, prev, err) != 0) rc = -1;
        copy_rec(prev, r, s->rec);
    }
    if (rc == 0) rc = put_end(s, fd, err);
    free(prev);
    off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
    close_runs(s);
    if (rc != 0 || size < 0) {
        close(fd);
        s->wn = 0;
        return rc != 0 ? -1 : write_fail(err);
    }
    s->fd = fd;
    s->has_file = true;
    s->fend = (unsigned long long)size;
    memset(&s->runs[0], 0, sizeof s->runs[0]);
    s->runs[0].len = s->fend;
    s->nruns = 1;
    return 0;
}

static int spill(xsort *s, opdb_err *err) {
    if (s->nruns == XS_MAX_RUNS && compact(s, err) != 0) return -1;
    if (s->unsorted) qsort(s->buf, s->n, s->rec, s->cmp);
    s->unsorted = false;
    if (!s->has_file) {
        s->fd = temp_file(err);
        if (s->fd < 0) return -1;
        s->has_file = true;
        s->fend = 0;
    }
    unsigned char *zero = opdb_xcalloc(1, s->rec);
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++)
        rc = put_rec(s, s->fd, s->buf + i * s->rec, i ? s->buf + (i - 1) * s->rec : zero, err);
    if (rc == 0) rc = put_end(s, s->fd, err);
    free(zero);
    off_t end = rc == 0 ? lseek(s->fd, 0, SEEK_END) : -1;
    if (rc != 0 || end < 0) {
        s->wn = 0;
        return rc != 0 ? -1 : write_fail(err);
    }
    xs_run *run = &s->runs[s->nruns++];
    memset(run, 0, sizeof *run);
    run->off = s->fend;
    run->len = (unsigned long long)end - s->fend;
    s->fend = (unsigned long long)end;
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
    unsigned char *dst = s->buf + s->n * s->rec;
    /* most streams arrive in order (a trace is mostly written in time order): then no sort */
    if (s->n && !s->unsorted && s->cmp(dst - s->rec, record) > 0) s->unsorted = true;
    copy_rec(dst, record, s->rec);
    s->n++;
    s->total++;
    return 0;
}

int xs_finish(xsort *s, opdb_err *err) {
    s->reading = true;
    s->pos = 0;
    free(s->wbuf);
    s->wbuf = NULL;
    if (s->unsorted) qsort(s->buf, s->n, s->rec, s->cmp);
    if (!s->nruns) return 0;
    /* the last buffer joins the merge from memory: it is not written and read back */
    xs_run *last = &s->runs[s->nruns++];
    memset(last, 0, sizeof *last);
    last->mem = true;
    return merge_start(s, err);
}

const void *xs_next(xsort *s, int *rc, opdb_err *err) {
    if (!s->nruns) return s->pos < s->n ? s->buf + s->rec * s->pos++ : NULL;
    return merge_pop(s, rc, err);
}

void xs_free(xsort *s) {
    close_runs(s);
    free(s->buf);
    free(s->wbuf);
    free(s->heap);
    memset(s, 0, sizeof *s);
}
