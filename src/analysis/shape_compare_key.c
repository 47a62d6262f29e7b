/* Shape key normalisation (docs/ANALYSIS.md §3.1) and the
 * sub_kernel_durations validity rule (§2.4), with a fast path for the
 * pairs' usual text. */
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"
#include "opdb/shape_compare.h"

static bool is_scalar(const opdb_pylit *v) {
    return v->kind == OPDB_PYLIT_INT || v->kind == OPDB_PYLIT_FLOAT || v->kind == OPDB_PYLIT_BOOL ||
           v->kind == OPDB_PYLIT_NONE;
}

/* ",".join(str(x) for x in el) for an iterable element: a list/tuple's
 * items, or a string's code points. */
static void join_iterable(opdb_strbuf *out, const opdb_pylit *el) {
    if (el->kind == OPDB_PYLIT_STR) {
        for (size_t i = 0; i < el->n; i++) {
            bool continuation = ((unsigned char)el->s[i] & 0xc0) == 0x80;
            if (i && !continuation) opdb_sb_addc(out, ',');
            opdb_sb_addc(out, el->s[i]);
        }
        return;
    }
    for (size_t i = 0; i < el->nitems; i++) {
        if (i) opdb_sb_addc(out, ',');
        opdb_pylit_str(out, el->items[i]);
    }
}

/* Renders a parsed list; -1 where the reference iterates a scalar (quirks). */
static int render_list(const opdb_pylit *v, bool quirks, opdb_strbuf *out) {
    bool all_scalar = true;
    for (size_t i = 0; i < v->nitems; i++) {
        if (!is_scalar(v->items[i])) all_scalar = false;
        else if (quirks) return -1;
    }
    if (all_scalar) { /* a flat list is one shape: [1, 4096] -> 1,4096 */
        join_iterable(out, v);
        return 0;
    }
    for (size_t i = 0; i < v->nitems; i++) {
        if (i) opdb_sb_addc(out, ';');
        if (is_scalar(v->items[i])) opdb_pylit_str(out, v->items[i]);
        else join_iterable(out, v->items[i]);
    }
    return 0;
}

int opdb_shape_key(const char *s, size_t n, bool quirks, opdb_strbuf *out) {
    opdb_sb_clear(out);
    opdb_span t = opdb_py_strip_chars(opdb_py_strip(opdb_span_make(s, n)), "\"");
    for (size_t i = 0; i < t.n; i++)
        if (t.p[i] != ' ') opdb_sb_addc(out, t.p[i]);
    if (out->n == 0 || memchr(out->p, ';', out->n) || !memchr(out->p, '[', out->n)) return 0;
    opdb_pylit *v = opdb_pylit_parse(out->p, out->n, NULL, NULL);
    if (!v || v->kind != OPDB_PYLIT_LIST) { /* not a list literal: the cleaned text */
        opdb_pylit_free(v);
        return 0;
    }
    opdb_strbuf key;
    opdb_sb_init(&key);
    int rc = render_list(v, quirks, &key);
    opdb_pylit_free(v);
    if (rc == 0) {
        opdb_sb_clear(out);
        opdb_sb_add(out, key.p, key.n);
    }
    opdb_sb_free(&key);
    return rc;
}

opdb_pylit *opdb_skd_parse(const opdb_trace_field *f) {
    if (!f || f->kind != OPDB_J_STRING || !f->text[0]) return NULL;
    opdb_pylit *v = opdb_pylit_parse(f->text, strlen(f->text), NULL, NULL);
    bool ok = v && v->kind == OPDB_PYLIT_LIST && v->nitems > 0;
    for (size_t i = 0; ok && i < v->nitems; i++) {
        const opdb_pylit *e = v->items[i];
        ok = (e->kind == OPDB_PYLIT_LIST || e->kind == OPDB_PYLIT_TUPLE) && e->nitems == 2;
    }
    if (ok) return v;
    opdb_pylit_free(v);
    return NULL;
}

/* ---------------------------------------------------------------- pairs */
void opdb_skd_init(opdb_skd *s) {
    memset(s, 0, sizeof *s);
    opdb_sb_init(&s->names);
}

void opdb_skd_free(opdb_skd *s) {
    free(s->p);
    opdb_sb_free(&s->names);
    memset(s, 0, sizeof *s);
}

