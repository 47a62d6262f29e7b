/* `opdb bench`: flags -> backend + opdb_bench_run. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_opts.h"
#include "cli/cli_process.h"
#include "cli/cli_summary.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/bench.h"
#include "opdb/comm.h"
#include "opdb/db.h"
#include "opdb/signature.h"

/* The grid's own stop rule when none is given: it keeps the whole default
 * grid under two minutes on a 2-core machine (docs/REPLAY.md). */
#define GRID_MIN_TIME_S 0.1
#define GRID_TIMEOUT_S 2.0
#define GRID_ROUNDS 3

static bool parse_pos_double(const char *s, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !(v >= 0)) return false;
    *out = v;
    return true;
}

/* "N", "NK", "NM", "NG", "NT" (powers of 1024), positive and not overflowing. */
static bool parse_size(const char *s, size_t *out) {
    if (!s) return false;
    size_t n = strlen(s), shift = 0;
    char num[32];
    if (n == 0 || n >= sizeof num) return false;
    const char *units = "KMGT", *u = strchr(units, s[n - 1]);
    if (u && s[n - 1]) {
        shift = 10 * (size_t)(u - units + 1);
        n--;
    }
    memcpy(num, s, n);
    num[n] = '\0';
    unsigned long v;
    if (!cli_parse_uint(num, &v) || v == 0 || v > (SIZE_MAX >> shift)) return false;
    *out = (size_t)v << shift;
    return true;
}

typedef struct flags {
    const char *database, *device, *vllm, *torch, *cann, *mode, *repeat, *min_samples, *min_time, *timeout, *precision, *threads,
        *backend, *grid, *rounds, *cache_mib, *max_memory, *launch_batch, *pilot_memory;
    bool hot, fail_fast, resume, drop_failed, quirks, plan, strict, no_progress, json;
} flags;

/* Stop-rule flags into m (after defaults). */
static int measure_flags(const cli_spec *spec, const flags *f, opdb_measure_opts *m) {
    opdb_measure_opts_init(m);
    if (f->grid) {
        m->min_time_s = GRID_MIN_TIME_S;
        m->timeout_s = GRID_TIMEOUT_S;
    }
    m->hot_cache = f->hot;
    unsigned long u;
    if (f->min_samples) {
        if (!cli_parse_uint(f->min_samples, &u) || u == 0)
            return cli_usage_error(spec, "argument --min-samples: expected a positive integer, got '%s'", f->min_samples);
        m->min_samples = (long)u;
    }
    if (f->min_time && !parse_pos_double(f->min_time, &m->min_time_s))
        return cli_usage_error(spec, "argument --min-time: expected seconds >= 0, got '%s'", f->min_time);
    if (f->timeout && !parse_pos_double(f->timeout, &m->timeout_s))
        return cli_usage_error(spec, "argument --timeout: expected seconds >= 0, got '%s'", f->timeout);
    if (f->precision && (!parse_pos_double(f->precision, &m->target_precision_pct) || m->target_precision_pct <= 0))
        return cli_usage_error(spec, "argument --target-precision: expected a percentage > 0, got '%s'", f->precision);
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_repeat_count_resolve(f->repeat, &m->repeat_count, &err)) return cli_usage_error(spec, "%s", err.msg);
    return CLI_OK;
}

/* Backend name from --backend / --device cpu|cuda. */
static int backend_name(const cli_spec *spec, const flags *f, const char **name) {
    bool dev_backend = f->device && (strcmp(f->device, "cpu") == 0 || strcmp(f->device, "cuda") == 0);
    *name = f->backend ? f->backend : dev_backend ? f->device : "cpu";
    if (strcmp(*name, "cpu") && strcmp(*name, "cuda"))
        return cli_usage_error(spec, "argument --backend: invalid choice: '%s' (choose from 'cpu', 'cuda')", *name);
    if (dev_backend && strcmp(*name, f->device))
        return cli_usage_error(spec, "--device %s conflicts with --backend %s", f->device, *name);
    if (f->device && !dev_backend) return cli_check_db_flags(spec, f->device, f->vllm, f->torch, f->cann);
    return cli_check_db_flags(spec, NULL, f->vllm, f->torch, f->cann);
}

/* The database folder: --database-path, the reference's device layout, or
 * this machine's own folder (--device cpu|cuda, or --grid without a device). */
