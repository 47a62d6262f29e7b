/* The public entry points: one query (JSON line, built values or kernel
 * level), a batch, and the result's line. Each query works in its own arena,
 * which the result then owns. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"
#include "query/qline_fast.h"
#include "query/query_internal.h"
#include "core/call.h"

struct opdb_qresult_priv {
    opdb_arena a;
    opdb_qsub *subs;
    const char *id;              /* the id as JSON text */
    size_t id_n;
    char id_buf[24];             /* an integer id's text */
    bool quirks;
    char *line;                  /* the result line, rendered on first request (at once with explain) */
    size_t line_n;
    bool borrowed;               /* lives in a caller's opdb_qresult_buf: freed with it */
    q_result r;                  /* last: a reused state empties what precedes it, finish() sets this */
};

/* Caller-owned result storage: one state and one arena, emptied for each query. */
struct opdb_qresult_buf {
    opdb_qresult_priv p;
};

/* The result line appended to sb. */
static void render_into(const opdb_qresult_priv *p, bool explain, opdb_strbuf *sb) {
    q_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.quirks = p->quirks;
    q_ctx c;
    memset(&c, 0, sizeof c);
    c.cfg = &cfg;
    c.r = (q_result *)&p->r;
    c.explain = explain;
    q_render(&c, p->id, p->id_n, sb);
}

static void render_line(opdb_qresult_priv *p, bool explain) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    render_into(p, explain, &sb);
    p->line = opdb_arena_strndup(&p->a, sb.p, sb.n);
    p->line_n = sb.n;
    opdb_sb_free(&sb);
}

const char *opdb_qsource_name(opdb_qsource s) {
    static const char *const n[] = {"MEASURED", "INTERPOLATED", "EXTRAPOLATED", "PARTIAL", "MISS", "ERROR"};
    return (unsigned)s < 6 ? n[s] : "?";
}

static opdb_qsource pub_src(q_src s) {
    switch (s) {
    case QS_MEASURED: return OPDB_SRC_MEASURED;
    case QS_INTERPOLATED: return OPDB_SRC_INTERPOLATED;
    case QS_PARTIAL: return OPDB_SRC_PARTIAL;
    case QS_MISS: return OPDB_SRC_MISS;
    default: return OPDB_SRC_ERROR;
    }
}

/* Runs a prepared query (or records its parse error) and fills res; own_line:
 * the caller renders the line at once (the handle's strings are not copied). */
