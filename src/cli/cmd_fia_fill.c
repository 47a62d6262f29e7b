/* `opdb fia-fill`: flags -> opdb_fia_fill_run. */
#include <stdio.h>

#include "cli/cli_opts.h"
#include "cli/commands.h"
#include "opdb/fia_fill.h"

int cmd_fia_fill(int argc, char **argv) {
    const char *csv = NULL, *jsonl = NULL, *out = NULL, *tag = NULL;
    bool quirks = false, strict = false;
    cli_opt opts[] = {
        {"--csv-path", "CSV", "the FusedInferAttentionScore database CSV", true, &csv, NULL},
        {"--jsonl-path", "JSONL", "runtime metadata records, one JSON object per line", true, &jsonl, NULL},
        {"--output-path", "OUT", "where to write (default: overwrite --csv-path)", false, &out, NULL},
        {"--metadata-tag", "TAG", "Runtime metadata_completeness of back-filled rows (default runtime_values_dumped)", false, &tag, NULL},
        {"--reference-quirks", NULL, "accepted for symmetry: this command has no quirk to reproduce", false, NULL, &quirks},
        {"--strict", NULL, CLI_STRICT_HELP, false, NULL, &strict},
    };
    cli_spec spec = {"opdb fia-fill", "Back-fill FusedInferAttentionScore runtime metadata from a JSONL dump.", NULL, opts,
                     sizeof opts / sizeof opts[0]};
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    opdb_fia_fill_opts o = {csv, jsonl, out, tag, stdout};
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_fia_fill_run(&o, &err)) {
        fprintf(stderr, "opdb fia-fill: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    return cli_strict_rc("opdb fia-fill", strict, 0);
}