static char *database_dir(const flags *f, const opdb_backend *b, opdb_err *err) {
    bool own = (f->device && (!strcmp(f->device, "cpu") || !strcmp(f->device, "cuda"))) || (!f->device && f->grid);
    if (!f->database && own) return opdb_bench_default_dir(b, NULL);
    opdb_db_target t = {f->database, f->device ? f->device : OPDB_DEFAULT_DEVICE, f->vllm, f->torch, f->cann, NULL};
    return opdb_db_resolve(&t, err);
}

/* Set by the MPI helper for the `opdb bench` it runs on each rank: "<rank>/<count>" (a rank's share) or
 * "merge/<count>" (rank 0's write-back); OPDB_BENCH_SHARD_PATH is the share's journal or the merge folder. */
#define SHARD_ENV "OPDB_BENCH_SHARD"
#define SHARD_PATH_ENV "OPDB_BENCH_SHARD_PATH"

static void shard_of_env(opdb_bench_opts *o) {
    const char *v = getenv(SHARD_ENV), *path = getenv(SHARD_PATH_ENV);
    int count = 0, rank = 0;
    if (!v || !path) return;
    if (strncmp(v, "merge/", 6) == 0) {
        rank = OPDB_BENCH_SHARD_MERGE;
        count = atoi(v + 6);
    } else if (sscanf(v, "%d/%d", &rank, &count) != 2 || rank < 0 || rank >= count) {
        return;
    }
    o->shard_rank = rank;
    o->shard_count = count;
    o->shard_path = path;
}

/* Under mpirun (N > 1 ranks) every rank becomes the opdb-comm helper, which
 * shards the rows over the ranks and runs `opdb bench` for each share and
 * for the write-back, so that opdb itself never maps MPI. Returns only when
 * that cannot happen (the exit code), or -1 when not under mpirun. */
