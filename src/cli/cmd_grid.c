/* `opdb grid`: flags -> opdb_grid_run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "cli/cli_summary.h"
#include "cli/cli_process.h"
#include "cli/cli_warn.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "opdb/db.h"
#include "opdb/grid.h"
#include "opdb/pystr.h"

/* An unknown --target-models name is a usage error naming the closest preset
 * (matched on the HF id or the part after its '/'). */
static int check_models(const cli_spec *spec, const char *models) {
    const char *cands[64], *ids[64];
    size_t n = 0;
    for (size_t i = 0; opdb_grid_model_name(i) && n + 2 <= 64; i++) {
        const char *id = opdb_grid_model_name(i), *slash = strrchr(id, '/');
        cands[n] = id, ids[n++] = id;
        if (slash) cands[n] = slash + 1, ids[n++] = id;
    }
    for (const char *s = models; *s;) {
        size_t len = strcspn(s, ",");
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)len, s);
        char *b = name, *e = name + strlen(name);
        while (*b == ' ' || *b == '\t') b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t')) *--e = '\0';
        if (*b && !opdb_grid_model_known(b)) {
            const char *near = cli_suggest(b, cands, n);
            for (size_t i = 0; near && i < n; i++)
                if (cands[i] == near) near = ids[i];
            if (near) return cli_usage_error(spec, "argument --target-models: unknown model '%s' (did you mean '%s'?)", b, near);
            return CLI_OK; /* the library's error lists the presets */
        }
        s += len + (s[len] == ',');
    }
    return CLI_OK;
}

