/* `opdb <command> ...`: dispatch to one cmd_<name>.c per command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "opdb/api.h"
#include "opdb/fs.h"
#include "opdb/version.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command k_commands[] = {
    {"parse", cmd_parse, "profiler kernel_details/op_summary CSVs -> per-operator database tables"},
    {"aie", cmd_aie, "AMD AIE trace post-processing: per-core iteration timings and GMAC/s"},
    {"bench", cmd_bench, "replay database rows on this CPU/GPU, measure them and write the durations back"},
    {"fia-fill", cmd_fia_fill, "back-fill FusedInferAttentionScore runtime metadata from a JSONL dump"},
    {"m6", cmd_m6, "M6: predicted time of database-answered ops / real forward-pass time"},
    {"shape-compare", cmd_shape_compare, "per (kernel type, shape) TC-trace vs forward-pass comparison as CSV"},
    {"compare", cmd_compare, "per-kernel-type comparison of a model's Chrome trace with a measured forward pass"},
    {"trace2csv", cmd_trace2csv, "flatten a performance-model Chrome trace's complete events into CSV"},
    {"update", cmd_update, "merge msprof op_summary measurements into a database, report the gaps"},
    {"grid", cmd_grid, "append theory shape grids (model presets, patterns) to database CSVs for replay"},
    {"query", cmd_query, "operator latencies from a database, as the performance model looks them up (JSONL in/out)"},
    {"diff", cmd_diff, "what changed between two database folders: regressions, gains, drift (Welch's t-test)"},
    {"check", cmd_check, "leave-one-out: how well a database's interpolation recovers its own rows"},
    {"validate", cmd_validate, "check a database folder and list its problems (exit 1 if any)"},
    {"comm", cmd_comm, "collective microbenchmarks over MPI, nccl-tests/OSU log import, alpha-beta check"},
};

static const char k_example[] = "opdb parse --profiling-path PROF_000001 --database-path db\n"
                                "opdb validate --database-path db";

/* With OPDB_HELP_FORMAT=table (stdout only): the records the man page and
 * completion generator reads (K: a command). */
static void usage(FILE *f) {
    enum { N = sizeof k_commands / sizeof k_commands[0] };
    const char *fmt = getenv("OPDB_HELP_FORMAT");
    if (f == stdout && fmt && !strcmp(fmt, "table")) {
        printf("S\tbuild, maintain and check operator performance databases\n");
        for (size_t i = 0; i < N; i++) printf("K\t%s\t%s\n", k_commands[i].name, k_commands[i].summary);
        for (const char *e = k_example; *e;) {
            size_t len = strcspn(e, "\n");
            printf("X\t%.*s\n", (int)len, e);
            e += len + (e[len] == '\n');
        }
        printf("C\t%s\n", CLI_EXITS);
        return;
    }
    size_t width = f == stdout ? cli_help_width() : 80;
    fprintf(f, "usage: opdb <command> [options]\n\n"
               "opdb builds, maintains and checks operator performance databases.\n\ncommands:\n");
    for (size_t i = 0; i < N; i++) {
        fprintf(f, "  %-13s ", k_commands[i].name);
        cli_put_wrapped(f, k_commands[i].summary, 16, 16, width);
    }
    fprintf(f, "\n");
    cli_put_wrapped(f, "Run 'opdb <command> --help' for a command's options, 'opdb --version' (-V) for the version and the build.",
                    0, 0, width);
    cli_print_help_tail(f, k_example, NULL, width);
}

int main(int argc, char **argv) {
    /* the process policy, which the library leaves to its program */
    cli_install_settings();
    cli_install_note_printer();
    cli_install_oom_handler();
    cli_install_signal_handlers();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        if (strcmp(name, "help") == 0 && argc > 2) {
            char *help_argv[] = {argv[2], "--help", NULL};
            for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++)
                if (strcmp(argv[2], k_commands[i].name) == 0) return k_commands[i].run(2, help_argv);
        }
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0 || strcmp(name, "version") == 0) {
        printf("opdb %s\nrevision: %s\nfeatures: %s\n", opdb_version(), opdb_build_revision(), opdb_build_features());
        return 0;
    }
    for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++)
        if (strcmp(name, k_commands[i].name) == 0) {
            char prog[64];
            snprintf(prog, sizeof prog, "opdb %s", name);
            cli_warn_begin(prog);
            int rc = k_commands[i].run(argc - 1, argv + 1);
            return rc == OPDB_ERR_NOMEM ? 1 : rc; /* out of memory is a runtime failure */
        }
    const char *names[sizeof k_commands / sizeof k_commands[0]];
    for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++) names[i] = k_commands[i].name;
    const char *near = cli_suggest(name, names, sizeof names / sizeof names[0]);
    if (near) fprintf(stderr, "opdb: unknown command '%s' (did you mean '%s'?)\n", name, near);
    else fprintf(stderr, "opdb: unknown command '%s'\n", name);
    usage(stderr);
    return 2;
}
