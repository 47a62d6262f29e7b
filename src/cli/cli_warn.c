/* See cli_warn.h. */
#include "cli/cli_warn.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "opdb/core.h"

static char g_prog[64] = "opdb";

void cli_warn_line(void *ctx, const char *line) {
    (void)ctx;
    fflush(stdout); /* keep the warning after what stdout already said */
    fprintf(stderr, "%s: warning: %s\n", g_prog, line);
}

void cli_warn_begin(const char *prog) {
    snprintf(g_prog, sizeof g_prog, "%s", prog);
    opdb_set_warn_handler(cli_warn_line, NULL);
}

static void note_line(void *ctx, const char *line) {
    (void)ctx;
    fprintf(stderr, "opdb: %s\n", line);
}

/* Counted on whichever thread of the command's calls warns. */
static atomic_uint g_nothing;

static void nothing_line(void *ctx, const char *line) {
    g_nothing++;
    cli_warn_line(ctx, line);
}

opdb_log cli_log(void) {
    opdb_log l = {cli_warn_line, note_line, NULL, NULL, nothing_line};
    return l;
}

void cli_warn_nothing(const char *fmt, ...) {
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    nothing_line(NULL, line);
}

unsigned cli_nothing_count(void) { return g_nothing; }

const char *cli_prog(void) { return g_prog; }

void cli_warn(const char *fmt, ...) {
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    cli_warn_line(NULL, line);
}
