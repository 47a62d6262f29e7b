/* `opdb comm bench|validate|import`. bench execs the opdb-comm helper (the
 * only binary linked with MPI) so `opdb` never maps libmpi. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_opts.h"
#include "cli/comm_bench_args.h"
#include "cli/cli_summary.h"
#include "cli/commands.h"
#include "cli/cli_stdio.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "cli/suggest.h"
#include "opdb/comm.h"
#include "opdb/fs.h"
#include "opdb/json_writer.h"
#include "opdb/pystr.h"

#ifndef OPDB_COMM_HELPER_INSTALLED
#define OPDB_COMM_HELPER_INSTALLED ""
#endif

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static int comm_bench(int argc, char **argv);
static int comm_validate(int argc, char **argv);
static int comm_import(int argc, char **argv);

static const subcommand k_subs[] = {
    {"bench", comm_bench, "run collectives over MPI and append hcom_*.csv rows (under mpirun -np N)"},
    {"validate", comm_validate, "check hcom_*.csv against the alpha-beta model, with a fitted model per group"},
    {"import", comm_import, "turn nccl-tests or OSU logs into hcom_*.csv rows"},
};
enum { NSUBS = sizeof k_subs / sizeof k_subs[0] };
static const char k_summary[] = "Collective communication tables (hcom_*.csv) of a database folder.";
static const char k_example[] = "mpirun -np 8 opdb comm bench --ops all_reduce --database-path db\n"
                                "opdb comm import --database-path db --logs all_reduce_perf.log";

/* `opdb comm --help`; with OPDB_HELP_FORMAT=table the records the man page
 * and completion generator reads (K: a subcommand). */
static void comm_help(FILE *f) {
    const char *fmt = getenv("OPDB_HELP_FORMAT");
    if (f == stdout && fmt && !strcmp(fmt, "table")) {
        printf("S\t%s\n", k_summary);
        for (size_t i = 0; i < NSUBS; i++) printf("K\t%s\t%s\n", k_subs[i].name, k_subs[i].summary);
        for (const char *e = k_example; *e;) {
            size_t len = strcspn(e, "\n");
            printf("X\t%.*s\n", (int)len, e);
            e += len + (e[len] == '\n');
        }
        printf("C\t%s\n", CLI_EXITS);
        return;
    }
    size_t width = f == stdout ? cli_help_width() : 80;
    fprintf(f, "usage: opdb comm <subcommand> [options]\n\n");
    cli_put_wrapped(f, k_summary, 0, 0, width);
    fprintf(f, "\nsubcommands:\n");
    for (size_t i = 0; i < NSUBS; i++) {
        fprintf(f, "  %-10s ", k_subs[i].name);
        cli_put_wrapped(f, k_subs[i].summary, 13, 13, width);
    }
    fprintf(f, "\nRun 'opdb comm <subcommand> --help' for its options.\n");
    cli_print_help_tail(f, k_example, NULL, width);
}

/* The helper beside this executable (build tree), then the installed one
 * ($OPDB_COMM_HELPER overrides both); 0 when it is there. */
int cmd_comm_helper(char *out, size_t cap) {
    const char *env = getenv("OPDB_COMM_HELPER");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, X_OK);
    }
    char self[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k > 0) {
        self[k] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(out, cap, "%s/opdb-comm", self);
            if (access(out, X_OK) == 0) return 0;
        }
    }
    if (OPDB_COMM_HELPER_INSTALLED[0]) {
        snprintf(out, cap, "%s", OPDB_COMM_HELPER_INSTALLED);
        return access(out, X_OK);
    }
    return -1;
}

/* comm bench's options, for --help, the man page and completion; the values
 * are parsed by cli_comm_bench_parse, here and again in the helper. */
