/* Errors and warnings: one line each, for humans. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/call.h"
#include "opdb/core.h"

/* One printable line of at most cap-1 bytes: control bytes as \xNN,
 * trailing white space dropped, and a message too long for the line cut in
 * the middle, so that both its start (the file) and its end (the reason)
 * stay. */
enum { MAX_ALIASES = 4 };
static struct {
    char path[512], shown[32];
} g_alias[MAX_ALIASES];
static size_t g_naliases;

void opdb_path_alias(const char *path, const char *shown) {
    if (g_naliases == MAX_ALIASES || strlen(path) >= sizeof g_alias[0].path || strlen(shown) >= sizeof g_alias[0].shown)
        return;
    strcpy(g_alias[g_naliases].path, path);
    strcpy(g_alias[g_naliases].shown, shown);
    g_naliases++;
}

const char *opdb_path_shown(const char *path) {
    for (size_t i = 0; i < g_naliases; i++)
        if (strcmp(path, g_alias[i].path) == 0) return g_alias[i].shown;
    return path;
}

/* Every aliased path in raw (in place, never longer: an alias is shorter
 * than the temporary path it stands for). */
static void apply_aliases(char *raw) {
    for (size_t i = 0; i < g_naliases; i++) {
        size_t pn = strlen(g_alias[i].path), sn = strlen(g_alias[i].shown);
        if (sn > pn) continue;
        for (char *at = strstr(raw, g_alias[i].path); at; at = strstr(at + sn, g_alias[i].path)) {
            memcpy(at, g_alias[i].shown, sn);
            memmove(at + sn, at + pn, strlen(at + pn) + 1);
        }
    }
}

static void one_line(char *out, size_t cap, const char *fmt, va_list ap) {
    char raw[8192], esc[4 * sizeof raw];
    vsnprintf(raw, sizeof raw, fmt, ap);
    apply_aliases(raw);
    size_t n = strlen(raw), o = 0;
    while (n && (raw[n - 1] == '\n' || raw[n - 1] == '\r' || raw[n - 1] == ' ' || raw[n - 1] == '\t')) n--;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (c < 0x20 || c == 0x7f) o += (size_t)snprintf(esc + o, sizeof esc - o, "\\x%02x", c);
        else esc[o++] = (char)c;
    }
    esc[o] = '\0';
    if (o < cap) {
        memcpy(out, esc, o + 1);
        return;
    }
    size_t head = (cap - 6) * 2 / 5, tail = cap - 6 - head;
    while (head && ((unsigned char)esc[head] & 0xc0) == 0x80) head--; /* whole UTF-8 characters */
    size_t from = o - tail;
    while (from < o && ((unsigned char)esc[from] & 0xc0) == 0x80) from++;
    memcpy(out, esc, head);
    memcpy(out + head, " ... ", 5);
    memcpy(out + head + 5, esc + from, o - from + 1);
}

int opdb_fail(opdb_err *err, int code, const char *fmt, ...) {
    if (err && err->code == OPDB_OK) {
        va_list ap;
        va_start(ap, fmt);
        one_line(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return -1;
}

void opdb_opts_fill(void *o, size_t size, const void *defaults, size_t known) {
    if (!o) return;
    memcpy(o, defaults, size < known ? size : known);
    if (size > known) memset((char *)o + known, 0, size - known);
    if (size >= sizeof size) memcpy(o, &size, sizeof size);
}

int opdb_opts_check(const void *o, size_t size, size_t known, const char *type, opdb_err *err) {
    if (o && size == known) return 0;
    if (!o) return opdb_fail(err, OPDB_ERR_USAGE, "%s: no options given", type);
    if (size == 0) return opdb_fail(err, OPDB_ERR_USAGE, "%s: not initialised by %s_init", type, type);
    return opdb_fail(err, OPDB_ERR_USAGE, "%s: size %zu is not one this library knows (%zu): call %s_init", type, size,
                     known, type);
}

void opdb_err_clear(opdb_err *err) {
    err->code = OPDB_OK;
    err->msg[0] = '\0';
}

static opdb_warn_fn g_warn_fn;
static void *g_warn_ctx;

void opdb_set_warn_handler(opdb_warn_fn fn, void *ctx) {
    g_warn_fn = fn;
    g_warn_ctx = ctx;
}

static void vwarn(const char *fmt, va_list ap) {
    char line[2048];
    one_line(line, sizeof line, fmt, ap);
    opdb_log_sink call = opdb_call_current().warn;
    if (call.fn) call.fn(call.ctx, line);
    else if (g_warn_fn) g_warn_fn(g_warn_ctx, line);
    else fprintf(stderr, "opdb: warning: %s\n", line);
}

void opdb_warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
}

static _Atomic(opdb_warn_fn) g_note_fn;
static void *_Atomic g_note_ctx;

void opdb_set_note_handler(opdb_warn_fn fn, void *ctx) {
    atomic_store(&g_note_ctx, ctx);
    atomic_store(&g_note_fn, fn);
}

void opdb_note(const char *fmt, ...) {
    opdb_log_sink call = opdb_call_current().note;
    opdb_warn_fn fn = call.fn ? call.fn : atomic_load(&g_note_fn);
    void *ctx = call.fn ? call.ctx : atomic_load(&g_note_ctx);
    if (!fn) return;
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0) {
        char *line = opdb_xmalloc((size_t)n + 1);
        vsnprintf(line, (size_t)n + 1, fmt, ap2);
        fn(ctx, line);
        free(line);
    }
    va_end(ap2);
}

void opdb_warn_nothing(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    opdb_log_sink call = opdb_call_now()->nothing;
    if (call.fn) {
        char line[2048];
        one_line(line, sizeof line, fmt, ap);
        call.fn(call.ctx, line);
    } else {
        vwarn(fmt, ap);
    }
    va_end(ap);
}
