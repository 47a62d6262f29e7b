/* Out of memory ends the call, never the process: the Nth allocation of a
 * call made to fail (malloc, calloc and realloc wrapped at link time, so
 * only the library's and this file's calls see it), for every N until the
 * call no longer allocates that many times.  Each failed call returns
 * OPDB_ERR_NOMEM; an update leaves its folder wholly old or wholly new,
 * unlocked and without temp files; a query handle that failed refuses
 * later calls and closes, and a fresh one answers as before; calls with
 * worker threads (a threaded query batch, the trace pipeline) fail the same
 * way without hanging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/core.h"
#include "opdb/error.h"
#include "opdb/query.h"
#include "opdb/trace2csv.h"
#include "opdb/update.h"
#include "query_fixture.h"

/* A failed call does not free what it had allocated (error.h): under
 * AddressSanitizer those blocks are expected, not reported. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

/* ---- the failing allocator */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);

static atomic_long g_left = -1; /* allocations until the failing one; -1: none fails */
static atomic_long g_count;     /* allocations seen while armed */

static bool fail_now(void) {
    if (atomic_load(&g_left) < 0) return false;
    atomic_fetch_add(&g_count, 1);
    return atomic_fetch_sub(&g_left, 1) == 0;
}

void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size) { return fail_now() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }

/* The nth allocation from now fails (n >= 1); after it none does. */
static void arm(long n) {
    atomic_store(&g_count, 0);
    atomic_store(&g_left, n - 1);
}
static void disarm(void) { atomic_store(&g_left, -1); }
/* Whether the armed allocation was reached. */
static bool fired(void) { return atomic_load(&g_left) < 0 && atomic_load(&g_count) > 0; }

/* ---- files */

static void quiet(void *ctx, const char *line) { (void)ctx, (void)line; }

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n + 4096 > cap) buf = __real_realloc(buf, cap = (*n + 4096) * 2);
        size_t r = fread(buf + *n, 1, 4096, f);
        *n += r;
        if (r < 4096) break;
    }
    fclose(f);
    return buf;
}

static void copy_file(const char *from, const char *to) {
    size_t n = 0;
    char *b = slurp(from, &n);
    assert_non_null(b);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
}

/* The folder's top-level table files, name and bytes, one string. */
static char *tables_of(const char *dir) {
    struct dirent **names;
    int k = scandir(dir, &names, NULL, alphasort);
    assert_true(k >= 0);
    char *all = __real_malloc(1);
    size_t len = 0;
    all[0] = 0;
    for (int i = 0; i < k; i++) {
        const char *e = names[i]->d_name;
        size_t el = strlen(e);
        if (el > 4 && strcmp(e + el - 4, ".csv") == 0) {
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", dir, e);
            size_t n = 0;
            char *b = slurp(p, &n);
            assert_non_null(b);
            all = __real_realloc(all, len + el + n + 3);
            memcpy(all + len, e, el);
            all[len + el] = '\n';
            memcpy(all + len + el + 1, b, n);
            len += el + n + 1;
            all[len++] = '\n';
            all[len] = 0;
            free(b);
        }
        free(names[i]);
    }
    free(names);
    return all;
}

static int g_leftovers;
static int find_leftover(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag;
    const char *base = p + ftw->base;
    if (strstr(base, ".tmp.") || strstr(base, "journal") || strstr(base, ".bak")) {
        fprintf(stderr, "left over: %s\n", p);
        g_leftovers++;
    }
    return 0;
}

/* No temp file, backup or journal left anywhere under dir. */
static void assert_no_leftovers(const char *dir) {
    g_leftovers = 0;
    nftw(dir, find_leftover, 8, FTW_PHYS);
    assert_int_equal(g_leftovers, 0);
}

/* Nobody holds the folder's writer lock. */
static void assert_unlocked(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    close(fd);
}

/* ---- update */

#define CASE OPDB_TEST_CLI_DIR "/update_add_new_ops/in"

static char *fresh_db(void) {
    char *d = qf_mkdir();
    char sub[512];
    snprintf(sub, sizeof sub, "%s/db", d);
    assert_int_equal(mkdir(sub, 0755), 0);
    const char *files[] = {"Add.csv", "MatMulV3.csv"};
    for (size_t i = 0; i < 2; i++) {
        char from[1024], to[1024];
        snprintf(from, sizeof from, "%s/db/%s", CASE, files[i]);
        snprintf(to, sizeof to, "%s/%s", sub, files[i]);
        copy_file(from, to);
    }
    return d;
}