static int comm_bench_help(void) {
    const char *v = NULL;
    bool f = false;
    cli_opt opts[] = {
        {"--ops", "OP...", "all_reduce all_gather reduce_scatter all_to_all broadcast (default: the first four)", false, &v, NULL},
        {"--num-devices", "N...", "group sizes (default: the MPI world size; --reference-quirks: 16); sizes above the "
                                  "world are skipped, and a run left with nothing exits 1", false, &v, NULL},
        {"--topology-tier", "T...", "tiers 0-2 (default: the tier of ranks 0..N-1 on the grid)", false, &v, NULL},
        {"--grid-shape", "D...", "hardware grid (default 48 8 2)", false, &v, NULL},
        {"--dtype", "DT", "torch.bfloat16 (default), torch.float16, torch.float32, torch.int8", false, &v, NULL},
        {"--bytes-grid", "B...", "message sizes in bytes, each a multiple of the element size (default 1024 .. 536870912, powers of two)", false, &v, NULL},
        {"--database-path", "D", "folder of the per-op tables D/hcom_<op>_.csv", false, &v, NULL, "--output-dir"},
        {"--output-csv", "F", "one CSV for everything (only with a single --ops value)", false, &v, NULL},
        {"--overhead-table", "F", "dispatch overheads 'op,num_devices,overhead_us' (default: the reference's)", false, &v, NULL},
        {"--json", "[F]", "per-size time_us (mean), min/median/p90/max and per-rank spread as JSON: on stdout, or "
                          "into the file F", false, &v, NULL},
        {"--warmup-iters", "N", "(also -w) warm-up iterations per size (default 5)", false, &v, NULL},
        {"--iters", "N", "(also -n) timed iterations per size (default 20)", false, &v, NULL},
        {"--time-budget", "S", "instead of -n: per size, as many timed iterations as fit in S seconds (from 3 "
                               "calibration iterations after the warm-up; at most 100000)", false, &v, NULL},
        {"--check", NULL, "verify the result buffers and count #wrong", false, NULL, &f},
        {"--backend", "B", "mpi (default) or nccl", false, &v, NULL},
        {"--reference-quirks", NULL, "also print the reference's console lines", false, NULL, &f},
    };
    cli_spec spec = {"opdb comm bench",
                     "Collective microbenchmarks over MPI (run it under mpirun -np N): every rank runs the collectives "
                     "of each (op, num_devices, tier, message size); the group's first rank appends the reference's "
                     "hcom_*.csv rows (dispatch overhead added) and prints nccl-tests lines.\n\n"
                     "Each line's time (us) is the median of the timed iterations, each iteration timed by its slowest "
                     "rank; the CSV's Duration(us) is that median (all_reduce in place, the others out of place) plus "
                     "the op's dispatch overhead, printed in the op's header. --json adds min/median/p90/max, the mean "
                     "(time_us: the timed loop / iterations, nccl-tests' time) and the per-rank spread.",
                     NULL, opts, sizeof opts / sizeof opts[0],
                     "mpirun -np 8 opdb comm bench --ops all_reduce all_gather --database-path db",
                     "0 ok, 1 failure (no configuration fits, an MPI or NCCL error), 2 usage error"};
    char *argv[] = {"opdb comm bench", "--help", NULL};
    cli_parse(&spec, 2, argv);
    return 0;
}

static int comm_bench(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return comm_bench_help();
    opdb_comm_bench_opts o;
    int rc = cli_comm_bench_parse(argc, argv, &o);
    opdb_comm_bench_opts_free(&o);
    if (rc) return rc == 1 ? 0 : rc;
    char helper[PATH_MAX + 16];
    if (cmd_comm_helper(helper, sizeof helper)) {
        fprintf(stderr, "opdb comm bench: the opdb-comm MPI helper is not available in this build "
                        "(no MPI was found when opdb was configured)\n");
        return 1;
    }
    char **args = opdb_xcalloc((size_t)argc + 1, sizeof *args);
    args[0] = helper;
    for (int i = 1; i < argc; i++) args[i] = argv[i];
    fflush(NULL);
    execv(helper, args);
    fprintf(stderr, "opdb comm bench: cannot run %s\n", helper);
    free(args);
    return 1;
}

