/* `opdb fia-fill`: flags -> opdb_fia_fill_run. */
#include <stdio.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_stdio.h"
#include "cli/cli_summary.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/fia_fill.h"
#include "opdb/json_writer.h"

int cmd_fia_fill(int argc, char **argv) {
    const char *csv = NULL, *jsonl = NULL, *out = NULL, *tag = NULL;
    bool quirks = false, strict = false, json = false;
    cli_opt opts[] = {
        {"--csv-path", "CSV", "the FusedInferAttentionScore database CSV (- for stdin)", true, &csv, NULL},
        {"--jsonl-path", "JSONL", "runtime metadata records, one JSON object per line (- for stdin)", true, &jsonl, NULL},
        {"--output", "OUT", "where to write (default: overwrite --csv-path; - for stdout)", false, &out, NULL, "--output-path"},
        {"--metadata-tag", "TAG", "Runtime metadata_completeness of back-filled rows (default runtime_values_dumped)", false, &tag, NULL},
        {"--reference-quirks", NULL, "write like the reference: always with a UTF-8 byte-order mark (default: only when the input had one)", false, NULL, &quirks},
        {"--strict", NULL, CLI_STRICT_HELP, false, NULL, &strict},
        {"--json", NULL, "print the summary as one JSON object on stdout instead of the Backfilled line (keys: command, csv, jsonl, output, rows_in, matched, rows_out)", false, NULL, &json},
    };
    cli_spec spec = {"opdb fia-fill", "Back-fill FusedInferAttentionScore runtime metadata from a JSONL dump.", NULL, opts,
                     sizeof opts / sizeof opts[0]};
    spec.example = "opdb fia-fill --csv-path db/FusedInferAttentionScore.csv --jsonl-path fia_runtime.jsonl";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    if (json && ((out && strcmp(out, "-") == 0) || (!out && csv && strcmp(csv, "-") == 0)))
        return cli_usage_error(&spec, "--json prints on stdout, where the CSV goes: give --output-path FILE");
    cli_stdio io = {0};
    const char *csv_given = csv, *jsonl_given = jsonl;
    bool csv_stdin = csv && strcmp(csv, "-") == 0;
    if (cli_stdio_input(&io, "opdb fia-fill", &csv, "FusedInferAttentionScore.csv") ||
        cli_stdio_input(&io, "opdb fia-fill", &jsonl, "stdin.jsonl"))
        return cli_stdio_finish(&io, "opdb fia-fill", 1);
    if (!out && csv_stdin) out = "-"; /* the CSV came from stdin: it goes back to stdout */
    /* an output on stdout: the summary line goes to stderr */
    FILE *summary = cli_stdio_output(&io, "opdb fia-fill", &out, "FusedInferAttentionScore.csv") ? stderr : stdout;
    opdb_fia_fill_totals t = {0, 0, 0};
    const char *shown = out ? out : csv;
    FILE *sink = json ? fopen("/dev/null", "w") : NULL; /* --json: the Backfilled line is replaced */
    opdb_fia_fill_opts o;
    opdb_fia_fill_opts_init(&o);
    o.log = cli_log();
    o.modes = cli_modes();
    o.csv_path = csv;
    o.jsonl_path = jsonl;
    o.output_path = out;
    o.metadata_tag = tag;
    o.out = sink ? sink : summary;
    o.quirks = quirks;
    o.totals = &t;
    opdb_err err;
    opdb_err_clear(&err);
    int frc = opdb_fia_fill_run(&o, &err);
    if (sink) fclose(sink);
    if (frc) {
        fprintf(stderr, "opdb fia-fill: %s\n", err.msg);
        return cli_stdio_finish(&io, "opdb fia-fill", err.code ? err.code : 1);
    }
    if (json) {
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        opdb_json j;
        opdb_json_init(&j, &sb);
        opdb_json_begin_object(&j);
        const char *keys[4] = {"command", "csv", "jsonl", "output"}, *vals[4] = {"fia-fill", csv_given, jsonl_given, shown};
        for (int i = 0; i < 4; i++) {
            opdb_json_key(&j, keys[i]);
            opdb_json_string(&j, vals[i]);
        }
        const char *nkeys[3] = {"rows_in", "matched", "rows_out"};
        size_t nvals[3] = {t.rows_in, t.matched, t.rows_out};
        for (int i = 0; i < 3; i++) {
            opdb_json_key(&j, nkeys[i]);
            opdb_json_int(&j, (long long)nvals[i]);
        }
        opdb_json_end_object(&j);
        printf("%s\n", sb.p);
        opdb_sb_free(&sb);
    }
    rc = cli_stdio_finish(&io, "opdb fia-fill", fflush(stdout) == 0 ? 0 : 1);
    char n[32];
    if (rc == 0) cli_summary("opdb fia-fill", "wrote %s row%s to %s", cli_count(n, sizeof n, t.rows_out),
                             cli_plural(t.rows_out), summary == stderr ? "stdout" : shown);
    return cli_strict_rc("opdb fia-fill", strict, rc);
}
