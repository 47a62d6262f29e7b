/*
 * gen_common.h - helpers shared by the benchmark input generators
 * (gen_kernel_details.c, gen_update_inputs.c): PRNG, error exits and
 * allocation, argument parsing, timing, number formatting, a buffered output
 * file, shape-template expansion and a 64-bit hash set.
 *
 * Header-only: every function is static inline, so each generator stays one
 * translation unit and the hot formatting helpers can still be inlined.
 * Define GEN_NAME (the program name, a string literal) before including it;
 * error messages are prefixed with it.
 *
 * Only integer arithmetic is used in what ends up in the output files, so the
 * generators write byte-identical files on every platform for the same
 * arguments.
 */
#ifndef OPDB_PERF_GEN_COMMON_H
#define OPDB_PERF_GEN_COMMON_H

#ifndef GEN_NAME
#error "define GEN_NAME (the program name) before including gen_common.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the database schema's names (header-only use: no libopdb) */
#include "opdb/schema.h"
/* X-macro items of opdb/schema.h's lists: a header cell followed by a
 * comma, and an array element */
#define GEN_CSV_CELL(name) name ","
#define GEN_ITEM(name) name,

#define OUT_BUF_SIZE (8u << 20)

/* ------------------------------------------------------------- errors */

static inline void die(const char *msg)
{
    fprintf(stderr, GEN_NAME ": %s\n", msg);
    exit(1);
}

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

static inline void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s ? s : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* ------------------------------------------------------------------ PRNG */

static uint64_t g_rng;

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t rng_next(void)
{
    /* splitmix64 */
    return mix64(g_rng += 0x9e3779b97f4a7c15ULL);
}

/* uniform in [0, n) from a given 64-bit value (n < 2^32) */
static inline uint32_t below(uint64_t r, uint32_t n)
{
    return (uint32_t)(((r >> 32) * (uint64_t)n) >> 32);
}

/* uniform in [0, n) (n < 2^32) */
static inline uint32_t rng_below(uint32_t n) { return below(rng_next(), n); }

/* uniform in [lo, hi] */
static inline uint64_t rng_range(uint64_t lo, uint64_t hi)
{
    return lo + rng_below((uint32_t)(hi - lo + 1));
}

#define PICK(arr) ((arr)[rng_below((uint32_t)(sizeof(arr) / sizeof((arr)[0])))])

/* ----------------------------------------------------- arguments, timing */

/* a whole decimal number without sign; 0 if s is not one */
static inline int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-')
        return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return 0;
    *out = (uint64_t)v;
    return 1;
}

static inline struct timespec clock_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

