/* See trace_reader.h: a yajl event parser with a small state machine that
 * knows where the event array is, plus a stack that renders nested values
 * (lists, dicts) as Python literal text. */
#include "opdb/trace_reader.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "opdb/pystr.h"

#define MAX_DEPTH 256

typedef struct rframe {
    opdb_strbuf text;
    bool dict, first, want_value;
} rframe;

typedef struct reader {
    int depth;
    int events_depth;       /* depth inside the event array; 0 = not found yet */
    bool top_object;
    bool top_key_events;    /* the last top-level key was "traceEvents" */
    bool in_event, in_args;
    char *field_key;        /* pending event field key */
    char *arg_key;          /* pending args field key */
    rframe stack[MAX_DEPTH];
    int nstack;
    opdb_jkind stack_kind[MAX_DEPTH];
    opdb_trace_event ev;
    opdb_trace_cb cb;
    void *ctx;
    int stop;
    unsigned long long offset;
} reader;

static void fields_clear(opdb_trace_field *f, size_t *n) {
    for (size_t i = 0; i < *n; i++) {
        free(f[i].key);
        free(f[i].text);
    }
    *n = 0;
}

static void add_field(opdb_trace_field **v, size_t *n, size_t *cap, const char *key, opdb_jkind kind, const char *text) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *v = opdb_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[*n].key = opdb_xstrdup(key ? key : "");
    (*v)[*n].kind = kind;
    (*v)[*n].text = opdb_xstrdup(text);
    (*n)++;
}

/* Python repr of a str: single quotes unless it has ' and no ". */
static void py_repr_str(opdb_strbuf *o, const char *s, size_t n) {
    bool dq = memchr(s, '\'', n) && !memchr(s, '"', n);
    char q = dq ? '"' : '\'';
    opdb_sb_addc(o, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\') opdb_sb_add(o, "\\\\", 2);
        else if (c == (unsigned char)q) { opdb_sb_addc(o, '\\'); opdb_sb_addc(o, (char)c); }
        else if (c == '\n') opdb_sb_add(o, "\\n", 2);
        else if (c == '\r') opdb_sb_add(o, "\\r", 2);
        else if (c == '\t') opdb_sb_add(o, "\\t", 2);
        else if (c < 0x20 || c == 0x7f) opdb_sb_addf(o, "\\x%02x", c);
        else opdb_sb_addc(o, (char)c);
    }
    opdb_sb_addc(o, q);
}

/* Delivers a rendered value to whatever encloses it. */
static void deliver(reader *r, opdb_jkind kind, const char *top_text, const char *nested_text) {
    if (r->nstack) {
        rframe *fr = &r->stack[r->nstack - 1];
        if (!fr->first && !(fr->dict && fr->want_value)) opdb_sb_adds(&fr->text, ", ");
        if (fr->dict && fr->want_value) opdb_sb_adds(&fr->text, ": ");
        opdb_sb_adds(&fr->text, nested_text);
        fr->first = false;
        if (fr->dict) fr->want_value = false;
        return;
    }
    if (!r->in_event) return;
    if (r->in_args && r->depth == r->events_depth + 2 && r->arg_key) {
        add_field(&r->ev.args, &r->ev.nargs, &r->ev.capargs, r->arg_key, kind, top_text);
    } else if (r->depth == r->events_depth + 1 && r->field_key) {
        add_field(&r->ev.f, &r->ev.nf, &r->ev.capf, r->field_key, kind, top_text);
    }
}

static int on_null(void *ctx) {
    deliver(ctx, OPDB_J_NULL, "", "None");
    return 1;
}

static int on_bool(void *ctx, int b) {
    deliver(ctx, OPDB_J_BOOL, b ? "True" : "False", b ? "True" : "False");
    return 1;
}

static int on_number(void *ctx, const char *s, size_t n) {
    char buf[512];
    bool is_float = memchr(s, '.', n) || memchr(s, 'e', n) || memchr(s, 'E', n);
    if (is_float) {
        char tmp[512];
        size_t k = n < sizeof tmp - 1 ? n : sizeof tmp - 1;
        memcpy(tmp, s, k);
        tmp[k] = '\0';
        opdb_py_fmt_repr(buf, sizeof buf, strtod(tmp, NULL));
        deliver(ctx, OPDB_J_FLOAT, buf, buf);
    } else { /* Python ints print as written, but -0 is 0 */
        size_t k = n < sizeof buf - 1 ? n : sizeof buf - 1;
        memcpy(buf, s, k);
        buf[k] = '\0';
        if (strcmp(buf, "-0") == 0) strcpy(buf, "0");
        deliver(ctx, OPDB_J_INT, buf, buf);
    }
    return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n) {
    reader *r = ctx;
    char *top = opdb_xmalloc(n + 1);
    memcpy(top, s, n);
    top[n] = '\0';
    opdb_strbuf rep;
    opdb_sb_init(&rep);
    py_repr_str(&rep, (const char *)s, n);
    deliver(r, OPDB_J_STRING, top, rep.p);
    opdb_sb_free(&rep);
    free(top);
    return 1;
}

