/* See trace_reader.h: a yajl event parser with a small state machine that
 * knows where the event array is, plus a stack that renders nested values
 * (lists, dicts) as Python literal text.
 *
 * Speed: an event's keys and texts go into one buffer reused from event to
 * event (no allocation per field once warm), and a top-level string is
 * copied as is; only values inside containers are rendered as repr. */
#include "opdb/trace_reader.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "opdb/limits.h"
#include "opdb/pystr.h"
#include "trace/trace_pipe.h"


typedef struct rframe {
    opdb_strbuf text;
    bool dict, first, want_value;
} rframe;

/* Offsets into reader.store of one field's key and text. */

typedef struct field_at {
    size_t key, text;  /* key: unused for a wanted key (want says which) */
    int want;          /* index in the list of wanted keys, -1 without a list */
    opdb_jkind kind;
} field_at;

typedef struct field_list {
    field_at *at;
    size_t n, cap;
} field_list;

/* A pending event-field or args key. With a list of wanted keys only which
 * one it is gets noted (no copy); otherwise its text is kept. */
typedef struct pkey {
    opdb_strbuf text;
    const char *name;  /* the key to store with the value; NULL: not wanted */
    size_t name_len;
    int want;          /* which wanted key name is (-1: no list, name is text's) */
    bool have;         /* a key is pending at this level */
    bool is_args;      /* it is "args" */
} pkey;

/* For each first byte, the wanted keys starting with it (bit i: want[i]; the first 64). */
typedef struct first_bytes {
    uint64_t by[256];
    bool all;              /* every wanted key is in the table */
} first_bytes;

static void first_bytes_init(first_bytes *t, const char *const *want) {
    memset(t, 0, sizeof *t);
    t->all = true;
    for (size_t i = 0; want && want[i]; i++) {
        if (i >= 64) t->all = false;
        else t->by[(unsigned char)want[i][0]] |= 1ull << i;
    }
}

typedef struct reader {
    int depth;
    int events_depth;       /* depth inside the event array; 0 = not found yet */
    bool top_object;
    bool top_key_events;    /* the last top-level key was "traceEvents" */
    bool in_event, in_args;
    pkey field_key, arg_key;
    rframe stack[TRACE_MAX_DEPTH];
    int nstack, nframes_init;
    opdb_jkind stack_kind[TRACE_MAX_DEPTH];
    opdb_strbuf store;      /* NUL-terminated keys and texts of the current event */
    field_list fields, args;
    opdb_trace_event ev;
    opdb_trace_cb cb;
    void *ctx;
    int stop;
    trace_yajl_run y;       /* the yajl pass (one-thread reading) */
    const char *const *want_fields, *const *want_args; /* NULL = every key */
    size_t *want_fields_len, *want_args_len;
    size_t nwant_fields, nwant_args;
    first_bytes fb_fields, fb_args;
    const opdb_trace_field **by_want_f, **by_want_a; /* ev's fields_by_want / args_by_want */
    bool skipping;          /* inside a container no one asked for: tokens are only counted */
    int skip_at;            /* the depth that container started at */
    bool replaying;         /* tokens come from trace_pipe.c: offsets from replay_off */
    unsigned long long replay_off;
    unsigned long long max_string, max_events; /* opdb_json_limit_get */
    char limit_msg[200];    /* a limit was passed: the read stopped (reported after it) */
} reader;

/* Stops the read at a passed limit (the message is reported once yajl returns). */
static int over_limit(reader *r, const char *what, unsigned long long max, opdb_json_limit which) {
    snprintf(r->limit_msg, sizeof r->limit_msg, "%s than %llu (%s)", what, max, opdb_json_limit_name(which));
    r->stop = 1;
    return 0;
}

/* Appends n bytes: the common case (room left) stays inline. */
static inline void sb_put(opdb_strbuf *sb, const char *s, size_t n) {
    if (sb->cap - sb->n <= n) opdb_sb_reserve(sb, n + 1);
    memcpy(sb->p + sb->n, s, n);
    sb->n += n;
    sb->p[sb->n] = '\0';
}

