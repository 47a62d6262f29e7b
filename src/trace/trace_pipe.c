/* See trace_pipe.h. A ring of NBATCH byte batches: the parser fills the
 * slot after the full ones, the consumer empties the oldest; one mutex and
 * two condition variables, touched once per batch (about 1 MiB of tokens).
 * Token encoding: one type byte; KEY/STRING/NUMBER add a size_t length and
 * the bytes; END_MAP/END_ARRAY add the byte offset. */
#include "trace/trace_pipe.h"
#include "core/call.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "opdb/limits.h"

#define NBATCH 4
#define BATCH_BYTES (1u << 20)
#define PIPE_MIN_FILE (4u << 20)
#define CHUNK (1 << 17)

enum { T_NULL, T_FALSE, T_TRUE, T_NUMBER, T_STRING, T_KEY, T_START_MAP, T_END_MAP, T_START_ARRAY, T_END_ARRAY };

typedef struct pipe {
    opdb_strbuf b[NBATCH];
    size_t head, count;  /* oldest full slot, number of full slots */
    opdb_strbuf *cur;    /* the slot the parser fills: b[(head + count) % NBATCH] */
    bool done;           /* the parser has returned */
    int parse_rc;
    opdb_err parse_err;
    atomic_int stop;     /* set by the consumer: stop parsing */
    pthread_mutex_t mu;
    pthread_cond_t has_full, has_room;
    const char *path;
    trace_yajl_run y;    /* the parser's */
    int depth;           /* the parser's container depth */
} pipe_t;

/* Where each string starts and how long it has run, across chunks. A chunk
 * that ends inside a string is held back from the string's opening quote
 * until the string ends: yajl re-reads a token split across chunks from its
 * start at every chunk (quadratic), so it only ever sees whole strings, and
 * a string over the limit is refused as soon as it passes the limit. */
typedef struct str_scan {
    bool in_str, esc;
    size_t at;                 /* offset of the open string's quote in the data */
    unsigned long long len;    /* raw bytes of the open string so far */
} str_scan;

/* Scans data[from, n); returns the offset of an open string past max, or -1. */
static long long scan_strings(str_scan *sc, const unsigned char *data, size_t from, size_t n, unsigned long long max) {
    for (size_t i = from; i < n; i++) {
        unsigned char c = data[i];
        if (!sc->in_str) {
            if (c == '"') {
                sc->in_str = true;
                sc->at = i;
                sc->len = 0;
            }
            continue;
        }
        if (sc->esc) sc->esc = false;
        else if (c == '\\') sc->esc = true;
        else if (c == '"') {
            sc->in_str = false;
            continue;
        }
        if (++sc->len > max) return (long long)sc->at;
    }
    return -1;
}

/* Feeds data[0, n) to yajl; y->chunk_off is the file offset of data[0]. */
static int feed(const char *path, yajl_handle h, const unsigned char *data, size_t n, void *ctx,
                bool (*stopped)(void *), trace_yajl_run *y, bool *stop, opdb_err *err) {
    if (!n) return 0;
    yajl_status st = yajl_parse(h, data, n);
    if (st == yajl_status_ok) return 0;
    *stop = st == yajl_status_client_canceled && stopped(ctx);
    if (*stop) return 0;
    if (st == yajl_status_client_canceled) /* only the depth limit cancels otherwise */
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: invalid JSON at byte %llu: nested deeper than %d levels", path,
                         y->chunk_off + yajl_get_bytes_consumed(h), TRACE_MAX_DEPTH - 1);
    size_t at = yajl_get_bytes_consumed(h);
    unsigned char *msg = yajl_get_error(h, 0, data, n);
    int rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: invalid JSON at byte %llu: %s", path, y->chunk_off + at,
                       (const char *)msg);
    yajl_free_error(h, msg);
    return rc;
}

