/* Errors and warnings: one line each, for humans. */
#include <stdio.h>
#include <string.h>
#include "opdb/core.h"

int opdb_fail(opdb_err *err, int code, const char *fmt, ...) {
    if (err && err->code == OPDB_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return -1;
}

void opdb_err_clear(opdb_err *err) {
    err->code = OPDB_OK;
    err->msg[0] = '\0';
}

void opdb_warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("opdb: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