static int finish_as(const opdb_qdb *db, opdb_qresult_priv *p, const q_query *q, const char *code, const char *msg,
                     bool explain, opdb_qresult *res, bool own_line) {
    q_ctx c;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.cfg = &db->cfg;
    c.q = q;
    c.a = &p->a;
    c.explain = explain;
    c.r = &p->r;
    c.probe_hash = q ? q->line_hash : 0;
    q_result_clear(&p->r);
    p->r.src = QS_MISS;
    p->r.miss = "";
    /* the result cache answers repeated kernel-level queries here, op-level ones
     * in the dispatch (explain always computes: it names rows) */
    uint8_t key[1024];
    size_t klen = !code && !explain && db->cache && q->kernel ? q_cache_key(q, key, sizeof key) : 0;
    if (code) {
        q_error(&c, code, "%s", msg);
        if (explain) p->r.path = NULL;
    } else if (klen && q_cache_get(db->cache, key, klen, &p->a, &p->r)) {
        /* answered */
    } else {
        if (q->kernel) q_kernel_query(&c);
        else q_dispatch(&c);
        if (klen) q_cache_put(db->cache, key, klen, &p->r);
    }
    /* the id echoed as JSON text (an integer or none, the usual ids, without a buffer) */
    const qv *idv = q && q->id ? q->id : NULL;
    const char *id;
    size_t id_n;
    if (!idv || idv->kind == QV_NULL) {
        id = "null";
        id_n = 4;
    } else if (q->id_text) {
        /* the line's own text of it (no longer than the buffer), NUL after it */
        for (id_n = 0; id_n < q->id_len; id_n++) p->id_buf[id_n] = q->id_text[id_n];
        p->id_buf[id_n] = 0;
        id = p->id_buf;
    } else if (idv->kind == QV_INT) {
        /* written into the result's own buffer, NUL after it */
        id_n = opdb_py_fmt_int(p->id_buf, idv->i);
        p->id_buf[id_n] = 0;
        id = p->id_buf;
    } else {
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        q_render_value(idv, &sb);
        opdb_sb_addc(&sb, 0);
        id_n = sb.n - 1;
        id = opdb_arena_strndup(&p->a, sb.p, id_n);
        opdb_sb_free(&sb);
    }
    p->id = id;
    p->id_n = id_n;
    /* strings that point into the database are copied: a result may outlive
     * its handle (not one rendered at once, while the handle is certainly there) */
    if (!own_line) {
        if (p->r.kernel) p->r.kernel = opdb_arena_strndup(&p->a, p->r.kernel, strlen(p->r.kernel));
        for (size_t i = 0; i < p->r.n_sub; i++)
            p->r.sub[i].kernel = opdb_arena_strndup(&p->a, p->r.sub[i].kernel, strlen(p->r.sub[i].kernel));
    }
    p->quirks = db->cfg.quirks;
    const char *xj = NULL;
    if (explain) {
        /* explain names rows of the database: rendered now, while they are certainly there */
        render_line(p, true);
        const char *k = strstr(p->line, ", \"explain\": ");
        xj = k ? k + 13 : NULL;
    }
    /* (empty but with explain: no call) */
    if (p->r.extra.p) opdb_sb_free(&p->r.extra);
    if (p->r.attempts.p) opdb_sb_free(&p->r.attempts);
    q_result *r = &p->r;
    /* every member set (no memset of the whole: the common result needs none) */
    _Static_assert(sizeof(void *) != 8 || sizeof(opdb_qresult) == 104, "set every member of the result here");
    res->priv = p;
    res->source = pub_src(r->src);
    res->hit = r->src == QS_MEASURED || r->src == QS_INTERPOLATED || r->src == QS_PARTIAL;
    res->latency_us = res->hit ? r->lat : 0;
    res->confidence = res->hit ? r->conf : 0;
    res->shape_match_rule = res->hit ? r->rule : NULL;
    res->kernel_type = res->hit ? r->kernel : NULL;
    res->miss_reason = res->hit ? NULL : r->miss ? r->miss : "";
    res->error = NULL;
    res->sub = NULL;
    res->n_sub = 0;
    res->has_sub = false;
    res->explain_json = NULL;
    if (r->src == QS_ERROR) {
        size_t n = strlen(r->miss ? r->miss : "");
        char *m = opdb_arena_alloc(&p->a, n + 7);
        memcpy(m, "error:", 6);
        memcpy(m + 6, r->miss ? r->miss : "", n + 1);
        res->miss_reason = m;
        res->error = r->error_msg;
    }
    if (res->hit && r->has_sub) {
        p->subs = opdb_arena_alloc(&p->a, (r->n_sub ? r->n_sub : 1) * sizeof *p->subs);
        for (size_t i = 0; i < r->n_sub; i++) p->subs[i].kernel = r->sub[i].kernel, p->subs[i].latency_us = r->sub[i].us;
        res->sub = p->subs;
        res->n_sub = r->n_sub;
        res->has_sub = true;
    }
    res->id_json = id;
    if (xj) {
        /* the explain object runs to the line's last '}' (exclusive of the line's own) */
        size_t n = (size_t)(p->line + p->line_n - 1 - xj);
        res->explain_json = opdb_arena_strndup(&p->a, xj, n);
    }
    return 0;
}

static int finish(const opdb_qdb *db, opdb_qresult_priv *p, const q_query *q, const char *code, const char *msg,
                  bool explain, opdb_qresult *res) {
    return finish_as(db, p, q, code, msg, explain, res, false);
}

/* The result's own state lives at the start of its arena: one allocation per query. */
static opdb_qresult_priv *new_priv(void) {
    opdb_arena a;
    opdb_arena_init(&a, 1 << 13);
    opdb_qresult_priv *p = opdb_arena_alloc(&a, sizeof *p);
    memset(p, 0, sizeof *p);
    p->a = a;
    return p;
}

