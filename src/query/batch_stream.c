/* A JSONL stream answered on several threads, written in input order.
 *
 * The input is cut into blocks of whole lines, each with a sequence number.
 * Every thread, the calling one included, runs the same loop: it takes its
 * turn to read the next block into one of its own slots (one thread reads at
 * a time, so blocks come in input order; read may block), answers it into
 * the slot's own text, and writes the answered blocks at the head of the
 * sequence while no other thread writes. A block stays in the memory of the
 * thread that read, answered and writes it: a block answered on another
 * core than the one that read it crosses between their caches twice (its
 * input, then its results), which costs the most when the host places the
 * two on different dies. A done block at the head whose owner is answering
 * another one is left to its owner, which writes when it is done; one whose
 * owner is reading or waiting is written by whoever drains, so a line typed
 * alone is answered at once whatever thread read it.
 * Memory is the slots': a few blocks per thread, whatever the input's length,
 * and the line memo's, bounded by the handle's option (line_memo.c): a line
 * repeating an earlier one but for its id is answered from it (explain
 * lines never: theirs name rows as they are found).
 * No allocation happens under the mutex (out of memory unwinds the thread). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/core.h"
#include "core/call.h"
#include "opdb/query.h"
#include "query/line_memo.h"
#include "query/query_internal.h"

enum { BLOCK = 64 * 1024, SLOTS_PER_THREAD = 4, MAX_THREADS = 64 };

typedef enum { SB_FREE, SB_READY, SB_DONE } sb_state;

struct worker_slots;

typedef struct sblock {
    char *in;          /* whole lines (the last one of the input may lack its newline) */
    size_t in_n, in_cap;
    opdb_strbuf out;   /* their result lines */
    opdb_qstats stats; /* of those lines */
    sb_state state;
    struct worker_slots *owner;
} sblock;

/* A thread's own slots, and whether it is answering one of them (it then
 * writes its done blocks at the head itself when it is done). */
typedef struct worker_slots {
    sblock slot[SLOTS_PER_THREAD];
    size_t nslot;
    bool answering;
    char apart[Q_LINE]; /* threads' slots a cache line apart */
} worker_slots;

/* the carry of a line cut by a block's end, to the next block */
typedef struct carry {
    char *p;
    size_t n, cap;
} carry;

typedef struct stream {
    const opdb_qdb *db;
    bool explain;
    q_lmemo *memo;      /* NULL: off */
    _Atomic size_t memo_hits;
    int (*write)(void *ctx, const char *text, size_t n);
    void *write_ctx;
    ptrdiff_t (*read)(void *ctx, char *buf, size_t cap);
    void *read_ctx;
    pthread_mutex_t mu;
    pthread_cond_t cv;  /* broadcast on every change: few waiters, rare waits */
    worker_slots *ws;   /* per thread: [0] the calling thread's */
    _Atomic size_t next_ws; /* the workers' next ws */
    /* blocks read and not yet written, by sequence number: block s at order[s % norder] */
    sblock **order;
    size_t norder;
    size_t head;        /* the oldest block not yet written */
    size_t tail;        /* the next block to read */
    bool reading;       /* a thread is reading (it alone uses cr) */
    carry cr;
    bool touched;       /* this stream asked for the maps' touch */
    bool read_failed;
    bool writing;       /* a thread is in write */
    bool eof;           /* the input is over: nothing more to read */
    bool stop;          /* write refused, or the call is unwinding */
    int rc;
    opdb_qstats stats;  /* of the blocks written */
} stream;

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

static void stats_sum(opdb_qstats *to, const opdb_qstats *s) {
    to->queries += s->queries;
    to->measured += s->measured;
    to->interpolated += s->interpolated;
    to->partial += s->partial;
    to->miss += s->miss;
    to->error += s->error;
    to->unsupported += s->unsupported;
}

/* What a memo entry keeps of its result for the counts: the source, and
 * whether q_stats_add counted it unsupported; counted again by q_stats_add. */
#define CLS_UNSUPPORTED 0x80

static uint8_t stats_class(const opdb_qresult *r) {
    opdb_qstats one;
    memset(&one, 0, sizeof one);
    q_stats_add(&one, r);
    return (uint8_t)((unsigned)r->source | (one.unsupported ? CLS_UNSUPPORTED : 0));
}

static void stats_add_class(opdb_qstats *s, uint8_t cls) {
    opdb_qresult r;
    memset(&r, 0, sizeof r);
    r.source = (opdb_qsource)(cls & ~CLS_UNSUPPORTED);
    r.miss_reason = cls & CLS_UNSUPPORTED ? "unsupported:" : "";
    q_stats_add(s, &r);
}

/* One line through the memo: answered from it, or answered in full and
 * offered to it. An answer is filed only when it is not an error and no
 * message went out while it was made (any thread's: a warning a line gives
 * must come again when a repeat would give it; the handle's messages are
 * once-only, so one given is never owed again). */
