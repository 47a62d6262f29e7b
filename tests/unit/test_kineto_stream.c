/* The bounded-memory Kineto reader (src/ingest/kineto.c) against the simple
 * simple two-pass reader (kineto_simple.c) on random traces, with sort buffers small
 * enough that every record stream spills to temporary files; and the
 * external sort (ext_sort.c) against qsort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ext_sort.h"
#include "ingest/kineto.h"
#include "opdb/pystr.h"
#include "opdb/trace_reader.h"

/* ---- ext_sort */

typedef struct rec {
    uint32_t key, seq;
    double payload;
} rec;

static int rec_order(const void *x, const void *y) {
    const rec *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static uint64_t rng_state = 88172645463325252ull;
static uint32_t rnd(uint32_t n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static void sort_case(size_t n, size_t budget, bool expect_spill) {
    rec *v = calloc(n + 1, sizeof *v);
    xsort s;
    xs_init(&s, sizeof(rec), budget, rec_order);
    opdb_err err = {0};
    for (size_t i = 0; i < n; i++) {
        v[i].key = rnd(50);
        v[i].seq = (uint32_t)i;
        v[i].payload = rnd(1000) / 7.0;
        assert_int_equal(xs_push(&s, &v[i], &err), 0);
    }
    assert_int_equal(xs_finish(&s, &err), 0);
    assert_true(expect_spill ? s.spilled > 0 : s.spilled == 0);
    assert_true(s.nruns <= XS_MAX_RUNS);
    qsort(v, n, sizeof *v, rec_order);
    int rc = 0;
    size_t i = 0;
    for (const rec *r; (r = xs_next(&s, &rc, &err)); i++) {
        assert_true(i < n);
        assert_memory_equal(r, &v[i], sizeof *r);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(i, n);
    xs_free(&s);
    free(v);
}

static void test_ext_sort_in_memory(void **state) {
    (void)state;
    sort_case(0, 1 << 20, false);
    sort_case(1000, 1 << 20, false);
}

static void test_ext_sort_spills_and_merges(void **state) {
    (void)state;
    sort_case(5000, 4096, true);    /* a few runs */
    sort_case(20000, 256, true);    /* more than XS_MAX_RUNS runs: compaction */
}

/* Runs are written encoded (each word XOR the previous record's, zero bytes trimmed):
 * records of random bytes, of a size that is not a multiple of 8, with runs of
 * equal records and words that differ only in their top or bottom byte, must come
 * back exactly. */
typedef struct odd_rec {
    unsigned char b[20];
} odd_rec;

static int odd_order(const void *x, const void *y) { return memcmp(x, y, sizeof(odd_rec)); }

static void test_ext_sort_encoding_round_trip(void **state) {
    (void)state;
    enum { N = 3000 };
    odd_rec *v = calloc(N, sizeof *v);
    for (size_t i = 0; i < N; i++) {
        int kind = (int)rnd(5);
        for (size_t k = 0; k < sizeof v[i].b; k++)
            v[i].b[k] = kind == 0 ? 0xff : kind == 1 ? (unsigned char)rnd(256) : kind == 2 && i ? v[i - 1].b[k] : 0;
        if (kind == 3) v[i].b[7] = (unsigned char)rnd(256);  /* top byte of the first word only */
        if (kind == 4) v[i].b[8] = (unsigned char)rnd(256);  /* bottom byte of the second word only */
    }
    xsort s;
    xs_init(&s, sizeof(odd_rec), 200 * sizeof(odd_rec), odd_order);
    opdb_err err = {0};
    for (size_t i = 0; i < N; i++) assert_int_equal(xs_push(&s, &v[i], &err), 0);
    assert_int_equal(xs_finish(&s, &err), 0);
    assert_true(s.spilled > 0);
    qsort(v, N, sizeof *v, odd_order);
    int rc = 0;
    size_t i = 0;
    for (const odd_rec *r; (r = xs_next(&s, &rc, &err)); i++) {
        assert_true(i < N);
        assert_memory_equal(r, &v[i], sizeof *r);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(i, N);
    xs_free(&s);
    free(v);
}

/* ---- the readers on random traces */

typedef struct ev {
    char text[400];
} ev;

/* A trace with nested operators on several threads, launches inside and
 * outside them, kernels with and without launches, shared and repeated
 * correlations, timestamp ties, and the events shuffled. */
static char *random_trace(unsigned seed, bool shuffle) {
    rng_state = 0x9E3779B97F4A7C15ull * (seed + 1);
    static const char *const names[] = {"aten::addmm", "aten::mul", "aten::cat", "aten::linear"};
    static const char *const dims[] = {"[[4, 8], [8, 16]]", "[[2], []]", "[[[1, 2], [3, 4]], []]", "[]"};
    size_t n = 0, cap = 4096;
    ev *e = calloc(cap, sizeof *e);
    int corr = 1;
    for (int t = 0; t < 3; t++) {
        int ts = 100;
        for (int k = 0; k < 60; k++) {
            int depth = 1 + (int)rnd(3), start = ts, len = 10 + (int)rnd(30);
            for (int d = 0; d < depth && n + 8 < cap; d++) {
                int s = start + (rnd(3) == 0 ? 0 : d * 2), l = len - d * 3 - (int)rnd(2);
                bool no_dims = rnd(8) == 0;
                snprintf(e[n++].text, sizeof e->text,
                         "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d, \"ts\": %d, "
                         "\"dur\": %d, \"args\": {%s%s%s\"Input type\": [\"float\"]}}",
                         rnd(5) ? "cpu_op" : "Operator", names[rnd(4)], t, s, l < 0 ? 0 : l,
                         no_dims ? "" : "\"Input Dims\": ", no_dims ? "" : dims[rnd(4)], no_dims ? "" : ", ");
            }
            int launches = (int)rnd(4);
            for (int j = 0; j < launches && n + 8 < cap; j++) {
                int lts = start + (int)rnd((unsigned)len + 6) - 2, c = rnd(10) == 0 && corr > 1 ? corr - 1 : corr++;
                snprintf(e[n++].text, sizeof e->text,
                         "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": %d, "
                         "\"ts\": %d, \"dur\": 3, \"args\": {\"correlation\": %d}}",
                         rnd(2) ? "cuda_runtime" : "hip_runtime", t, lts, c);
                int kernels = rnd(6) == 0 ? 0 : 1 + (int)rnd(2);
                for (int q = 0; q < kernels; q++)
                    snprintf(e[n++].text, sizeof e->text,
                             "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"k%u\", \"pid\": 0, \"tid\": 7, "
                             "\"ts\": %d, \"dur\": %u.%03u, \"args\": {\"correlation\": %d}}",
                             rnd(4) ? "kernel" : "gpu_memcpy", rnd(5), lts + 20, rnd(40), rnd(1000), c);
            }
            if (rnd(7) == 0 && n + 8 < cap) /* a kernel whose launch is not in the trace, or none at all */
                snprintf(e[n++].text, sizeof e->text,
                         "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"orphan\", \"pid\": 0, \"tid\": 7, "
                         "\"ts\": 5, \"dur\": 1.5, \"args\": {%s}}",
                         rnd(2) ? "\"correlation\": 999999" : "");
            ts += rnd(4) == 0 ? len / 2 : len + (int)rnd(5);
        }
    }
    if (shuffle)
        for (size_t i = n; i > 1; i--) {
            size_t j = rnd((uint32_t)i);
            ev t = e[i - 1];
            e[i - 1] = e[j];
            e[j] = t;
        }
    char path[] = "/tmp/opdb-kineto-diff-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"traceEvents\": [\n", f);
    for (size_t i = 0; i < n; i++) fprintf(f, "%s%s\n", e[i].text, i + 1 < n ? "," : "");
    fputs("]}\n", f);
    fclose(f);
    free(e);
    return strdup(path);
}

static const kn_group *find_group(const kn_agg *a, const kn_group *like) {
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->g[i].name, like->name) && !strcmp(a->g[i].dims, like->dims) &&
            !strcmp(a->g[i].types, like->types))
            return &a->g[i];
    return NULL;
}

static size_t live_groups(const kn_agg *a) {
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++) n += a->g[i].count > 0;
    return n;
}

