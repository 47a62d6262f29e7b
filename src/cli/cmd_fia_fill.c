/* `opdb fia-fill`: flags -> opdb_fia_fill_run. */
#include <stdio.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_stdio.h"
#include "cli/commands.h"
#include "opdb/fia_fill.h"

int cmd_fia_fill(int argc, char **argv) {
    const char *csv = NULL, *jsonl = NULL, *out = NULL, *tag = NULL;
    bool quirks = false, strict = false;
    cli_opt opts[] = {
        {"--csv-path", "CSV", "the FusedInferAttentionScore database CSV (- for stdin)", true, &csv, NULL},
        {"--jsonl-path", "JSONL", "runtime metadata records, one JSON object per line (- for stdin)", true, &jsonl, NULL},
        {"--output", "OUT", "where to write (default: overwrite --csv-path; - for stdout)", false, &out, NULL, "--output-path"},
        {"--metadata-tag", "TAG", "Runtime metadata_completeness of back-filled rows (default runtime_values_dumped)", false, &tag, NULL},
        {"--reference-quirks", NULL, "accepted for symmetry: this command has no quirk to reproduce", false, NULL, &quirks},
        {"--strict", NULL, CLI_STRICT_HELP, false, NULL, &strict},
    };
    cli_spec spec = {"opdb fia-fill", "Back-fill FusedInferAttentionScore runtime metadata from a JSONL dump.", NULL, opts,
                     sizeof opts / sizeof opts[0]};
    spec.example = "opdb fia-fill --csv-path db/FusedInferAttentionScore.csv --jsonl-path fia_runtime.jsonl";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    cli_stdio io = {0};
    bool csv_stdin = csv && strcmp(csv, "-") == 0;
    if (cli_stdio_input(&io, "opdb fia-fill", &csv, "FusedInferAttentionScore.csv") ||
        cli_stdio_input(&io, "opdb fia-fill", &jsonl, "stdin.jsonl"))
        return cli_stdio_finish(&io, "opdb fia-fill", 1);
    if (!out && csv_stdin) out = "-"; /* the CSV came from stdin: it goes back to stdout */
    /* an output on stdout: the summary line goes to stderr */
    FILE *summary = cli_stdio_output(&io, "opdb fia-fill", &out, "FusedInferAttentionScore.csv") ? stderr : stdout;
    opdb_fia_fill_opts o = {csv, jsonl, out, tag, summary};
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_fia_fill_run(&o, &err)) {
        fprintf(stderr, "opdb fia-fill: %s\n", err.msg);
        return cli_stdio_finish(&io, "opdb fia-fill", err.code ? err.code : 1);
    }
    return cli_strict_rc("opdb fia-fill", strict, cli_stdio_finish(&io, "opdb fia-fill", 0));
}