static int query_json(const opdb_qdb *db, opdb_qresult_priv *p, const char *line, size_t n, bool explain,
                      opdb_qresult *res, bool own_line, uint64_t given_hash) {
    q_query q;
    const char *code = NULL;
    char msg[512];
    msg[0] = 0; /* (not zero-filled: the common line never writes it) */
    /* the slot the query's first exact-hit map probe starts at, fetched while the line is read */
    uint64_t lh = given_hash ? given_hash : q_line_hash(line, n);
    if (!explain) q_hitmap_prefetch(db->hitmap, lh);
    if (!explain) ip_omap_prefetch(db->ipmap, lh); /* the outcome map's first probe starts there too */
    if (q_parse_line(&p->a, line, n, &q, &code, msg, sizeof msg) != 0) {
        q_query bad = q;
        return finish_as(db, p, &bad, code, msg, explain, res, own_line);
    }
    q.line_hash = lh;
    return finish_as(db, p, &q, NULL, NULL, explain, res, own_line);
}

static int q_query_json_call(const opdb_qdb *db, const char *line, size_t n, bool explain, opdb_qresult *res) {
    if (!db || !res) return -1;
    return query_json(db, new_priv(), line, n, explain, res, false, 0);
}

int opdb_query_json(const opdb_qdb *db, const char *line, size_t n, bool explain, opdb_qresult *res) {
    if (!db) return -1;
    Q_ENTRY(db, q_query_json_call(db, line, n, explain, res));
}

opdb_qresult_buf *q_qresult_buf_new(void) {
    opdb_qresult_buf *b = opdb_xcalloc(1, sizeof *b);
    opdb_arena_init(&b->p.a, 1 << 14);
    b->p.borrowed = true;
    return b;
}

opdb_qresult_buf *opdb_qresult_buf_new(void) {
    Q_GUARDED(opdb_qresult_buf *, NULL, q_qresult_buf_new());
}

void opdb_qresult_buf_free(opdb_qresult_buf *b) {
    if (!b) return;
    opdb_arena_free(&b->p.a);
    free(b);
}

/* The result storage emptied for the next query. */
static opdb_qresult_priv *buf_reuse(opdb_qresult_buf *buf) {
    opdb_qresult_priv *p = &buf->p;
    opdb_arena_reset(&p->a);
    /* the result (r) is set whole by finish(): only the members before it are
     * emptied, one by one (a memset of them all starts slowly, as qv_new says) */
    _Static_assert(sizeof(void *) != 8 || offsetof(opdb_qresult_priv, r) == 96,
                   "buf_reuse empties every member before r: add the new one");
    p->subs = NULL;
    p->id = NULL;
    p->id_n = 0;
    p->quirks = false;
    p->line = NULL;
    p->line_n = 0;
    p->borrowed = true;
    return p;
}

int q_query_json_buf_call(const opdb_qdb *db, const char *line, size_t n, bool explain, opdb_qresult_buf *buf,
                          opdb_qresult *res) {
    if (!db || !res || !buf) return -1;
    return query_json(db, buf_reuse(buf), line, n, explain, res, false, 0);
}

void q_query_json_append(const opdb_qdb *db, const char *line, size_t n, bool explain, uint64_t line_hash,
                         opdb_qresult_buf *buf, opdb_qresult *res, opdb_strbuf *out) {
    opdb_qresult_priv *p = buf_reuse(buf);
    (void)query_json(db, p, line, n, explain, res, true, line_hash);
    /* explain has rendered its line already; the rest goes straight into out */
    if (p->line) opdb_sb_add(out, p->line, p->line_n);
    else render_into(p, false, out);
    opdb_sb_addc(out, '\n');
}

int opdb_query_json_buf(const opdb_qdb *db, const char *line, size_t n, bool explain, opdb_qresult_buf *buf,
                        opdb_qresult *res) {
    if (!db) return -1;
    Q_ENTRY(db, q_query_json_buf_call(db, line, n, explain, buf, res));
}

