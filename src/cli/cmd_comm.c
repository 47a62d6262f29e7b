/* `opdb comm bench|validate|import`. bench execs the opdb-comm helper (the
 * only binary linked with MPI) so `opdb` never maps libmpi. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_opts.h"
#include "cli/cli_summary.h"
#include "cli/commands.h"
#include "opdb/comm.h"
#include "opdb/fs.h"
#include "opdb/json_writer.h"
#include "opdb/pystr.h"

#ifndef OPDB_COMM_HELPER_INSTALLED
#define OPDB_COMM_HELPER_INSTALLED ""
#endif

static const char k_usage[] =
    "usage: opdb comm <subcommand> [options]\n\n"
    "Collective communication tables (hcom_*.csv):\n"
    "  bench      run collectives over MPI: mpirun -np N opdb comm bench --ops all_reduce ...\n"
    "  validate   check hcom_*.csv against the alpha-beta model, with a fitted model per group\n"
    "  import     turn an nccl-tests or OSU log into hcom_*.csv rows\n\n"
    "Run 'opdb comm <subcommand> --help' for its options.\n";

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

static int comm_bench(int argc, char **argv) {
    opdb_comm_bench_opts o;
    int rc = opdb_comm_bench_parse(argc, argv, &o);
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
        {"--csv-dir", "D", "folder holding hcom_*.csv", true, &dir, NULL},
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
                     NULL, opts, sizeof opts / sizeof opts[0]};
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    opdb_comm_validate_opts o = {dir, 2.0, verbose, quirks, json, strict};
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
    return rc;
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
        {"--logs", "LOG", "nccl-tests or OSU logs to import (one or more)", false, &one_log, NULL},
        {"--output-dir", "D", "folder of the hcom_*.csv tables (rows are appended)", true, &out, NULL},
        {"--op", "OP", "collective, when neither the log nor its file name says it", false, &op, NULL},
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
                     "to <output-dir>/hcom_<op>_.csv. A log that cannot be imported is refused with one line.",
                     NULL, opts, sizeof opts / sizeof opts[0]};
    int rc = cli_parse(&spec, nrest, rest);
    free(rest);
    if (rc == CLI_HELP) return free((void *)logs), 0;
    if (rc != CLI_OK) return free((void *)logs), 2;
    if (one_log) { /* --logs=FILE, the one spelling cli_take_list leaves to cli_parse */
        logs = opdb_xrealloc((void *)logs, (nlogs + 1) * sizeof *logs);
        logs[nlogs++] = one_log;
    }
    opdb_comm_import_opts o = {out, -1, 0, NULL, -1, 0, NULL};
    long long v;
    if (!nlogs) rc = cli_usage_error(&spec, "argument --logs: at least one log is required");
    else if (op && (o.op = opdb_comm_op_parse(op)) < 0) rc = cli_usage_error(&spec, "argument --op: invalid choice: '%s'", op);
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
        if (res.wrong_rows) printf("  WARNING: %zu rows report #wrong != 0 (imported; check the run)\n", res.wrong_rows);
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
    return status;
}

int cmd_comm(int argc, char **argv) {
    if (argc < 2) {
        fputs(k_usage, stderr);
        return 2;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
        fputs(k_usage, stdout);
        return 0;
    }
    if (!strcmp(sub, "bench")) return comm_bench(argc - 1, argv + 1);
    if (!strcmp(sub, "validate")) return comm_validate(argc - 1, argv + 1);
    if (!strcmp(sub, "import")) return comm_import(argc - 1, argv + 1);
    fprintf(stderr, "opdb comm: unknown subcommand '%s'\n%s", sub, k_usage);
    return 2;
}
