/* `opdb aie`: flags -> opdb_aie_run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_stdio.h"
#include "cli/cli_summary.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/aie.h"

static bool parse_ll(const char *s, long long *out) {
    if (!s || !*s) return false;
    char *end;
    long long v = strtoll(s, &end, 10);
    while (*end == ' ' || *end == '\t') end++;
    if (*end) return false;
    *out = v;
    return true;
}

static bool parse_d(const char *s, double *out) {
    if (!s || !*s) return false;
    char *end;
    double v = strtod(s, &end);
    if (*end) return false;
    *out = v;
    return true;
}

int cmd_aie(int argc, char **argv) {
    const char *sv[11] = {0}, *hwid = NULL, *trace = NULL, *out_dir = NULL, *clock = NULL, *peak = NULL, *factor = NULL;
    bool quirks = false, strict = false, json = false;
    static const char *const names[11] = {"--M", "--K", "--N", "--m", "--k", "--n", "--row", "--col", "--warmup", "--iterations", NULL};
    cli_opt opts[] = {
        {"--M", "M", "problem size M", true, &sv[0], NULL},
        {"--K", "K", "problem size K", true, &sv[1], NULL},
        {"--N", "N", "problem size N", true, &sv[2], NULL},
        {"--m", "m", "tile size m (echoed into index.json)", true, &sv[3], NULL},
        {"--k", "k", "tile size k", true, &sv[4], NULL},
        {"--n", "n", "tile size n", true, &sv[5], NULL},
        {"--row", "R", "AIE array rows used", true, &sv[6], NULL},
        {"--col", "C", "AIE array columns used", true, &sv[7], NULL},
        {"--hwid", "ID", "hardware id (names the input folder)", true, &hwid, NULL},
        {"--warmup-iters", "W", "warm-up iterations", true, &sv[8], NULL, "--warmup"},
        {"--iters", "I", "performance iterations after warm-up", true, &sv[9], NULL, "--iterations"},
        {"--trace", "FILE", "trace JSON, - for stdin (then --output-dir is needed) (default: outputs/<hwid>-gemm_<M>_<K>_<N>-<row>_row_<col>_col/traces/trace_mm_<M>_<K>_<N>.json)", false, &trace, NULL},
        {"--output-dir", "DIR", "output folder (default: the trace's folder)", false, &out_dir, NULL, "--out-dir"},
        {"--clock-ghz", "GHZ", "AIE clock (default 1.25)", false, &clock, NULL},
        {"--peak-macs-per-cycle", "X", "peak MACs per cycle per core (default 64)", false, &peak, NULL},
        {"--lock-stall-factor", "F", "a lock stall this many median kernels long ends an iteration (default 20.0)", false, &factor, NULL},
        {"--reference-quirks", NULL, "reproduce the reference post-processor exactly, quirks included", false, NULL, &quirks},
        {"--strict", NULL, CLI_STRICT_HELP, false, NULL, &strict},
        {"--json", NULL, "print the run's summary as one JSON object on stdout (files written, per-core and system "
                         "GMAC/s, figures above peak, why there are no system figures; keys in docs/GUIDE.md); the "
                         "[write] lines then go to stderr", false, NULL, &json},
    };
    cli_spec spec = {"opdb aie",
                     "Post-process an AMD AIE hardware trace: per-core kernel timings per iteration and GMAC/s.", NULL,
                     opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb aie --hwid npu1 --M 512 --K 512 --N 512 --m 64 --k 64 --n 64 --row 4 --col 4 --warmup-iters 2 --iters 10";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    long long v[10];
    for (int i = 0; i < 10; i++)
        if (!parse_ll(sv[i], &v[i])) return cli_usage_error(&spec, "argument %s: invalid int value: '%s'", names[i], sv[i]);
    opdb_aie_opts o;
    opdb_aie_opts_init(&o);
    o.log = cli_log();
    o.modes = cli_modes();
    o.M = v[0], o.K = v[1], o.N = v[2], o.m = v[3], o.k = v[4], o.n = v[5], o.rows = v[6], o.cols = v[7];
    o.hwid = hwid;
    o.warmup = v[8];
    o.iterations = v[9];
    o.trace = trace;
    o.out_dir = out_dir;
    o.quirks = quirks;
    o.out = json ? stderr : stdout;
    opdb_strbuf summary;
    opdb_sb_init(&summary);
    if (json) o.summary = &summary;
    size_t cores = 0;
    o.cores = &cores;
    if (clock && !parse_d(clock, &o.clock_ghz)) return cli_usage_error(&spec, "argument --clock-ghz: invalid float value: '%s'", clock);
    if (peak && !parse_d(peak, &o.peak_macs_per_cycle))
        return cli_usage_error(&spec, "argument --peak-macs-per-cycle: invalid float value: '%s'", peak);
    if (factor && !parse_d(factor, &o.lock_stall_factor))
        return cli_usage_error(&spec, "argument --lock-stall-factor: invalid float value: '%s'", factor);
    if (json && quirks) return cli_usage_error(&spec, "--json is an opdb addition and cannot be combined with --reference-quirks");
    /* the outputs go next to the trace by default: stdin has no folder */
    if (trace && strcmp(trace, "-") == 0 && !out_dir) return cli_usage_error(&spec, "--trace - needs --output-dir DIR");
    cli_stdio io = {0};
    if (cli_stdio_input(&io, "opdb aie", &o.trace, "trace.json")) return cli_stdio_finish(&io, "opdb aie", 1);
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_aie_run(&o, &err)) {
        opdb_sb_free(&summary);
        fflush(stdout);
        fprintf(stderr, "opdb aie: %s\n", err.msg);
        return cli_stdio_finish(&io, "opdb aie", err.code ? err.code : 1);
    }
    bool out_ok = true;
    if (json) out_ok = fwrite(summary.p, 1, summary.n, stdout) == summary.n && fputc('\n', stdout) != EOF;
    opdb_sb_free(&summary);
    if (fflush(stdout) != 0 || !out_ok) {
        fprintf(stderr, "opdb aie: cannot write the summary to stdout\n");
        return cli_stdio_finish(&io, "opdb aie", 1);
    }
    rc = cli_stdio_finish(&io, "opdb aie", 0);
    if (rc == 0)
        cli_summary("opdb aie", "wrote the timings of %zu core%s of %s (index.json, aggregate_perf.json)", cores,
                    cli_plural(cores), trace && strcmp(trace, "-") ? trace : trace ? "stdin" : "the default trace");
    return cli_strict_rc("opdb aie", strict, rc);
}
