/* See cli_summary.h. */
#include "cli/cli_summary.h"

#include <stdarg.h>
#include <stdio.h>

#include "opdb/json_writer.h"

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

int cli_json_summary(const char *const *keys, const char *const *vals, size_t n, const char *count_key,
                     unsigned long long count) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_json j;
    opdb_json_init(&j, &sb);
    opdb_json_begin_object(&j);
    for (size_t i = 0; i < n; i++) {
        opdb_json_key(&j, keys[i]);
        if (vals[i]) opdb_json_string(&j, vals[i]);
        else opdb_json_null(&j);
    }
    opdb_json_key(&j, count_key);
    opdb_json_int(&j, (long long)count);
    opdb_json_end_object(&j);
    bool ok = fwrite(sb.p, 1, sb.n, stdout) == sb.n && fputc('\n', stdout) != EOF && fflush(stdout) == 0;
    opdb_sb_free(&sb);
    return ok ? 0 : 1;
}
