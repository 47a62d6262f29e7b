/* See batch.h.  One mutex guards the slot states; slots are filled and
 * consumed in the same cyclic order, so file order is preserved. */
#include "csv/batch.h"
#include "core/call.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/fs.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { SLOT_FREE, SLOT_QUEUED, SLOT_DONE };
#define MAX_SLOTS 32

static unsigned quote_parity(const char *p, size_t n) {
    unsigned parity = 0;
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i kq = _mm_set1_epi8('"');
    for (; i + 64 <= n; i += 64) {
        uint64_t m = 0;
        for (int k = 0; k < 4; k++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16 * (size_t)k));
            m |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, kq)) << (16 * k);
        }
        parity ^= (unsigned)__builtin_parityll(m);
    }
#endif
    for (; i < n; i++) parity ^= p[i] == '"';
    return parity;
}

size_t opdb_batch_cut(const char *buf, size_t n) {
    unsigned total = quote_parity(buf, n);
    unsigned suffix = 0;
    for (size_t i = n; i-- > 0;) {
        char c = buf[i];
        if (c == '"') suffix ^= 1;
        else if ((c == '\n' || c == '\r') && (total ^ suffix) == 0) return i + 1;
    }
    return 0;
}

typedef struct pool {
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    opdb_batch slot[MAX_SLOTS];
    int state[MAX_SLOTS];
    int queue[MAX_SLOTS];
    int qhead, qlen;
    int nslots;
    bool stop;
    const opdb_batch_ops *ops;
} pool;

static void *worker_main(void *arg) {
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->stop && p->qlen == 0) pthread_cond_wait(&p->cv_work, &p->mu);
        if (p->qlen == 0) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        int s = p->queue[p->qhead];
        p->qhead = (p->qhead + 1) % MAX_SLOTS;
        p->qlen--;
        pthread_mutex_unlock(&p->mu);
        p->ops->work(&p->slot[s], p->ops->ctx);
        pthread_mutex_lock(&p->mu);
        p->state[s] = SLOT_DONE;
        pthread_cond_broadcast(&p->cv_done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* A worker ran out of memory: wake the consumer (it stops on the failed call). */
static void worker_failed(void *arg) {
    pool *p = arg;
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv_done);
    pthread_mutex_unlock(&p->mu);
}

/* Drops queued work and ends the workers after their current batch. */
static void stop_workers(void *arg) {
    pool *p = arg;
    pthread_mutex_lock(&p->mu);
    p->qlen = 0;
    p->stop = true;
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
}

typedef struct reader {
    int fd;
    uint64_t off;        /* next file offset to read */
    bool eof;
    opdb_strbuf carry;   /* bytes after the last cut */
    size_t batch_size;
    /* the file mapped from the start offset on: batches are pieces of it
     * (no copy through read(), no batch buffers); pos: the next batch */
    opdb_file_view view;
    size_t pos;
    char *kept;          /* mapped pages from here on are still resident */
} reader;

/* A consumed batch's pages are dropped from the mapping (the page cache
 * keeps the file): the process holds a few batches of a mapped file, as it
 * holds a few batch buffers of a read one, not the whole file. */
static void release_consumed(reader *r, const opdb_batch *b) {
    if (!r->view.map || b->cap) return;
    uintptr_t ps = opdb_page_size();
    char *upto = (char *)((uintptr_t)(b->data + b->len) / ps * ps); /* later batches start at or after it */
    if (!r->kept) r->kept = r->view.map;
    if (upto <= r->kept) return;
    (void)madvise(r->kept, (size_t)(upto - r->kept), MADV_DONTNEED);
    r->kept = upto;
}

/* Fills b with the next record-aligned piece of the mapped file (cap 0:
 * not b's to free).  Returns 1 if filled, 0 at the end. */
static int fill_mapped(reader *r, opdb_batch *b) {
    size_t left = r->view.len - r->pos;
    if (left == 0) return 0;
    const char *p = r->view.data + r->pos;
    size_t len = left;
    for (size_t want = r->batch_size; want < left; want *= 2) { /* a record longer than a batch: more */
        size_t cut = opdb_batch_cut(p, want);
        if (cut) {
            len = cut;
            break;
        }
    }
    b->data = r->view.data + r->pos;
    b->len = len;
    b->cap = 0;
    b->file_off = r->off + r->pos;
    b->anomaly = false;
    r->pos += len;
    return 1;
}

/* Fills b with the next record-aligned batch. Returns 1 if filled, 0 at EOF, -1 on error. */
static int fill(reader *r, opdb_batch *b, opdb_err *err) {
    if (r->view.map) return fill_mapped(r, b);
    if (r->eof && r->carry.n == 0) return 0;
    if (b->cap < r->batch_size || b->cap < r->carry.n * 2) {
        size_t cap = r->batch_size > r->carry.n * 2 ? r->batch_size : r->carry.n * 2;
        free(b->data);
        b->data = opdb_xmalloc(cap + OPDB_BATCH_PAD);
        memset(b->data + cap, 0, OPDB_BATCH_PAD);
        b->cap = cap;
    }
    b->file_off = r->off - r->carry.n;
    size_t have = r->carry.n;
    if (have) memcpy(b->data, r->carry.p, have);
    opdb_sb_clear(&r->carry);
    for (;;) {
        while (!r->eof && have < b->cap) {
            ssize_t k = pread(r->fd, b->data + have, b->cap - have, (off_t)r->off);
            if (k < 0) {
                if (errno == EINTR) continue;
                return opdb_fail(err, OPDB_ERR_RUNTIME, "read failed: %s", strerror(errno));
            }
            if (k == 0) {
                r->eof = true;
                break;
            }
            have += (size_t)k;
            r->off += (uint64_t)k;
        }
        if (r->eof) {
            b->len = have;
            b->anomaly = false;
            return have ? 1 : 0;
        }
        size_t cut = opdb_batch_cut(b->data, have);
        if (cut) {
            b->len = cut;
            opdb_sb_add(&r->carry, b->data + cut, have - cut);
            b->anomaly = false;
            return 1;
        }
        /* One record longer than the buffer: grow and read on. */
        b->cap *= 2;
        b->data = opdb_xrealloc(b->data, b->cap + OPDB_BATCH_PAD);
        memset(b->data + b->cap, 0, OPDB_BATCH_PAD);
    }
}