int opdb_trace_yajl_file(const char *path, const yajl_callbacks *cbs, void *ctx, bool (*stopped)(void *),
                         trace_yajl_run *y, opdb_err *err) {
    gzFile gz = gzopen(path, "rb"); /* reads plain files too */
    if (!gz) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
    gzbuffer(gz, CHUNK);
    yajl_handle h = yajl_alloc(cbs, NULL, ctx);
    y->h = h;
    y->chunk_off = 0;
    yajl_config(h, yajl_allow_comments, 0);
    unsigned long long max_str = opdb_json_limit_get(OPDB_JSON_LIMIT_STRING);
    unsigned char *buf = opdb_xmalloc(CHUNK);
    opdb_strbuf held; /* an open string carried over from earlier chunks */
    opdb_sb_init(&held);
    str_scan sc = {0};
    unsigned long long read_off = 0; /* file offset after the last byte read */
    int rc = 0, n = 0;
    bool stop = false;
    while (rc == 0 && !stop && (n = gzread(gz, buf, CHUNK)) > 0) {
        const unsigned char *data = buf;
        size_t len = (size_t)n, from = 0;
        if (held.n) {
            from = held.n;
            opdb_sb_add(&held, (const char *)buf, (size_t)n);
            data = (const unsigned char *)held.p;
            len = held.n;
        }
        unsigned long long base = read_off + (unsigned long long)n - len;
        read_off += (unsigned long long)n;
        long long over = scan_strings(&sc, data, from, len, max_str);
        if (over >= 0) {
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: a JSON string longer than %llu (%s) at byte %llu", path, max_str,
                           opdb_json_limit_name(OPDB_JSON_LIMIT_STRING), base + (unsigned long long)over);
            break;
        }
        size_t upto = sc.in_str ? sc.at : len;
        y->chunk_off = base;
        rc = feed(path, h, data, upto, ctx, stopped, y, &stop, err);
        if (rc || stop) break;
        if (data == buf) {
            held.n = 0;
            opdb_sb_add(&held, (const char *)buf + upto, len - upto);
        } else {
            memmove(held.p, held.p + upto, len - upto);
            held.n = len - upto;
        }
        sc.at = 0;
        y->chunk_off = base + upto;
    }
    if (n < 0 && rc == 0 && !stop) {
        int e;
        const char *m = gzerror(gz, &e);
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", path, m);
    }
    if (rc == 0 && !stop && held.n) { /* an unterminated string: yajl names the error */
        rc = feed(path, h, (const unsigned char *)held.p, held.n, ctx, stopped, y, &stop, err);
        if (rc == 0) y->chunk_off += held.n;
    }
    if (rc == 0 && !stop && yajl_complete_parse(h) != yajl_status_ok && !stopped(ctx))
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: truncated or invalid JSON at byte %llu", path, y->chunk_off);
    yajl_free(h);
    y->h = NULL;
    gzclose(gz);
    free(buf);
    opdb_sb_free(&held);
    return rc;
}

bool opdb_trace_pipe_wanted(const char *path, bool by_default) {
    int mode = opdb_call_now()->modes.trace_pipeline; /* the call's choice, else by size */
    if (mode > 0) return true;
    if (mode < 0 || !by_default) return false;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return false;
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_size >= PIPE_MIN_FILE;
}

/* ------------------------------------------------------------ parser side */

/* Hands the filled slot over and waits for room; 0 (cancel) when stopped. */
static int publish(pipe_t *p) {
    pthread_mutex_lock(&p->mu);
    p->count++;
    pthread_cond_signal(&p->has_full);
    while (p->count == NBATCH && !atomic_load(&p->stop)) pthread_cond_wait(&p->has_room, &p->mu);
    p->cur = &p->b[(p->head + p->count) % NBATCH];
    pthread_mutex_unlock(&p->mu);
    return !atomic_load(&p->stop);
}

