/* opdb bench's journal, read back for --resume and for the merge of MPI
 * ranks: a record whose status, times or sample count is not sane is
 * dropped and counted (it used to be written back verbatim: nan, inf, -5 or
 * 1e999 reached the table), a sane one is kept and found by its row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay/bench_journal.h"

static const char k_head[] =
    "CSV,Row,Status,Error,OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
    "Output Data Types,Output Formats,EP Size,Min(us),Median(us),P20(us),P80(us),CI Low(us),CI High(us),RSD(%),"
    "Samples,Cache,GFLOP/s,GB/s,Backend,Converged\n";

/* A record of row `shape` with median `med` and sample count `n`. */
static void rec(FILE *f, const char *status, const char *shape, const char *med, const char *n) {
    fprintf(f, "Add,2,%s,,dynamic,AI_VECTOR_CORE,\"\"\"%s\"\"\",DT_FLOAT,ND,\"\"\"%s\"\"\",DT_FLOAT,ND,,1.5,%s,1.6,1.9,,,"
               "3.5,%s,hot,0.1,0.2,cpu,fixed\n", status, shape, shape, med, n);
}

static void test_insane_records_dropped(void **state) {
    (void)state;
    char path[] = "/tmp/opdb_test_journal_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(k_head, f);
    rec(f, "ok", "1,1", "2.0", "3");       /* kept */
    rec(f, "ok", "2,2", "nan", "3");
    rec(f, "ok", "3,3", "inf", "3");
    rec(f, "ok", "4,4", "-5", "3");
    rec(f, "ok", "5,5", "1e999", "3");
    rec(f, "ok", "6,6", "", "3");          /* ok without a median */
    rec(f, "ok", "7,7", "2.0", "-1");
    rec(f, "done", "8,8", "2.0", "3");     /* unknown status */
    rec(f, "failed", "9,9", "", "");       /* kept: a failed row has no times */
    fclose(f);
    bench_journal j;
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(journal_open(&j, path, true, &err), 0);
    assert_int_equal(j.n, 2);
    assert_int_equal(j.nbad, 7);
    assert_int_equal(j.first_bad_line, 3);
    assert_string_equal(j.r[0].f[J_MEDIAN], "2.0");
    assert_string_equal(j.r[1].f[J_STATUS], "failed");
    opdb_strbuf sig;
    opdb_sb_init(&sig);
    journal_sig("Add", (const char *const *)&j.r[0].f[J_CELL0], &sig);
    assert_ptr_equal(journal_find(&j, "Add", sig.p), &j.r[0]);
    opdb_sb_free(&sig);
    journal_close(&j);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insane_records_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