static int on_key(void *ctx, const unsigned char *s, size_t n) {
    reader *r = ctx;
    if (r->nstack) { /* a key inside a nested dict being rendered */
        rframe *fr = &r->stack[r->nstack - 1];
        if (!fr->first) opdb_sb_adds(&fr->text, ", ");
        py_repr_str(&fr->text, (const char *)s, n);
        fr->first = false;
        fr->want_value = true;
        return 1;
    }
    char *k = opdb_xmalloc(n + 1);
    memcpy(k, s, n);
    k[n] = '\0';
    if (r->depth == 1 && r->top_object) {
        r->top_key_events = strcmp(k, "traceEvents") == 0;
        free(k);
    } else if (r->in_event && r->in_args && r->depth == r->events_depth + 2) {
        free(r->arg_key);
        r->arg_key = k;
    } else if (r->in_event && r->depth == r->events_depth + 1) {
        free(r->field_key);
        r->field_key = k;
    } else {
        free(k);
    }
    return 1;
}

static int start_container(reader *r, bool dict) {
    if (r->depth + 1 >= MAX_DEPTH) return 0;
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
    } else if (!render && r->in_event && r->depth == r->events_depth + 1 && dict && r->field_key &&
               strcmp(r->field_key, "args") == 0 && !r->in_args) {
        r->in_args = true;
    } else if (r->in_event) {
        render = true;
    }
    r->depth++;
    if (render) {
        rframe *fr = &r->stack[r->nstack];
        r->stack_kind[r->nstack] = dict ? OPDB_J_DICT : OPDB_J_LIST;
        r->nstack++;
        opdb_sb_init(&fr->text);
        opdb_sb_addc(&fr->text, dict ? '{' : '[');
        fr->dict = dict;
        fr->first = true;
        fr->want_value = false;
    }
    return 1;
}

static int end_container(reader *r, bool dict) {
    r->depth--;
    if (r->nstack) {
        rframe *fr = &r->stack[--r->nstack];
        opdb_sb_addc(&fr->text, dict ? '}' : ']');
        deliver(r, r->stack_kind[r->nstack], fr->text.p, fr->text.p);
        opdb_sb_free(&fr->text);
        return 1;
    }
    if (r->in_args && r->depth == r->events_depth + 1) {
        r->in_args = false;
        free(r->arg_key);
        r->arg_key = NULL;
    } else if (r->in_event && r->depth == r->events_depth) {
        r->in_event = false;
        r->stop = r->cb(&r->ev, r->ctx);
        r->ev.index++;
        fields_clear(r->ev.f, &r->ev.nf);
        fields_clear(r->ev.args, &r->ev.nargs);
        free(r->field_key);
        r->field_key = NULL;
        if (r->stop) return 0;
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

const opdb_trace_field *opdb_trace_get(const opdb_trace_event *ev, const char *key) {
    const opdb_trace_field *hit = NULL;
    for (size_t i = 0; i < ev->nf; i++)
        if (strcmp(ev->f[i].key, key) == 0) hit = &ev->f[i];
    return hit;
}

const opdb_trace_field *opdb_trace_arg(const opdb_trace_event *ev, const char *key) {
    const opdb_trace_field *hit = NULL;
    for (size_t i = 0; i < ev->nargs; i++)
        if (strcmp(ev->args[i].key, key) == 0) hit = &ev->args[i];
    return hit;
}

int opdb_trace_read(const char *path, opdb_trace_cb cb, void *ctx, opdb_err *err) {
    gzFile gz = gzopen(path, "rb"); /* reads plain files too */
    if (!gz) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
    gzbuffer(gz, 1 << 17);
    reader *r = opdb_xcalloc(1, sizeof *r);
    r->cb = cb;
    r->ctx = ctx;
    yajl_handle h = yajl_alloc(&k_callbacks, NULL, r);
    yajl_config(h, yajl_allow_comments, 0);
    unsigned char *buf = opdb_xmalloc(1 << 17);
    int rc = 0, n;
    unsigned long long off = 0;
    while ((n = gzread(gz, buf, 1 << 17)) > 0) {
        yajl_status st = yajl_parse(h, buf, (size_t)n);
        if (st != yajl_status_ok) {
            if (!r->stop) {
                size_t at = yajl_get_bytes_consumed(h);
                unsigned char *msg = yajl_get_error(h, 0, buf, (size_t)n);
                rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: invalid JSON at byte %llu: %s", path, off + at, (const char *)msg);
                yajl_free_error(h, msg);
            }
            break;
        }
        off += (unsigned long long)n;
    }
    if (n < 0 && rc == 0) {
        int e;
        const char *m = gzerror(gz, &e);
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", path, m);
    }
    if (rc == 0 && !r->stop) {
        if (yajl_complete_parse(h) != yajl_status_ok)
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: truncated or invalid JSON at byte %llu", path, off);
        else if (r->events_depth == 0)
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: no trace events (expected an array or {\"traceEvents\": [...]})", path);
    }
    yajl_free(h);
    gzclose(gz);
    free(buf);
    for (int i = 0; i < r->nstack; i++) opdb_sb_free(&r->stack[i].text);
    fields_clear(r->ev.f, &r->ev.nf);
    fields_clear(r->ev.args, &r->ev.nargs);
    free(r->ev.f);
    free(r->ev.args);
    free(r->field_key);
    free(r->arg_key);
    free(r);
    return rc;
}