static inline void sb_putc(opdb_strbuf *sb, char c) { sb_put(sb, &c, 1); }

/* Copies s into the event store as a C string; returns its offset. */
static size_t store_add(reader *r, const char *s, size_t n) {
    size_t at = r->store.n;
    sb_put(&r->store, s, n);
    r->store.n++; /* keep the NUL sb_put wrote */
    return at;
}

static void add_field(reader *r, field_list *l, const pkey *key, opdb_jkind kind, const char *text, size_t n) {
    OPDB_ALLOC_GROW(l->at, l->n + 1, l->cap);
    field_at *f = &l->at[l->n++];
    f->want = key->want;
    f->key = key->want < 0 ? store_add(r, key->name, key->name_len) : 0; /* a wanted name is the list's */
    f->text = store_add(r, text, n);
    f->kind = kind;
}

/* Python repr of a str: single quotes unless it has ' and no ". Runs of
 * bytes that need no escape are copied at once. */
static void py_repr_str(opdb_strbuf *o, const char *s, size_t n) {
    bool dq = memchr(s, '\'', n) && !memchr(s, '"', n);
    char q = dq ? '"' : '\'';
    sb_putc(o, q);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != 0x7f && c != '\\' && c != (unsigned char)q) continue;
        sb_put(o, s + run, i - run);
        run = i + 1;
        if (c == '\\') sb_put(o, "\\\\", 2);
        else if (c == (unsigned char)q) { sb_putc(o, '\\'); sb_putc(o, (char)c); }
        else if (c == '\n') sb_put(o, "\\n", 2);
        else if (c == '\r') sb_put(o, "\\r", 2);
        else if (c == '\t') sb_put(o, "\\t", 2);
        else opdb_sb_addf(o, "\\x%02x", c);
    }
    sb_put(o, s + run, n - run);
    sb_putc(o, q);
}

/* The frame a nested value goes into, after its separator; NULL at the top. */
static rframe *nested_target(reader *r) {
    if (!r->nstack) return NULL;
    rframe *fr = &r->stack[r->nstack - 1];
    if (!fr->first && !(fr->dict && fr->want_value)) sb_put(&fr->text, ", ", 2);
    if (fr->dict && fr->want_value) sb_put(&fr->text, ": ", 2);
    fr->first = false;
    if (fr->dict) fr->want_value = false;
    return fr;
}

/* want[1..n) == s[1..n): keys are short, a loop beats a call to memcmp */
static inline bool same_tail(const char *want, const unsigned char *s, size_t n) {
    for (size_t j = 1; j < n; j++)
        if ((unsigned char)want[j] != s[j]) return false;
    return true;
}

static void set_pkey(pkey *k, const char *const *want, const size_t *len, const first_bytes *fb, const unsigned char *s,
                     size_t n) {
    k->have = true;
    k->is_args = n == 4 && memcmp(s, "args", 4) == 0;
    k->want = -1;
    if (!want) {
        k->text.n = 0;
        sb_put(&k->text, (const char *)s, n);
        k->name = k->text.p;
        k->name_len = n;
        return;
    }
    k->name = NULL;
    if (fb->all) { /* only the keys with s's first byte, their length first */
        for (uint64_t m = n ? fb->by[s[0]] : 0; m; m &= m - 1) {
            unsigned i = (unsigned)__builtin_ctzll(m);
            if (len[i] == n && same_tail(want[i], s, n)) {
                k->name = want[i];
                k->name_len = n;
                k->want = (int)i;
                return;
            }
        }
        return;
    }
    for (size_t i = 0; want[i]; i++) /* length and first byte first: most keys differ there */
        if (len[i] == n && n && want[i][0] == (char)s[0] && memcmp(want[i] + 1, s + 1, n - 1) == 0) {
            k->name = want[i];
            k->name_len = n;
            k->want = (int)i;
            return;
        }
}

