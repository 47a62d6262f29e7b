/* `opdb update`: flags -> opdb_update_run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_process.h"
#include "cli/cli_summary.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/db.h"
#include "opdb/signature.h"
#include "opdb/update.h"

int cmd_update(int argc, char **argv) {
    const char *database = NULL, *device = NULL, *vllm = NULL, *torch = NULL, *cann = NULL, *mode = NULL,
               *ep = NULL, *ops_flag = NULL, *prof_flag = NULL;
    bool prune = false, quirks = false, add_new = false, json = false, strict = false;
    cli_opt opts[] = {
        {"--profiling-path", "P [P ...]", "PROF_* folder(s), or folders searched recursively for them", true, &prof_flag, NULL,
         "--prof-path"},
        {"--database-path", "D", "database folder (skips the version-folder logic)", false, &database, NULL},
        {"--device", "DEVICE", "device folder when --database-path is absent (default " OPDB_DEFAULT_DEVICE ")", false, &device, NULL},
        {"--vllm-version", "V", "vLLM-Ascend version or full version-folder name", false, &vllm, NULL},
        {"--torch-version", "V", "PyTorch version", false, &torch, NULL},
        {"--cann-version", "V", "CANN version", false, &cann, NULL},
        {"--ops", "OP [OP ...]", "operators to update (default: every catalogue operator's CSV)", false, &ops_flag, NULL},
        {"--update-mode", "MODE", "all (default): overwrite matched rows; missing-only: fill rows without a valid duration", false, &mode, NULL},
        {"--prune-empty-duration-rows", NULL, "drop rows left without any valid duration", false, NULL, &prune},
        {"--dispatch-ffn-combine-ep-size", "N", "EP size written to DispatchFFNCombine rows (default 16)", false, &ep, NULL},
        {"--add-new-ops", NULL, "create a CSV for each profiled operator that has none", false, NULL, &add_new},
        {"--json", NULL, "print a JSON summary instead of the Markdown report", false, NULL, &json},
        {"--reference-quirks", NULL, "reproduce the reference write-back exactly, quirks included", false, NULL, &quirks},
        {"--strict", NULL, CLI_STRICT_HELP, false, NULL, &strict},
    };
    cli_spec spec = {"opdb update",
                     "Merge msprof op_summary measurements into a database and report the gaps.",
                     "The report is printed and saved under <database>/reports/ (set OPDB_REPORT_TIMESTAMP=YYYYmmdd_HHMMSS\n"
                     "for reproducible names).",
                     opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb update --profiling-path PROF_000001 --database-path db";
    /* Multi-value flags are gathered here; the rest goes to the common parser. */
    const char **prof = NULL, **ops = NULL;
    size_t nprof = 0, nops = 0;
    char **rest = opdb_xmalloc(((size_t)argc + 1) * sizeof *rest);
    int nrest = 0;
    rest[nrest++] = argv[0];
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        bool is_prof = strcmp(argv[i], "--profiling-path") == 0 || strcmp(argv[i], "--prof-path") == 0;
        if (is_prof || strcmp(argv[i], "--ops") == 0 || strcmp(argv[i], "--op") == 0) {
            if (cli_take_list(&i, argc, argv, is_prof ? &prof : &ops, is_prof ? &nprof : &nops) == 0) {
                rc = cli_usage_error(&spec, "argument %s: expected at least one argument", argv[i]);
                break;
            }
            if (is_prof) {
                rest[nrest++] = "--profiling-path";
                rest[nrest++] = (char *)prof[0];
            }
            continue;
        }
        rest[nrest++] = argv[i];
    }
    if (rc == 0) {
        rc = cli_parse(&spec, nrest, rest);
        if (rc == CLI_HELP) rc = -1;
    }
    char **normops = NULL;
    char *outdir = NULL;
    if (rc == 0 && quirks && add_new)
        rc = cli_usage_error(&spec, "--add-new-ops is an opdb addition and cannot be combined with --reference-quirks");
    if (rc == 0 && mode && strcmp(mode, "all") && strcmp(mode, "missing-only"))
        rc = cli_usage_error(&spec, "argument --update-mode: invalid choice: '%s' (choose from 'all', 'missing-only')", mode);
    if (rc == 0) rc = cli_check_db_flags(&spec, device, vllm, torch, cann);
    long ep_size = 16;
    if (rc == 0 && ep) {
        char *end;
        ep_size = strtol(ep, &end, 10);
        if (*end || !*ep) rc = cli_usage_error(&spec, "argument --dispatch-ffn-combine-ep-size: invalid int value: '%s'", ep);
    }
    opdb_err err;
    opdb_err_clear(&err);
    if (rc == 0 && nops) rc = cli_normalize_ops("opdb update", quirks, ops, nops, &normops);
    if (rc == 0) {
        opdb_db_target target = {database, device ? device : OPDB_DEFAULT_DEVICE, vllm, torch, cann, NULL};
        outdir = opdb_db_resolve(&target, &err);
        if (!outdir) {
            fprintf(stderr, "opdb update: %s\n", err.msg);
            rc = err.code ? err.code : 1;
        }
    }
    if (rc == 0) {
        opdb_update_opts o;
        opdb_update_opts_init(&o);
        o.log = cli_log();
        o.modes = cli_modes();
        o.db_dir = outdir;
        o.prof_paths = prof;
        o.nprof = nprof;
        o.ops = (const char *const *)normops;
        o.nops = nops;
        o.missing_only = mode && strcmp(mode, "missing-only") == 0;
        o.prune = prune;
        o.quirks = quirks;
        o.add_new_ops = add_new;
        o.json = json;
        o.ep_size = ep_size;
        o.out = stdout;
        const char *eager = getenv("OPDB_UPDATE_EAGER");
        o.eager = eager && !strcmp(eager, "1");
        o.timestamp = getenv("OPDB_REPORT_TIMESTAMP");
        opdb_update_totals totals = {0, 0, 0, 0};
        o.totals = &totals;
        cli_tune_heap_for_tables();
        if (opdb_update_run(&o, &err)) {
            fflush(stdout);
            fprintf(stderr, "opdb update: %s\n", err.msg);
            rc = err.code ? err.code : 1;
        } else {
            cli_summary("opdb update", "%zu table%s under %s: %ld row%s updated, %ld added, %ld deleted", totals.tables,
                        cli_plural(totals.tables), outdir, totals.updated, cli_plural((unsigned long long)totals.updated),
                        totals.added, totals.deleted);
        }
    }
    cli_free_ops(normops, nops);
    free(outdir);
    free(prof);
    free(ops);
    free(rest);
    if (rc == -1) return 0;
    return rc == CLI_USAGE ? 2 : cli_strict_rc("opdb update", strict, rc);
}
