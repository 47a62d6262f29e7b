/* `opdb check --db D`: flags in, opdb_check_run, exit code out. */
#include <stdio.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/check.h"

int cmd_check(int argc, char **argv) {
    const char *database = NULL, *html = NULL;
    bool json = false, strict = false, write_cal = false;
    cli_opt opts[] = {
        {"--database-path", "DIR", "the database version folder (CSV files and op_mapping.yaml)", false, &database, NULL, "--db"},
        {"--json", NULL, "print JSON instead of the table", false, NULL, &json},
        {"--html", "FILE", "also write a self-contained HTML report", false, &html, NULL},
        {"--write-calibration", NULL, "write " OPDB_CALIBRATION_FILE " into the folder: opdb query then adds "
                                      "calibrated intervals to interpolated answers", false, NULL, &write_cal},
        {"--strict", NULL, "exit 1 when no row could be held out", false, NULL, &strict},
    };
    cli_spec spec = {"opdb check",
                     "Leave-one-out: hide each row with a latency, ask the query engine's interpolation for its shape,\n"
                     "compare. Figures per kernel type x axis group x interior/frontier, the worst rows, and the\n"
                     "coverage of calibrated intervals. Rules: docs/CHECK.md.",
                     NULL, opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb check --db db/vllm0.18.0_torch2.9.0_cann8.3 --html check.html --write-calibration";
    spec.exits = "0 ok; 1 runtime failure (or nothing held out, with --strict); 2 usage error";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    if (!database) return cli_usage_error(&spec, "the following arguments are required: --database-path (or --db)"), 2;
    opdb_check_options o;
    opdb_check_options_init(&o);
    o.format = json ? OPDB_CHECK_JSON : OPDB_CHECK_TEXT;
    o.out = stdout;
    o.html_path = html;
    o.write_calibration = write_cal;
    o.warn = cli_warn_line;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_check_result res;
    if (opdb_check_run(database, &o, &res, &err)) {
        fprintf(stderr, "opdb check: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    if (!res.rows) {
        cli_warn("no row could be held out (no table on a checked path has a row with a latency)");
        if (strict) return 1;
    }
    return 0;
}
