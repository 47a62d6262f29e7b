/* `opdb m6`: flags -> opdb_m6_run. */
#include <stdio.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_stdio.h"
#include "cli/cli_summary.h"
#include "cli/commands.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "opdb/m6.h"

int cmd_m6(int argc, char **argv) {
    opdb_m6_opts o;
    opdb_m6_opts_init(&o);
    o.log = cli_log();
    o.modes = cli_modes();
    bool strict = false, json = false;
    cli_opt opts[] = {
        {"--tc-trace", "T", "performance-model Chrome trace (.json or .json.gz; {\"traceEvents\": [...]} or a bare array; - for stdin)",
         true, &o.tc_trace, NULL},
        {"--prof-trace", "P", "forward-pass trace CSV (profiler kernel_details slice of one forward pass; - for stdin)", true,
         &o.prof_trace, NULL},
        {"--source-filter", "S", "comma-separated sources counted as empirical (default: MEASURED,INTERPOLATED)", false,
         &o.source_filter, NULL},
        {"--json-output", "J", "also write the result as JSON here (parent folders created; - for stdout, the report then goes to stderr)", false, &o.json_output,
         NULL},
        {"--json", NULL, "print the result as JSON on stdout, the report on stderr (the same as --json-output -)", false, NULL, &json},
        {"--reference-quirks", NULL,
         "reproduce the reference exactly: empty Start Time/Duration cells count as 0, invalid ones are skipped "
         "silently, hcom rows de-duplicated on the start time truncated to whole microseconds",
         false, NULL, &o.quirks},
        {"--strict", NULL, CLI_STRICT_HELP, false, NULL, &strict},
    };
    cli_spec spec = {"opdb m6",
                     "M6 = time of the ops the database answered in a TC trace / real forward-pass time "
                     "(1.0 is perfect, > 1 over-estimates).",
                     NULL, opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb m6 --tc-trace tc.json --prof-trace kernel_details.csv";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    if (json && o.json_output && strcmp(o.json_output, "-"))
        return cli_usage_error(&spec, "--json prints the JSON on stdout: not with --json-output %s", o.json_output);
    if (json) o.json_output = "-";
    double ratio = 0;
    o.ratio = &ratio;
    const char *json_given = o.json_output;
    cli_stdio io = {0};
    o.tc_name = o.tc_trace, o.prof_name = o.prof_trace;
    if (cli_stdio_input(&io, "opdb m6", &o.tc_trace, "stdin.json") ||
        cli_stdio_input(&io, "opdb m6", &o.prof_trace, "stdin.csv"))
        return cli_stdio_finish(&io, "opdb m6", 1);
    /* --json-output -: the JSON on stdout, the report on stderr */
    FILE *report = cli_stdio_output(&io, "opdb m6", &o.json_output, "m6.json") ? stderr : stdout;
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_m6_run(&o, report, &err)) {
        fflush(stdout);
        fprintf(stderr, "opdb m6: %s\n", err.msg);
        return cli_stdio_finish(&io, "opdb m6", err.code ? err.code : 1);
    }
    rc = cli_stdio_finish(&io, "opdb m6", fflush(stdout) == 0 ? 0 : 1);
    if (rc == 0) cli_summary("opdb m6", "M6 = %.4f (1.0 is perfect)%s%s", ratio, json_given ? ", JSON written to " : "",
                             json_given ? (strcmp(json_given, "-") ? json_given : "stdout") : "");
    return cli_strict_rc("opdb m6", strict, rc);
}