static int run_update(const char *db, opdb_err *err) {
    const char *prof[] = {CASE "/prof"};
    opdb_update_opts o;
    opdb_update_opts_init(&o);
    o.db_dir = db;
    o.prof_paths = prof;
    o.nprof = 1;
    o.add_new_ops = true;
    o.timestamp = "20260101_000000";
    o.log.warn = quiet;
    o.log.note = quiet;
    o.log.progress = quiet;
    FILE *out = fopen("/dev/null", "w");
    o.out = out;
    opdb_err_clear(err);
    int rc = opdb_update_run(&o, err);
    fclose(out);
    return rc;
}

static void test_update_fails_cleanly_at_every_allocation(void **state) {
    (void)state;
    /* the tables before and after a run that has its memory */
    char *top = fresh_db(), db[600];
    snprintf(db, sizeof db, "%s/db", top);
    char *before = tables_of(db);
    opdb_err err;
    assert_int_equal(run_update(db, &err), 0);
    char *after = tables_of(db);
    assert_string_not_equal(before, after);
    qf_rmdir(top);

    long failed = 0;
    for (long n = 1;; n++) {
        top = fresh_db();
        snprintf(db, sizeof db, "%s/db", top);
        arm(n);
        int rc = run_update(db, &err);
        bool hit = fired();
        disarm();
        char *now = tables_of(db);
        if (!hit) { /* the run needs fewer allocations: it succeeded */
            assert_int_equal(rc, 0);
            assert_string_equal(now, after);
            free(now);
            qf_rmdir(top);
            break;
        }
        assert_int_equal(rc, -1);
        assert_int_equal(err.code, OPDB_ERR_NOMEM);
        assert_non_null(strstr(err.msg, "out of memory"));
        assert_true(strcmp(now, before) == 0 || strcmp(now, after) == 0); /* wholly old or wholly new */
        assert_no_leftovers(top);
        assert_unlocked(db);
        /* the same folder updated again, with the memory: the new tables */
        assert_int_equal(run_update(db, &err), 0);
        free(now);
        now = tables_of(db);
        assert_string_equal(now, after);
        free(now);
        qf_rmdir(top);
        failed++;
    }
    print_message("update: failed at each of its %ld allocations\n", failed);
    assert_true(failed > 50);
    free(before);
    free(after);
}

/* ---- query handle */

static const char k_map[] = "operator_mappings:\n"
                            "  mm: {kernel_type: MatMulV2}\n"
                            "  add: {kernel_type: Add, query_mode: elementwise}\n";
static const char k_mm[] = "Input Shapes,Input Data Types,Output Shapes,Output Data Types,Duration(us)\n"
                           "\"16,128;128,256\",DT_BF16;DT_BF16,\"16,256\",DT_BF16,5.0\n"
                           "\"32,128;128,256\",DT_BF16;DT_BF16,\"32,256\",DT_BF16,6.0\n";
static const char k_add[] = "Output Shapes,Output Data Types,Duration(us)\n\"16,128\",DT_BF16,1.0\n\"64,128\",FLOAT,2.0\n";

/* an interpolated answer: between the two measured rows */
static const char *const k_query =
    "{\"id\": 1, \"op\": \"mm\", \"args\": [{\"shape\": [24, 128]}, {\"shape\": [128, 256]}]}";

static char *query_db(void) {
    char *dir = qf_mkdir();
    qf_write(dir, "op_mapping.yaml", k_map);
    qf_write(dir, "MatMulV2.csv", k_mm);
    qf_write(dir, "Add.csv", k_add);
    return dir;
}

