/* `opdb diff OLD NEW`: flags in, opdb_diff_run, exit code out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_summary.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "opdb/diff.h"
#include "opdb/pystr.h"


/* The options that take a value: their next argument is not a folder. */
static bool takes_value(const cli_spec *spec, const char *a) {
    if (strncmp(a, "--", 2) != 0 || strchr(a, '=')) return false;
    size_t n = strlen(a);
    for (size_t i = 0; i < spec->nopts; i++)
        if (spec->opts[i].metavar && strncmp(spec->opts[i].name, a, n) == 0) return true;
    return false;
}

static bool parse_fraction(const char *s, double lo_excl, double *out) {
    double x;
    return s && opdb_py_float(s, strlen(s), &x) && isfinite(x) && x > lo_excl && (*out = x, true);
}

int cmd_diff(int argc, char **argv) {
    const char *threshold = NULL, *alpha = NULL, *fail_on = NULL, *weights = NULL, *html = NULL;
    bool json = false, strict = false;
    cli_opt opts[] = {
        {"--threshold", "F", "a change counts only when |new - old| > F * old (default 0.05)", false, &threshold, NULL},
        {"--alpha", "F", "and only when Welch's two-sided p-value < F (default 0.05)", false, &alpha, NULL},
        {"--fail-on", "WHAT", "exit 1 on: regression (default: any REGRESSION), drift (also DRIFT, UNKNOWN, STATUS_CHANGE), never",
         false, &fail_on, NULL},
        {"--weights", "RESULTS.jsonl", "opdb query results of a model trace: weigh each kernel type by its share of end-to-end time",
         false, &weights, NULL},
        {"--json", NULL, "print JSON instead of Markdown", false, NULL, &json},
        {"--html", "FILE", "also write a self-contained HTML report", false, &html, NULL},
        {"--strict", NULL, "exit 1 when nothing could be compared (no kernel type or row on both sides, no weighted hit)",
         false, NULL, &strict},
    };
    cli_spec spec = {"opdb diff OLD NEW",
                     "Compare two database version folders row by row: REGRESSION / GAIN (large and significant),\n"
                     "DRIFT (large, not significant), UNKNOWN (large, no statistics to judge), SAME, ADDED, REMOVED,\n"
                     "STATUS_CHANGE; per kernel type the median new/old ratio. Rules: docs/DIFF.md.",
                     NULL,
                     opts, sizeof opts / sizeof opts[0]};
    spec.example = "opdb diff db/vllm0.18.0_torch2.9.0_cann8.3 db/vllm0.18.0_torch2.9.0_cann8.5 --weights trace.jsonl";
    spec.exits = "0 ok; 1 a REGRESSION (see --fail-on) or a runtime failure; 2 usage error";
    /* the two folders are positional: take them out before the option parser */
    char **rest = malloc(((size_t)argc + 1) * sizeof *rest);
    const char *dirs[2] = {NULL, NULL};
    int nrest = 0, ndirs = 0;
    bool extra = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i == 0 || (a[0] == '-' && a[1])) {
            rest[nrest++] = argv[i];
            if (i > 0 && takes_value(&spec, a) && i + 1 < argc) rest[nrest++] = argv[++i];
        } else if (ndirs < 2) {
            dirs[ndirs++] = a;
        } else {
            extra = true;
        }
    }
    rest[nrest] = NULL;
    int rc = cli_parse(&spec, nrest, rest);
    free(rest);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    if (ndirs != 2 || extra) return cli_usage_error(&spec, "expected two database folders, OLD and NEW"), 2;
    opdb_diff_options o;
    opdb_diff_options_init(&o);
    if (threshold && !parse_fraction(threshold, -1e-300, &o.threshold))
        return cli_usage_error(&spec, "argument --threshold: expected a number >= 0, got '%s'", threshold), 2;
    if (alpha && (!parse_fraction(alpha, 0, &o.alpha) || o.alpha > 1))
        return cli_usage_error(&spec, "argument --alpha: expected a number in (0, 1], got '%s'", alpha), 2;
    int fail = 0; /* 0 regression, 1 drift, 2 never */
    if (fail_on) {
        if (strcmp(fail_on, "regression") == 0) fail = 0;
        else if (strcmp(fail_on, "drift") == 0) fail = 1;
        else if (strcmp(fail_on, "never") == 0) fail = 2;
        else return cli_usage_error(&spec, "argument --fail-on: invalid choice: '%s' (choose from regression, drift, never)", fail_on), 2;
    }
    o.weights_path = weights;
    o.html_path = html;
    o.format = json ? OPDB_DIFF_JSON : OPDB_DIFF_MARKDOWN;
    o.out = stdout;
    o.warn = cli_warn_line;
    opdb_err err;
    opdb_err_clear(&err);
    opdb_diff_result res;
    if (opdb_diff_run(dirs[0], dirs[1], &o, &res, &err)) {
        fprintf(stderr, "opdb diff: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    size_t total = 0;
    for (int v = 0; v < OPDB_DIFF_NVERDICTS; v++) total += res.count[v];
    /* a run that compared nothing says so (and fails with --strict) */
    unsigned nothing = 0;
    if (!total) nothing++, cli_warn("no rows in either folder: nothing was compared");
    else if (!res.common_kernel_types)
        nothing++, cli_warn("%s and %s have no kernel type in common: every row is ADDED or "
                                   "REMOVED, nothing was compared", dirs[0], dirs[1]);
    else if (!res.paired)
        nothing++, cli_warn("%s and %s have no row in common: every row is ADDED or "
                                   "REMOVED, nothing was compared", dirs[0], dirs[1]);
    nothing += res.weighted && !res.weights_results; /* the library has said that every weight is 0 */
    if (strict && nothing) {
        fprintf(stderr, "opdb diff: --strict: %u warning(s) that the run produced nothing meaningful: exit 1\n", nothing);
        return 1;
    }
    if (total) {
        char line[512];
        size_t k = 0;
        for (int v = 0; v < OPDB_DIFF_NVERDICTS && k < sizeof line; v++)
            if (res.count[v])
                k += (size_t)snprintf(line + k, sizeof line - k, "%s%zu %s", k ? ", " : "", res.count[v],
                                      opdb_diff_verdict_name((opdb_diff_verdict)v));
        cli_summary("opdb diff", "compared %zu row%s: %s", total, cli_plural(total), line);
    }
    if (fail == 2) return 0;
    if (res.count[OPDB_DIFF_REGRESSION]) return 1;
    if (fail == 1 && (res.count[OPDB_DIFF_DRIFT] || res.count[OPDB_DIFF_UNKNOWN] || res.count[OPDB_DIFF_STATUS_CHANGE]))
        return 1;
    return 0;
}