static opdb_skd_pair *new_pair(opdb_skd *s) {
    OPDB_ALLOC_GROW(s->p, s->n + 1, s->cap);
    opdb_skd_pair *p = &s->p[s->n++];
    memset(p, 0, sizeof *p);
    p->name_off = s->names.n;
    return p;
}

static void end_name(opdb_skd *s, opdb_skd_pair *p) {
    p->name_len = s->names.n - p->name_off;
    opdb_sb_addc(&s->names, '\0');
}

static const char *skip_spaces(const char *p) {
    while (*p == ' ') p++;
    return p;
}

/* A plain number literal: -?digits(.digits)?([eE][+-]?digits)? and no
 * leading zero on an int (Python rejects 012). NULL when it is not one. */
static const char *fast_number(const char *p, opdb_skd_pair *out) {
    const char *b = p;
    if (*p == '-') p++;
    const char *d = p;
    while (*p >= '0' && *p <= '9') p++;
    if (p == d) return NULL;
    bool is_float = false;
    if (*p == '.') {
        const char *f = ++p;
        while (*p >= '0' && *p <= '9') p++;
        if (p == f) return NULL;
        is_float = true;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        const char *e = p;
        while (*p >= '0' && *p <= '9') p++;
        if (p == e) return NULL;
        is_float = true;
    }
    size_t n = (size_t)(p - b);
    if (n >= 64 || (!is_float && *d == '0' && p - d > 1)) return NULL;
    if (is_float) {
        out->num = 2; /* on this grammar the literal's value is float()'s */
        if (!opdb_py_float(b, n, &out->f)) return NULL;
    } else {
        if (!opdb_py_int(b, n, &out->i)) return NULL; /* beyond int64: the slow path */
        out->num = 1;
        out->f = (double)out->i;
    }
    return p;
}

/* `[('A', 1.5), ['B', 2]]` with single spaces at most; false on anything else. */
static bool fast_pairs(const char *t, opdb_skd *s) {
    const char *p = skip_spaces(t);
    if (*p++ != '[') return false;
    for (;;) {
        p = skip_spaces(p);
        char open = *p++, close = open == '(' ? ')' : ']';
        if (open != '(' && open != '[') return false;
        p = skip_spaces(p);
        char q = *p++;
        if (q != '\'' && q != '"') return false;
        const char *name = p;
        while (*p && *p != q && *p != '\\' && *p != '\n' && *p != '\r') p++;
        if (*p != q) return false;
        opdb_skd_pair *pair = new_pair(s);
        opdb_sb_add(&s->names, name, (size_t)(p - name));
        end_name(s, pair);
        pair->name_is_str = true;
        p = skip_spaces(p + 1);
        if (*p++ != ',') return false;
        p = fast_number(skip_spaces(p), pair);
        if (!p) return false;
        p = skip_spaces(p);
        if (*p++ != close) return false;
        p = skip_spaces(p);
        if (*p == ']') break;
        if (*p++ != ',') return false;
    }
    return *skip_spaces(p + 1) == '\0';
}

bool opdb_skd_read(const opdb_trace_field *f, opdb_skd *s) {
    s->n = 0;
    opdb_sb_clear(&s->names);
    if (!f || f->kind != OPDB_J_STRING || !f->text[0]) return false;
    if (fast_pairs(f->text, s)) return true;
    s->n = 0;
    opdb_sb_clear(&s->names);
    opdb_pylit *v = opdb_skd_parse(f);
    if (!v) return false;
    for (size_t i = 0; i < v->nitems; i++) {
        const opdb_pylit *name = v->items[i]->items[0], *d = v->items[i]->items[1];
        opdb_skd_pair *pair = new_pair(s);
        opdb_pylit_str(&s->names, name);
        end_name(s, pair);
        pair->name_is_str = name->kind == OPDB_PYLIT_STR && !memchr(name->s, '\0', name->n);
        if ((d->kind == OPDB_PYLIT_INT && d->fits_int64) || d->kind == OPDB_PYLIT_BOOL) {
            pair->num = 1;
            pair->i = d->i;
            pair->f = (double)d->i;
        } else if (d->kind == OPDB_PYLIT_INT || d->kind == OPDB_PYLIT_FLOAT) {
            pair->num = 2;
            pair->f = d->f;
        }
    }
    opdb_pylit_free(v);
    return true;
}
