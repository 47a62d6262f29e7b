/* `opdb trace2csv`: flags -> opdb_trace2csv_run. */
#include <stdio.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_stdio.h"
#include "cli/cli_summary.h"
#include "cli/commands.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "opdb/trace2csv.h"

int cmd_trace2csv(int argc, char **argv) {
    const char *trace = NULL, *output = NULL;
    bool quirks = false, json = false, strict = false;
    cli_opt opts[] = {
        {"--trace", "T", "performance-model Chrome trace (.json or .json.gz; {\"traceEvents\": [...]} or a bare array; - for stdin)", true, &trace, NULL},
        {"--output", "O", "CSV to write (default or -: stdout)", false, &output, NULL},
        {"--reference-quirks", NULL, "accepted for symmetry: this command has no quirk to reproduce", false, NULL, &quirks},
        {"--json", NULL, "with --output FILE: print the summary as one JSON object on stdout (keys: command, trace, output, rows)", false, NULL, &json},
        {"--strict", NULL, CLI_STRICT_HELP, false, NULL, &strict},
    };
    cli_spec spec = {"opdb trace2csv", "Flatten the complete (ph \"X\") events of a Chrome trace into CSV.", NULL, opts,
                     sizeof opts / sizeof opts[0]};
    spec.example = "opdb trace2csv --trace tc.json.gz --output events.csv";
    spec.exits = "0 ok, 1 failure (--strict: also no row written), 2 usage error";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    if (json && (!output || strcmp(output, "-") == 0))
        return cli_usage_error(&spec, "--json prints on stdout, where the CSV goes: give --output FILE");
    const char *trace_given = trace;
    opdb_err err;
    opdb_err_clear(&err);
    cli_stdio io = {0};
    if (cli_stdio_input(&io, "opdb trace2csv", &trace, "stdin.json")) return cli_stdio_finish(&io, "opdb trace2csv", 1);
    if (output && strcmp(output, "-") == 0) output = NULL; /* stdout, the default */
    unsigned long long rows;
    opdb_trace2csv_opts o;
    opdb_trace2csv_opts_init(&o);
    o.log = cli_log();
    o.modes = cli_modes();
    o.trace_path = trace, o.output_path = output, o.out = stdout;
    if (opdb_trace2csv_run(&o, &rows, &err)) {
        fflush(stdout);
        fprintf(stderr, "opdb trace2csv: %s\n", err.msg);
        return cli_stdio_finish(&io, "opdb trace2csv", err.code ? err.code : 1);
    }
    if (json) {
        const char *keys[3] = {"command", "trace", "output"}, *vals[3] = {"trace2csv", trace_given, output};
        if (cli_json_summary(keys, vals, 3, "rows", rows)) fprintf(stderr, "opdb trace2csv: cannot write to stdout\n");
    }
    rc = cli_stdio_finish(&io, "opdb trace2csv", fflush(stdout) == 0 ? 0 : 1);
    char n[32];
    if (rc == 0) cli_summary("opdb trace2csv", "wrote %s row%s to %s", cli_count(n, sizeof n, rows), cli_plural(rows),
                             output ? output : "stdout");
    return cli_strict_rc("opdb trace2csv", strict, rc);
}
