/* Every command entry point's options struct carries its size: a struct
 * that did not go through its _init (here: zeroed) is refused with a usage
 * error naming the struct, before any field is read; the same call with an
 * _init'ed struct gets past the check (to the run's own error on a missing
 * input, or to success). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/aie.h"
#include "opdb/bench.h"
#include "opdb/comm.h"
#include "opdb/compare.h"
#include "opdb/fia_fill.h"
#include "opdb/grid.h"
#include "opdb/ingest.h"
#include "opdb/m6.h"
#include "opdb/measure.h"
#include "opdb/replay.h"
#include "opdb/shape_compare.h"
#include "opdb/trace2csv.h"
#include "opdb/update.h"
#include "opdb/validate.h"

#define MISSING "/nonexistent/opdb-test-call-opts"

/* A refused struct: -1, a usage error, the struct's name and its _init. */
static void assert_refused(int rc, const opdb_err *err, const char *type) {
    assert_int_equal(rc, -1);
    assert_int_equal(err->code, OPDB_ERR_USAGE);
    assert_non_null(strstr(err->msg, type));
    assert_non_null(strstr(err->msg, "_init"));
}

/* An accepted struct: whatever the run said, it is not about the struct. */
static void assert_accepted(const opdb_err *err, const char *type) {
    assert_null(strstr(err->msg, type));
}

#define ZERO(T, v)                                                                                                     \
    T v;                                                                                                               \
    memset(&v, 0, sizeof v)
#define FRESH(e) (opdb_err_clear(&(e)), &(e))

static void test_aie(void **state) {
    (void)state;
    opdb_err err;
    ZERO(opdb_aie_opts, z);
    assert_refused(opdb_aie_run(&z, FRESH(err)), &err, "opdb_aie_opts");
    opdb_aie_opts o;
    opdb_aie_opts_init(&o);
    assert_true(o.size == sizeof o && o.clock_ghz == 1.25);
    o.hwid = "x", o.trace = MISSING "/trace.json", o.out_dir = MISSING;
    assert_int_equal(opdb_aie_run(&o, FRESH(err)), -1);
    assert_accepted(&err, "opdb_aie_opts");
}

static void test_bench_measure_backend(void **state) {
    (void)state;
    opdb_err err;
    ZERO(opdb_backend_opts, zb);
    assert_null(opdb_backend_create("cpu", &zb, FRESH(err)));
    assert_refused(-1, &err, "opdb_backend_opts");
    assert_null(opdb_backend_cpu_create(&zb, FRESH(err)));
    assert_refused(-1, &err, "opdb_backend_opts");
    opdb_backend_opts bo;
    opdb_backend_opts_init(&bo);
    bo.threads = 1;
    opdb_backend *b = opdb_backend_create("cpu", &bo, FRESH(err));
    assert_non_null(b);
    ZERO(opdb_measure_opts, zm);
    opdb_measure_result r;
    assert_refused(opdb_measure(b, NULL, &zm, &r, FRESH(err)), &err, "opdb_measure_opts");
    ZERO(opdb_bench_opts, z);
    assert_refused(opdb_bench_run(&z, b, FRESH(err)), &err, "opdb_bench_opts");
    opdb_bench_opts o;
    opdb_bench_opts_init(&o);
    assert_true(o.measure.size == sizeof o.measure && o.measure.min_samples == 10);
    o.db_dir = MISSING;
    assert_int_equal(opdb_bench_run(&o, b, FRESH(err)), -1);
    assert_accepted(&err, "opdb_bench_opts");
    b->destroy(b);
}