static void test_query_handle_fails_then_refuses(void **state) {
    (void)state;
    char *dir = query_db();
    opdb_qdb *db = qf_open(dir, false, true, 1);
    assert_non_null(db);
    char *want = qf_line(db, k_query, false);
    opdb_qdb_close(db);

    long failed = 0;
    for (long n = 1;; n++) {
        db = qf_open(dir, false, true, 1);
        assert_non_null(db);
        opdb_qresult r;
        arm(n);
        int rc = opdb_query_json(db, k_query, strlen(k_query), false, &r);
        bool hit = fired();
        disarm();
        if (!hit) {
            assert_int_equal(rc, 0);
            opdb_qresult_free(&r);
            opdb_qdb_close(db);
            break;
        }
        assert_int_equal(rc, -OPDB_ERR_NOMEM);
        /* the handle refuses from now on, and closes */
        assert_int_equal(opdb_query_json(db, k_query, strlen(k_query), false, &r), -OPDB_ERR_NOMEM);
        opdb_qdb_close(db);
        /* a fresh handle answers as before */
        db = qf_open(dir, false, true, 1);
        char *got = qf_line(db, k_query, false);
        assert_string_equal(got, want);
        free(got);
        opdb_qdb_close(db);
        failed++;
    }
    print_message("query: failed at each of its %ld allocations\n", failed);
    assert_true(failed > 5);

    /* opening itself */
    for (long n = 1;; n++) {
        opdb_qdb_opts o;
        opdb_qdb_opts_init(&o);
        o.warn = quiet;
        opdb_err err;
        opdb_err_clear(&err);
        arm(n);
        db = opdb_qdb_open(dir, &o, &err);
        bool hit = fired();
        disarm();
        if (!hit) {
            assert_non_null(db);
            opdb_qdb_close(db);
            break;
        }
        assert_null(db);
        assert_int_equal(err.code, OPDB_ERR_NOMEM);
    }
    free(want);
    qf_rmdir(dir);
}

/* ---- worker threads */

static void test_threaded_batch_fails_without_hanging(void **state) {
    (void)state;
    char *dir = query_db();
    size_t ql = strlen(k_query);
    size_t nq = 2000;
    char *batch = __real_malloc(nq * (ql + 1) + 1);
    for (size_t i = 0; i < nq; i++) {
        memcpy(batch + i * (ql + 1), k_query, ql);
        batch[i * (ql + 1) + ql] = '\n';
    }
    size_t bn = nq * (ql + 1);
    long failed = 0;
    /* failures spread over the whole batch: every allocation early on, then a stride */
    for (long n = 1;; n += n < 200 ? 1 : n / 8) {
        opdb_qdb *db = qf_open(dir, false, true, 1);
        assert_non_null(db);
        char *out = NULL;
        size_t out_n = 0;
        arm(n);
        int rc = opdb_query_batch_text(db, batch, bn, 4, false, &out, &out_n, NULL);
        bool hit = fired();
        disarm();
        if (!hit) {
            assert_int_equal(rc, 0);
            opdb_query_free_text(out);
            opdb_qdb_close(db);
            break;
        }
        assert_int_equal(rc, -OPDB_ERR_NOMEM);
        opdb_qdb_close(db);
        failed++;
    }
    print_message("threaded batch: failed at %ld of its allocations\n", failed);
    assert_true(failed > 50);
    free(batch);
    qf_rmdir(dir);
}

/* The streaming batch: its reader on the calling thread, its workers and its writer fail the same way. */
typedef struct mem_src {
    const char *p;
    size_t n, at;
} mem_src;

static ptrdiff_t mem_read(void *ctx, char *buf, size_t cap) {
    mem_src *s = ctx;
    size_t k = s->n - s->at < cap ? s->n - s->at : cap;
    if (k > 1500) k = 1500; /* many blocks */
    memcpy(buf, s->p + s->at, k);
    s->at += k;
    return (ptrdiff_t)k;
}

static int mem_write(void *ctx, const char *text, size_t n) {
    opdb_sb_add(ctx, text, n);
    return 0;
}

static void test_streaming_batch_fails_without_hanging(void **state) {
    (void)state;
    char *dir = query_db();
    size_t ql = strlen(k_query);
    size_t nq = 1000;
    char *batch = __real_malloc(nq * (ql + 1) + 1);
    for (size_t i = 0; i < nq; i++) {
        memcpy(batch + i * (ql + 1), k_query, ql);
        batch[i * (ql + 1) + ql] = '\n';
    }
    size_t bn = nq * (ql + 1);
    long failed = 0;
    for (unsigned threads = 1; threads <= 4; threads += 3)
        for (long n = 1;; n += n < 200 ? 1 : n / 8) {
            opdb_qdb *db = qf_open(dir, false, true, 1);
            assert_non_null(db);
            mem_src src = {batch, bn, 0};
            opdb_strbuf out;
            opdb_sb_init(&out);
            arm(n);
            int rc = opdb_query_stream(db, threads, false, mem_read, &src, mem_write, &out, NULL);
            bool hit = fired();
            disarm();
            if (!hit) {
                assert_int_equal(rc, 0);
                assert_int_equal(out.n, nq * (strchr(out.p, '\n') - out.p + 1));
                opdb_sb_free(&out);
                opdb_qdb_close(db);
                break;
            }
            assert_int_equal(rc, -OPDB_ERR_NOMEM);
            opdb_qdb_close(db);
            failed++;
        }
    print_message("streaming batch: failed at %ld of its allocations\n", failed);
    assert_true(failed > 50);
    free(batch);
    qf_rmdir(dir);
}

