/* Errors and warnings: one line each, for humans. */
#include <stdio.h>
#include <string.h>
#include "opdb/core.h"

/* One printable line of at most cap-1 bytes: control bytes as \xNN,
 * trailing white space dropped, and a message too long for the line cut in
 * the middle, so that both its start (the file) and its end (the reason)
 * stay. */
static void one_line(char *out, size_t cap, const char *fmt, va_list ap) {
    char raw[8192], esc[4 * sizeof raw];
    vsnprintf(raw, sizeof raw, fmt, ap);
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

void opdb_err_clear(opdb_err *err) {
    err->code = OPDB_OK;
    err->msg[0] = '\0';
}

static void vwarn(const char *fmt, va_list ap) {
    char line[2048];
    one_line(line, sizeof line, fmt, ap);
    fprintf(stderr, "opdb: warning: %s\n", line);
}

void opdb_warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
}

static _Atomic unsigned g_nothing;

void opdb_warn_nothing(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
    g_nothing++;
}

unsigned opdb_nothing_count(void) { return g_nothing; }
