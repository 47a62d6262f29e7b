/* `opdb query`: JSONL queries on stdin -> result lines on stdout, or one
 * kernel-level query from flags. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_opts.h"
#include "cli/cli_summary.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/grid.h"
#include "opdb/progress.h"
#include "opdb/query.h"

static int parse_pos(const char *s, int *out) {
    unsigned long v;
    if (!cli_parse_uint(s, &v) || v < 1 || v > 1000000000UL) return -1;
    *out = (int)v;
    return 0;
}

static int parse_grid(const char *s, int **dims, size_t *n) {
    size_t cnt = 1;
    for (const char *p = s; *p; p++) cnt += *p == ',';
    *dims = calloc(cnt, sizeof **dims);
    *n = 0;
    const char *p = s;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char buf[24];
        if (len == 0 || len >= sizeof buf) return -1;
        memcpy(buf, p, len);
        buf[len] = 0;
        if (parse_pos(buf, &(*dims)[(*n)++])) return -1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

typedef struct emit_ctx {
    FILE *out;
    bool flush;
    bool failed;
    opdb_grid_misses *collect; /* --collect: every result line is offered to it */
    unsigned long long n;
    opdb_err err;
} emit_ctx;

static int emit_line(emit_ctx *e, const opdb_qresult *r) {
    const char *line;
    size_t n;
    if (opdb_qresult_line(r, &line, &n)) return -1;
    bool ok = fwrite(line, 1, n, e->out) == n && fputc('\n', e->out) != EOF;
    if (ok && e->collect && opdb_grid_misses_add(e->collect, line, n, "results", ++e->n, &e->err)) e->failed = true;
    if (ok && e->flush) ok = fflush(e->out) == 0;
    if (!ok) e->failed = true;
    return ok ? 0 : -1;
}

/* The batch's stdin, read a block at a time without stdio (one reader at a
 * time: the stream hands the reading turn over under its lock). When stdin is
 * a regular file its size is known: a progress line on a terminal (how far
 * through the queries, rate, ETA), unless the results go to that terminal. */
typedef struct stdin_ctx {
    int read_errno;
    uint64_t done;
    opdb_progress progress;
} stdin_ctx;

static void stdin_progress_begin(stdin_ctx *in) {
    struct stat st;
    bool sized = fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    opdb_progress_init(&in->progress, !sized || isatty(STDOUT_FILENO));
    if (sized) opdb_progress_stage_bytes(&in->progress, "query", (uint64_t)st.st_size);
}

static ptrdiff_t read_stdin(void *ctx, char *buf, size_t cap) {
    stdin_ctx *in = ctx;
    for (;;) {
        ssize_t r = read(STDIN_FILENO, buf, cap);
        if (r >= 0 || errno != EINTR) {
            if (r < 0) in->read_errno = errno;
            if (r > 0) opdb_progress_update(&in->progress, in->done += (uint64_t)r, NULL);
            return r;
        }
    }
}

/* The batch's stdout, a block of result lines at a time without stdio. */
static int write_stdout(void *ctx, const char *text, size_t n) {
    emit_ctx *e = ctx;
    for (size_t at = 0; at < n;) {
        ssize_t w = write(STDOUT_FILENO, text + at, n - at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            e->failed = true;
            return 1;
        }
        at += (size_t)w;
    }
    /* --collect: every result line, as the serial loop offered them */
    for (const char *p = text, *end = text + n; e->collect && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (opdb_grid_misses_add(e->collect, p, (size_t)(nl - p), "results", ++e->n, &e->err)) e->failed = true;
        p = nl + 1;
    }
    return 0;
}

/* The CPUs this process may run on, at most 8 (more rarely pays: the batch's
 * reading and writing stay on one thread). */
static unsigned default_threads(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}

static void count(opdb_qstats *s, const opdb_qresult *r) {
    s->queries++;
    switch (r->source) {
    case OPDB_SRC_MEASURED: s->measured++; break;
    case OPDB_SRC_INTERPOLATED: s->interpolated++; break;
    case OPDB_SRC_PARTIAL: s->partial++; break;
    case OPDB_SRC_ERROR: s->error++; break;
    default:
        s->miss++;
        if (r->miss_reason && strncmp(r->miss_reason, "unsupported:", 12) == 0) s->unsupported++;
    }
}