static void answer_memo(stream *st, const q_lmemo_line *kp, opdb_qresult_buf *qb, sblock *b, size_t *hits) {
    q_lmemo_line k = *kp;
    const char *line = k.s;
    size_t n = k.n;
    uint8_t cls;
    bool admit = false;
    if (q_lmemo_get(st->memo, &k, &b->out, &cls, &admit)) {
        stats_add_class(&b->stats, cls);
        ++*hits;
        return;
    }
    size_t warned = admit ? atomic_load(&st->db->warned) : 0, from = b->out.n;
    opdb_qresult r;
    /* the memo's hash of the line without its id serves the maps too (a line whose id
     * the memo did not cut is hashed again without it: equal queries meet in the maps) */
    q_query_json_append(st->db, line, n, false, k.kind != Q_LM_FULL ? k.h : 0, qb, &r, &b->out);
    q_stats_add(&b->stats, &r);
    if (admit && r.source != OPDB_SRC_ERROR && atomic_load(&st->db->warned) == warned)
        q_lmemo_put(st->memo, &k, b->out.p + from, b->out.n - from, stats_class(&r));
}

/* The next non-blank line of [*i, n) of t, blanks trimmed, into *a, *e; false when none. */
static bool next_line(const char *t, size_t n, size_t *i, size_t *a, size_t *e) {
    while (*i < n) {
        const char *nl = memchr(t + *i, '\n', n - *i);
        size_t j = nl ? (size_t)(nl - t) : n;
        *a = *i, *e = j;
        while (*a < *e && blank(t[*a])) ++*a;
        while (*e > *a && blank(t[*e - 1])) --*e;
        *i = j + 1;
        if (*a < *e) return true;
    }
    return false;
}

/* Lines are keyed AHEAD lines before they are answered, so that the memory
 * their lookups start at arrives while earlier lines are answered: at once
 * the memo's slot and the maps' first slots (their first probes start at the
 * line's hash), halfway the entries those slots hold. */
enum { AHEAD = 8 };

static void fetch_slots(const stream *st, const q_lmemo_line *k) {
    q_lmemo_prefetch(st->memo, k);
    if (k->kind == Q_LM_FULL) return; /* the maps start at a hash of their own */
    q_hitmap_prefetch(st->db->hitmap, k->h);
    ip_omap_prefetch(st->db->ipmap, k->h);
}

static void fetch_entries(const stream *st, const q_lmemo_line *k) {
    if (q_lmemo_prefetch_entry(st->memo, k) || k->kind == Q_LM_FULL) return;
    q_hitmap_prefetch_entry(st->db->hitmap, k->h);
    ip_omap_prefetch_entry(st->db->ipmap, k->h);
}

static void answer_memo_block(stream *st, sblock *b, opdb_qresult_buf *qb, size_t *hits) {
    const char *t = b->in;
    size_t i = 0, n = b->in_n, a, e;
    q_lmemo_line ring[AHEAD];
    size_t head = 0, cnt = 0;
    for (;;) {
        while (cnt < AHEAD && next_line(t, n, &i, &a, &e)) {
            q_lmemo_line *k = &ring[(head + cnt++) % AHEAD];
            q_lmemo_key(t + a, e - a, k);
            fetch_slots(st, k);
        }
        if (!cnt) break;
        if (cnt > AHEAD / 2) fetch_entries(st, &ring[(head + AHEAD / 2) % AHEAD]);
        answer_memo(st, &ring[head], qb, b, hits);
        head = (head + 1) % AHEAD;
        cnt--;
    }
}

/* Answers a block's lines into its text (no lock held). */
static void answer_block(stream *st, sblock *b, opdb_qresult_buf *qb) {
    b->out.n = 0;
    memset(&b->stats, 0, sizeof b->stats);
    if (st->memo) {
        size_t hits = 0;
        answer_memo_block(st, b, qb, &hits);
        if (hits) atomic_fetch_add_explicit(&st->memo_hits, hits, memory_order_relaxed);
        return;
    }
    const char *t = b->in;
    size_t i = 0, n = b->in_n, a, e;
    while (next_line(t, n, &i, &a, &e)) {
        opdb_qresult r;
        /* a result is always built inside a guarded call: out of memory unwinds instead */
        q_query_json_append(st->db, t + a, e - a, st->explain, 0, qb, &r, &b->out);
        q_stats_add(&b->stats, &r);
    }
}

static bool halted(const stream *st) { return st->stop || opdb_call_failed(); }

/* With the mutex held: unless another thread is writing, writes the answered
 * blocks at the head in order (the mutex let go during each write), up to
 * one whose owner, another thread, is answering (it writes that one itself
 * when it is done). */