static void test_comm(void **state) {
    (void)state;
    opdb_err err;
    size_t n = 1;
    ZERO(opdb_comm_bench_opts, zb);
    assert_null(opdb_comm_configs(&zb, &n, NULL, FRESH(err)));
    assert_refused(-1, &err, "opdb_comm_bench_opts");
    assert_int_equal(n, 0);
    opdb_comm_bench_opts b;
    opdb_comm_bench_opts_init(&b);
    assert_true(b.warmup == 5 && b.iters == 20 && !strcmp(b.backend, "mpi"));
    long long nd = 2, bytes = 1024;
    b.ops[0] = OPDB_COMM_ALL_REDUCE, b.nops = 1;
    b.num_devices = &nd, b.nnum_devices = 1, b.bytes = &bytes, b.nbytes = 1;
    opdb_comm_config *c = opdb_comm_configs(&b, &n, NULL, FRESH(err));
    assert_int_equal(err.code, OPDB_OK);
    assert_int_equal(n, 1);
    free(c);

    ZERO(opdb_comm_validate_opts, zv);
    assert_refused(opdb_comm_validate(&zv, stdout, stderr, FRESH(err)), &err, "opdb_comm_validate_opts");
    opdb_comm_validate_opts v;
    opdb_comm_validate_opts_init(&v);
    assert_true(v.tolerance == 2.0);
    v.csv_dir = MISSING;
    FILE *sink = fopen("/dev/null", "w");
    assert_int_equal(opdb_comm_validate(&v, sink, sink, FRESH(err)), 1); /* "not a directory": FAIL, no error */
    fclose(sink);
    assert_accepted(&err, "opdb_comm_validate_opts");

    ZERO(opdb_comm_import_opts, zi);
    opdb_comm_import_result res;
    assert_refused(opdb_comm_import_file(&zi, MISSING "/log.txt", &res, FRESH(err)), &err, "opdb_comm_import_opts");
    opdb_comm_import_opts i;
    opdb_comm_import_opts_init(&i);
    assert_true(i.op == -1 && i.tier == -1);
    i.output_dir = MISSING;
    assert_int_equal(opdb_comm_import_file(&i, MISSING "/log.txt", &res, FRESH(err)), -1);
    assert_accepted(&err, "opdb_comm_import_opts");
}

static void test_compare_shapecmp(void **state) {
    (void)state;
    opdb_err err;
    opdb_cmp_stats st;
    ZERO(opdb_cmp_opts, zc);
    assert_refused(opdb_cmp_read_prof(MISSING "/k.csv", &zc, &st, FRESH(err)), &err, "opdb_cmp_opts");
    opdb_cmp_opts c;
    opdb_cmp_opts_init(&c);
    assert_int_equal(opdb_cmp_read_prof(MISSING "/k.csv", &c, &st, FRESH(err)), -1);
    assert_accepted(&err, "opdb_cmp_opts");

    ZERO(opdb_compare_args, za);
    assert_refused(opdb_compare_run(&za, stdout, FRESH(err)), &err, "opdb_compare_args");
    opdb_compare_args a;
    opdb_compare_args_init(&a);
    assert_true(a.o.size == sizeof a.o);
    a.tc_trace = MISSING "/tc.json", a.prof_trace = MISSING "/k.csv";
    assert_int_equal(opdb_compare_run(&a, stdout, FRESH(err)), -1);
    assert_accepted(&err, "opdb_compare_args");

    ZERO(opdb_shapecmp_opts, zs);
    size_t rows;
    assert_refused(opdb_shapecmp_run(&zs, stdout, &rows, FRESH(err)), &err, "opdb_shapecmp_opts");
    opdb_shapecmp_opts s;
    opdb_shapecmp_opts_init(&s);
    s.tc_trace = MISSING "/tc.json", s.prof_trace = MISSING "/k.csv";
    assert_int_equal(opdb_shapecmp_run(&s, stdout, &rows, FRESH(err)), -1);
    assert_accepted(&err, "opdb_shapecmp_opts");

    ZERO(opdb_m6_opts, zm);
    opdb_m6_result mr;
    assert_refused(opdb_m6_run(&zm, stdout, FRESH(err)), &err, "opdb_m6_opts");
    assert_refused(opdb_m6_compute(&zm, &mr, FRESH(err)), &err, "opdb_m6_opts");
    opdb_m6_opts m;
    opdb_m6_opts_init(&m);
    m.tc_trace = MISSING "/tc.json", m.prof_trace = MISSING "/k.csv";
    assert_int_equal(opdb_m6_run(&m, stdout, FRESH(err)), -1);
    assert_accepted(&err, "opdb_m6_opts");

    ZERO(opdb_trace2csv_opts, zt);
    unsigned long long trows;
    assert_refused(opdb_trace2csv_run(&zt, &trows, FRESH(err)), &err, "opdb_trace2csv_opts");
    opdb_trace2csv_opts t;
    opdb_trace2csv_opts_init(&t);
    t.trace_path = MISSING "/tc.json", t.out = stdout;
    assert_int_equal(opdb_trace2csv_run(&t, &trows, FRESH(err)), -1);
    assert_accepted(&err, "opdb_trace2csv_opts");
}

