/* `opdb shape-compare`: flags -> opdb_shapecmp_run. */
#include <stdio.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_summary.h"
#include "cli/cli_stdio.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/shape_compare.h"

int cmd_shape_compare(int argc, char **argv) {
    opdb_shapecmp_opts o;
    opdb_shapecmp_opts_init(&o);
    o.log = cli_log();
    o.modes = cli_modes();
    bool strict = false, json = false;
    cli_opt opts[] = {
        {"--tc-trace", "T", "performance-model Chrome trace (.json or .json.gz; {\"traceEvents\": [...]} or a bare array; - for stdin)",
         true, &o.tc_trace, NULL},
        {"--prof-trace", "P", "forward-pass trace CSV (profiler kernel_details slice of one forward pass; - for stdin)", true,
         &o.prof_trace, NULL},
        {"--output", "O", "CSV to write (default or -: stdout)", false, &o.output, NULL},
        {"--reference-quirks", NULL,
         "reproduce the reference exactly: empty cells count as 0 and invalid numbers or flat shape lists are fatal, "
         "hcom rows de-duplicated on the start time truncated to whole microseconds, infinite deltas written as inf",
         false, NULL, &o.quirks},
        {"--strict", NULL, CLI_STRICT_HELP, false, NULL, &strict},
        {"--json", NULL, "with --output FILE: print the summary as one JSON object on stdout (keys: command, tc_trace, prof_trace, output, rows)", false, NULL, &json},
    };
    cli_spec spec = {"opdb shape-compare",
                     "Compare a TC trace with a forward-pass trace per (kernel type, shape): time, count, error %.",
                     "Rows are sorted by the larger of the two times, descending; ties by kernel type, then shape.",
                     opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb shape-compare --tc-trace tc.json --prof-trace kernel_details.csv --output shapes.csv";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    if (json && (!o.output || strcmp(o.output, "-") == 0))
        return cli_usage_error(&spec, "--json prints on stdout, where the CSV goes: give --output FILE");
    const char *tc_given = o.tc_trace, *prof_given = o.prof_trace;
    cli_stdio io = {0};
    if (cli_stdio_input(&io, "opdb shape-compare", &o.tc_trace, "stdin.json") ||
        cli_stdio_input(&io, "opdb shape-compare", &o.prof_trace, "stdin.csv"))
        return cli_stdio_finish(&io, "opdb shape-compare", 1);
    if (o.output && strcmp(o.output, "-") == 0) o.output = NULL; /* stdout, the default */
    opdb_err err;
    opdb_err_clear(&err);
    size_t rows;
    if (opdb_shapecmp_run(&o, json ? stderr : stdout, &rows, &err)) { /* --json: the Generated line to stderr */
        fflush(stdout);
        fprintf(stderr, "opdb shape-compare: %s\n", err.msg);
        return cli_stdio_finish(&io, "opdb shape-compare", err.code ? err.code : 1);
    }
    if (json) {
        const char *keys[4] = {"command", "tc_trace", "prof_trace", "output"},
                   *vals[4] = {"shape-compare", tc_given, prof_given, o.output};
        if (cli_json_summary(keys, vals, 4, "rows", rows)) fprintf(stderr, "opdb shape-compare: cannot write to stdout\n");
    }
    rc = cli_stdio_finish(&io, "opdb shape-compare", fflush(stdout) == 0 ? 0 : 1);
    char n[32];
    if (rc == 0)
        cli_summary("opdb shape-compare", "wrote %s row%s to %s", cli_count(n, sizeof n, rows), cli_plural(rows),
                    o.output ? o.output : "stdout");
    return cli_strict_rc("opdb shape-compare", strict, rc);
}
