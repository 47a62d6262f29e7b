/* The trace reader's two paths (one thread; parser thread + consumer) must
 * hand the callback exactly the same events, stop at the same event and
 * fail with the same error after delivering the same events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "core/call.h"
#include "opdb/trace_reader.h"

static const char *const k_fields[] = {"ph", "name", "pid", "dur", "args", NULL};
static const char *const k_args[] = {"kernel_type", "sub_kernel_durations", "simulation_shapes", "d", NULL};

typedef struct sink {
    bool some;                  /* read with the lists above */
    opdb_strbuf log;
    unsigned long long stop_at; /* 0: never */
    unsigned long long seen;
} sink;

static int record(const opdb_trace_event *ev, void *ctx) {
    sink *s = ctx;
    opdb_sb_addf(&s->log, "#%llu@%llu", ev->index, ev->offset);
    for (size_t i = 0; i < ev->nf; i++) opdb_sb_addf(&s->log, "|%s=%d:%s", ev->f[i].key, (int)ev->f[i].kind, ev->f[i].text);
    for (size_t i = 0; i < ev->nargs; i++)
        opdb_sb_addf(&s->log, "|a.%s=%d:%s", ev->args[i].key, (int)ev->args[i].kind, ev->args[i].text);
    opdb_sb_addc(&s->log, '\n');
    /* by index: the same field a search by name finds (the last duplicate), none without lists */
    assert_true(s->some == (ev->fields_by_want != NULL) && s->some == (ev->args_by_want != NULL));
    for (size_t i = 0; s->some && k_fields[i]; i++) assert_ptr_equal(ev->fields_by_want[i], opdb_trace_get(ev, k_fields[i]));
    for (size_t i = 0; s->some && k_args[i]; i++) assert_ptr_equal(ev->args_by_want[i], opdb_trace_arg(ev, k_args[i]));
    s->seen++;
    return s->stop_at && s->seen == s->stop_at;
}

/* A trace of n events of varied shapes; truncated to cut bytes if cut > 0. */
static char *write_trace(int n, bool gz, size_t cut) {
    opdb_strbuf t;
    opdb_sb_init(&t);
    opdb_sb_addf(&t, "{\"meta\": {\"x\": [1, 2]}, \"traceEvents\": [\n");
    for (int i = 0; i < n; i++) {
        if (i) opdb_sb_add(&t, ",\n", 2);
        switch (i % 6) {
        case 0:
            opdb_sb_addf(&t, "{\"ph\": \"X\", \"name\": \"aten.mm.%d\", \"pid\": %d, \"ts\": %d.%03d, \"dur\": %d.5, "
                             "\"args\": {\"kernel_type\": \"MatMulV2\", \"sub_kernel_durations\": \"[('MatMulV2', %d.25)]\", "
                             "\"simulation_shapes\": [[%d, 4096], [4096, 4096]]}}",
                         i, 1 + i % 3, i, i % 1000, i % 97, i % 89, i % 128 + 1);
            break;
        case 1:
            opdb_sb_addf(&t, "{\"ph\": \"X\", \"name\": \"it's \\\"q\\\" \\u00e9\\n%d\", \"pid\": \"p%d\", \"dur\": 1e%d, "
                             "\"args\": {\"flag\": true, \"none\": null, \"d\": {\"k\": [1.0, -0, false]}}}",
                         i, i % 2, i % 5);
            break;
        case 2: opdb_sb_addf(&t, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": \"m%d\"}}", i % 3, i); break;
        case 3: opdb_sb_addf(&t, "[%d, \"not an event\"]", i); break;
        case 5: /* keys nobody reads holding containers that look like events and args (the
                 * tokenizing thread drops them), an "args" list, a second "args" */
            opdb_sb_addf(&t, "{\"grid\": {\"args\": {\"d\": 1}, \"ph\": [\"X\"]}, \"ph\": \"X\", \"x\": [[{\"name\": 2}]], "
                             "\"args\": [1, {\"d\": 2}], \"name\": \"g%d\", \"args\": {\"skip\": {\"d\": [3]}, \"d\": {\"args\": %d}, "
                             "\"kernel_type\": null, \"n\": true}, \"tail\": {}}",
                         i, i);
            break;
        default: opdb_sb_addf(&t, "{\"ph\": \"X\", \"name\": \"n\", \"args\": \"text\", \"dur\": %d, \"dur\": %d}", i, i + 1);
        }
    }
    opdb_sb_addf(&t, "\n], \"tail\": {\"y\": 1}}\n");
    size_t len = cut && cut < t.n ? cut : t.n;
    char *path = strdup(gz ? "/tmp/opdb_test_trace_XXXXXX.json.gz" : "/tmp/opdb_test_trace_XXXXXX.json");
    int fd = mkstemps(path, gz ? 8 : 5);
    assert_true(fd >= 0);
    if (gz) {
        gzFile g = gzdopen(fd, "wb");
        assert_int_equal(gzwrite(g, t.p, (unsigned)len), (int)len);
        gzclose(g);
    } else {
        assert_int_equal(write(fd, t.p, len), (ssize_t)len);
        close(fd);
    }
    opdb_sb_free(&t);
    return path;
}

