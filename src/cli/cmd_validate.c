/* `opdb validate`: exit 1 on errors (and with --strict on warnings), else 0. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli_opts.h"
#include "cli/cli_summary.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/db.h"
#include "opdb/validate.h"

int cmd_validate(int argc, char **argv) {
    const char *database = NULL, *device = NULL, *vllm = NULL, *torch = NULL, *cann = NULL;
    bool json = false, strict = false, repair = false, discard = false;
    cli_opt opts[] = {
        {"--database-path", "D", "database folder", false, &database, NULL},
        {"--device", "DEVICE", "device folder when --database-path is absent (default " OPDB_DEFAULT_DEVICE ")", false, &device, NULL},
        {"--vllm-version", "V", "vLLM-Ascend version or full version-folder name", false, &vllm, NULL},
        {"--torch-version", "V", "PyTorch version", false, &torch, NULL},
        {"--cann-version", "V", "CANN version", false, &cann, NULL},
        {"--json", NULL, "print the problems as JSON", false, NULL, &json},
        {"--strict", NULL, "warnings (rows without a valid duration, unconverged measurements) also exit 1", false, NULL, &strict},
        {"--repair", NULL, "first complete a run that was killed while replacing files (or roll it back when it cannot be completed), and remove temp files of killed runs", false, NULL, &repair},
        {"--discard-journal", NULL, "with --repair: delete an invalid journal (one opdb refuses to act on), renaming nothing", false, NULL, &discard},
    };
    cli_spec spec = {"opdb validate",
                     "Check a database folder: unreadable files, missing columns, non-numeric or negative durations,\n"
                     "rows the consumer cannot tell apart (errors); rows without a valid duration, measurements that never\n"
                     "met the stop rule (warnings). Exit 1 on any error, or with --strict on any warning.",
                     NULL, opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb validate --database-path db\nopdb validate --database-path db --repair";
    spec.exits = "0 no problem, 1 a problem found (--strict: also a warning) or a runtime failure, 2 usage error";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    if (cli_check_db_flags(&spec, device, vllm, torch, cann) != CLI_OK) return 2;
    if (discard && !repair) return cli_usage_error(&spec, "--discard-journal needs --repair"), 2;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_db_target target = {database, device ? device : OPDB_DEFAULT_DEVICE, vllm, torch, cann, NULL};
    char *dir = opdb_db_resolve(&target, &err);
    opdb_validate_result res;
    opdb_validate_opts vo;
    opdb_validate_opts_init(&vo);
    vo.log = cli_log();
    vo.modes = cli_modes();
    vo.json = json;
    vo.out = stdout;
    if (!dir || (repair && opdb_db_repair(dir, discard, &err)) || opdb_validate_run(dir, &vo, &res, &err)) {
        fprintf(stderr, "opdb validate: %s\n", err.msg);
        free(dir);
        return err.code ? err.code : 1;
    }
    if (!res.problems && !res.warnings && res.rows)
        cli_summary("opdb validate", "checked %zu row%s in %zu table%s of %s: no problem", res.rows, cli_plural(res.rows),
                    res.files, cli_plural(res.files), dir);
    free(dir);
    if (res.problems) return 1;
    if (res.warnings) {
        cli_warn("%zu warning(s)%s", res.warnings, strict ? " (--strict: exit 1)" : "");
        return strict ? 1 : 0;
    }
    if (!res.rows) {
        cli_warn("no rows found in %s%s", database ? database : "the database folder", strict ? " (--strict: exit 1)" : "");
        return strict ? 1 : 0;
    }
    return 0;
}
