/* `opdb parse`: flags -> opdb_parse_run -> the reference's completion line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_opts.h"
#include "cli/cli_stdio.h"
#include "cli/cli_summary.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/db.h"
#include "opdb/ingest.h"

int cmd_parse(int argc, char **argv) {
    const char *profiling = NULL, *database = NULL, *device = NULL, *vllm = NULL, *torch = NULL, *cann = NULL,
               *threads = NULL;
    bool quirks = false, strict = false, no_progress = false, summary = false, merge = false, replace = false,
         json = false;
    cli_opt opts[] = {
        {"--profiling-path", "P", "a kernel_details*.csv (or msprof op_summary_*.csv) file, a folder scanned recursively, or - for a kernel_details CSV on stdin", true, &profiling, NULL},
        {"--database-path", "D", "database folder to write into (skips the version-folder logic)", false, &database, NULL},
        {"--device", "DEVICE", "device folder when --database-path is absent (default " OPDB_DEFAULT_DEVICE ")", false, &device, NULL},
        {"--vllm-version", "V", "vLLM-Ascend version, e.g. 0.9.2, or a full vllm<v>_torch<t>_cann<c> folder name", false, &vllm, NULL},
        {"--torch-version", "V", "PyTorch version, e.g. 2.9.0", false, &torch, NULL},
        {"--cann-version", "V", "CANN version, e.g. 8.5", false, &cann, NULL},
        {"--threads", "N", "worker threads (default: one per CPU; 1 = single-threaded)", false, &threads, NULL},
        {"--strict", NULL, "a row whose Duration(us) is not a number is an error (default: skipped with a warning); a run that writes no table exits 1", false, NULL, &strict},
        {"--reference-quirks", NULL, "reproduce the reference parser exactly, quirks included", false, NULL, &quirks},
        {"--merge", NULL, "combine rows with the tables already in the database (same shapes: counts, sums, min, max combined; new shapes appended) instead of replacing them", false, NULL, &merge},
        {"--replace", NULL, "replace existing tables even when they hold rows, columns or cells the new tables lack (written by bench, grid, update, fia-fill or an earlier parse); without --merge or --replace such a run exits 1 and writes nothing", false, NULL, &replace},
        {"--summary", NULL, "after the completion line, list each table written with its shapes, launches and total time", false, NULL, &summary},
        {"--json", NULL, "print the run's summary as one JSON object on stdout instead of the completion line (keys in docs/GUIDE.md)", false, NULL, &json},
        {"--no-progress", NULL, "never draw progress bars (they are drawn only when stderr is a terminal)", false, NULL, &no_progress},
    };
    cli_spec spec = {
        "opdb parse",
        "Parse profiler kernel details into one aggregated CSV per operator type.",
        "The database folder is --database-path, or <data root>/<device>/vllm_ascend/vllm<v>_torch<t>_cann<c>\n"
        "where the data root is $OPDB_DATA_ROOT or ./data.",
        opts,
        sizeof opts / sizeof opts[0],
    };
    spec.example = "opdb parse --profiling-path PROF_000001 --database-path db\nopdb parse --profiling-path new_profile --database-path db --merge";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;

    if (cli_check_db_flags(&spec, device, vllm, torch, cann) != CLI_OK) return 2;
    if (merge && quirks)
        return cli_usage_error(&spec, "--merge cannot be combined with --reference-quirks (the reference's tables lack the counts a merge needs)");
    if (merge && replace) return cli_usage_error(&spec, "--merge and --replace exclude each other");
    unsigned long nthreads = 0;
    if (threads && (!cli_parse_uint(threads, &nthreads) || nthreads > 64))
        return cli_usage_error(&spec, "argument --threads: expected a whole number from 0 to 64, got '%s'", threads);
    if (nthreads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (unsigned long)n : 1;
    }

    opdb_err err;
    opdb_err_clear(&err);
    opdb_db_target target = {database, device ? device : OPDB_DEFAULT_DEVICE, vllm, torch, cann, NULL};
    char *outdir = opdb_db_resolve(&target, &err);
    if (!outdir) {
        fprintf(stderr, "opdb parse: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    cli_stdio io = {0};
    const char *input = profiling; /* "-": stdin, read as one kernel_details file */
    if (cli_stdio_input(&io, "opdb parse", &input, "kernel_details.csv")) {
        free(outdir);
        return cli_stdio_finish(&io, "opdb parse", 1);
    }
    /* --json: stdout holds the JSON alone, the reference's own lines go to stderr */
    opdb_parse_opts po;
    opdb_parse_opts_init(&po);
    po.log = cli_log();
    po.modes = cli_modes();
    po.profiling_path = input;
    po.output_dir = outdir;
    po.reference_quirks = quirks;
    po.strict = strict;
    po.threads = (int)nthreads;
    po.no_progress = no_progress;
    po.reference_stdout = json ? stderr : stdout;
    po.merge = merge;
    po.replace = replace;
    const char *simple = getenv("OPDB_KINETO_SIMPLE"); /* tests: the same goldens through the simple path */
    po.kineto_simple = simple && *simple == '1';
    const char *sort_bytes = getenv("OPDB_KINETO_SORT_BYTES"); /* tests: force the sorts to spill */
    if (sort_bytes && atol(sort_bytes) > 0) po.kineto_sort_bytes = (size_t)atol(sort_bytes);
    opdb_parse_result res;
    if (opdb_parse_run(&po, &res, &err)) {
        fflush(stdout);
        fprintf(stderr, "opdb parse: %s\n", err.msg);
        free(outdir);
        opdb_parse_result_free(&res);
        return cli_stdio_finish(&io, "opdb parse", err.code ? err.code : 1);
    }
    if (json) {
        opdb_strbuf js;
        opdb_sb_init(&js);
        opdb_parse_result_json(&res, outdir, profiling, &js);
        printf("%s\n", js.p);
        opdb_sb_free(&js);
    } else {
        printf("Generated %zu csv file(s) under %s from %s\n", res.files_written, outdir, profiling);
    }
    if (!quirks && res.files_written == 0)
        cli_warn_nothing("no table written: %llu row(s) read, none kept (rows with N/A shapes or an empty Type are skipped)",
                         res.rows_read);
    if (summary && !json) {
        printf("%-40s %8s %10s %16s\n", "table", "shapes", "launches", "total(us)");
        for (size_t i = 0; i < res.ntables; i++)
            printf("%-40s %8zu %10llu %16.3f\n", res.tables[i].file, res.tables[i].shapes, res.tables[i].launches,
                   res.tables[i].total_us);
        printf("%zu input file(s), %llu row(s) read, %zu shape group(s)\n", res.input_files, res.rows_read, res.groups);
    }
    rc = cli_stdio_finish(&io, "opdb parse", fflush(stdout) == 0 ? 0 : 1);
    char a[32];
    if (rc == 0)
        cli_summary("opdb parse", "wrote %zu table%s to %s from %s row%s of %zu input file%s", res.ntables,
                    cli_plural(res.ntables), outdir, cli_count(a, sizeof a, res.rows_read), cli_plural(res.rows_read),
                    res.input_files, cli_plural(res.input_files));
    opdb_parse_result_free(&res);
    free(outdir);
    return cli_strict_rc("opdb parse", strict, rc);
}