/* strlen of each name of a NULL-terminated list (NULL for no list). */
static size_t *name_lengths(const char *const *names) {
    if (!names) return NULL;
    size_t n = 0;
    while (names[n]) n++;
    size_t *len = opdb_xmalloc((n + 1) * sizeof *len);
    for (size_t i = 0; i < n; i++) len[i] = strlen(names[i]);
    return len;
}

/* The wanted key a top-level value goes to, with its list; NULL when the
 * value is dropped (outside an event, or a key nobody asked for). */
static const pkey *top_target(reader *r, field_list **list) {
    if (!r->in_event) return NULL;
    if (r->in_args && r->depth == r->events_depth + 2 && r->arg_key.have) {
        *list = &r->args;
        return r->arg_key.name ? &r->arg_key : NULL;
    }
    if (r->depth == r->events_depth + 1 && r->field_key.have) {
        *list = &r->fields;
        return r->field_key.name ? &r->field_key : NULL;
    }
    return NULL;
}

/* Delivers a top-level value (rendered text) to the event field it belongs to. */
static void deliver_top(reader *r, opdb_jkind kind, const char *text, size_t n) {
    field_list *l;
    const pkey *k = top_target(r, &l);
    if (k) add_field(r, l, k, kind, text, n);
}

/* A scalar whose text is the same at the top and nested. */
static void deliver(reader *r, opdb_jkind kind, const char *text, size_t n) {
    rframe *fr = nested_target(r);
    if (fr) sb_put(&fr->text, text, n);
    else deliver_top(r, kind, text, n);
}

static int on_null(void *ctx) {
    reader *r = ctx;
    if (r->skipping) return 1;
    rframe *fr = nested_target(r);
    if (fr) sb_put(&fr->text, "None", 4);
    else deliver_top(r, OPDB_J_NULL, "", 0);
    return 1;
}