static void test_fia_parse_update(void **state) {
    (void)state;
    opdb_err err;
    ZERO(opdb_fia_fill_opts, zf);
    assert_refused(opdb_fia_fill_run(&zf, FRESH(err)), &err, "opdb_fia_fill_opts");
    opdb_fia_fill_opts f;
    opdb_fia_fill_opts_init(&f);
    f.csv_path = MISSING "/F.csv", f.jsonl_path = MISSING "/r.jsonl";
    assert_int_equal(opdb_fia_fill_run(&f, FRESH(err)), -1);
    assert_accepted(&err, "opdb_fia_fill_opts");

    ZERO(opdb_parse_opts, zp);
    opdb_parse_result pr;
    assert_refused(opdb_parse_run(&zp, &pr, FRESH(err)), &err, "opdb_parse_opts");
    opdb_parse_opts p;
    opdb_parse_opts_init(&p);
    p.profiling_path = MISSING "/kernel_details.csv", p.output_dir = MISSING, p.no_progress = true;
    assert_int_equal(opdb_parse_run(&p, &pr, FRESH(err)), -1);
    assert_accepted(&err, "opdb_parse_opts");
    opdb_parse_result_free(&pr);

    ZERO(opdb_update_opts, zu);
    assert_refused(opdb_update_run(&zu, FRESH(err)), &err, "opdb_update_opts");
    opdb_update_opts u;
    opdb_update_opts_init(&u);
    u.db_dir = MISSING;
    assert_int_equal(opdb_update_run(&u, FRESH(err)), -1);
    assert_accepted(&err, "opdb_update_opts");
    assert_non_null(strstr(err.msg, "not found"));
}

static void test_grid_validate(void **state) {
    (void)state;
    opdb_err err;
    ZERO(opdb_grid_opts, zg);
    assert_refused(opdb_grid_run(&zg, FRESH(err)), &err, "opdb_grid_opts");

    opdb_grid_misses *m = opdb_grid_misses_new();
    ZERO(opdb_grid_miss_opts, zm);
    assert_refused(opdb_grid_from_misses(&zm, m, FRESH(err)), &err, "opdb_grid_miss_opts");
    opdb_grid_miss_opts mo;
    opdb_grid_miss_opts_init(&mo);
    mo.root = MISSING, mo.out = stdout;
    assert_int_equal(opdb_grid_from_misses(&mo, m, FRESH(err)), -1);
    assert_accepted(&err, "opdb_grid_miss_opts");
    opdb_grid_misses_free(m);

    /* an empty folder validates: the whole run with an _init'ed struct */
    char dir[] = "/tmp/opdb_call_opts_XXXXXX";
    assert_non_null(mkdtemp(dir));
    opdb_validate_result res;
    ZERO(opdb_validate_opts, zv);
    assert_refused(opdb_validate_run(dir, &zv, &res, FRESH(err)), &err, "opdb_validate_opts");
    opdb_validate_opts v;
    opdb_validate_opts_init(&v);
    assert_int_equal(opdb_validate_run(dir, &v, &res, FRESH(err)), 0);
    assert_int_equal(res.files, 0);
    /* a struct of a size this library does not know (a newer header) is refused too */
    v.size = sizeof v + 8;
    assert_refused(opdb_validate_run(dir, &v, &res, FRESH(err)), &err, "opdb_validate_opts");
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aie),
        cmocka_unit_test(test_bench_measure_backend),
        cmocka_unit_test(test_comm),
        cmocka_unit_test(test_compare_shapecmp),
        cmocka_unit_test(test_fia_parse_update),
        cmocka_unit_test(test_grid_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
