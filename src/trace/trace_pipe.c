/* See trace_pipe.h. A ring of NBATCH batches: the parser fills the slot
 * after the full ones, the consumer empties the oldest; one mutex and two
 * condition variables, touched once per batch (thousands of events). */
#include "trace/trace_pipe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NBATCH 4
#define BATCH_EVENTS 2048
#define BATCH_BYTES (1u << 20)
#define PIPE_MIN_FILE (4u << 20)

typedef struct ev_head {
    unsigned long long index, offset;
    size_t store_off; /* where the event's store starts in the batch's */
    size_t fa_off;    /* its fields, then its args, in fa */
    size_t nf, na;
} ev_head;

typedef struct batch {
    opdb_strbuf store;
    field_at *fa;
    size_t nfa, capfa;
    ev_head *eh;
    size_t neh, capeh;
} batch;

struct trace_pipe {
    batch b[NBATCH];
    size_t head, count; /* oldest full slot, number of full slots */
    batch *cur;         /* the slot the parser fills: b[(head + count) % NBATCH] */
    bool done;          /* the parser has returned */
    int parse_rc;
    opdb_err parse_err;
    atomic_int stop;    /* set by the consumer: discard, stop parsing */
    pthread_mutex_t mu;
    pthread_cond_t has_full, has_room;
    /* the parser thread's job */
    int (*parse)(void *, const char *, opdb_err *);
    void *arg;
    const char *path;
};

bool opdb_trace_pipe_wanted(const char *path) {
    const char *env = getenv("OPDB_TRACE_PIPELINE");
    if (env && strcmp(env, "1") == 0) return true;
    if (env && strcmp(env, "0") == 0) return false;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return false;
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_size >= PIPE_MIN_FILE;
}

trace_pipe *opdb_trace_pipe_new(void) {
    trace_pipe *p = opdb_xcalloc(1, sizeof *p);
    for (int i = 0; i < NBATCH; i++) opdb_sb_init(&p->b[i].store);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->has_full, NULL);
    pthread_cond_init(&p->has_room, NULL);
    p->cur = &p->b[0];
    return p;
}

void opdb_trace_pipe_free(trace_pipe *p) {
    if (!p) return;
    for (int i = 0; i < NBATCH; i++) {
        opdb_sb_free(&p->b[i].store);
        free(p->b[i].fa);
        free(p->b[i].eh);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->has_full);
    pthread_cond_destroy(&p->has_room);
    free(p);
}

static void batch_clear(batch *b) {
    opdb_sb_clear(&b->store);
    b->nfa = b->neh = 0;
}

/* The slot the parser fills: the one after the full ones (count < NBATCH). */
static batch *filling(trace_pipe *p) { return &p->b[(p->head + p->count) % NBATCH]; }

/* Hands the filled slot over and waits for room; non-zero when stopped. */
static int publish(trace_pipe *p) {
    pthread_mutex_lock(&p->mu);
    p->count++;
    pthread_cond_signal(&p->has_full);
    while (p->count == NBATCH && !atomic_load(&p->stop)) pthread_cond_wait(&p->has_room, &p->mu);
    p->cur = filling(p);
    pthread_mutex_unlock(&p->mu);
    return atomic_load(&p->stop);
}

int opdb_trace_pipe_put(trace_pipe *p, unsigned long long index, unsigned long long offset, const opdb_strbuf *store,
                        const field_at *f, size_t nf, const field_at *a, size_t na) {
    if (atomic_load_explicit(&p->stop, memory_order_relaxed)) return 1;
    batch *b = p->cur; /* ours until publish(): the consumer never touches it */
    if (b->neh == b->capeh) {
        b->capeh = b->capeh ? b->capeh * 2 : BATCH_EVENTS;
        b->eh = opdb_xrealloc(b->eh, b->capeh * sizeof *b->eh);
    }
    if (b->nfa + nf + na > b->capfa) {
        b->capfa = (b->nfa + nf + na) * 2 + 64;
        b->fa = opdb_xrealloc(b->fa, b->capfa * sizeof *b->fa);
    }
    ev_head *h = &b->eh[b->neh++];
    h->index = index;
    h->offset = offset;
    h->store_off = b->store.n;
    h->fa_off = b->nfa;
    h->nf = nf;
    h->na = na;
    opdb_sb_add(&b->store, store->p ? store->p : "", store->n);
    if (nf) memcpy(b->fa + b->nfa, f, nf * sizeof *f);
    if (na) memcpy(b->fa + b->nfa + nf, a, na * sizeof *a);
    b->nfa += nf + na;
    if (b->neh >= BATCH_EVENTS || b->store.n >= BATCH_BYTES) return publish(p);
    return 0;
}

static void *parser_main(void *arg) {
    trace_pipe *p = arg;
    memset(&p->parse_err, 0, sizeof p->parse_err);
    int rc = p->parse(p->arg, p->path, &p->parse_err);
    pthread_mutex_lock(&p->mu);
    if (p->cur->neh && !atomic_load(&p->stop)) p->count++; /* the last, partial batch */
    p->parse_rc = rc;
    p->done = true;
    pthread_cond_signal(&p->has_full);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void resolve(const batch *b, const ev_head *h, size_t from, size_t n, opdb_trace_field **out, size_t *cap) {
    if (*cap < n) {
        *cap = n * 2;
        *out = opdb_xrealloc(*out, *cap * sizeof **out);
    }
    const char *base = b->store.p + h->store_off;
    for (size_t i = 0; i < n; i++) {
        const field_at *f = &b->fa[h->fa_off + from + i];
        (*out)[i].key = (char *)base + f->key;
        (*out)[i].text = (char *)base + f->text;
        (*out)[i].kind = f->kind;
    }
}

int opdb_trace_pipe_run(trace_pipe *p, int (*parse)(void *, const char *, opdb_err *), void *arg, const char *path,
                        opdb_trace_cb cb, void *ctx, opdb_err *err) {
    p->parse = parse;
    p->arg = arg;
    p->path = path;
    pthread_t th;
    if (pthread_create(&th, NULL, parser_main, p) != 0) return -2;
    opdb_trace_event ev;
    memset(&ev, 0, sizeof ev);
    bool stopped = false;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->count == 0 && !p->done) pthread_cond_wait(&p->has_full, &p->mu);
        if (p->count == 0) { /* done, everything delivered */
            pthread_mutex_unlock(&p->mu);
            break;
        }
        batch *b = &p->b[p->head];
        pthread_mutex_unlock(&p->mu);
        for (size_t i = 0; i < b->neh && !stopped; i++) {
            const ev_head *h = &b->eh[i];
            resolve(b, h, 0, h->nf, &ev.f, &ev.capf);
            resolve(b, h, h->nf, h->na, &ev.args, &ev.capargs);
            ev.nf = h->nf;
            ev.nargs = h->na;
            ev.index = h->index;
            ev.offset = h->offset;
            stopped = cb(&ev, ctx) != 0;
        }
        batch_clear(b);
        pthread_mutex_lock(&p->mu);
        p->head = (p->head + 1) % NBATCH;
        p->count--;
        if (stopped) atomic_store(&p->stop, 1);
        pthread_cond_signal(&p->has_room);
        pthread_mutex_unlock(&p->mu);
        if (stopped) break;
    }
    pthread_join(th, NULL);
    free(ev.f);
    free(ev.args);
    if (stopped) return 0;
    if (p->parse_rc) {
        *err = p->parse_err;
        return p->parse_rc;
    }
    return 0;
}