int cmd_query(int argc, char **argv) {
    const char *database = NULL, *tp = NULL, *ep = NULL, *grid = NULL;
    const char *kernel = NULL, *inputs = NULL, *dtypes = NULL, *formats = NULL, *outputs = NULL, *odtypes = NULL,
               *match = NULL, *param_unused = NULL, *collect = NULL, *threads_arg = NULL, *cache_arg = NULL,
               *memo_arg = NULL;
    bool sp = false, no_interp = false, quirks = false, explain = false, stats = false, plan = false, strict = false;
    char memo_help[256];
    snprintf(memo_help, sizeof memo_help,
             "keep up to BYTES of result lines for query lines that repeat an earlier one but for their id, answered "
             "again without being looked up (default %zu; 0: off; never with --explain)",
             (size_t)OPDB_LINE_MEMO_DEFAULT);
    cli_opt opts[] = {
        {"--database-path", "DIR", "the database version folder (CSV files and op_mapping.yaml)", false, &database, NULL, "--db"},
        {"--tp-size", "N", "tensor-parallel size (TP projection, MC2 groups)", false, &tp, NULL},
        {"--ep-size", "N", "expert-parallel size (moe_fused matching)", false, &ep, NULL},
        {"--grid", "A,B,C", "device rank grid, one topology tier per dimension", false, &grid, NULL},
        {"--sequence-parallel", NULL, "sequence parallelism on", false, NULL, &sp},
        {"--no-interpolation", NULL, "exact lookups only (no interpolating wrapper)", false, NULL, &no_interp},
        {"--reference-quirks", NULL, "reproduce the reference consumer's answers, quirks included", false, NULL, &quirks},
        {"--explain", NULL, "add an \"explain\" object naming the CSV file and line of every row used", false, NULL,
         &explain},
        {"--stats", NULL, "after the batch, one line of counts on stderr", false, NULL, &stats},
        {"--strict", NULL, "exit 1 when nothing was answered with a latency (no query line, or every one a miss or an "
                           "error)", false, NULL, &strict},
        {"--threads", "N", "answer the batch on N threads (default: the CPUs this process may use, at most 8; "
                           "1: one thread); results stay in input order", false, &threads_arg, NULL},
        {"--result-cache", "N", "keep up to N whole answers for repeated queries (default 0: off; the exact-hit and "
                                "interpolation outcome maps already keep what repeated lookups need)", false, &cache_arg, NULL},
        {"--line-memo", "BYTES", memo_help, false, &memo_arg, NULL},
        {"--kernel", "KT", "one kernel-level query for this kernel type (no stdin)", false, &kernel, NULL},
        {"--inputs", "SHAPES", "with --kernel: input shapes in CSV cell notation, e.g. '24,128;256,128'", false, &inputs,
         NULL},
        {"--dtypes", "DTYPES", "with --kernel: input dtypes, e.g. 'DT_BF16;DT_BF16'", false, &dtypes, NULL},
        {"--formats", "FORMATS", "with --kernel: input formats (default ND each)", false, &formats, NULL},
        {"--outputs", "SHAPES", "with --kernel: output shapes", false, &outputs, NULL},
        {"--output-dtypes", "DTYPES", "with --kernel: output dtypes", false, &odtypes, NULL},
        {"--match", "MODE", "with --kernel: shape (default) or elementwise", false, &match, NULL},
        {"--param", "NAME=VALUE", "with --kernel, repeatable: an attention or communication field", false,
         &param_unused, NULL},
        {"--collect", "DIR", "after the batch, add a theory row for each kernel-level miss to the tables of the database "
                             "folder DIR (as opdb grid --from-misses; summary on stderr)", false, &collect, NULL},
        {"--plan", NULL, "with --collect: say on stderr what would be added; write nothing", false, NULL, &plan},
    };
    cli_spec spec = {"opdb query",
                     "Answer \"how long does this operator take?\" from a database: one JSON query per stdin line\n"
                     "(op level, as the performance model asks, or kernel level), one result line per query on stdout,\n"
                     "in input order. A bad line gives an error result and never stops the batch.",
                     "--kernel asks one kernel-level question from the flags instead of stdin.",
                     opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb query --database-path db < queries.jsonl > answers.jsonl\n"
                   "opdb query --database-path db --kernel MatMulV2 --inputs '24,128;256,128' --dtypes 'DT_BF16;DT_BF16'";
    spec.exits = "0 ok (a bad query line is answered with an error result), 1 the database cannot be opened or stdout "
                 "fails (--strict: also nothing answered with a latency), 2 usage error";
    /* --param repeats: take every occurrence out before the parser (which keeps the last) */
    char **av = calloc((size_t)argc + 1, sizeof *av);
    const char **params = calloc((size_t)argc + 1, sizeof *params);
    int ac = 0;
    size_t np = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && strcmp(argv[i], "--param") == 0 && i + 1 < argc) {
            params[np++] = argv[++i];
        } else if (i > 0 && strncmp(argv[i], "--param=", 8) == 0) {
            params[np++] = argv[i] + 8;
        } else {
            av[ac++] = argv[i];
        }
    }
    int rc = cli_parse(&spec, ac, av);
    int ret = 2;
    int *gd = NULL;
    size_t gn = 0;
    opdb_qdb *db = NULL;
    opdb_grid_misses *collected = NULL;
    if (rc == CLI_HELP) {
        ret = 0;
        goto out;
    }
    if (rc != CLI_OK) goto out;
    if (!database) {
        cli_usage_error(&spec, "the following arguments are required: --database-path (or --db)");
        goto out;
    }
    opdb_qdb_opts o;
    opdb_qdb_opts_init(&o);
    if (tp && parse_pos(tp, &o.tp_size)) {
        cli_usage_error(&spec, "argument --tp-size: expected an integer >= 1, got '%s'", tp);
        goto out;
    }
    if (ep && parse_pos(ep, &o.ep_size)) {
        cli_usage_error(&spec, "argument --ep-size: expected an integer >= 1, got '%s'", ep);
        goto out;
    }
    int nthreads = 0;
    if (threads_arg && (parse_pos(threads_arg, &nthreads) || nthreads > 1024)) {
        cli_usage_error(&spec, "argument --threads: expected an integer from 1 to 1024, got '%s'", threads_arg);
        goto out;
    }
    /* off by default: on a batch it only duplicates the handle's outcome maps, at their memory cost */
    o.result_cache = 0;
    unsigned long cache_n = 0;
    if (cache_arg && (!cli_parse_uint(cache_arg, &cache_n) || cache_n > 100000000UL)) {
        cli_usage_error(&spec, "argument --result-cache: expected an integer from 0 to 100000000, got '%s'", cache_arg);
        goto out;
    }
    if (cache_arg) o.result_cache = (size_t)cache_n;
    unsigned long memo_n = 0;
    if (memo_arg && (!cli_parse_uint(memo_arg, &memo_n) || memo_n > (1UL << 40))) {
        cli_usage_error(&spec, "argument --line-memo: expected a byte count from 0 to 1099511627776, got '%s'", memo_arg);
        goto out;
    }
    if (memo_arg) o.line_memo = (size_t)memo_n;
    if (grid && parse_grid(grid, &gd, &gn)) {
        cli_usage_error(&spec, "argument --grid: expected integers >= 1 separated by commas, got '%s'", grid);
        goto out;
    }
    if (!kernel && (inputs || dtypes || formats || outputs || odtypes || match || np)) {
        cli_usage_error(&spec, "--inputs, --dtypes, --formats, --outputs, --output-dtypes, --match and --param need --kernel");
        goto out;
    }
    if (kernel && (!inputs || !dtypes)) {
        cli_usage_error(&spec, "--kernel needs --inputs and --dtypes");
        goto out;
    }
    if (match && strcmp(match, "shape") != 0 && strcmp(match, "elementwise") != 0) {
        cli_usage_error(&spec, "argument --match: expected shape or elementwise, got '%s'", match);
        goto out;
    }
    if (plan && !collect) {
        cli_usage_error(&spec, "--plan needs --collect");
        goto out;
    }
    if (collect && quirks) {
        cli_usage_error(&spec, "--collect needs the default mode: --reference-quirks results carry no request");
        goto out;
    }
    o.grid = gd;
    o.grid_n = gn;
    o.sequence_parallel = sp;
    o.interpolation = !no_interp;
    o.reference_quirks = quirks;
    o.warn = cli_warn_line;
    opdb_err err;
    opdb_err_clear(&err);
    db = opdb_qdb_open(database, &o, &err);
    if (!db) {
        fprintf(stderr, "opdb: error: %s\n", err.msg);
        ret = 1;
        goto out;
    }
    opdb_qstats st;
    memset(&st, 0, sizeof st);
    struct stat sst;
    emit_ctx e = {stdout, !(fstat(STDOUT_FILENO, &sst) == 0 && S_ISREG(sst.st_mode)), false, NULL, 0, {0}};
    opdb_err_clear(&e.err);
    if (collect) e.collect = collected = opdb_grid_misses_new();
    if (kernel) {
        opdb_kcells kc = {kernel, inputs, dtypes, formats, outputs, odtypes, match, params, np, -1};
        opdb_qresult r;
        if (opdb_query_kernel_cells(db, &kc, explain, &r, &err)) {
            cli_usage_error(&spec, "%s", err.msg);
            goto out;
        }
        count(&st, &r);
        emit_line(&e, &r);
        opdb_qresult_free(&r);
    } else {
        /* forgot `< queries.jsonl`: say what the wait is for */
        if (isatty(STDIN_FILENO))
            fprintf(stderr, "opdb query: reading JSON query lines from the terminal (Ctrl-D ends them; --kernel asks one "
                            "kernel-level question from flags)\n");
        stdin_ctx in = {0};
        stdin_progress_begin(&in);
        opdb_qstats bs;
        int brc = opdb_query_stream(db, nthreads ? (unsigned)nthreads : default_threads(), explain, read_stdin, &in,
                                    write_stdout, &e, &bs);
        opdb_progress_clear(&in.progress);
        if (brc < 0 && brc != -OPDB_ERR_RUNTIME) {
            fprintf(stderr, "opdb: error: %s\n",
                    brc == -OPDB_ERR_NOMEM ? "out of memory answering a query" : "the batch could not be answered");
            ret = 1;
            goto out;
        }
        if (brc == -OPDB_ERR_RUNTIME) {
            fprintf(stderr, "opdb: error: cannot read the queries from stdin: %s\n", strerror(in.read_errno));
            ret = 1;
            goto out;
        }
        st = bs;
    }
    if (e.err.msg[0]) {
        fprintf(stderr, "opdb query: --collect: %s\n", e.err.msg);
        ret = 1;
        goto out;
    }
    if (fflush(stdout) != 0 || e.failed) {
        fprintf(stderr, "opdb: error: cannot write the results to stdout\n");
        ret = 1;
        goto out;
    }
    if (stats) {
        fprintf(stderr,
                "opdb query: %zu queries: %zu hit (MEASURED %zu, INTERPOLATED %zu, PARTIAL %zu), %zu miss, %zu error, "
                "%zu unsupported\n",
                st.queries, st.measured + st.interpolated + st.partial, st.measured, st.interpolated, st.partial, st.miss,
                st.error, st.unsupported);
        size_t rows, files;
        opdb_qdb_skipped(db, &rows, &files);
        if (rows) fprintf(stderr, "opdb query: %zu malformed rows skipped in %zu files\n", rows, files);
    }
    if (st.error) cli_warn("%zu of %zu query lines gave errors", st.error, st.queries);
    size_t hits = st.measured + st.interpolated + st.partial;
    if (!st.queries)
        cli_warn_nothing("no query line on stdin: nothing was answered");
    else if (!hits)
        cli_warn_nothing("no query was answered with a latency: %zu miss, %zu error", st.miss, st.error);
    if (!stats)
        cli_summary("opdb query", "answered %zu quer%s: %zu hit, %zu miss, %zu error, %zu unsupported", st.queries,
                    st.queries == 1 ? "y" : "ies", hits, st.miss, st.error, st.unsupported);
    ret = 0;
    if (collect) {
        /* the results are on stdout: what was collected goes to stderr */
        opdb_grid_miss_opts mo;
        opdb_grid_miss_opts_init(&mo);
        mo.log = cli_log();
        mo.modes = cli_modes();
        mo.root = collect;
        mo.plan = plan;
        mo.out = stderr;
        if (opdb_grid_from_misses(&mo, collected, &err)) {
            fprintf(stderr, "opdb query: --collect: %s\n", err.msg);
            ret = err.code == OPDB_ERR_USAGE ? 2 : 1;
        }
    }
out:
    opdb_grid_misses_free(collected);
    opdb_qdb_close(db);
    free(gd);
    free(av);
    free(params);
    return cli_strict_rc("opdb query", strict, ret);
}
