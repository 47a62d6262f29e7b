/* See cli_summary.h. */
#include "cli/cli_summary.h"

#include <stdarg.h>
#include <stdio.h>

void cli_summary(const char *prog, const char *fmt, ...) {
    fflush(stdout); /* after what the command printed */
    fprintf(stderr, "%s: ", prog);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *cli_count(char *buf, size_t cap, unsigned long long n) {
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%llu", n);
    size_t k = 0;
    for (int i = 0; i < nd && k + 1 < cap; i++) {
        if (i && (nd - i) % 3 == 0 && k + 2 < cap) buf[k++] = ',';
        buf[k++] = digits[i];
    }
    if (cap) buf[k < cap ? k : cap - 1] = '\0';
    return buf;
}

const char *cli_plural(unsigned long long n) { return n == 1 ? "" : "s"; }