int cmd_grid(int argc, char **argv) {
    const char *models = NULL, *db_path = NULL, *device = NULL, *vllm = NULL, *torch = NULL,
               *cann = NULL, *rows = NULL, *seed = NULL, *hbm = NULL, *config = NULL,
               *maxc = NULL, *misses = NULL;
    bool quirks = false, plan = false, json = false, strict = false;
    cli_opt opts[] = {
        {"--target-models", "A,B", "comma-separated models (HF ids or short names); default: all presets", false, &models, NULL},
        {"--database-path", "D", "explicit CSV root", false, &db_path, NULL, "--data-dir"},
        {"--device", "DEVICE", "device folder (default " OPDB_DEFAULT_DEVICE ")", false, &device, NULL},
        {"--vllm-version", "V", "vLLM version (derives the database folder)", false, &vllm, NULL},
        {"--torch-version", "V", "PyTorch version", false, &torch, NULL},
        {"--cann-version", "V", "CANN version", false, &cann, NULL},
        {"--rows", "N", "per-CSV cap on appended rows (default 1000; 0 = no cap)", false, &rows, NULL},
        {"--seed", "S", "integer seed: the same rows as Python's random.seed(S)", false, &seed, NULL},
        {"--max-hbm-gb", "G", "per-row memory budget in GiB (default 32; 0 disables)", false, &hbm, NULL},
        {"--max-candidates", "N", "refuse a pattern expanding to more candidate shapes (default 50000000)", false, &maxc, NULL},
        {"--config", "FILE", "grid configuration YAML (default: the built-in reference configuration)", false, &config, NULL},
        {"--plan", NULL, "per CSV: candidates / after memory filter / after dedup / to append (and the target models' coverage); write nothing", false, NULL, &plan},
        {"--json", NULL, "print the per-file counts and coverage as one JSON object on stdout (with --plan: the plan's; keys in docs/GUIDE.md)", false, NULL, &json},
        {"--reference-quirks", NULL, "reproduce the reference exactly (sampling before filtering, ...)", false, NULL, &quirks},
        {"--strict", NULL, CLI_STRICT_HELP "; also a database folder without op_mapping.yaml", false, NULL, &strict},
        {"--from-misses", "RESULTS.jsonl", "instead of the shape grid: one row per kernel-level miss in these opdb query "
                                           "results (with --plan: what would be added)", false, &misses, NULL},
    };
    cli_spec spec = {"opdb grid", "Append theory shape rows to database CSVs so that replay can measure them.", NULL, opts,
                     sizeof opts / sizeof opts[0]};
    spec.example = "opdb grid --database-path db --target-models Qwen/Qwen3-32B --plan\nopdb grid --database-path db --target-models Qwen/Qwen3-32B --rows 200 --seed 0";
    int rc = cli_parse(&spec, argc, argv);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;
    if (cli_check_db_flags(&spec, device, vllm, torch, cann) != CLI_OK) return 2;
    if (misses && (models || rows || seed || hbm || maxc || config || quirks))
        return cli_usage_error(&spec, "--from-misses takes none of --target-models, --rows, --seed, --max-hbm-gb, "
                                      "--max-candidates, --config, --reference-quirks");
    if (!rows) rows = "1000";
    if (!hbm) hbm = "32";
    if (models && check_models(&spec, models) != CLI_OK) return 2;
    opdb_grid_opts o;
    opdb_grid_opts_init(&o);
    o.log = cli_log();
    o.modes = cli_modes();
    const char *simple = getenv("OPDB_GRID_SIMPLE");
    o.simple = simple && !strcmp(simple, "1");
    o.err_out = stderr;
    long long v;
    if (!opdb_py_int(rows, strlen(rows), &v)) return cli_usage_error(&spec, "argument --rows: invalid int value: '%s'", rows);
    o.rows = v;
    if (seed) {
        if (!opdb_py_int(seed, strlen(seed), &v)) return cli_usage_error(&spec, "argument --seed: invalid int value: '%s'", seed);
        o.have_seed = true;
        o.seed = v;
    }
    unsigned long mc = 0;
    if (maxc && (!cli_parse_uint(maxc, &mc) || mc == 0))
        return cli_usage_error(&spec, "argument --max-candidates: expected a positive integer, got '%s'", maxc);
    o.max_candidates = mc;
    if (!opdb_py_float(hbm, strlen(hbm), &o.max_hbm_gb))
        return cli_usage_error(&spec, "argument --max-hbm-gb: invalid float value: '%s'", hbm);
    opdb_err err;
    opdb_err_clear(&err);
    char *root = NULL;
    if (db_path) {
        root = opdb_xstrdup(db_path);
    } else if (vllm) {
        opdb_db_target t = {NULL, device, vllm, torch, cann, NULL};
        if (!(root = opdb_db_resolve(&t, &err))) {
            fprintf(stderr, "opdb grid: %s\n", err.msg);
            return 2;
        }
    } else {
        const char *r = getenv(OPDB_DATA_ROOT_ENV);
        root = opdb_xstrdup(r && *r ? r : "data");
    }
    if (misses) {
        opdb_grid_misses *m = opdb_grid_misses_new();
        opdb_grid_miss_opts mo;
        opdb_grid_miss_opts_init(&mo);
        mo.log = cli_log();
        mo.modes = cli_modes();
        mo.root = root;
        mo.plan = plan;
        mo.json = json;
        mo.out = stdout;
        rc = opdb_grid_misses_read(m, misses, &err);
        if (!rc) rc = opdb_grid_from_misses(&mo, m, &err);
        opdb_grid_misses_free(m);
        free(root);
        if (rc) {
            fflush(stdout);
            fprintf(stderr, "opdb grid: %s\n", err.msg);
            return err.code ? err.code : 1;
        }
        return cli_strict_rc("opdb grid", strict, 0);
    }
    o.root = root;
    o.target_models = models;
    o.config_path = config;
    o.quirks = quirks;
    o.plan = plan;
    o.json = json;
    o.out = stdout;
    opdb_grid_totals totals = {0};
    o.totals = &totals;
    rc = opdb_grid_run(&o, &err);
    if (rc) {
        free(root);
        fflush(stdout);
        fprintf(stderr, "opdb grid: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    char n[32];
    cli_summary("opdb grid", "%s %s row%s to %zu of %zu CSV file%s under %s%s", plan ? "would append" : "appended",
                cli_count(n, sizeof n, totals.rows), cli_plural(totals.rows), totals.files_appended, totals.files,
                cli_plural(totals.files), root, plan ? " (--plan: nothing written)" : "");
    free(root);
    return cli_strict_rc("opdb grid", strict, 0);
}