static int run_single(reader *r, const opdb_batch_ops *ops, uint64_t *resume_off, opdb_err *err) {
    opdb_batch b;
    memset(&b, 0, sizeof b);
    b.out = ops->new_out(ops->ctx);
    int rc = 0;
    for (;;) {
        int f = fill(r, &b, err);
        if (f < 0) {
            rc = -1;
            break;
        }
        if (f == 0) break;
        ops->work(&b, ops->ctx);
        if (b.anomaly) {
            *resume_off = b.file_off;
            rc = 1;
            break;
        }
        if (ops->consume(&b, ops->ctx, err)) {
            rc = -1;
            break;
        }
        release_consumed(r, &b);
    }
    ops->free_out(b.out, ops->ctx);
    if (b.cap) free(b.data);
    return rc;
}

static void reader_free(reader *r) {
    opdb_sb_free(&r->carry);
    if (r->view.map) opdb_file_view_close(&r->view);
}

int opdb_batch_run(int fd, const char *path, uint64_t start, int nthreads, size_t batch_size,
                   const opdb_batch_ops *ops, uint64_t *resume_off, opdb_err *err) {
    reader r = {fd, start, false, {0}, batch_size ? batch_size : (2u << 20), {0}, 0, NULL};
    opdb_sb_init(&r.carry);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) /* else (a pipe, no mmap): read() into batch buffers */
        (void)opdb_file_view_map(&r.view, fd, path, start, (uint64_t)st.st_size);
    if (nthreads <= 1) {
        int rc = run_single(&r, ops, resume_off, err);
        reader_free(&r);
        return rc;
    }
    if (nthreads > 8) nthreads = 8;
    pool *p = opdb_xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_work, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    p->ops = ops;
    p->nslots = 2 * nthreads + 1;
    for (int i = 0; i < p->nslots; i++) p->slot[i].out = ops->new_out(ops->ctx);
    pthread_t th[8];
    bool up[8] = {false};
    int nth = 0;
    opdb_call_workers held; /* held first: running out while starting them joins those started */
    opdb_call_hold_workers(&held, th, up, 8, stop_workers, p);
    for (int i = 0; i < nthreads; i++) {
        up[i] = opdb_thread_create_wake(&th[i], worker_main, p, worker_failed, p) == 0;
        nth += up[i];
    }
    if (nth == 0) { /* no threads to be had: run on this one */
        opdb_call_drop_workers(&held);
        for (int i = 0; i < p->nslots; i++) ops->free_out(p->slot[i].out, ops->ctx);
        free(p);
        int rc = run_single(&r, ops, resume_off, err);
        reader_free(&r);
        return rc;
    }

    int rc = 0;
    int fill_i = 0, cons_i = 0, inflight = 0;
    bool eof = false;
    for (;;) {
        /* Keep every free slot busy. */
        while (!eof && inflight < p->nslots) {
            opdb_batch *b = &p->slot[fill_i];
            int f = fill(&r, b, err);
            if (f < 0) {
                rc = -1;
                eof = true;
                break;
            }
            if (f == 0) {
                eof = true;
                break;
            }
            pthread_mutex_lock(&p->mu);
            p->state[fill_i] = SLOT_QUEUED;
            p->queue[(p->qhead + p->qlen) % MAX_SLOTS] = fill_i;
            p->qlen++;
            pthread_cond_signal(&p->cv_work);
            pthread_mutex_unlock(&p->mu);
            fill_i = (fill_i + 1) % p->nslots;
            inflight++;
        }
        if (rc || inflight == 0) break;
        pthread_mutex_lock(&p->mu);
        while (p->state[cons_i] != SLOT_DONE && !opdb_call_failed()) pthread_cond_wait(&p->cv_done, &p->mu);
        bool done = p->state[cons_i] == SLOT_DONE;
        pthread_mutex_unlock(&p->mu);
        if (!done) break; /* its worker ran out of memory */
        opdb_batch *b = &p->slot[cons_i];
        if (b->anomaly) {
            *resume_off = b->file_off;
            rc = 1;
            break;
        }
        if (ops->consume(b, ops->ctx, err)) {
            rc = -1;
            break;
        }
        release_consumed(&r, b);
        p->state[cons_i] = SLOT_FREE;
        cons_i = (cons_i + 1) % p->nslots;
        inflight--;
    }
    /* Drain: drop queued work, let running work finish, stop the workers. */
    opdb_call_drop_workers(&held);
    stop_workers(p);
    for (int i = 0; i < nthreads; i++)
        if (up[i]) pthread_join(th[i], NULL);
    opdb_call_check();
    for (int i = 0; i < p->nslots; i++) {
        ops->free_out(p->slot[i].out, ops->ctx);
        if (p->slot[i].cap) free(p->slot[i].data);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv_work);
    pthread_cond_destroy(&p->cv_done);
    free(p);
    reader_free(&r);
    return rc;
}
