/* Building a result: hits, misses, error results, sub-kernel durations. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opdb/json_writer.h"
#include "query/query_internal.h"

char *q_strdup(q_ctx *c, const char *s) { return opdb_arena_strndup(c->a, s, strlen(s)); }

static char *vfmt(q_ctx *c, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *o = opdb_arena_alloc(c->a, (size_t)n + 1);
    vsnprintf(o, (size_t)n + 1, fmt, ap);
    return o;
}

char *q_sprintf(q_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *o = vfmt(c, fmt, ap);
    va_end(ap);
    return o;
}

void q_hit(q_ctx *c, q_src src, double lat, double conf, const char *rule, const char *kernel) {
    q_result *r = c->r;
    r->src = src;
    r->lat = lat;
    r->conf = conf;
    r->rule = rule;
    r->kernel = kernel;
    r->miss = NULL;
    r->error_msg = NULL;
    r->has_iv = false;
}

void q_miss(q_ctx *c, const char *reason) {
    q_result *r = c->r;
    r->src = QS_MISS;
    r->lat = r->conf = 0;
    r->rule = r->kernel = NULL;
    r->miss = reason ? reason : "";
    r->error_msg = NULL;
    r->n_sub = 0;
    r->has_sub = false;
}

void q_missf(q_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = vfmt(c, fmt, ap);
    va_end(ap);
    q_miss(c, s);
}

void q_error(q_ctx *c, const char *code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = vfmt(c, fmt, ap);
    va_end(ap);
    q_miss(c, code);
    c->r->src = QS_ERROR;
    c->r->error_msg = s;
}

void q_add_sub(q_ctx *c, const char *kernel, double us) {
    q_result *r = c->r;
    if (r->n_sub == r->cap_sub) {
        size_t nc = r->cap_sub ? r->cap_sub * 2 : 4;
        q_sub *n = opdb_arena_alloc(c->a, nc * sizeof *n);
        if (r->n_sub) memcpy(n, r->sub, r->n_sub * sizeof *n);
        r->sub = n;
        r->cap_sub = nc;
    }
    r->sub[r->n_sub].kernel = kernel;
    r->sub[r->n_sub++].us = us;
    r->has_sub = true;
}

void q_set_kernels(q_ctx *c, const char *const *k, size_t n) {
    if (!c->explain) return;
    const char **v = opdb_arena_alloc(c->a, (n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = k[i];
    c->r->kernels = v;
    c->r->n_kernels = n;
}

opdb_strbuf *q_attempt_open(q_ctx *c) {
    opdb_strbuf *sb = &c->r->attempts;
    opdb_sb_adds(sb, sb->n ? ", {" : "{");
    return sb;
}

void q_attempt(q_ctx *c, const char *name, const char *status) {
    if (!c->explain) return;
    opdb_strbuf *sb = q_attempt_open(c);
    opdb_sb_adds(sb, "\"kernel\": ");
    opdb_json_quote(sb, name);
    opdb_sb_adds(sb, ", \"status\": ");
    opdb_json_quote(sb, status);
    opdb_sb_addc(sb, '}');
}