static inline int put(pipe_t *p, int type, const void *data, size_t n, bool with_len) {
    opdb_strbuf *b = p->cur; /* ours until publish(): the consumer never touches it */
    size_t need = 1 + (with_len ? sizeof n : 0) + n;
    if (b->cap - b->n <= need) opdb_sb_reserve(b, need + 1);
    b->p[b->n++] = (char)type;
    if (with_len) {
        memcpy(b->p + b->n, &n, sizeof n);
        b->n += sizeof n;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
    if (b->n >= BATCH_BYTES) return publish(p);
    return !atomic_load_explicit(&p->stop, memory_order_relaxed);
}

static int rec_null(void *c) { return put(c, T_NULL, NULL, 0, false); }
static int rec_bool(void *c, int v) { return put(c, v ? T_TRUE : T_FALSE, NULL, 0, false); }
static int rec_number(void *c, const char *s, size_t n) { return put(c, T_NUMBER, s, n, true); }
static int rec_string(void *c, const unsigned char *s, size_t n) { return put(c, T_STRING, s, n, true); }
static int rec_key(void *c, const unsigned char *s, size_t n) { return put(c, T_KEY, s, n, true); }

static int rec_start(pipe_t *p, int type) {
    if (p->depth + 1 >= TRACE_MAX_DEPTH) return 0; /* the reader's limit: the same error, at the same byte */
    p->depth++;
    return put(p, type, NULL, 0, false);
}

static int rec_end(pipe_t *p, int type) {
    p->depth--;
    unsigned long long off = p->y.chunk_off + yajl_get_bytes_consumed(p->y.h);
    return put(p, type, &off, sizeof off, false);
}

static int rec_start_map(void *c) { return rec_start(c, T_START_MAP); }
static int rec_end_map(void *c) { return rec_end(c, T_END_MAP); }
static int rec_start_array(void *c) { return rec_start(c, T_START_ARRAY); }
static int rec_end_array(void *c) { return rec_end(c, T_END_ARRAY); }

static const yajl_callbacks k_record = {rec_null,      rec_bool, NULL,        NULL,            rec_number, rec_string,
                                        rec_start_map, rec_key,  rec_end_map, rec_start_array, rec_end_array};

static bool pipe_stopped(void *c) { return atomic_load(&((pipe_t *)c)->stop) != 0; }

static void *parser_main(void *arg) {
    pipe_t *p = arg;
    memset(&p->parse_err, 0, sizeof p->parse_err);
    int rc = opdb_trace_yajl_file(p->path, &k_record, p, pipe_stopped, &p->y, &p->parse_err);
    pthread_mutex_lock(&p->mu);
    if (p->cur->n && !atomic_load(&p->stop)) p->count++; /* the last, partial batch */
    p->parse_rc = rc;
    p->done = true;
    pthread_cond_signal(&p->has_full);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* The parser ran out of memory: the consumer replays what was published
 * and stops (the call then fails). */
static void parser_failed(void *arg) {
    pipe_t *p = arg;
    pthread_mutex_lock(&p->mu);
    p->done = true;
    pthread_cond_signal(&p->has_full);
    pthread_mutex_unlock(&p->mu);
}

/* The consumer ran out of memory: the parser stops at its next event. */
static void stop_parser(void *arg) {
    pipe_t *p = arg;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_signal(&p->has_room);
    pthread_mutex_unlock(&p->mu);
}

/* ------------------------------------------------------------ consumer side */

/* Replays one batch; false when a callback stopped the read. */
static bool replay(const opdb_strbuf *b, const yajl_callbacks *cbs, void *ctx,
                   void (*set_offset)(void *, unsigned long long)) {
    const char *q = b->p, *end = b->p + b->n;
    while (q < end) {
        int type = (unsigned char)*q++;
        size_t n = 0;
        unsigned long long off = 0;
        int ok = 1;
        if (type == T_NUMBER || type == T_STRING || type == T_KEY) {
            memcpy(&n, q, sizeof n);
            q += sizeof n;
        } else if (type == T_END_MAP || type == T_END_ARRAY) {
            memcpy(&off, q, sizeof off);
            q += sizeof off;
            set_offset(ctx, off);
        }
        switch (type) {
        case T_NULL: ok = cbs->yajl_null(ctx); break;
        case T_FALSE: ok = cbs->yajl_boolean(ctx, 0); break;
        case T_TRUE: ok = cbs->yajl_boolean(ctx, 1); break;
        case T_NUMBER: ok = cbs->yajl_number(ctx, q, n); break;
        case T_STRING: ok = cbs->yajl_string(ctx, (const unsigned char *)q, n); break;
        case T_KEY: ok = cbs->yajl_map_key(ctx, (const unsigned char *)q, n); break;
        case T_START_MAP: ok = cbs->yajl_start_map(ctx); break;
        case T_END_MAP: ok = cbs->yajl_end_map(ctx); break;
        case T_START_ARRAY: ok = cbs->yajl_start_array(ctx); break;
        case T_END_ARRAY: ok = cbs->yajl_end_array(ctx); break;
        }
        q += n;
        if (!ok) return false;
    }
    return true;
}

int opdb_trace_pipe_replay(const char *path, const yajl_callbacks *cbs, void *ctx,
                           void (*set_offset)(void *, unsigned long long), opdb_err *err) {
    pipe_t *p = opdb_xcalloc(1, sizeof *p);
    for (int i = 0; i < NBATCH; i++) opdb_sb_init(&p->b[i]);
    p->cur = &p->b[0];
    p->path = path;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->has_full, NULL);
    pthread_cond_init(&p->has_room, NULL);
    pthread_t th;
    int rc = -2;
    if (opdb_thread_create_wake(&th, parser_main, p, parser_failed, p) == 0) {
        opdb_call_workers held;
        opdb_call_hold_workers(&held, &th, NULL, 1, stop_parser, p);
        bool stopped = false;
        for (;;) {
            pthread_mutex_lock(&p->mu);
            while (p->count == 0 && !p->done) pthread_cond_wait(&p->has_full, &p->mu);
            opdb_strbuf *b = p->count ? &p->b[p->head] : NULL;
            pthread_mutex_unlock(&p->mu);
            if (!b) break; /* done, everything replayed */
            stopped = !replay(b, cbs, ctx, set_offset);
            opdb_sb_clear(b);
            pthread_mutex_lock(&p->mu);
            p->head = (p->head + 1) % NBATCH;
            p->count--;
            if (stopped) atomic_store(&p->stop, 1);
            pthread_cond_signal(&p->has_room);
            pthread_mutex_unlock(&p->mu);
            if (stopped) break;
        }
        opdb_call_drop_workers(&held);
        pthread_join(th, NULL);
        opdb_call_check();
        rc = 0;
        if (!stopped && p->parse_rc) {
            *err = p->parse_err;
            rc = p->parse_rc;
        }
    }
    for (int i = 0; i < NBATCH; i++) opdb_sb_free(&p->b[i]);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->has_full);
    pthread_cond_destroy(&p->has_room);
    free(p);
    return rc;
}
