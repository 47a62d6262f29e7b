/* `opdb compare`: flags -> opdb_compare_run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_summary.h"
#include "cli/cli_stdio.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/compare.h"

int cmd_compare(int argc, char **argv) {
    opdb_compare_args a;
    opdb_compare_args_init(&a);
    a.log = cli_log();
    a.modes = cli_modes();
    a.dash = stdout;
    a.aside = stderr;
    opdb_compare_totals t = {0, 0, 0};
    a.totals = &t;
    const char *pid = NULL, *top = NULL;
    bool quirks = false, strict = false, json = false;
    cli_opt opts[] = {
        {"--trace-dir", "DIR", "with --reference-quirks: folder of the fixed scenarios' trace CSVs (default docs/perf_database/forward_pass_traces)", false, &a.trace_dir, NULL},
        {"--database-path", "DIR", "profiling database folder holding op_mapping.yaml (default: none; with --reference-quirks the reference's A3 vllm0.18.0 folder); a folder without it is a warning (--strict: exit 1)", false, &a.data_dir, NULL, "--data-dir"},
        {"--output", "FILE", "JSON to write, - for stdout (default: none; with --reference-quirks results/op_comparison.json)", false, &a.output, NULL},
        {"--json", NULL, "print the JSON on stdout instead of the table (the same as --output -)", false, NULL, &json},
        {"--tc-trace", "FILE", "one scenario: the predicted Chrome trace (.json / .json.gz; - for stdin)", false, &a.tc_trace, NULL},
        {"--prof-trace", "FILE", "one scenario: the measured forward-pass kernel_details CSV (- for stdin); a file without Type and Duration(us) columns (a JSON trace) is an error", false, &a.prof_trace, NULL},
        {"--m6", "FILE", "one scenario: M6 JSON giving n_forward_passes (default 1)", false, &a.m6, NULL},
        {"--name", "NAME", "one scenario: its name (default: the TC trace's file name)", false, &a.name, NULL},
        {"--pid", "N", "use the trace process with this pid (a number, or the text of a string pid) instead of finding it by name", false, &pid, NULL},
        {"--top", "N", "show the N kernel types with the most time per scenario and count the rest (default 0: all)", false, &top, NULL},
        {"--html", "FILE", "also write a self-contained HTML report with a chart per scenario (- for stdout)", false, &a.html, NULL},
        {"--shapes", "FILE", "with --html: the CSV `opdb shape-compare` wrote for the same traces, shown as a per-shape "
                             "drill-down per kernel type (- for stdin)", false, &a.shapes, NULL},
        {"--reference-quirks", NULL, "reproduce the reference tool exactly, quirks included", false, NULL, &quirks},
        {"--strict", NULL, CLI_STRICT_HELP, false, NULL, &strict},
    };
    cli_spec spec = {"opdb compare",
                     "Compare a performance model's per-kernel-type predictions with a measured forward pass.",
                     "With --reference-quirks and without --tc-trace, the reference's four fixed scenarios are read\n"
                     "from results/ and --trace-dir, and its Chinese table is printed.",
                     opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb compare --tc-trace tc.json --prof-trace kernel_details.csv --database-path db --top 10";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    if (json && a.output && strcmp(a.output, "-"))
        return cli_usage_error(&spec, "--json prints the JSON on stdout: not with --output %s", a.output);
    if (json) a.output = "-";
    if (!quirks && !a.tc_trace && !a.prof_trace)
        return cli_usage_error(&spec, "missing --tc-trace FILE and --prof-trace FILE (the reference's fixed scenarios "
                                      "run only with --reference-quirks)");
    if (!quirks && a.trace_dir) return cli_usage_error(&spec, "--trace-dir needs --reference-quirks");
    if (top) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(top, &end, 10);
        if (!*top || *end || errno || top[0] == '-')
            return cli_usage_error(&spec, "argument --top: expected a number >= 0, got '%s'", top);
        a.o.top = (size_t)v;
    }
    if (!a.tc_trace != !a.prof_trace)
        return cli_usage_error(&spec, "--tc-trace and --prof-trace go together");
    if (!a.tc_trace && (a.m6 || a.name))
        return cli_usage_error(&spec, "--m6 and --name need --tc-trace and --prof-trace");
    if (a.output && a.html && strcmp(a.output, "-") == 0 && strcmp(a.html, "-") == 0)
        return cli_usage_error(&spec, "--output - and --html - cannot both go to stdout");
    if (a.shapes && (!a.html || !a.tc_trace))
        return cli_usage_error(&spec, "--shapes needs --html FILE and the one scenario of --tc-trace and --prof-trace");
    if (a.tc_trace && a.trace_dir)
        return cli_usage_error(&spec, "--trace-dir is for the fixed scenarios, not with --tc-trace");
    char pid_text[32];
    if (pid) { /* a number is normalised (007 finds pid 7); other text names a string pid */
        char *end;
        errno = 0;
        long long v = strtoll(pid, &end, 10);
        if (!*pid) return cli_usage_error(&spec, "argument --pid: empty value");
        if (!*end && !errno) snprintf(pid_text, sizeof pid_text, "%lld", v);
        a.o.pid = !*end && !errno ? pid_text : pid;
        a.o.pid_is_text = *end || errno;
    }
    a.o.quirks = quirks;
    cli_stdio io = {0};
    if (cli_stdio_input(&io, "opdb compare", &a.tc_trace, "stdin.json") ||
        cli_stdio_input(&io, "opdb compare", &a.prof_trace, "stdin.csv") ||
        cli_stdio_input(&io, "opdb compare", &a.shapes, "shapes.csv"))
        return cli_stdio_finish(&io, "opdb compare", 1);
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_compare_run(&a, stdout, &err)) {
        fflush(stdout);
        fprintf(stderr, "opdb compare: %s\n", err.msg);
        return cli_stdio_finish(&io, "opdb compare", err.code ? err.code : 1);
    }
    rc = cli_stdio_finish(&io, "opdb compare", fflush(stdout) == 0 ? 0 : 1);
    if (rc == 0)
        cli_summary("opdb compare", "compared %zu scenario%s: %zu kernel type%s, %zu in both traces", t.scenarios,
                    cli_plural(t.scenarios), t.kernel_types, cli_plural(t.kernel_types), t.compared);
    return cli_strict_rc("opdb compare", strict, rc);
}