static void drain(stream *st, const worker_slots *me) {
    if (st->writing) return;
    st->writing = true;
    while (!halted(st) && st->head < st->tail) {
        sblock *b = st->order[st->head % st->norder];
        if (b->state != SB_DONE || (b->owner != me && b->owner->answering)) break;
        pthread_mutex_unlock(&st->mu);
        int rc = b->out.n ? st->write(st->write_ctx, b->out.p, b->out.n) : 0;
        pthread_mutex_lock(&st->mu);
        if (rc) {
            st->stop = true;
            st->rc = rc;
        } else {
            stats_sum(&st->stats, &b->stats);
        }
        b->state = SB_FREE;
        st->head++;
        pthread_cond_broadcast(&st->cv);
    }
    st->writing = false;
}

/* A long input (its first block full): the handle's map slot arrays are faulted in for
 * writing once, up front, rather than page by page by the threads (q_hitmap_touch). */
static void touch_maps(const opdb_qdb *db) {
    opdb_qdb *w = (opdb_qdb *)db; /* the maps' own state, as their puts change it */
    if (atomic_exchange(&w->maps_touched, true)) return;
    q_hitmap_touch(w->hitmap);
    ip_omap_touch(w->ipmap);
}

/* Fills a free block (no lock held): what the last block left after its last
 * newline, then reads until a newline arrives (a short read does not wait
 * for a full block: a line typed or piped alone is answered at once) or the
 * input ends. Returns false when the input is over. */
static bool fill_block(sblock *b, carry *c, ptrdiff_t (*rd)(void *, char *, size_t), void *rctx, bool *read_failed) {
    size_t want = c->n + BLOCK;
    if (b->in_cap < want) {
        free(b->in);
        b->in = opdb_xmalloc(want);
        b->in_cap = want;
    }
    if (c->n) memcpy(b->in, c->p, c->n);
    b->in_n = c->n;
    c->n = 0;
    for (;;) {
        if (b->in_n == b->in_cap) { /* a line longer than a block */
            b->in_cap *= 2;
            b->in = opdb_xrealloc(b->in, b->in_cap);
        }
        ptrdiff_t r = rd(rctx, b->in + b->in_n, b->in_cap - b->in_n);
        if (r <= 0) {
            if (r < 0) *read_failed = true;
            return false;
        }
        size_t from = b->in_n;
        b->in_n += (size_t)r;
        /* the last newline, looked for from the end (a line is short beside the block) */
        const char *last = NULL;
        for (const char *p = b->in + b->in_n; p > b->in + from;)
            if (*--p == '\n') {
                last = p;
                break;
            }
        if (last) {
            size_t cut = (size_t)(last - b->in) + 1, rest = b->in_n - cut;
            if (c->cap < rest) {
                free(c->p);
                c->p = opdb_xmalloc(rest);
                c->cap = rest;
            }
            if (rest) memcpy(c->p, b->in + cut, rest); /* c->p may still be NULL */
            c->n = rest;
            b->in_n = cut;
            return true;
        }
    }
}

static sblock *free_slot(worker_slots *me) {
    for (size_t k = 0; k < me->nslot; k++)
        if (me->slot[k].state == SB_FREE) return &me->slot[k];
    return NULL;
}

/* With the mutex held, no thread reading and b free: takes the reading turn,
 * reads the next block into b, answers it and writes what can be written
 * (nothing when the input gave no more lines). */
static void read_and_answer(stream *st, worker_slots *me, sblock *b, opdb_qresult_buf *qb) {
    st->reading = true;
    pthread_mutex_unlock(&st->mu);
    bool failed = false;
    bool more = fill_block(b, &st->cr, st->read, st->read_ctx, &failed); /* cr is the reader's */
    if (!st->touched && b->in_n >= BLOCK && !st->explain) {
        st->touched = true;
        touch_maps(st->db);
    }
    pthread_mutex_lock(&st->mu);
    st->reading = false;
    if (failed) st->read_failed = true;
    if (!more) st->eof = true;
    pthread_cond_broadcast(&st->cv);
    if (!b->in_n) return;
    b->owner = me;
    b->state = SB_READY;
    st->order[st->tail++ % st->norder] = b;
    me->answering = true;
    pthread_mutex_unlock(&st->mu);
    answer_block(st, b, qb);
    pthread_mutex_lock(&st->mu);
    me->answering = false;
    b->state = SB_DONE;
    pthread_cond_broadcast(&st->cv);
    drain(st, me);
}

/* Every thread's loop (the mutex held): read, answer and write until the
 * input is over and every block written, or the call stops. */
static void run(stream *st, worker_slots *me, opdb_qresult_buf *qb) {
    while (!halted(st)) {
        sblock *b = st->reading || st->eof ? NULL : free_slot(me);
        if (b) {
            read_and_answer(st, me, b, qb);
            continue;
        }
        if (st->eof && st->head == st->tail) break;
        size_t head = st->head;
        drain(st, me);
        if (st->head == head) pthread_cond_wait(&st->cv, &st->mu);
    }
}

