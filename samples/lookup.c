/* lookup: how long does a kernel take? Opens an opdb database folder with the
 * public query API and looks one kernel shape up.
 *
 *   cc lookup.c $(pkg-config --cflags --libs opdb) -o lookup
 *   ./lookup DB KERNEL INPUT_SHAPES INPUT_DTYPES
 *   ./lookup examples/query/db MatMulV2 '2,256;3584,256' 'FLOAT16;FLOAT16'
 *
 * Shapes and dtypes are written as in the database's cells: one slot per
 * input, separated by ';'. Prints the latency and how the row matched, or why
 * nothing did; exits 0 on a hit, 1 on a miss or an error, 2 on bad arguments. */
#include <stdio.h>

#include <opdb/query.h>

/* Library warnings (a missing op_mapping.yaml, a row that cannot be read). */
static void warn(void *ctx, const char *line) {
    (void)ctx;
    fprintf(stderr, "lookup: warning: %s\n", line);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: lookup DB KERNEL INPUT_SHAPES INPUT_DTYPES\n");
        return 2;
    }
    opdb_qdb_opts opts;
    opdb_qdb_opts_init(&opts);
    opts.warn = warn;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_qdb *db = opdb_qdb_open(argv[1], &opts, &err);
    if (!db) {
        fprintf(stderr, "lookup: %s\n", err.msg);
        return 1;
    }

    opdb_kcells q = {.kernel = argv[2], .inputs = argv[3], .dtypes = argv[4], .interpolate = -1};
    opdb_qresult r;
    int rc = opdb_query_kernel_cells(db, &q, false, &r, &err);
    if (rc != 0) {
        fprintf(stderr, "lookup: %s\n", err.msg);
        opdb_qdb_close(db);
        return 2;
    }
    int status = 0;
    if (r.hit) {
        printf("%s %s: %.3f us (%s, %s)\n", argv[2], argv[3], r.latency_us, opdb_qsource_name(r.source),
               r.shape_match_rule ? r.shape_match_rule : "-");
    } else {
        printf("%s %s: no latency (%s)\n", argv[2], argv[3], r.error ? r.error : r.miss_reason);
        status = 1;
    }
    opdb_qresult_free(&r);
    opdb_qdb_close(db);
    return status;
}
