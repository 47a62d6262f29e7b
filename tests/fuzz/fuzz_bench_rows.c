/* libFuzzer target: `opdb bench`'s reader of a database table and of each
 * row's shapes, types and formats (the first byte picks the operator, so
 * that its shape rules are reached), through the real run with --plan:
 * every row is read, checked and sized against the memory budget, nothing
 * is measured or written.  Never crashes, leaks or allocates a row's
 * buffers; a failure has its one line; the table is left as it was. */
#include "fuzz_tmp.h"
#include "opdb/bench.h"
#include "opdb/fs.h"

static char g_db[128];
static opdb_backend *g_cpu;

static const char *const k_tables[] = {"Add.csv", "MatMulV2.csv", "RmsNorm.csv", "GatherV2.csv", "SoftmaxV2.csv",
                                       "FusedInferAttentionScore.csv", "GroupedMatmul.csv", "PadV3.csv"};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(g_db, sizeof g_db, "%s/db", fuzz_root_make("bench_rows"));
    opdb_backend_opts bo;
    opdb_backend_opts_init(&bo);
    bo.threads = 1;
    bo.hot_cache = true;
    bo.cache_bytes = 1 << 20;
    opdb_err err;
    opdb_err_clear(&err);
    if (!(g_cpu = opdb_backend_cpu_create(&bo, &err))) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    fuzz_rm_rf(g_db);
    if (mkdir(g_db, 0700) != 0) abort();
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_db, k_tables[data[0] % 8]);
    fuzz_write_file(path, data + 1, size - 1);
    FILE *out = fopen("/dev/null", "w");
    if (!out) abort();
    opdb_bench_opts o;
    opdb_bench_opts_init(&o);
    o.db_dir = g_db;
    opdb_measure_opts_init(&o.measure);
    o.plan_only = true;
    o.out = out;
    o.no_progress = true;
    o.quirks = (data[0] >> 3) & 1;
    o.missing_only = (data[0] >> 4) & 1;
    o.max_memory = (size_t)64 << 20; /* a row needing more is refused with its size */
    opdb_err err;
    opdb_err_clear(&err);
    int rc = opdb_bench_run(&o, g_cpu, &err);
    fclose(out);
    if (rc < 0 && (!err.msg[0] || strchr(err.msg, '\n'))) abort();
    /* --plan reads only */
    opdb_strbuf now;
    opdb_sb_init(&now);
    if (opdb_read_file(path, &now, &err) || now.n != size - 1 || (now.n && memcmp(now.p, data + 1, now.n))) abort();
    opdb_sb_free(&now);
    return 0;
}