/* Every figure of every group, bit for bit. */
static void same_aggregates(const kn_agg *fast, const kn_agg *ref) {
    assert_int_equal(fast->device_events, ref->device_events);
    assert_int_equal(fast->no_launch, ref->no_launch);
    assert_int_equal(fast->no_operator, ref->no_operator);
    assert_int_equal(fast->calls, ref->calls);
    assert_int_equal(fast->calls_without_dims, ref->calls_without_dims);
    assert_int_equal(live_groups(fast), live_groups(ref));
    for (size_t i = 0; i < ref->n; i++) {
        const kn_group *r = &ref->g[i], *f = find_group(fast, r);
        if (!r->count) continue;
        assert_non_null(f);
        assert_int_equal(f->count, r->count);
        assert_int_equal(f->first_call, r->first_call);
        assert_memory_equal(&f->sum, &r->sum, sizeof r->sum);
        assert_memory_equal(&f->sumsq, &r->sumsq, sizeof r->sumsq);
        assert_memory_equal(&f->min, &r->min, sizeof r->min);
        assert_memory_equal(&f->max, &r->max, sizeof r->max);
        assert_memory_equal(&f->median, &r->median, sizeof r->median);
        assert_int_equal(f->nknames, r->nknames);
        for (size_t k = 0; k < r->nknames; k++)
            assert_string_equal(fast->names[f->knames[k]], ref->names[r->knames[k]]);
    }
}