static int q_query_call(const opdb_qdb *db, const char *op, const opdb_qvalue *args, const opdb_qvalue *out,
               const opdb_qvalue *kwargs, bool explain, opdb_qresult *res) {
    if (!db || !res) return -1;
    opdb_qresult_priv *p = new_priv();
    static const qv empty_list = {.kind = QV_LIST, .dtype = -1};
    static const qv empty_dict = {.kind = QV_DICT, .dtype = -1};
    q_query q;
    memset(&q, 0, sizeof q);
    if (!op) return finish(db, p, &q, "bad_query", "no op name", explain, res);
    if (args && args->kind != QV_LIST) return finish(db, p, &q, "bad_query", "args is not a list", explain, res);
    if (kwargs && kwargs->kind != QV_DICT) return finish(db, p, &q, "bad_query", "kwargs is not a dict", explain, res);
    q.op = strncmp(op, "torch.ops.", 10) == 0 ? op + 10 : op;
    q.args = args ? args : &empty_list;
    q.out = out && out->kind != QV_NULL ? out : NULL;
    q.kwargs = kwargs ? kwargs : &empty_dict;
    return finish(db, p, &q, NULL, NULL, explain, res);
}

int opdb_query(const opdb_qdb *db, const char *op, const opdb_qvalue *args, const opdb_qvalue *out,
               const opdb_qvalue *kwargs, bool explain, opdb_qresult *res) {
    if (!db) return -1;
    Q_ENTRY(db, q_query_call(db, op, args, out, kwargs, explain, res));
}

void opdb_qresult_free(opdb_qresult *r) {
    if (!r || !r->priv) return;
    if (r->priv->borrowed) { /* the buffer's: emptied by its next query, freed with it */
        memset(r, 0, sizeof *r);
        return;
    }
    opdb_arena a = r->priv->a; /* the arena holds priv itself */
    opdb_arena_free(&a);
    memset(r, 0, sizeof *r);
}

static int qresult_json_call(const opdb_qresult *r, char **text, size_t *len) {
    if (!r->priv->line) render_line(r->priv, false);
    *text = opdb_xmalloc(r->priv->line_n + 1);
    memcpy(*text, r->priv->line, r->priv->line_n);
    (*text)[r->priv->line_n] = 0;
    if (len) *len = r->priv->line_n;
    return 0;
}

int opdb_qresult_json(const opdb_qresult *r, char **text, size_t *len) {
    if (!r || !r->priv) return -1;
    Q_GUARDED(int, -OPDB_ERR_NOMEM, qresult_json_call(r, text, len));
}

int q_qresult_line(const opdb_qresult *r, const char **text, size_t *len) {
    if (!r->priv->line) render_line(r->priv, false);
    *text = r->priv->line;
    if (len) *len = r->priv->line_n;
    return 0;
}

int opdb_qresult_line(const opdb_qresult *r, const char **text, size_t *len) {
    if (!r || !r->priv) return -1;
    Q_GUARDED(int, -OPDB_ERR_NOMEM, q_qresult_line(r, text, len));
}

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

void q_stats_add(opdb_qstats *s, const opdb_qresult *r) {
    s->queries++;
    switch (r->source) {
    case OPDB_SRC_MEASURED: s->measured++; break;
    case OPDB_SRC_INTERPOLATED: s->interpolated++; break;
    case OPDB_SRC_PARTIAL: s->partial++; break;
    case OPDB_SRC_ERROR: s->error++; break;
    default:
        s->miss++;
        if (r->miss_reason && strncmp(r->miss_reason, "unsupported:", 12) == 0) s->unsupported++;
    }
}

typedef struct bjob {
    const opdb_qdb *db;
    const char *text;
    const size_t (*span)[2];
    opdb_qresult *res;
    size_t n;
    bool explain;
    _Atomic size_t next;
    _Atomic int failed;
} bjob;

static void *batch_worker(void *p) {
    bjob *j = p;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n) break;
        if (opdb_query_json(j->db, j->text + j->span[i][0], j->span[i][1] - j->span[i][0], j->explain, &j->res[i]))
            atomic_store(&j->failed, 1);
    }
    return NULL;
}

/* The calling thread ran out of memory: the workers take no next line. */
static void stop_batch(void *arg) { atomic_store(&((bjob *)arg)->next, ((bjob *)arg)->n); }

