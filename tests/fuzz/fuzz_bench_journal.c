/* libFuzzer target: opdb bench's journal (src/replay/bench_journal.c), as
 * `--resume` reads the journal of a killed run and as the merge of an MPI
 * run (`mpirun ... opdb bench`) reads a rank's shard journal and writes its
 * records back into the database.  Never crashes or leaks; every record
 * loaded is found again by its row identity; a failure has its one line;
 * an accepted merge writes no non-finite number into the table. */
#include "fuzz_tmp.h"
#include "opdb/bench.h"
#include "opdb/csv.h"
#include "replay/bench_journal.h"

static char g_root[128], g_db[160], g_shards[160], g_resume[160], g_table[200];
static opdb_backend *g_cpu;

static const char k_table[] =
    "OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
    "Output Formats\r\n"
    "dynamic,AI_VECTOR_CORE,\"\"\"8,128;8,128\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"8,128\"\"\",DT_BF16,ND\r\n"
    "dynamic,AI_VECTOR_CORE,\"\"\"4,64;4,64\"\"\",DT_FLOAT;DT_FLOAT,ND;ND,\"\"\"4,64\"\"\",DT_FLOAT,ND\r\n"
    "dynamic,AI_VECTOR_CORE,\"\"\"2,16;2,16\"\"\",DT_FLOAT16;DT_FLOAT16,ND;ND,\"\"\"2,16\"\"\",DT_FLOAT16,ND\r\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(g_root, sizeof g_root, "%s", fuzz_root_make("bench_journal"));
    snprintf(g_db, sizeof g_db, "%s/db", g_root);
    snprintf(g_shards, sizeof g_shards, "%s/shards", g_root);
    snprintf(g_resume, sizeof g_resume, "%s/journal.csv", g_root);
    snprintf(g_table, sizeof g_table, "%s/Add.csv", g_db);
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

/* No cell of the written table reads as a non-finite number. */
static void check_finite(void) {
    opdb_csv_file c;
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_csv_file_open(&c, g_table, 4096, &err)) abort();
    while (opdb_csv_file_next(&c, false) > 0)
        for (int i = 0; i < c.nf; i++) {
            char b[64];
            if (!c.f[i].n || c.f[i].n >= sizeof b) continue;
            memcpy(b, c.f[i].p, c.f[i].n);
            b[c.f[i].n] = '\0';
            char *e;
            double d = strtod(b, &e);
            if (!*e && e != b && !(d - d == 0)) {
                fprintf(stderr, "merge wrote '%s' into %s\n", b, g_table);
                abort();
            }
        }
    opdb_csv_file_close(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* --resume: the journal of a killed run */
    fuzz_write_file(g_resume, data, size);
    bench_journal j;
    opdb_err err;
    opdb_err_clear(&err);
    if (journal_open(&j, g_resume, true, &err) == 0) {
        opdb_strbuf sig;
        opdb_sb_init(&sig);
        for (size_t i = 0; i < j.n; i++) {
            opdb_sb_clear(&sig);
            journal_sig(j.r[i].f[J_CSV], (const char *const *)&j.r[i].f[J_CELL0], &sig);
            if (!journal_find(&j, j.r[i].f[J_CSV], sig.p ? sig.p : "")) abort();
        }
        opdb_sb_free(&sig);
    } else if (!err.msg[0] || strchr(err.msg, '\n')) {
        abort();
    }
    journal_close(&j);
    /* the merge of two ranks: rank 0's journal is the input, rank 1 reported nothing */
    fuzz_rm_rf(g_db);
    fuzz_rm_rf(g_shards);
    if (mkdir(g_db, 0700) || mkdir(g_shards, 0700)) abort();
    fuzz_write_file(g_table, k_table, sizeof k_table - 1);
    char shard[256];
    snprintf(shard, sizeof shard, "%s/" OPDB_BENCH_SHARD_FILE, g_shards, 0);
    fuzz_write_file(shard, data, size);
    FILE *out = fopen("/dev/null", "w");
    if (!out) abort();
    opdb_bench_opts o;
    opdb_bench_opts_init(&o);
    o.db_dir = g_db;
    opdb_measure_opts_init(&o.measure);
    o.out = out;
    o.no_progress = true;
    o.shard_rank = OPDB_BENCH_SHARD_MERGE;
    o.shard_count = 2;
    o.shard_path = g_shards;
    o.max_memory = (size_t)64 << 20;
    opdb_err_clear(&err);
    int rc = opdb_bench_run(&o, g_cpu, &err);
    fclose(out);
    if (rc < 0 && (!err.msg[0] || strchr(err.msg, '\n'))) abort();
    if (rc >= 0) check_finite();
    return 0;
}