static void differential(bool shuffle, size_t budget) {
    for (unsigned seed = 0; seed < 12; seed++) {
        char *p1 = random_trace(seed, shuffle), *p2 = random_trace(seed + 100, shuffle);
        kn_agg fast, ref;
        kn_agg_init(&fast);
        kn_agg_init(&ref);
        fast.sort_budget = budget;
        char why[512] = "";
        opdb_err err = {0};
        /* two files into one aggregate: groups continue across files */
        assert_int_equal(kn_read(&fast, p1, why, sizeof why, &err), 0);
        assert_int_equal(kn_read(&fast, p2, why, sizeof why, &err), 0);
        assert_int_equal(kn_read_simple(&ref, p1, why, sizeof why, &err), 0);
        assert_int_equal(kn_read_simple(&ref, p2, why, sizeof why, &err), 0);
        assert_int_equal(kn_finish(&fast, &err), 0);
        assert_int_equal(kn_finish(&ref, &err), 0);
        assert_true(ref.calls > 50);
        assert_true(ref.no_operator > 0 && ref.no_launch > 0); /* the rules for both are exercised */
        same_aggregates(&fast, &ref);
        kn_agg_free(&fast);
        kn_agg_free(&ref);
        unlink(p1);
        unlink(p2);
        free(p1);
        free(p2);
    }
}

static void test_stream_equals_simple_in_order(void **state) {
    (void)state;
    differential(false, KN_SORT_BUDGET);
}

static void test_stream_equals_simple_shuffled_spilling(void **state) {
    (void)state;
    differential(true, 64); /* 16 records per buffer: every sort spills, most compact */
}

/* ---- number fast paths (trace reader's repr of decimals, kn_num_of) against strtod + repr */

#define NNUM 6000
static char g_nums[NNUM][48];

static int check_number(const opdb_trace_event *ev, void *ctx) {
    size_t *i = ctx;
    const char *raw = g_nums[*i];
    const opdb_trace_field *f = opdb_trace_get(ev, "ts");
    assert_non_null(f);
    double want = strtod(f->text, NULL), got = 0;
    char rep[64];
    opdb_py_fmt_repr(rep, sizeof rep, strtod(raw, NULL));
    if (strchr(raw, '.')) assert_string_equal(f->text, rep); /* floats: Python's repr */
    assert_true(kn_num_of(f, &got));
    assert_memory_equal(&got, &want, sizeof got);
    ++*i;
    return 0;
}

static void test_number_fast_paths(void **state) {
    (void)state;
    rng_state = 12345;
    char path[] = "/tmp/opdb-kineto-num-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("[", f);
    for (size_t i = 0; i < NNUM; i++) {
        char *o = g_nums[i];
        if (rnd(3) == 0) *o++ = '-';
        unsigned il = rnd(18), fl = rnd(4) ? 1 + rnd(20) : 0, lead = rnd(3) == 0 ? rnd(7) : 0;
        if (il == 0) *o++ = '0';
        for (unsigned k = 0; k < il; k++) *o++ = (char)('0' + (k == 0 ? 1 + rnd(9) : rnd(10)));
        if (fl) {
            *o++ = '.';
            for (unsigned k = 0; k < fl; k++) *o++ = (char)('0' + (k < lead ? 0 : rnd(4) == 0 ? 0 : rnd(10)));
        }
        *o = '\0';
        fprintf(f, "%s{\"ph\": \"X\", \"ts\": %s}", i ? "," : "", g_nums[i]);
    }
    fputs("]\n", f);
    fclose(f);
    static const char *const fields[] = {"ts", NULL};
    size_t seen = 0;
    opdb_err err = {0};
    assert_int_equal(opdb_trace_read_some(path, fields, NULL, check_number, &seen, &err), 0);
    assert_int_equal(seen, NNUM);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ext_sort_in_memory),
        cmocka_unit_test(test_ext_sort_spills_and_merges),
        cmocka_unit_test(test_ext_sort_encoding_round_trip),
        cmocka_unit_test(test_stream_equals_simple_in_order),
        cmocka_unit_test(test_stream_equals_simple_shuffled_spilling),
        cmocka_unit_test(test_number_fast_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
