/* Growable NUL-terminated byte buffer and span helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opdb/core.h"

void opdb_sb_init(opdb_strbuf *sb) {
    sb->p = NULL;
    sb->n = sb->cap = 0;
}

void opdb_sb_free(opdb_strbuf *sb) {
    free(sb->p);
    opdb_sb_init(sb);
}

void opdb_sb_grow(opdb_strbuf *sb, size_t extra) {
    if (sb->n + extra + 1 <= sb->cap) return;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->n + extra + 1) cap *= 2;
    sb->p = opdb_xrealloc(sb->p, cap);
    sb->cap = cap;
}

void opdb_sb_adds(opdb_strbuf *sb, const char *s) { opdb_sb_add(sb, s, strlen(s)); }

void opdb_sb_add_html(opdb_strbuf *o, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': opdb_sb_adds(o, "&amp;"); break;
        case '<': opdb_sb_adds(o, "&lt;"); break;
        case '>': opdb_sb_adds(o, "&gt;"); break;
        case '"': opdb_sb_adds(o, "&quot;"); break;
        case '\'': opdb_sb_adds(o, "&#39;"); break;
        default: opdb_sb_addc(o, *s);
        }
    }
}


void opdb_sb_addf(opdb_strbuf *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need > 0) {
        opdb_sb_reserve(sb, (size_t)need);
        vsnprintf(sb->p + sb->n, (size_t)need + 1, fmt, ap2);
        sb->n += (size_t)need;
    }
    va_end(ap2);
}

void opdb_sb_clear(opdb_strbuf *sb) {
    sb->n = 0;
    if (sb->p) sb->p[0] = '\0';
}

opdb_span opdb_span_cstr(const char *s) { return opdb_span_make(s, strlen(s)); }

bool opdb_span_eq(opdb_span a, opdb_span b) {
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

bool opdb_span_eq_cstr(opdb_span a, const char *s) { return opdb_span_eq(a, opdb_span_cstr(s)); }