static const char *g_pipeline_setting(const char *name) {
    return strcmp(name, "OPDB_TRACE_PIPELINE") == 0 ? "1" : NULL;
}

static void test_trace_pipeline_fails_without_hanging(void **state) {
    (void)state;
    opdb_set_settings(g_pipeline_setting);
    char *dir = qf_mkdir();
    char trace[600], csv[600];
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    snprintf(csv, sizeof csv, "%s/out.csv", dir);
    FILE *f = fopen(trace, "w");
    assert_non_null(f);
    fputs("{\"traceEvents\": [", f);
    for (int i = 0; i < 3000; i++)
        fprintf(f, "%s{\"ph\": \"X\", \"name\": \"kernel_%d\", \"ts\": %d, \"dur\": 2, \"pid\": 1, \"tid\": 2, "
                   "\"cat\": \"kernel\", \"args\": {\"shape\": \"[%d, 8]\"}}",
                i ? ", " : "", i % 7, i * 3, i);
    fputs("]}\n", f);
    fclose(f);
    opdb_trace2csv_opts o;
    opdb_trace2csv_opts_init(&o);
    o.trace_path = trace;
    o.output_path = csv;
    o.log.warn = quiet;
    o.log.note = quiet;
    o.log.progress = quiet;
    long failed = 0;
    for (long n = 1;; n += n < 300 ? 1 : n / 8) {
        unsigned long long rows = 0;
        opdb_err err;
        opdb_err_clear(&err);
        arm(n);
        int rc = opdb_trace2csv_run(&o, &rows, &err);
        bool hit = fired();
        disarm();
        if (!hit) {
            assert_int_equal(rc, 0);
            break;
        }
        assert_int_equal(rc, -1);
        assert_int_equal(err.code, OPDB_ERR_NOMEM);
        assert_no_leftovers(dir);
        failed++;
    }
    print_message("trace pipeline: failed at %ld of its allocations\n", failed);
    assert_true(failed > 20);
    opdb_set_settings(NULL);
    qf_rmdir(dir);
}

/* The value builders and a result buffer: each allocation failing in turn
 * gives a NULL value (or -1 from append and set) at the call that ran out,
 * never an abort; the builder stays usable for freeing. */
static bool build_values(opdb_qbuilder *b) {
    const int64_t shape[2] = {16, 64};
    opdb_qvalue *args = opdb_qv_list(b);
    if (!args) return false;
    for (int i = 0; i < 40; i++) {
        opdb_qvalue *t = opdb_qv_tensor(b, shape, 2, "bfloat16", NULL);
        if (!t || opdb_qv_append(b, args, t) != 0) return false;
    }
    opdb_qvalue *kw = opdb_qv_dict(b);
    if (!kw) return false;
    char big[3000]; /* 40 of them fill several of the builder's chunks */
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    for (int i = 0; i < 40; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        opdb_qvalue *v = opdb_qv_str(b, big);
        if (!v || opdb_qv_set(b, kw, key, v) != 0) return false;
    }
    return true;
}

static void test_builders_fail_without_abort(void **state) {
    (void)state;
    long failed = 0;
    for (long n = 1;; n++) {
        arm(n);
        opdb_qbuilder *b = opdb_qbuilder_new();
        bool built = b && build_values(b);
        opdb_qresult_buf *buf = built ? opdb_qresult_buf_new() : NULL;
        bool hit = fired();
        disarm();
        opdb_qresult_buf_free(buf);
        opdb_qbuilder_free(b);
        if (!hit) {
            assert_true(built);
            assert_non_null(buf);
            break;
        }
        assert_true(!built || !buf); /* the call that ran out said so */
        failed++;
    }
    print_message("builders: failed at each of their %ld allocations\n", failed);
    assert_true(failed >= 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_update_fails_cleanly_at_every_allocation),
        cmocka_unit_test(test_query_handle_fails_then_refuses),
        cmocka_unit_test(test_threaded_batch_fails_without_hanging),
        cmocka_unit_test(test_streaming_batch_fails_without_hanging),
        cmocka_unit_test(test_trace_pipeline_fails_without_hanging),
        cmocka_unit_test(test_builders_fail_without_abort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
