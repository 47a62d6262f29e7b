/* A progress line on stderr, only on a TTY so that logs and pipes stay
 * clean: stage, bar, done/total (MB for byte stages), rate and ETA, cut
 * to the terminal's width so that it never wraps (a wrapped line cannot
 * be redrawn with \r and leaves stale lines), erased by opdb_progress_clear. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "core/call.h"
#include "opdb/core.h"
#include "opdb/progress.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int term_width(void) {
    struct winsize ws;
    if (isatty(STDERR_FILENO) && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    const char *c = opdb_setting("COLUMNS");
    int w = c ? atoi(c) : 0;
    return w > 0 ? w : 80;
}

int opdb_progress_width(void) { return isatty(STDERR_FILENO) ? term_width() : 80; }

void opdb_progress_init(opdb_progress *p, bool force_off) {
    memset(p, 0, sizeof *p);
    /* the call's progress callback, when it gave one, instead of the terminal */
    opdb_log_sink sink = opdb_call_current().progress;
    p->sink = sink.fn;
    p->sink_ctx = sink.ctx;
    p->enabled = !force_off && (p->sink || isatty(STDERR_FILENO));
    p->last_permille = -1;
}

void opdb_progress_stage(opdb_progress *p, const char *stage, uint64_t total) {
    p->stage = stage;
    p->total = total;
    p->bytes = false;
    p->last_permille = -1;
    p->start = now_s();
}

void opdb_progress_stage_bytes(opdb_progress *p, const char *stage, uint64_t total) {
    opdb_progress_stage(p, stage, total);
    p->bytes = true;
}

/* Appends at most the bytes that fit (never splitting a UTF-8 sequence). */
static void put_fit(char *line, size_t *n, size_t cap, const char *s) {
    size_t k = strlen(s);
    if (*n + k > cap) {
        k = cap - *n;
        while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    }
    memcpy(line + *n, s, k);
    *n += k;
    line[*n] = '\0';
}

void opdb_progress_format(const opdb_progress *p, uint64_t current, const char *detail, double elapsed, int width,
                          char *line, size_t cap) {
    size_t limit = width > 1 ? (size_t)width - 1 : 1; /* the last column would wrap on some terminals */
    if (limit >= cap) limit = cap - 1;
    double frac = p->total ? (double)current / (double)p->total : 1.0;
    if (frac > 1) frac = 1;
    char amount[64], rate[48] = "", eta[32] = "";
    double scale = p->bytes ? 1e6 : 1.0;
    const char *unit = p->bytes ? " MB" : "";
    if (p->bytes)
        snprintf(amount, sizeof amount, "%.1f/%.1f MB", (double)current / scale, (double)p->total / scale);
    else
        snprintf(amount, sizeof amount, "%llu/%llu", (unsigned long long)current, (unsigned long long)p->total);
    if (elapsed > 0.2 && current > 0) {
        double r = (double)current / scale / elapsed;
        snprintf(rate, sizeof rate, "  %.1f%s/s", r, p->bytes ? unit : "");
        double left = (1 - frac) * elapsed / (frac > 0 ? frac : 1);
        unsigned s = left < 359999 ? (unsigned)(left + 0.5) : 359999;
        snprintf(eta, sizeof eta, "  ETA %u:%02u", s / 60, s % 60);
    }
    /* the bar takes what is left after the numbers and up to 24 columns of
     * the detail (what is being worked on must stay readable), between 10
     * and 30 cells, else none */
    size_t fixed = strlen(p->stage ? p->stage : "") + 4 + strlen(amount) + strlen(rate) + strlen(eta);
    size_t keep = detail && *detail ? 2 + (strlen(detail) < 24 ? strlen(detail) : 24) : 0;
    fixed += keep;
    int bar = limit > fixed + 10 ? (int)(limit - fixed) : 0;
    if (bar > 30) bar = 30;
    size_t n = 0;
    line[0] = '\0';
    put_fit(line, &n, limit, p->stage ? p->stage : "");
    if (bar >= 10) {
        char b[40];
        int filled = (int)(frac * bar);
        b[0] = ' ';
        b[1] = '[';
        for (int i = 0; i < bar; i++) b[2 + i] = i < filled ? '#' : '-';
        b[2 + bar] = ']';
        b[3 + bar] = '\0';
        put_fit(line, &n, limit, b);
    }
    put_fit(line, &n, limit, " ");
    put_fit(line, &n, limit, amount);
    put_fit(line, &n, limit, rate);
    put_fit(line, &n, limit, eta);
    if (detail && *detail) {
        put_fit(line, &n, limit, "  ");
        put_fit(line, &n, limit, detail);
    }
}

void opdb_progress_update(opdb_progress *p, uint64_t current, const char *detail) {
    if (!p->enabled) return;
    int permille = p->total ? (int)(current * 1000 / p->total) : 1000;
    if (permille > 1000) permille = 1000;
    if (permille == p->last_permille) return;
    p->last_permille = permille;
    char line[512];
    opdb_progress_format(p, current, detail, now_s() - p->start, term_width(), line, sizeof line);
    if (p->sink) {
        p->sink(p->sink_ctx, line);
        return;
    }
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
}

void opdb_progress_clear(opdb_progress *p) {
    if (!p->enabled) return;
    if (p->sink) {
        p->sink(p->sink_ctx, "");
        return;
    }
    fputs("\r\033[K", stderr);
    fflush(stderr);
}