/* Answers lines [0, n) of a window on `threads` threads, then emits them in order. */
static int batch_window(const opdb_qdb *db, const char *text, const size_t (*span)[2], size_t n, unsigned threads,
                        bool explain, int (*emit)(void *, const opdb_qresult *), void *ctx, opdb_qstats *stats) {
    opdb_qresult *res = opdb_xcalloc(n ? n : 1, sizeof *res);
    bjob j = {db, text, span, res, n, explain, 0, 0};
    pthread_t *tid = opdb_xcalloc(threads, sizeof *tid);
    bool *up = opdb_xcalloc(threads, sizeof *up);
    /* a thread that cannot start leaves its share to the others (this one always works) */
    opdb_call_workers held; /* held first: running out while starting them joins those started */
    opdb_call_hold_workers(&held, tid, up, threads, stop_batch, &j);
    for (unsigned t = 1; t < threads; t++) up[t] = opdb_thread_create(&tid[t], batch_worker, &j) == 0;
    batch_worker(&j);
    opdb_call_drop_workers(&held);
    for (unsigned t = 1; t < threads; t++)
        if (up[t]) pthread_join(tid[t], NULL);
    opdb_call_check();
    free(tid);
    free(up);
    int rc = atomic_load(&j.failed) ? -1 : 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            if (stats) q_stats_add(stats, &res[i]);
            int e = emit ? emit(ctx, &res[i]) : 0;
            if (e) rc = e;
        }
        opdb_qresult_free(&res[i]);
    }
    free(res);
    return rc;
}

static int q_query_batch_call(const opdb_qdb *db, const char *jsonl, size_t n, unsigned threads, bool explain,
                     int (*emit)(void *ctx, const opdb_qresult *r), void *ctx, opdb_qstats *stats) {
    if (stats) memset(stats, 0, sizeof *stats);
    if (threads == 0) threads = 1;
    if (threads > 256) threads = 256;
    /* results come in input order: lines are answered a window at a time, then emitted */
    enum { WINDOW = 4096 };
    size_t (*span)[2] = opdb_xmalloc(WINDOW * sizeof *span);
    size_t i = 0, k = 0;
    int rc = 0;
    while (i < n && rc == 0) {
        size_t j = i;
        while (j < n && jsonl[j] != '\n') j++;
        size_t a = i, b = j;
        while (a < b && blank(jsonl[a])) a++;
        while (b > a && blank(jsonl[b - 1])) b--;
        i = j + 1;
        if (a < b) {
            span[k][0] = a;
            span[k++][1] = b;
        }
        if (k == WINDOW || (i >= n && k)) {
            rc = batch_window(db, jsonl, (const size_t(*)[2])span, k, threads, explain, emit, ctx, stats);
            k = 0;
        }
    }
    free(span);
    if (stats) opdb_qdb_skipped(db, &stats->skipped_rows, &stats->skipped_files);
    return rc;
}

int opdb_query_batch(const opdb_qdb *db, const char *jsonl, size_t n, unsigned threads, bool explain,
                     int (*emit)(void *ctx, const opdb_qresult *r), void *ctx, opdb_qstats *stats) {
    if (!db) return q_query_batch_call(db, jsonl, n, threads, explain, emit, ctx, stats);
    Q_ENTRY(db, q_query_batch_call(db, jsonl, n, threads, explain, emit, ctx, stats));
}

/* ---- kernel level from the C struct: the same object a JSON line gives */

static qv *kv_str(opdb_arena *a, const char *s) {
    qv *v = qv_new(a, QV_STR);
    v->n = strlen(s);
    v->s = opdb_arena_strndup(a, s, v->n);
    return v;
}

static void kv_push(opdb_arena *a, qv *c, qv *k, qv *v) {
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 8;
        qv **it = opdb_arena_alloc(a, nc * sizeof *it), **ks = opdb_arena_alloc(a, nc * sizeof *ks);
        if (c->n) {
            memcpy(it, c->items, c->n * sizeof *it);
            if (c->keys) memcpy(ks, c->keys, c->n * sizeof *ks);
        }
        c->items = it;
        c->keys = ks;
        c->cap = nc;
    }
    c->keys[c->n] = k;
    c->items[c->n++] = v;
}

static qv *kv_tensors(opdb_arena *a, const opdb_ktensor *t, size_t n) {
    qv *l = qv_new(a, QV_LIST);
    for (size_t i = 0; i < n; i++) {
        qv *d = qv_new(a, QV_DICT), *sh = qv_new(a, QV_LIST);
        for (size_t k = 0; k < t[i].rank; k++) {
            qv *x = qv_new(a, QV_INT);
            x->i = t[i].shape[k];
            kv_push(a, sh, NULL, x);
        }
        kv_push(a, d, kv_str(a, "shape"), sh);
        kv_push(a, d, kv_str(a, "dtype"), t[i].dtype ? kv_str(a, t[i].dtype) : qv_new(a, QV_NULL));
        if (t[i].format) kv_push(a, d, kv_str(a, "format"), kv_str(a, t[i].format));
        kv_push(a, l, NULL, d);
    }
    return l;
}