static int on_bool(void *ctx, int b) {
    if (((reader *)ctx)->skipping) return 1;
    deliver(ctx, OPDB_J_BOOL, b ? "True" : "False", b ? 4 : 5);
    return 1;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Python's repr of a plain decimal "-?D+.D+" (most trace times) without
 * converting it: with at most 15 significant digits a decimal is the shortest
 * text of its double, so repr is the text less trailing fraction zeros (one
 * kept), as long as repr would not switch to an exponent (>= 1e16, < 1e-4).
 * 0 when n is not such a number (the caller converts it). */
static size_t short_decimal_repr(const char *s, size_t n, char *out) {
    size_t i = s[0] == '-';
    size_t int_start = i;
    while (i < n && is_digit(s[i])) i++;
    size_t int_len = i - int_start;
    if (int_len == 0 || int_len > 15 || i >= n || s[i] != '.' || (int_len > 1 && s[int_start] == '0')) return 0;
    size_t frac_start = ++i;
    while (i < n && is_digit(s[i])) i++;
    if (i != n || i == frac_start) return 0;
    size_t end = n;
    while (end > frac_start + 1 && s[end - 1] == '0') end--;
    size_t sig = int_len + (end - frac_start);
    if (int_len == 1 && s[int_start] == '0') {
        size_t z = frac_start;
        while (z < end && s[z] == '0') z++;
        if (z < end && z - frac_start > 3) return 0; /* below 1e-4: repr writes an exponent */
        sig = end - z;
    }
    if (sig > 15) return 0;
    memcpy(out, s, end);
    return end;
}

static int on_number(void *ctx, const char *s, size_t n) {
    reader *r = ctx;
    if (r->skipping) return 1;
    field_list *l;
    /* a number nobody reads (ts, tid...) is neither converted nor rendered */
    if (!r->nstack && !top_target(r, &l)) return 1;
    bool is_float = false;
    for (size_t i = 0; i < n && !is_float; i++) is_float = s[i] == '.' || s[i] == 'e' || s[i] == 'E';
    if (!is_float) { /* Python ints print as written, but -0 is 0 */
        if (n == 2 && s[0] == '-' && s[1] == '0') deliver(ctx, OPDB_J_INT, "0", 1);
        else deliver(ctx, OPDB_J_INT, s, n);
        return 1;
    }
    char buf[512], rep[64];
    size_t m0 = short_decimal_repr(s, n, rep);
    if (m0) {
        deliver(ctx, OPDB_J_FLOAT, rep, m0);
        return 1;
    }
    size_t k = n < sizeof buf - 1 ? n : sizeof buf - 1;
    memcpy(buf, s, k);
    buf[k] = '\0';
    size_t m = opdb_py_fmt_repr(rep, sizeof rep, strtod(buf, NULL));
    deliver(ctx, OPDB_J_FLOAT, rep, m);
    return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n) {
    reader *r = ctx;
    if (n > r->max_string) return over_limit(r, "a JSON string longer", r->max_string, OPDB_JSON_LIMIT_STRING);
    if (r->skipping) return 1;
    rframe *fr = nested_target(r);
    if (fr) py_repr_str(&fr->text, (const char *)s, n);
    else deliver_top(r, OPDB_J_STRING, (const char *)s, n);
    return 1;
}

static int on_key(void *ctx, const unsigned char *s, size_t n) {
    reader *r = ctx;
    if (n > r->max_string) return over_limit(r, "a JSON key longer", r->max_string, OPDB_JSON_LIMIT_STRING);
    if (r->skipping) return 1;
    if (r->nstack) { /* a key inside a nested dict being rendered */
        rframe *fr = &r->stack[r->nstack - 1];
        if (!fr->first) sb_put(&fr->text, ", ", 2);
        py_repr_str(&fr->text, (const char *)s, n);
        fr->first = false;
        fr->want_value = true;
        return 1;
    }
    if (r->depth == 1 && r->top_object) {
        r->top_key_events = n == 11 && memcmp(s, "traceEvents", 11) == 0;
    } else if (r->in_event && r->in_args && r->depth == r->events_depth + 2) {
        set_pkey(&r->arg_key, r->want_args, r->want_args_len, &r->fb_args, s, n);
    } else if (r->in_event && r->depth == r->events_depth + 1) {
        set_pkey(&r->field_key, r->want_fields, r->want_fields_len, &r->fb_fields, s, n);
    }
    return 1;
}

static int start_container(reader *r, bool dict) {
    if (r->depth + 1 >= TRACE_MAX_DEPTH) return 0;
    if (r->skipping) {
        r->depth++;
        return 1;
    }
    bool render = r->nstack > 0;
    if (!render && r->events_depth == 0) {
        /* looking for the event array: the top level, or "traceEvents" */
        if (r->depth == 0 && !dict) r->events_depth = 1;
        else if (r->depth == 0 && dict) r->top_object = true;
        else if (r->depth == 1 && r->top_object && r->top_key_events && !dict) r->events_depth = 2;
    } else if (!render && r->events_depth && r->depth == r->events_depth && !r->in_event) {
        if (dict) {
            r->in_event = true;
        } else {
            render = false; /* a non-object element: skipped */
        }
    } else if (!render && r->in_event && r->depth == r->events_depth + 1 && dict && r->field_key.have && r->field_key.is_args &&
               !r->in_args) {
        r->in_args = true;
    } else if (r->in_event) {
        field_list *l;
        if (!r->nstack && !top_target(r, &l)) { /* a list or dict nobody reads (grid, block...): not rendered */
            r->skipping = true;
            r->skip_at = r->depth++;
            return 1;
        }
        render = true;
    }
    if (render) nested_target(r); /* the separator before this container in its parent */
    r->depth++;
    if (render) {
        rframe *fr = &r->stack[r->nstack];
        r->stack_kind[r->nstack] = dict ? OPDB_J_DICT : OPDB_J_LIST;
        if (r->nstack == r->nframes_init) { /* frames keep their buffers for reuse */
            opdb_sb_init(&fr->text);
            r->nframes_init++;
        }
        r->nstack++;
        opdb_sb_clear(&fr->text);
        sb_putc(&fr->text, dict ? '{' : '[');
        fr->dict = dict;
        fr->first = true;
        fr->want_value = false;
    }
    return 1;
}

static void resolve(reader *r, const field_list *l, const char *const *want, const opdb_trace_field **by_want,
                    size_t nwant, opdb_trace_field **out, size_t *n, size_t *cap) {
    OPDB_ALLOC_GROW(*out, l->n, *cap);
    if (by_want) memset(by_want, 0, nwant * sizeof *by_want);
    for (size_t i = 0; i < l->n; i++) {
        const field_at *a = &l->at[i];
        opdb_trace_field *f = &(*out)[i];
        f->key = a->want < 0 ? r->store.p + a->key : (char *)want[a->want];
        f->text = r->store.p + a->text;
        f->kind = a->kind;
        if (a->want >= 0) by_want[a->want] = f; /* the last duplicate wins, as in json.load */
    }
    *n = l->n;
}

static int end_event(reader *r) {
    r->in_event = false;
    if (r->ev.index >= r->max_events) return over_limit(r, "more trace events", r->max_events, OPDB_JSON_LIMIT_EVENTS);
    resolve(r, &r->fields, r->want_fields, r->by_want_f, r->nwant_fields, &r->ev.f, &r->ev.nf, &r->ev.capf);
    resolve(r, &r->args, r->want_args, r->by_want_a, r->nwant_args, &r->ev.args, &r->ev.nargs, &r->ev.capargs);
    r->ev.offset = r->replaying ? r->replay_off : r->y.chunk_off + yajl_get_bytes_consumed(r->y.h);
    r->stop = r->cb(&r->ev, r->ctx);
    r->ev.index++;
    r->ev.nf = r->ev.nargs = 0;
    r->fields.n = r->args.n = 0;
    opdb_sb_clear(&r->store);
    r->field_key.have = false;
    return r->stop ? 0 : 1;
}

static int end_container(reader *r, bool dict) {
    r->depth--;
    if (r->skipping) {
        r->skipping = r->depth != r->skip_at;
        return 1;
    }
    if (r->nstack) {
        rframe *fr = &r->stack[--r->nstack];
        sb_putc(&fr->text, dict ? '}' : ']');
        if (r->nstack) sb_put(&r->stack[r->nstack - 1].text, fr->text.p, fr->text.n);
        else deliver_top(r, r->stack_kind[r->nstack], fr->text.p, fr->text.n);
        return 1;
    }
    if (r->in_args && r->depth == r->events_depth + 1) {
        r->in_args = false;
        r->arg_key.have = false;
    } else if (r->in_event && r->depth == r->events_depth) {
        return end_event(r);
    } else if (r->events_depth && r->depth == r->events_depth - 1) {
        r->events_depth = -1; /* the event array is over: ignore the rest */
    }
    return 1;
}

static int on_start_map(void *ctx) { return start_container(ctx, true); }
static int on_end_map(void *ctx) { return end_container(ctx, true); }
static int on_start_array(void *ctx) { return start_container(ctx, false); }
static int on_end_array(void *ctx) { return end_container(ctx, false); }

static const yajl_callbacks k_callbacks = {on_null, on_bool, NULL, NULL, on_number, on_string,
                                           on_start_map, on_key, on_end_map, on_start_array, on_end_array};

/* The last field named key (first byte compared inline: most keys differ there). */
static const opdb_trace_field *find(const opdb_trace_field *f, size_t n, const char *key) {
    const opdb_trace_field *hit = NULL;
    for (size_t i = 0; i < n; i++)
        if (f[i].key[0] == key[0] && strcmp(f[i].key, key) == 0) hit = &f[i];
    return hit;
}

const opdb_trace_field *opdb_trace_get(const opdb_trace_event *ev, const char *key) { return find(ev->f, ev->nf, key); }

const opdb_trace_field *opdb_trace_arg(const opdb_trace_event *ev, const char *key) {
    return find(ev->args, ev->nargs, key);
}

static void reader_free(reader *r) {
    for (int i = 0; i < r->nframes_init; i++) opdb_sb_free(&r->stack[i].text);
    opdb_sb_free(&r->store);
    opdb_sb_free(&r->field_key.text);
    opdb_sb_free(&r->arg_key.text);
    free(r->fields.at);
    free(r->args.at);
    free(r->ev.f);
    free(r->ev.args);
    free(r->want_fields_len);
    free(r->want_args_len);
    free(r->by_want_f);
    free(r->by_want_a);
    free(r);
}

int opdb_trace_read(const char *path, opdb_trace_cb cb, void *ctx, opdb_err *err) {
    return opdb_trace_read_some(path, NULL, NULL, cb, ctx, err);
}

static bool reader_stopped(void *r) { return ((reader *)r)->stop != 0; }

static void reader_set_offset(void *r, unsigned long long off) { ((reader *)r)->replay_off = off; }

static int read_some(const char *path, const char *const *fields, const char *const *args, opdb_trace_cb cb, void *ctx,
                     bool pipe_by_default, opdb_err *err) {
    reader *r = opdb_xcalloc(1, sizeof *r);
    r->cb = cb;
    r->ctx = ctx;
    r->want_fields = fields;
    r->want_args = args;
    r->max_string = opdb_json_limit_get(OPDB_JSON_LIMIT_STRING);
    r->max_events = opdb_json_limit_get(OPDB_JSON_LIMIT_EVENTS);
    r->want_fields_len = name_lengths(fields);
    r->want_args_len = name_lengths(args);
    for (; fields && fields[r->nwant_fields]; r->nwant_fields++) {}
    for (; args && args[r->nwant_args]; r->nwant_args++) {}
    first_bytes_init(&r->fb_fields, fields);
    first_bytes_init(&r->fb_args, args);
    r->by_want_f = opdb_xcalloc(r->nwant_fields + 1, sizeof *r->by_want_f);
    r->by_want_a = opdb_xcalloc(r->nwant_args + 1, sizeof *r->by_want_a);
    r->ev.fields_by_want = fields ? r->by_want_f : NULL;
    r->ev.args_by_want = args ? r->by_want_a : NULL;
    opdb_sb_init(&r->store);
    opdb_sb_init(&r->field_key.text);
    opdb_sb_init(&r->arg_key.text);
    int rc = -2;
    if (opdb_trace_pipe_wanted(path, pipe_by_default)) {
        /* big input: zlib + yajl on a second thread, everything else here */
        r->replaying = true;
        rc = opdb_trace_pipe_replay(path, &k_callbacks, r, reader_set_offset, err);
        r->replaying = false;
    }
    if (rc == -2) rc = opdb_trace_yajl_file(path, &k_callbacks, r, reader_stopped, &r->y, err);
    if (r->limit_msg[0]) rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", path, r->limit_msg);
    if (rc == 0 && !r->stop && r->events_depth == 0)
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: no trace events (expected an array or {\"traceEvents\": [...]})", path);
    reader_free(r);
    return rc;
}

int opdb_trace_read_some(const char *path, const char *const *fields, const char *const *args, opdb_trace_cb cb,
                         void *ctx, opdb_err *err) {
    return read_some(path, fields, args, cb, ctx, true, err);
}

int opdb_trace_read_serial(const char *path, const char *const *fields, const char *const *args, opdb_trace_cb cb,
                           void *ctx, opdb_err *err) {
    return read_some(path, fields, args, cb, ctx, false, err);
}
