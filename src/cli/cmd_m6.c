/* `opdb m6`: flags -> opdb_m6_run. */
#include <stdio.h>

#include "cli/cli_opts.h"
#include "cli/commands.h"
#include "opdb/m6.h"

int cmd_m6(int argc, char **argv) {
    opdb_m6_opts o = {0};
    bool strict = false;
    cli_opt opts[] = {
        {"--tc-trace", "T", "performance-model Chrome trace (.json or .json.gz; {\"traceEvents\": [...]} or a bare array)",
         true, &o.tc_trace, NULL},
        {"--prof-trace", "P", "forward-pass trace CSV (profiler kernel_details slice of one forward pass)", true,
         &o.prof_trace, NULL},
        {"--source-filter", "S", "comma-separated sources counted as empirical (default: MEASURED,INTERPOLATED)", false,
         &o.source_filter, NULL},
        {"--json-output", "J", "also write the result as JSON here (parent folders created)", false, &o.json_output,
         NULL},
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
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_m6_run(&o, stdout, &err)) {
        fflush(stdout);
        fprintf(stderr, "opdb m6: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    return cli_strict_rc("opdb m6", strict, fflush(stdout) == 0 ? 0 : 1);
}