static int q_query_kernel_call(const opdb_qdb *db, const opdb_kquery *k, bool explain, opdb_qresult *res) {
    if (!db || !k || !res) return -1;
    opdb_qresult_priv *p = new_priv();
    opdb_arena *a = &p->a;
    q_query q;
    memset(&q, 0, sizeof q);
    static const qv kid = {.kind = QV_STR, .s = "kernel", .n = 6, .dtype = -1};
    q.id = &kid;
    const char *kn = k->kernel ? k->kernel : "";
    bool ok = kn[0] && kn[0] != '.' && !strchr(kn, '/');
    if (!ok) return finish(db, p, &q, "bad_query", "the kernel name must be non-empty, without '/', not starting with '.'",
                           explain, res);
    qv *o = qv_new(a, QV_DICT);
    kv_push(a, o, kv_str(a, "kernel"), kv_str(a, kn));
    kv_push(a, o, kv_str(a, "inputs"), kv_tensors(a, k->inputs, k->n_inputs));
    if (k->n_outputs) kv_push(a, o, kv_str(a, "outputs"), kv_tensors(a, k->outputs, k->n_outputs));
    if (k->n_alternates) {
        qv *l = qv_new(a, QV_LIST);
        for (size_t i = 0; i < k->n_alternates; i++) kv_push(a, l, NULL, kv_str(a, k->alternates[i]));
        kv_push(a, o, kv_str(a, "alternates"), l);
    }
    if (k->match) kv_push(a, o, kv_str(a, "match"), kv_str(a, k->match));
    if (k->attention) kv_push(a, o, kv_str(a, "attention"), (qv *)k->attention);
    if (k->comm) kv_push(a, o, kv_str(a, "comm"), (qv *)k->comm);
    if (k->interpolate >= 0) {
        qv *b = qv_new(a, QV_BOOL);
        b->b = k->interpolate != 0;
        kv_push(a, o, kv_str(a, "interpolate"), b);
    }
    q.kernel = o->items[0]->s;
    q.kq = o;
    return finish(db, p, &q, NULL, NULL, explain, res);
}

int opdb_query_kernel(const opdb_qdb *db, const opdb_kquery *k, bool explain, opdb_qresult *res) {
    if (!db) return -1;
    Q_ENTRY(db, q_query_kernel_call(db, k, explain, res));
}

/* ---- kernel level from CSV-cell strings (the one-shot CLI form) */
static int split_cells(opdb_arena *a, const char *s, const char ***out, size_t *n) {
    size_t cnt = 1;
    for (const char *p = s; *p; p++) cnt += *p == ';';
    const char **v = opdb_arena_alloc(a, cnt * sizeof *v);
    size_t k = 0;
    const char *p = s;
    for (;;) {
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len) v[k++] = opdb_arena_strndup(a, p, len);
        if (!e) break;
        p = e + 1;
    }
    *out = v;
    *n = k;
    return 0;
}

static int cell_tensors(opdb_arena *a, const char *what, const char *shapes, const char *dtypes, const char *formats,
                        opdb_ktensor **out, size_t *n, opdb_err *err) {
    q_shape *sh;
    uint32_t ns;
    if (q_parse_shapes(a, shapes, strlen(shapes), &sh, &ns))
        return opdb_fail(err, OPDB_ERR_USAGE, "--%s: cannot parse the shapes \"%s\"", what, shapes);
    const char **dt = NULL, **fm = NULL;
    size_t nd = 0, nf = 0;
    if (dtypes) split_cells(a, dtypes, &dt, &nd);
    if (formats) split_cells(a, formats, &fm, &nf);
    if (nd != ns)
        return opdb_fail(err, OPDB_ERR_USAGE, "--%s has %u shapes but %zu dtypes", what, (unsigned)ns, nd);
    if (formats && nf != ns)
        return opdb_fail(err, OPDB_ERR_USAGE, "--%s has %u shapes but %zu formats", what, (unsigned)ns, nf);
    opdb_ktensor *t = opdb_arena_alloc(a, (ns ? ns : 1) * sizeof *t);
    for (uint32_t i = 0; i < ns; i++) {
        t[i].shape = sh[i].d;
        t[i].rank = sh[i].rank;
        t[i].dtype = dt[i];
        t[i].format = formats ? fm[i] : NULL;
    }
    *out = t;
    *n = ns;
    return 0;
}

