/*
 * yajl_tokenize.c - "yajl tokenize-only" floor for the trace benchmark
 * (perf/compare.sh).
 *
 * Reads FILE (plain or gzip, like opdb) in 128 KiB chunks and feeds it to
 * yajl with callbacks that do nothing but count values (and closed containers), so the time is what
 * reading and tokenizing the JSON costs. Prints "values=N".
 *
 * Usage: yajl_tokenize FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define CHUNK (1u << 17)

static int count(void *ctx)
{
    ++*(unsigned long long *)ctx;
    return 1;
}

static int on_null(void *ctx) { return count(ctx); }
static int on_bool(void *ctx, int b)
{
    (void)b;
    return count(ctx);
}
static int on_number(void *ctx, const char *s, size_t n)
{
    (void)s;
    (void)n;
    return count(ctx);
}
static int on_string(void *ctx, const unsigned char *s, size_t n)
{
    (void)s;
    (void)n;
    return count(ctx);
}
static int on_key(void *ctx, const unsigned char *s, size_t n)
{
    (void)ctx;
    (void)s;
    (void)n;
    return 1;
}
static int on_open(void *ctx)
{
    (void)ctx;
    return 1;
}

static const yajl_callbacks CALLBACKS = {on_null, on_bool, NULL,    NULL,  on_number, on_string,
                                         on_open, on_key,  count,   on_open, count};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: yajl_tokenize FILE\n");
        return 2;
    }
    gzFile gz = gzopen(argv[1], "rb");
    if (!gz) {
        fprintf(stderr, "yajl_tokenize: cannot open %s\n", argv[1]);
        return 1;
    }
    gzbuffer(gz, CHUNK);
    unsigned long long values = 0;
    yajl_handle h = yajl_alloc(&CALLBACKS, NULL, &values);
    unsigned char *buf = malloc(CHUNK);
    if (h)  /* JSON Lines (the query bench's input) are many top-level values */
        yajl_config(h, yajl_allow_multiple_values, 1);
    if (!h || !buf) {
        fprintf(stderr, "yajl_tokenize: out of memory\n");
        return 1;
    }
    int n, rc = 0;
    while ((n = gzread(gz, buf, CHUNK)) > 0) {
        if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok) {
            rc = 1;
            break;
        }
    }
    if (n < 0 || (rc == 0 && yajl_complete_parse(h) != yajl_status_ok))
        rc = 1;
    if (rc)
        fprintf(stderr, "yajl_tokenize: %s: invalid JSON or read error\n", argv[1]);
    else
        printf("values=%llu\n", values);
    yajl_free(h);
    free(buf);
    gzclose(gz);
    return rc;
}