static int hand_to_mpi_helper(const flags *f, int argc, char **argv) {
    int rank, size;
    if (getenv(SHARD_ENV) || opdb_mpi_launch(&rank, &size) <= 1) return -1;
    if (f->plan) return rank == 0 ? -1 : 0; /* one plan, printed by rank 0 */
    char helper[PATH_MAX + 16], self[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (cmd_comm_helper(helper, sizeof helper) || k <= 0) {
        fprintf(stderr, "opdb bench: running under mpirun (%d ranks) needs the opdb-comm MPI helper, which is not "
                        "available in this build (no MPI was found when opdb was configured)\n", size);
        return 1;
    }
    self[k] = '\0';
    char **args = opdb_xcalloc((size_t)argc + 4, sizeof *args);
    args[0] = helper;
    args[1] = "--bench-ranks";
    args[2] = self;
    for (int i = 0; i < argc; i++) args[3 + i] = argv[i];
    fflush(NULL);
    execv(helper, args);
    fprintf(stderr, "opdb bench: cannot run %s\n", helper);
    free(args);
    return 1;
}

static int run(const flags *f, const opdb_measure_opts *m, char **ops, size_t nops, const char *bname) {
    opdb_err err;
    opdb_err_clear(&err);
    unsigned long threads = 0;
    if (f->threads) cli_parse_uint(f->threads, &threads);
    unsigned long cache_mib = 0;
    if (f->cache_mib) cli_parse_uint(f->cache_mib, &cache_mib);
    unsigned long batch = 0;
    if (f->launch_batch) cli_parse_uint(f->launch_batch, &batch);
    opdb_backend_opts bo;
    opdb_backend_opts_init(&bo);
    bo.threads = (int)threads;
    bo.hot_cache = f->hot;
    bo.cache_bytes = (size_t)cache_mib << 20;
    bo.launch_batch = (int)batch;
    bo.estimate_only = f->plan;
    const char *shard = getenv(SHARD_ENV);
    /* the merge measures nothing: no eviction buffer (twice the last-level cache, touched page by page);
     * --plan pilots with a smaller one (estimate_only) */
    if (shard && strncmp(shard, "merge/", 6) == 0) bo.hot_cache = true;
    opdb_backend *b = opdb_backend_create(bname, &bo, &err);
    if (!b) {
        fprintf(stderr, "opdb bench: %s\n", err.msg);
        return 1;
    }
    char *dir = database_dir(f, b, &err);
    int rc = 1;
    if (!dir) {
        fprintf(stderr, "opdb bench: %s\n", err.msg);
    } else {
        /* --json: stdout holds the JSON object alone; the status lines and report go to stderr */
        opdb_bench_totals totals;
        opdb_bench_opts o;
        opdb_bench_opts_init(&o);
        o.log = cli_log();
        o.modes = cli_modes();
        o.db_dir = dir;
        o.ops = (const char *const *)ops;
        o.nops = nops;
        o.missing_only = f->mode && strcmp(f->mode, "missing-only") == 0;
        o.measure = *m;
        o.fail_fast = f->fail_fast;
        o.resume = f->resume;
        o.drop_failed = f->drop_failed;
        o.quirks = f->quirks;
        o.grid = f->grid;
        const char *grid_limit = getenv("OPDB_BENCH_GRID_LIMIT"); /* tests: a few rows per operator */
        if (grid_limit && *grid_limit) o.grid_limit = strtol(grid_limit, NULL, 10);
        o.out = f->json ? stderr : stdout;
        o.rounds = 1;
        o.plan_only = f->plan;
        o.strict = f->strict;
        o.no_progress = f->no_progress;
        o.json = f->json ? stdout : NULL;
        o.totals = &totals;
        o.timestamp = getenv("OPDB_REPORT_TIMESTAMP");
        o.err_out = stderr;
        memset(&totals, 0, sizeof totals);
        parse_size(f->max_memory, &o.max_memory);
        parse_size(f->pilot_memory, &o.plan_pilot_memory);
        /* ranks on one node (set by the MPI helper) each take their share of the default budget */
        const char *node_ranks = getenv("OPDB_BENCH_NODE_RANKS");
        int share = node_ranks ? atoi(node_ranks) : 1;
        if (!o.max_memory && share > 1) {
            size_t all = opdb_bench_memory_budget(&o);
            o.max_memory = all == SIZE_MAX ? 0 : all / (size_t)share;
        }
        shard_of_env(&o);
        unsigned long rounds;
        if (f->rounds && cli_parse_uint(f->rounds, &rounds)) o.rounds = (int)rounds;
        else if (f->grid) o.rounds = GRID_ROUNDS;
        cli_tune_heap_for_tables(); /* its rows are written back by update */
        rc = opdb_bench_run(&o, b, &err);
        fflush(stdout);
        if (rc < 0) fprintf(stderr, "opdb bench: %s\n", err.msg);
        rc = rc < 0 ? (err.code ? err.code : 1) : rc;
        char a[32];
        /* 1 without an error: some row failed, the rest written; a rank's share says nothing (the merge does) */
        bool ran = (rc == 0 || (rc == 1 && !err.msg[0])) && !(shard && strncmp(shard, "merge/", 6));
        if (ran && f->plan)
            cli_summary("opdb bench", "planned %s row%s of %zu operator%s: about %.1f s (at most %.0f s); nothing run",
                        cli_count(a, sizeof a, (unsigned long long)totals.planned), cli_plural((unsigned long long)totals.planned),
                        totals.operators, cli_plural(totals.operators), totals.plan_low_s, totals.plan_high_s);
        else if (ran)
            cli_summary("opdb bench", "measured %s row%s of %zu operator%s under %s (%ld failed, %ld skipped, %ld not converged)",
                        cli_count(a, sizeof a, (unsigned long long)totals.measured),
                        cli_plural((unsigned long long)totals.measured), totals.operators, cli_plural(totals.operators),
                        dir, totals.failed, totals.skipped, totals.unconverged);
    }
    free(dir);
    b->destroy(b);
    return rc;
}

int cmd_bench(int argc, char **argv) {
    flags f;
    memset(&f, 0, sizeof f);
    const char *ops_flag = NULL;
    cli_opt opts[] = {
        {"--database-path", "D", "database folder (created by --grid)", false, &f.database, NULL},
        {"--device", "DEVICE", "cpu or cuda (this machine's own database), or a reference device folder", false, &f.device, NULL},
        {"--vllm-version", "V", "vLLM-Ascend version or full version-folder name", false, &f.vllm, NULL},
        {"--torch-version", "V", "PyTorch version", false, &f.torch, NULL},
        {"--cann-version", "V", "CANN version", false, &f.cann, NULL},
        {"--ops", "OP [OP ...]", "operators to benchmark (alias --op; default: every catalogue CSV)", false, &ops_flag, NULL},
        {"--update-mode", "MODE", "all (default): measure every row; missing-only: rows without a valid duration", false, &f.mode, NULL},
        {"--repeat-count", "N", "exactly N samples per row (else $OPDB_REPLAY_REPEAT_COUNT, $MSMODELING_OP_REPLAY_REPEAT_COUNT, or the stop rule)", false, &f.repeat, NULL},
        {"--min-samples", "N", "stop rule: at least N samples (default 10)", false, &f.min_samples, NULL},
        {"--min-time", "S", "stop rule: at least S seconds of samples (default 0.5; --grid: 0.1)", false, &f.min_time, NULL},
        {"--target-precision", "PCT", "stop rule: the 95% confidence interval of the median within +-PCT% of it (default 1)", false, &f.precision, NULL},
        {"--timeout", "S", "stop rule: give up after S seconds (default 15; --grid: 2)", false, &f.timeout, NULL},
        {"--rounds", "N", "interleaved passes over the rows, each with 1/N of --min-time and --timeout; statistics over all samples (default 1; --grid: 3)", false, &f.rounds, NULL},
        {"--hot-cache", NULL, "do not evict the last-level cache between samples", false, NULL, &f.hot},
        {"--cache-mib", "N", "last-level cache size to evict, in MiB (default: the size the CPU reports; set it where a VM reports the whole host's cache)", false, &f.cache_mib, NULL},
        {"--threads", "N", "CPU threads, pinned to distinct CPUs (default: all online CPUs; 1 is more repeatable on a shared machine)", false, &f.threads, NULL},
        {"--backend", "NAME", "cpu (default) or cuda", false, &f.backend, NULL},
        {"--launch-batch", "N", "cuda: launches timed together per sample (default: enough for about 100 us, at most 128; 1: one launch per sample)", false, &f.launch_batch, NULL},
        {"--grid", "NAME", "benchmark the built-in grid 'default' (LLM shapes) into a new or existing database", false, &f.grid, NULL},
        {"--fail-fast", NULL, "stop at the first row that fails (default: continue)", false, NULL, &f.fail_fast},
        {"--resume", NULL, "continue an interrupted run from its journal", false, NULL, &f.resume},
        {"--drop-failed", NULL, "delete rows that fail to replay (default: keep them, report the error)", false, NULL, &f.drop_failed},
        {"--reference-quirks", NULL, "write back like the reference: no extra columns, failed rows deleted", false, NULL, &f.quirks},
        {"--plan", NULL, "list the rows that would run (dtype, shapes, GEMM size) and the estimated time from a short pilot of each row; write nothing", false, NULL, &f.plan},
        {"--plan-pilot-memory", "BYTES", "with --plan: a row whose buffers need more is estimated by a model instead of piloted, and listed as such (suffix K, M, G or T; default 256M)", false, &f.pilot_memory, NULL},
        {"--max-memory", "BYTES", "refuse a row whose buffers need more (suffix K, M, G or T: powers of 1024; default: 3/4 of the memory available at start)", false, &f.max_memory, NULL},
        {"--no-progress", NULL, "never draw the progress line (drawn only when stderr is a terminal)", false, NULL, &f.no_progress},
        {"--strict", NULL, "exit 1 when nothing was measured or a row never met the stop rule", false, NULL, &f.strict},
        {"--json", NULL, "print the run's (or --plan's) summary and its write-back report as one JSON object on stdout; the status lines then go to stderr, the Markdown report only to its file (keys in docs/GUIDE.md)", false, NULL, &f.json},
    };
    cli_spec spec = {
        "opdb bench",
        "Replay a database's operator rows on this machine (CPU, or a CUDA GPU), measure them and write the\n"
        "durations back (Average Duration(us) = the minimum sample, plus MicroBench statistics columns).",
        "Measurement: a time-budgeted warm-up, then samples until >= --min-samples AND >= --min-time AND\n"
        "the distribution-free 95% confidence interval of the median (order statistics) is within\n"
        "--target-precision, or --timeout; the last-level cache is evicted before every sample unless\n"
        "--hot-cache. The interval is written as MicroBench CI Low/High(us).\n"
        "With --rounds N every row is measured in N passes over the selection, each with 1/N of the\n"
        "budget, and its statistics are taken over the samples of all passes (a slow spell of a shared\n"
        "machine then spoils one pass of a row, not its result); a fixed --repeat-count makes one pass.\n"
        "On the CPU, bf16 and fp16 tensors are stored as such and computed in fp32 (the conversion is part\n"
        "of the timed operator); GEMMs run through OpenBLAS. Operators without a CPU meaning are skipped\n"
        "with the reason. An operator is skipped after 5 consecutive failed rows (circuit breaker).\n"
        "Rows are journaled in <database>/.opdb_bench/ as they finish; --resume continues a killed run.\n"
        "Without --database-path, --device cpu uses <data root>/<CPU model>/opdb_cpu/<stack>/ (data root\n"
        "$OPDB_DATA_ROOT or ./data).\n"
        "Under mpirun -np N (N > 1) the rows are shared out over the ranks (row i to rank i % N), each rank\n"
        "pinned to its own slice of the node's CPUs (CUDA: CUDA_VISIBLE_DEVICES = its node rank, unless set);\n"
        "rank 0 writes every result back once, as one run would. A rank that dies is reported and its rows\n"
        "keep their old values (exit 1). $OPDB_BENCH_WORKER: a wrapper each rank runs instead of opdb.",
        opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb bench --database-path db --ops MatMulV2 --update-mode missing-only\nopdb bench --database-path db --plan";
    spec.exits = "0 ok, 1 some row failed or a runtime error, 2 usage error";
    const char **ops = NULL;
    size_t nops = 0;
    char **rest = opdb_xmalloc(((size_t)argc + 1) * sizeof *rest);
    int nrest = 0, rc = 0;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc && rc == 0; i++) {
        if (strcmp(argv[i], "--ops") == 0 || strcmp(argv[i], "--op") == 0) {
            if (cli_take_list(&i, argc, argv, &ops, &nops) == 0)
                rc = cli_usage_error(&spec, "argument %s: expected at least one argument", argv[i]);
            continue;
        }
        rest[nrest++] = argv[i];
    }
    bool help = false;
    if (rc == 0) {
        rc = cli_parse(&spec, nrest, rest);
        help = rc == CLI_HELP;
        if (help) rc = -1;
    }
    opdb_measure_opts m;
    char **norm = NULL;
    const char *bname = "cpu";
    unsigned long threads;
    if (rc == 0 && f.mode && strcmp(f.mode, "all") && strcmp(f.mode, "missing-only"))
        rc = cli_usage_error(&spec, "argument --update-mode: invalid choice: '%s' (choose from 'all', 'missing-only')", f.mode);
    if (rc == 0 && f.grid && strcmp(f.grid, "default"))
        rc = cli_usage_error(&spec, "argument --grid: invalid choice: '%s' (choose from 'default')", f.grid);
    if (rc == 0 && f.threads && !cli_parse_uint(f.threads, &threads))
        rc = cli_usage_error(&spec, "argument --threads: invalid int value: '%s'", f.threads);
    unsigned long launch_batch;
    if (rc == 0 && f.launch_batch && (!cli_parse_uint(f.launch_batch, &launch_batch) || launch_batch == 0 ||
                                      launch_batch > OPDB_LAUNCH_BATCH_MAX))
        rc = cli_usage_error(&spec, "argument --launch-batch: expected 1 to %d, got '%s'", OPDB_LAUNCH_BATCH_MAX, f.launch_batch);
    unsigned long cache_mib;
    if (rc == 0 && f.cache_mib && (!cli_parse_uint(f.cache_mib, &cache_mib) || cache_mib == 0 || cache_mib > (1ul << 20)))
        rc = cli_usage_error(&spec, "argument --cache-mib: expected MiB from 1 to 1048576, got '%s'", f.cache_mib);
    unsigned long rounds;
    if (rc == 0 && f.rounds && (!cli_parse_uint(f.rounds, &rounds) || rounds == 0 || rounds > 100))
        rc = cli_usage_error(&spec, "argument --rounds: expected an integer from 1 to 100, got '%s'", f.rounds);
    size_t max_memory;
    if (rc == 0 && f.max_memory && !parse_size(f.max_memory, &max_memory))
        rc = cli_usage_error(&spec, "argument --max-memory: expected a positive number of bytes (suffix K, M, G or T), got '%s'",
                             f.max_memory);
    if (rc == 0 && f.pilot_memory && !parse_size(f.pilot_memory, &max_memory))
        rc = cli_usage_error(&spec, "argument --plan-pilot-memory: expected a positive number of bytes (suffix K, M, G or T), got '%s'",
                             f.pilot_memory);
    if (rc == 0 && f.pilot_memory && !f.plan) rc = cli_usage_error(&spec, "--plan-pilot-memory needs --plan");
    if (rc == 0) rc = measure_flags(&spec, &f, &m);
    if (rc == 0) rc = backend_name(&spec, &f, &bname);
    if (rc == 0 && nops) rc = cli_normalize_ops("opdb bench", f.quirks, ops, nops, &norm);
    if (rc == 0) {
        int mrc = hand_to_mpi_helper(&f, argc, argv);
        rc = mrc >= 0 ? mrc : run(&f, &m, norm, nops, bname);
    }
    cli_free_ops(norm, nops);
    free(ops);
    free(rest);
    return help ? 0 : rc;
}
