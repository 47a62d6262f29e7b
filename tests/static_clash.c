/* static_clash: a program with its own global cell(), load_csv() and gfind() (names the
 * library uses for hidden helpers of its own), linked statically against the installed
 * libopdb.a. It must link (no duplicate symbol), call its own functions, and still get a
 * lookup right through the library, whose helpers are its own.
 *   static_clash DB    (DB: examples/query/db) */
#include <stdio.h>
#include <string.h>

#include <opdb/query.h>
#include <opdb/version.h>

int cell(int x);
const char *load_csv(const char *path);
int gfind(void);

int cell(int x) { return x * 3; }
const char *load_csv(const char *path) { return path; }
int gfind(void) { return 7; }

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: static_clash DB\n");
        return 2;
    }
    if (cell(2) != 6 || strcmp(load_csv("x"), "x") != 0 || gfind() != 7) {
        fprintf(stderr, "static_clash: the program's own functions were not called\n");
        return 1;
    }
    opdb_qdb_opts opts;
    opdb_qdb_opts_init(&opts);
    opdb_err err;
    opdb_err_clear(&err);
    opdb_qdb *db = opdb_qdb_open(argv[1], &opts, &err);
    if (!db) {
        fprintf(stderr, "static_clash: %s\n", err.msg);
        return 1;
    }
    opdb_kcells q = {.kernel = "MatMulV2", .inputs = "2,256;3584,256", .dtypes = "FLOAT16;FLOAT16", .interpolate = -1};
    opdb_qresult r;
    int rc = opdb_query_kernel_cells(db, &q, false, &r, &err);
    if (rc == 0 && r.hit) printf("opdb %s: MatMulV2 %.3f us\n", opdb_version(), r.latency_us);
    else fprintf(stderr, "static_clash: no hit (%s)\n", rc ? err.msg : r.miss_reason);
    int status = rc == 0 && r.hit ? 0 : 1;
    if (rc == 0) opdb_qresult_free(&r);
    opdb_qdb_close(db);
    return status;
}