static inline double seconds_since(struct timespec t0)
{
    struct timespec t1 = clock_now();
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* ---------------------------------------------------------- formatting */

static inline char *put_lit(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}
#define PUT_LIT(p, s) put_lit((p), (s), sizeof(s) - 1)

static inline char *put_str(char *p, const char *s) { return put_lit(p, s, strlen(s)); }

static inline char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* v millionths -> exactly 6 decimals */
static inline char *put_fixed6(char *p, uint64_t v)
{
    p = put_u64(p, v / 1000000);
    uint32_t f = (uint32_t)(v % 1000000);
    *p++ = '.';
    for (int d = 5; d >= 0; d--) {
        p[d] = (char)('0' + f % 10);
        f /= 10;
    }
    return p + 6;
}

/* v thousandths -> exactly 3 decimals */
static inline char *put_fixed3(char *p, uint64_t v)
{
    p = put_u64(p, v / 1000);
    uint32_t f = (uint32_t)(v % 1000);
    p[0] = '.';
    p[1] = (char)('0' + f / 100);
    p[2] = (char)('0' + f / 10 % 10);
    p[3] = (char)('0' + f % 10);
    return p + 4;
}

/* v thousandths -> Python-repr-like decimal: 53741 -> 53.741, 6540 -> 6.54,
 * 0 -> 0.0 */
static inline char *put_milli(char *p, uint64_t v)
{
    p = put_u64(p, v / 1000);
    uint32_t f = (uint32_t)(v % 1000);
    *p++ = '.';
    if (f == 0) {
        *p++ = '0';
    } else {
        *p++ = (char)('0' + f / 100);
        if (f % 100) {
            *p++ = (char)('0' + f / 10 % 10);
            if (f % 10)
                *p++ = (char)('0' + f % 10);
        }
    }
    return p;
}

/* ------------------------------------------------ buffered output file */

/* Rows are formatted straight into buf (OUT_BUF_SIZE bytes): of_row()
 * returns where the next row goes, flushing first when fewer than
 * row_margin bytes would be left; the caller sets used to the row's end. */
typedef struct {
    FILE *f;
    const char *path;
    char *buf;
    size_t row_margin;
    size_t used;
    uint64_t bytes; /* written so far */
} outfile;

/* path "-" is stdout */
static inline void of_open(outfile *o, const char *path, char *buf, size_t row_margin)
{
    o->f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
    if (!o->f) {
        fprintf(stderr, GEN_NAME ": cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    o->path = path;
    o->buf = buf;
    o->row_margin = row_margin;
    o->used = 0;
    o->bytes = 0;
}

static inline void of_flush(outfile *o)
{
    if (o->used && fwrite(o->buf, 1, o->used, o->f) != o->used)
        die("write failed");
    o->bytes += o->used;
    o->used = 0;
}

/* room for one more row */
static inline char *of_row(outfile *o)
{
    if (o->used > OUT_BUF_SIZE - o->row_margin)
        of_flush(o);
    return o->buf + o->used;
}

/* the row (or header) formatted from of_row() / buf up to p */
static inline void of_end_row(outfile *o, const char *p) { o->used = (size_t)(p - o->buf); }

/* flush and close (stdout: flush only); returns the bytes written */
static inline uint64_t of_close(outfile *o)
{
    of_flush(o);
    if (o->f == stdout ? fflush(o->f) != 0 : fclose(o->f) != 0) {
        fprintf(stderr, GEN_NAME ": write failed (close) %s\n", o->path);
        exit(1);
    }
    return o->bytes;
}

/* -------------------------------------------------- shape templates */

/*
 * Templates name per-row/per-group variables by letters (g_var['T'] ...):
 * "T,H;H" with T=8, H=4096 expands to "8,4096;4096".  Digits are copied as
 * numbers, everything else as is.
 */
static uint64_t g_var[128];

/* Expand a shape template into p; returns the end.  *elems (if not NULL)
 * gets the total element count of all slots added. */
static inline char *expand_shape(char *p, const char *tpl, uint64_t *elems)
{
    uint64_t total = 0, prod = 1;
    int have = 0;
    for (const char *s = tpl;; s++) {
        char c = *s;
        if (c == ';' || c == '\0') {
            if (have)
                total += prod;
            prod = 1;
            have = 0;
            if (c == '\0')
                break;
            *p++ = c;
        } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
            uint64_t v = g_var[(unsigned char)c];
            p = put_u64(p, v);
            prod *= v;
            have = 1;
        } else if (c >= '0' && c <= '9') {
            uint64_t v = 0;
            while (*s >= '0' && *s <= '9')
                v = v * 10 + (uint64_t)(*s++ - '0');
            s--;
            p = put_u64(p, v);
            prod *= v;
            have = 1;
        } else {
            *p++ = c;
        }
    }
    if (elems)
        *elems += total;
    return p;
}

/* dtype template: '@' is main_dt */
static inline char *expand_dtype(char *p, const char *tpl, const char *main_dt)
{
    for (const char *s = tpl; *s; s++) {
        if (*s == '@')
            p = put_str(p, main_dt);
        else
            *p++ = *s;
    }
    return p;
}

/* "ND" for every slot of a shape template */
static inline char *auto_fmt(char *p, const char *shape_tpl)
{
    p = PUT_LIT(p, "ND");
    for (const char *s = shape_tpl; *s; s++)
        if (*s == ';')
            p = PUT_LIT(p, ";ND");
    return p;
}

static inline uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* typical duration in ns (thousandths of us) of a launch: cube ops from the
 * product of their flops variables, the others from their element count;
 * not yet capped */
static inline uint64_t model_ns(const char *flops, uint64_t elems)
{
    if (flops) {
        uint64_t f = 2;
        for (const char *s = flops; *s; s++)
            f *= g_var[(unsigned char)*s];
        return 4000 + f / 180000; /* ~180 TFLOPS effective */
    }
    return 1800 + elems * 2 / 900; /* ~0.9 TB/s effective */
}

/* ------------------------------------------------ operator templates */

enum core { CORE_AIC, CORE_AIV, CORE_MIX_AIC, CORE_MIX_AIV, CORE_HCCL };

static const char *const CORE_NAME[] = {"AI_CORE", "AI_VECTOR_CORE", "MIX_AIC",
                                        "MIX_AIV", "HCCL"};

/* The template fields that end both generators' op_def structs:
 *   in       shape template: letters are variables, ';' separates slots
 *   in_dt    dtype template, one per input slot; '@' = the main dtype
 *   in_fmt   formats, one per input slot; NULL: "ND" per input slot
 *   out, out_dt, out_fmt   the same for the outputs
 *   flops    cube ops: product of these variables * 2 (see model_ns) */
#define OP_TEMPLATE_FIELDS                                                              \
    const char *in;                                                                     \
    const char *in_dt;                                                                  \
    const char *in_fmt;                                                                 \
    const char *out;                                                                    \
    const char *out_dt;                                                                 \
    const char *out_fmt;                                                                \
    const char *flops

/* FusedInferAttentionScore: 31 input slots like real torch_npu profiles. */
#define FIA_IN "T,N,D;C,Z,R;C,Z,R;;2048,2048;B;B;;;;;;;;B,M;;;;;;;;;;;;;;;;"
#define U4 "DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;"
#define FIA_DT "@;@;@;DT_UNDEFINED;INT8;INT64;INT64;" U4 "DT_UNDEFINED;DT_UNDEFINED;" \
               "DT_UNDEFINED;INT32;" U4 U4 U4 "DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED;DT_UNDEFINED"
#define N8 "NULL;NULL;NULL;NULL;NULL;NULL;NULL;NULL;"
#define FIA_FMT "ND;ND;ND;NULL;ND;ND;ND;NULL;NULL;NULL;NULL;NULL;NULL;NULL;ND;" N8 "NULL;NULL;NULL;NULL;NULL;NULL;NULL;NULL"

/* ------------------------------------------------------ 64-bit hashes */

static inline uint64_t fnv1a(const char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

#define FNV1A_INIT 0xcbf29ce484222325ULL

/* open-addressing set of 64-bit hashes; cap is a power of two */
typedef struct {
    uint64_t *v;
    size_t cap;
} hset;

static inline void hset_init(hset *s, size_t cap)
{
    s->cap = cap;
    s->v = xcalloc(cap, sizeof *s->v);
}

/* 1 if h was new, 0 if already there */
static inline int hset_insert(hset *s, uint64_t h)
{
    if (h == 0)
        h = 1;
    size_t i = (size_t)(h & (s->cap - 1));
    while (s->v[i]) {
        if (s->v[i] == h)
            return 0;
        i = (i + 1) & (s->cap - 1);
    }
    s->v[i] = h;
    return 1;
}

#endif /* OPDB_PERF_GEN_COMMON_H */