static void *worker(void *arg) {
    stream *st = arg;
    worker_slots *me = &st->ws[atomic_fetch_add(&st->next_ws, 1)];
    opdb_qresult_buf *qb = q_qresult_buf_new();
    pthread_mutex_lock(&st->mu);
    run(st, me, qb);
    pthread_mutex_unlock(&st->mu);
    opdb_qresult_buf_free(qb);
    return NULL;
}

/* A worker that ran out of memory, or the calling thread unwinding: everyone waiting looks again. */
static void wake_all(void *arg) {
    stream *st = arg;
    pthread_mutex_lock(&st->mu);
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

static void stop_all(void *arg) {
    stream *st = arg;
    pthread_mutex_lock(&st->mu);
    st->stop = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

static int stream_call(const opdb_qdb *db, unsigned threads, bool explain, ptrdiff_t (*rd)(void *, char *, size_t),
                       void *rctx, int (*wr)(void *, const char *, size_t), void *wctx, opdb_qstats *stats) {
    if (stats) memset(stats, 0, sizeof *stats);
    if (!rd || !wr) return -1;
    if (threads == 0) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    stream st;
    memset(&st, 0, sizeof st);
    st.db = db;
    st.explain = explain;
    st.write = wr;
    st.write_ctx = wctx;
    st.read = rd;
    st.read_ctx = rctx;
    st.memo = explain ? NULL : q_lmemo_new(db->line_memo);
    st.ws = opdb_xcalloc(threads, sizeof *st.ws);
    /* one thread: one slot, so each block is answered and written before the next is read */
    for (size_t t = 0; t < threads; t++) {
        st.ws[t].nslot = threads == 1 ? 1 : SLOTS_PER_THREAD;
        for (size_t k = 0; k < SLOTS_PER_THREAD; k++) opdb_sb_init(&st.ws[t].slot[k].out);
    }
    st.norder = threads * SLOTS_PER_THREAD;
    st.order = opdb_xcalloc(st.norder, sizeof *st.order);
    atomic_init(&st.next_ws, 1);
    opdb_qresult_buf *qb = q_qresult_buf_new();
    pthread_mutex_init(&st.mu, NULL);
    pthread_cond_init(&st.cv, NULL);
    size_t nw = threads - 1;
    pthread_t *tid = opdb_xcalloc(nw ? nw : 1, sizeof *tid);
    bool *up = opdb_xcalloc(nw ? nw : 1, sizeof *up);
    opdb_call_workers held; /* held first: running out while starting them joins those started */
    opdb_call_hold_workers(&held, tid, up, nw, stop_all, &st);
    for (size_t k = 0; k < nw; k++) up[k] = opdb_thread_create_wake(&tid[k], worker, &st, wake_all, &st) == 0;
    pthread_mutex_lock(&st.mu);
    run(&st, &st.ws[0], qb);
    st.stop = true;
    pthread_cond_broadcast(&st.cv);
    pthread_mutex_unlock(&st.mu);
    opdb_call_drop_workers(&held);
    for (size_t k = 0; k < nw; k++)
        if (up[k]) pthread_join(tid[k], NULL);
    opdb_call_check(); /* a worker ran out of memory: the call fails here */
    atomic_fetch_add(&((opdb_qdb *)db)->line_memo_hits, atomic_load(&st.memo_hits)); /* an atomic counter */
    int rc = st.rc ? st.rc : st.read_failed ? -OPDB_ERR_RUNTIME : 0;
    if (stats) {
        *stats = st.stats;
        opdb_qdb_skipped(db, &stats->skipped_rows, &stats->skipped_files);
    }
    pthread_cond_destroy(&st.cv);
    pthread_mutex_destroy(&st.mu);
    for (size_t t = 0; t < threads; t++)
        for (size_t k = 0; k < SLOTS_PER_THREAD; k++) {
            free(st.ws[t].slot[k].in);
            opdb_sb_free(&st.ws[t].slot[k].out);
        }
    free(st.ws);
    free(st.order);
    q_lmemo_free(st.memo);
    free(st.cr.p);
    free(tid);
    free(up);
    opdb_qresult_buf_free(qb);
    return rc;
}

int opdb_query_stream(const opdb_qdb *db, unsigned threads, bool explain, ptrdiff_t (*read)(void *ctx, char *buf, size_t cap),
                      void *read_ctx, int (*write)(void *ctx, const char *text, size_t n), void *write_ctx,
                      opdb_qstats *stats) {
    if (!db) return -1;
    Q_ENTRY(db, stream_call(db, threads, explain, read, read_ctx, write, write_ctx, stats));
}