/* Reads path in a call of its own with trace_pipeline = mode (-1: on this
 * thread, 1: tokenized on a second one); returns rc, the log and the error
 * text. */
static int read_in_mode(const char *path, int mode, bool some, unsigned long long stop_at, opdb_strbuf *log,
                        char *errmsg, unsigned long long *seen) {
    opdb_call_scope call = opdb_call_enter(NULL);
    opdb_modes m = {.trace_pipeline = mode};
    opdb_call_set_modes(&m);
    sink s = {.stop_at = stop_at, .some = some};
    opdb_sb_init(&s.log);
    opdb_err err;
    memset(&err, 0, sizeof err);
    int rc = some ? opdb_trace_read_some(path, k_fields, k_args, record, &s, &err) : opdb_trace_read(path, record, &s, &err);
    opdb_call_leave(&call);
    *log = s.log;
    *seen = s.seen;
    strcpy(errmsg, err.msg);
    return rc;
}

static void same_both_ways(const char *path, bool some, unsigned long long stop_at, unsigned long long want_events,
                           int want_rc) {
    opdb_strbuf a, b;
    char ea[1024], eb[1024];
    unsigned long long na, nb;
    int ra = read_in_mode(path, -1, some, stop_at, &a, ea, &na);
    int rb = read_in_mode(path, 1, some, stop_at, &b, eb, &nb);
    assert_int_equal(ra, want_rc);
    assert_int_equal(rb, want_rc);
    assert_string_equal(ea, eb);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.p, b.p, a.n);
    assert_int_equal(na, want_events);
    assert_int_equal(nb, want_events);
    opdb_sb_free(&a);
    opdb_sb_free(&b);
}

static void test_whole_trace(void **state) {
    (void)state;
    for (int gz = 0; gz < 2; gz++) {
        char *p = write_trace(30000, gz, 0);
        same_both_ways(p, false, 0, 25000, 0); /* every 6th element is not an object */
        same_both_ways(p, true, 0, 25000, 0);
        unlink(p);
        free(p);
    }
}

static void test_stop_midway(void **state) {
    (void)state;
    char *p = write_trace(30000, false, 0);
    same_both_ways(p, true, 1, 1, 0);
    same_both_ways(p, true, 9000, 9000, 0);
    unlink(p);
    free(p);
}

static void test_truncated(void **state) {
    (void)state;
    char *whole = write_trace(30000, false, 0);
    FILE *f = fopen(whole, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    unlink(whole);
    free(whole);
    char *p = write_trace(30000, false, (size_t)size / 2);
    opdb_strbuf log;
    char msg[1024];
    unsigned long long events;
    assert_int_equal(read_in_mode(p, 1, true, 0, &log, msg, &events), -1);
    assert_non_null(strstr(msg, "truncated or invalid JSON at byte"));
    opdb_sb_free(&log);
    assert_true(events > 10000);
    same_both_ways(p, true, 0, events, -1);
    unlink(p);
    free(p);
}

/* Nesting beyond the reader's limit: the same error at the same byte, after
 * the same events, whichever thread tokenizes. */
static void test_too_deep(void **state) {
    (void)state;
    char path[] = "/tmp/opdb_test_trace_deep_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "[");
    for (int i = 0; i < 5000; i++) fprintf(f, "{\"ph\": \"X\", \"name\": \"e%d\", \"dur\": %d},\n", i, i);
    fprintf(f, "{\"args\": {\"deep\": ");
    for (int i = 0; i < 300; i++) fputc('[', f);
    for (int i = 0; i < 300; i++) fputc(']', f);
    fprintf(f, "}}]");
    fclose(f);
    same_both_ways(path, false, 0, 5000, -1);
    same_both_ways(path, true, 0, 5000, -1); /* the too-deep value is one nobody reads */
    opdb_strbuf log;
    char msg[1024];
    unsigned long long n;
    read_in_mode(path, 1, false, 0, &log, msg, &n);
    assert_non_null(strstr(msg, "invalid JSON at byte"));
    opdb_sb_free(&log);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_trace),
        cmocka_unit_test(test_stop_midway),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_too_deep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