static int comm_validate(int argc, char **argv) {
    const char *dir = NULL, *tol = "2.0";
    bool verbose = false, json = false, quirks = false, strict = false;
    cli_opt opts[] = {
        {"--database-path", "D", "folder holding hcom_*.csv", true, &dir, NULL, "--csv-dir"},
        {"--tolerance", "T", "acceptable ratio tolerance (default 2.0)", false, &tol, NULL},
        {"--verbose", NULL, "print every checked row", false, NULL, &verbose},
        {"--json", NULL, "print the verdicts and fits as JSON", false, NULL, &json},
        {"--strict", NULL, "exit 1 when no row was checked (without it: 'Result: NO DATA' and a warning)", false, NULL,
         &strict},
        {"--reference-quirks", NULL, "reproduce the reference validator exactly (no fit, BOM and nan quirks; 'OK' on no data)", false,
         NULL, &quirks},
    };
    cli_spec spec = {"opdb comm validate",
                     "Compare measured hcom_*.csv durations with the alpha-beta model per tier: PASS within T,\n"
                     "WARN within 2T, FAIL beyond (exit 1 on any FAIL); a least-squares alpha/beta fit per\n"
                     "(op, devices, tier) with R^2 and relative residuals is printed beside the verdict.",
                     NULL, opts, sizeof opts / sizeof opts[0], "opdb comm validate --database-path db --tolerance 1.5",
                     "0 every row within tolerance, 1 a FAIL row or a runtime failure (--strict: also no row checked), "
                     "2 usage error"};
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    opdb_comm_validate_totals t = {0};
    opdb_comm_validate_opts o;
    opdb_comm_validate_opts_init(&o);
    o.log = cli_log();
    o.modes = cli_modes();
    o.csv_dir = dir;
    o.verbose = verbose;
    o.reference_quirks = quirks;
    o.json = json;
    o.strict = strict;
    o.totals = &t;
    if (!opdb_py_float(tol, strlen(tol), &o.tolerance) || !(o.tolerance > 0))
        return cli_usage_error(&spec, "argument --tolerance: invalid float value: '%s'", tol), 2;
    opdb_err err;
    opdb_err_clear(&err);
    rc = opdb_comm_validate(&o, stdout, stderr, &err);
    if (rc < 0) {
        fflush(stdout);
        fprintf(stderr, "opdb comm validate: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    char n[32];
    if (rc == 0 && t.rows)
        cli_summary("opdb comm validate", "checked %s row%s of %zu table%s: %d PASS, %d WARN, %d FAIL",
                    cli_count(n, sizeof n, t.rows), cli_plural(t.rows), t.tables, cli_plural(t.tables), t.pass, t.warn, t.fail);
    return rc;
}

/* An unknown collective: a usage error with the closest name, else the list. */
static int unknown_collective(const cli_spec *spec, const char *op) {
    const char *names[OPDB_COMM_NOPS];
    for (int i = 0; i < OPDB_COMM_NOPS; i++) names[i] = opdb_comm_op_name((opdb_comm_op)i);
    const char *near = cli_suggest(op, names, OPDB_COMM_NOPS);
    if (near) return cli_usage_error(spec, "argument --ops: invalid choice: '%s' (did you mean '%s'?)", op, near);
    char list[256] = "";
    for (int i = 0; i < OPDB_COMM_NOPS; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", i ? ", " : "", names[i]);
    return cli_usage_error(spec, "argument --ops: invalid choice: '%s' (choose from %s)", op, list);
}

static int comm_import(int argc, char **argv) {
    const char *out = NULL, *op = NULL, *nd = NULL, *dtype = NULL, *tier = NULL, *half = NULL, *ovh = NULL,
               *one_log = NULL;
    bool ref_ovh = false, strict = false, json = false;
    const char **logs = NULL;
    size_t nlogs = 0;
    char **rest = opdb_xcalloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--logs")) cli_take_list(&i, argc, argv, &logs, &nlogs);
        else rest[nrest++] = argv[i];
    }
    cli_opt opts[] = {
        {"--logs", "LOG", "nccl-tests or OSU logs to import (one or more; - for stdin)", false, &one_log, NULL},
        {"--database-path", "D", "folder of the hcom_*.csv tables (rows are appended)", true, &out, NULL, "--output-dir"},
        {"--ops", "OP", "collective, when neither the log nor its file name says it", false, &op, NULL, "--op"},
        {"--num-devices", "N", "device count (default: the log's '#  Rank' lines)", false, &nd, NULL},
        {"--dtype", "DT", "dtype label (default: the nccl-tests type column, else torch.bfloat16)", false, &dtype, NULL},
        {"--topology-tier", "T", "tier 0-2 (default: 0 when the ranks span hosts, else 1)", false, &tier, NULL},
        {"--time", "WHICH", "nccl-tests half: in-place or out-of-place (default: in-place for all_reduce, as "
                            "bench)", false, &half, NULL},
        {"--overhead-table", "F", "add these dispatch overheads 'op,num_devices,overhead_us'", false, &ovh, NULL},
        {"--reference-overhead", NULL, "add the reference's dispatch overheads", false, NULL, &ref_ovh},
        {"--strict", NULL, "exit 1 when no row was imported", false, NULL, &strict},
        {"--json", NULL, "print the summary as one JSON object on stdout (keys: command, output_dir, rows, logs: "
                         "log, rows, skipped, wrong_rows, summary)", false, NULL, &json},
    };
    cli_spec spec = {"opdb comm import",
                     "Append the rows of nccl-tests logs (any version, mpirun/srun prefixes) and OSU collective logs\n"
                     "to <database-path>/hcom_<op>_.csv. A log that cannot be imported is refused with one line.",
                     NULL, opts, sizeof opts / sizeof opts[0],
                     "opdb comm import --database-path db --logs all_reduce_perf.log osu_allgather.log\n"
                     "srun ... all_reduce_perf | opdb comm import --database-path db --logs -",
                     "0 ok, 1 a log could not be imported (--strict: also no row imported), 2 usage error"};
    int rc = cli_parse(&spec, nrest, rest);
    free(rest);
    if (rc == CLI_HELP) return free((void *)logs), 0;
    if (rc != CLI_OK) return free((void *)logs), 2;
    if (one_log) { /* --logs=FILE, the one spelling cli_take_list leaves to cli_parse */
        logs = opdb_xrealloc((void *)logs, (nlogs + 1) * sizeof *logs);
        logs[nlogs++] = one_log;
    }
    opdb_comm_import_opts o;
    opdb_comm_import_opts_init(&o);
    o.log = cli_log();
    o.modes = cli_modes();
    o.output_dir = out;
    long long v;
    if (!nlogs) rc = cli_usage_error(&spec, "argument --logs: at least one log is required");
    else if (op && (o.op = opdb_comm_op_parse(op)) < 0) rc = unknown_collective(&spec, op);
    else if (nd && (!opdb_py_int(nd, strlen(nd), &v) || v < 1 || v > OPDB_COMM_MAX_DEVICES))
        rc = cli_usage_error(&spec, "argument --num-devices: expected 1 to %d devices, got '%s'", OPDB_COMM_MAX_DEVICES, nd);
    else if (dtype && !(o.dtype = opdb_comm_dtype_find(dtype))) rc = cli_usage_error(&spec, "argument --dtype: invalid choice: '%s'", dtype);
    else if (tier && (!opdb_py_int(tier, strlen(tier), &v) || v < 0 || v > 2)) rc = cli_usage_error(&spec, "argument --topology-tier: invalid choice: '%s'", tier);
    else if (half && strcmp(half, "in-place") && strcmp(half, "out-of-place")) rc = cli_usage_error(&spec, "argument --time: invalid choice: '%s'", half);
    if (rc) return free((void *)logs), 2;
    if (nd) o.num_devices = atoll(nd);
    if (tier) o.tier = atoi(tier);
    if (half) o.time_half = half[0] == 'i' ? 2 : 1;
    opdb_comm_overheads t = {NULL, 0};
    opdb_err err;
    opdb_err_clear(&err);
    if (ovh || ref_ovh) {
        opdb_comm_overheads_default(&t);
        if (ovh && opdb_comm_overheads_load(&t, ovh, &err)) {
            fprintf(stderr, "opdb comm import: %s\n", err.msg);
            opdb_comm_overheads_free(&t);
            return free((void *)logs), err.code;
        }
        o.overheads = &t;
    }
    cli_stdio io = {0};
    for (size_t i = 0; i < nlogs; i++) /* "-": the log on stdin, named by its content (or --ops) */
        if (cli_stdio_input(&io, "opdb comm import", &logs[i], "stdin.log")) {
            opdb_comm_overheads_free(&t);
            return free((void *)logs), cli_stdio_finish(&io, "opdb comm import", 1);
        }
    int status = 0;
    size_t total = 0;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_json j;
    opdb_json_init(&j, &sb);
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "command");
    opdb_json_string(&j, "comm import");
    opdb_json_key(&j, "output_dir");
    opdb_json_string(&j, out);
    opdb_json_key(&j, "logs");
    opdb_json_begin_array(&j);
    for (size_t i = 0; i < nlogs; i++) {
        opdb_comm_import_result res;
        opdb_err_clear(&err);
        if (opdb_comm_import_file(&o, logs[i], &res, &err)) {
            fprintf(stderr, "opdb comm import: %s\n", err.msg);
            status = 1;
            continue;
        }
        total += res.rows;
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "log");
        opdb_json_string(&j, logs[i]);
        const char *keys[3] = {"rows", "skipped", "wrong_rows"};
        size_t vals[3] = {res.rows, res.skipped, res.wrong_rows};
        for (int k = 0; k < 3; k++) {
            opdb_json_key(&j, keys[k]);
            opdb_json_int(&j, (long long)vals[k]);
        }
        opdb_json_key(&j, "summary");
        opdb_json_string(&j, res.summary);
        opdb_json_end_object(&j);
        if (json) continue;
        printf("%s\n", res.summary);
        if (res.skipped) printf("  %zu rows without a positive size and time skipped\n", res.skipped);
        if (res.wrong_rows)
            cli_warn("%s: %zu rows report #wrong != 0 (imported; check the run)", opdb_path_shown(logs[i]), res.wrong_rows);
    }
    opdb_json_end_array(&j);
    opdb_json_key(&j, "rows");
    opdb_json_int(&j, (long long)total);
    opdb_json_end_object(&j);
    if (json) printf("%s\n", sb.p);
    opdb_sb_free(&sb);
    if (total == 0 && status == 0) {
        fprintf(stderr, "opdb comm import: no row was imported\n");
        if (strict) status = 1;
    } else if (status == 0) {
        cli_summary("opdb comm import", "imported %zu row%s from %zu log%s into %s", total, cli_plural(total), nlogs,
                    cli_plural(nlogs), out);
    }
    opdb_comm_overheads_free(&t);
    free((void *)logs);
    return cli_stdio_finish(&io, "opdb comm import", status);
}

int cmd_comm(int argc, char **argv) {
    if (argc < 2) {
        comm_help(stderr);
        return 2;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
        comm_help(stdout);
        return 0;
    }
    const char *names[NSUBS];
    for (size_t i = 0; i < NSUBS; i++) {
        names[i] = k_subs[i].name;
        if (!strcmp(sub, k_subs[i].name)) {
            char prog[64];
            snprintf(prog, sizeof prog, "opdb comm %s", sub);
            cli_warn_begin(prog);
            return k_subs[i].run(argc - 1, argv + 1);
        }
    }
    const char *near = cli_suggest(sub, names, NSUBS);
    if (near) fprintf(stderr, "opdb comm: unknown subcommand '%s' (did you mean '%s'?)\n", sub, near);
    else fprintf(stderr, "opdb comm: unknown subcommand '%s'\n", sub);
    comm_help(stderr);
    return 2;
}