static int q_query_kernel_cells_call(const opdb_qdb *db, const opdb_kcells *k, bool explain, opdb_qresult *res,
                                     opdb_err *err) {
    if (!k || !k->kernel || !k->inputs || !k->dtypes)
        return opdb_fail(err, OPDB_ERR_USAGE, "a kernel query needs --kernel, --inputs and --dtypes");
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    opdb_kquery q;
    memset(&q, 0, sizeof q);
    q.kernel = k->kernel;
    q.match = k->match;
    q.interpolate = k->interpolate;
    opdb_ktensor *in = NULL, *out = NULL;
    size_t nin = 0, nout = 0;
    int rc = -1;
    if (cell_tensors(&a, "inputs", k->inputs, k->dtypes, k->formats, &in, &nin, err)) goto done;
    if (k->outputs && cell_tensors(&a, "outputs", k->outputs, k->output_dtypes, NULL, &out, &nout, err)) goto done;
    q.inputs = in;
    q.n_inputs = nin;
    q.outputs = out;
    q.n_outputs = nout;
    static const char *const att_keys[] = {"avg_seq_len", "sparse_mode", "num_kv_heads", "input_layout", "batch_size"};
    static const char *const comm_keys[] = {"message_bytes", "num_devices", "topology_tier", "method"};
    qv *att = NULL, *comm = NULL;
    for (size_t i = 0; i < k->n_params; i++) {
        const char *p = k->params[i], *eq = strchr(p, '=');
        if (!eq) {
            opdb_fail(err, OPDB_ERR_USAGE, "--param %s: expected NAME=VALUE", p);
            goto done;
        }
        char *name = opdb_arena_strndup(&a, p, (size_t)(eq - p));
        const char *val = eq + 1;
        bool is_att = false, is_comm = false;
        for (size_t j = 0; j < 5; j++) is_att |= strcmp(name, att_keys[j]) == 0;
        for (size_t j = 0; j < 4; j++) is_comm |= strcmp(name, comm_keys[j]) == 0;
        if (!is_att && !is_comm) {
            opdb_fail(err, OPDB_ERR_USAGE, "--param %s: unknown name (attention: avg_seq_len, sparse_mode, "
                      "num_kv_heads, input_layout, batch_size; communication: message_bytes, num_devices, "
                      "topology_tier, method)", name);
            goto done;
        }
        qv **d = is_att ? &att : &comm;
        if (!*d) *d = qv_new(&a, QV_DICT);
        qv *v;
        if (strcmp(name, "input_layout") == 0 || strcmp(name, "method") == 0) {
            v = kv_str(&a, val);
        } else {
            char *end;
            errno = 0;
            long long x = strtoll(val, &end, 10);
            if (!*val || *end || errno) {
                opdb_fail(err, OPDB_ERR_USAGE, "--param %s: \"%s\" is not an integer", name, val);
                goto done;
            }
            v = qv_new(&a, QV_INT);
            v->i = x;
        }
        kv_push(&a, *d, kv_str(&a, name), v);
    }
    q.attention = att;
    q.comm = comm;
    rc = opdb_query_kernel(db, &q, explain, res);
done:
    opdb_arena_free(&a);
    return rc;
}

int opdb_query_kernel_cells(const opdb_qdb *db, const opdb_kcells *k, bool explain, opdb_qresult *res, opdb_err *err) {
    if (!db) return q_query_kernel_cells_call(db, k, explain, res, err);
    if (atomic_load(&((opdb_qdb *)db)->nomem)) return opdb_fail(err, OPDB_ERR_NOMEM, "out of memory (in an earlier call)");
    opdb_call_scope saved = opdb_call_enter(NULL);
    OPDB_CALL_GUARD_THEN(saved, err, {
        atomic_store(&((opdb_qdb *)db)->nomem, true);
        return -1;
    });
    int rc = q_query_kernel_cells_call(db, k, explain, res, err);
    opdb_call_leave(&saved);
    return rc;
}
