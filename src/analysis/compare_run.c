/* `opdb compare` end to end: the reference's fixed scenario list (or one
 * scenario from the command line), the console report, the JSON file and
 * the optional HTML page. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "opdb/compare.h"
#include "core/call.h"
#include "opdb/fs.h"
#include "opdb/pyliteral.h"

#define DEFAULT_TRACE_DIR "docs/perf_database/forward_pass_traces"
#define DEFAULT_DATA_DIR                                                                                 \
    "tensor_cast/performance_model/profiling_database/data/ATLAS_800_A3_752T_128G_DIE/vllm_ascend/" \
    "vllm0.18.0_torch2.9.0_cann8.5"
#define DEFAULT_OUTPUT "results/op_comparison.json"

typedef struct scenario_spec {
    char *name, *m6, *prof, *tc;
} scenario_spec;

static const struct {
    const char *name, *m6, *csv, *tc;
} k_scenarios[] = {
    {"Qwen3 PF", "results/qwen3_prefill_m6.json", "qwen3-32b_pf_4112tok.csv", "results/qwen3_pf_trace.json"},
    {"Qwen3 DC", "results/qwen3_decode_m6.json", "qwen3-32b_dc_16tok.csv", "results/qwen3_dc_trace.json"},
    {"DSv3 PF", "results/dsv3_prefill_m6.json", "dsv3_pf_4099tok.csv", "results/dsv3_pf_trace.json"},
    {"DSv3 DC", "results/dsv3_decode_m6.json", "dsv3_dc_1tok.csv", "results/dsv3_dc_trace.json"},
};

/* FileNotFoundError is what the reference turns into a SKIP line. */
static bool missing(const char *path) {
    struct stat st;
    return stat(path, &st) != 0 && errno == ENOENT;
}

/* 1: the scenario is skipped (SKIP line printed), 0: go on, -1: error. */
static int check_input(const char *path, const scenario_spec *s, const opdb_cmp_opts *o, opdb_strbuf *con,
                       opdb_err *err) {
    if (!missing(path)) return 0;
    if (!o->quirks) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s: No such file or directory", s->name, path);
    opdb_sb_addf(con, "SKIP %s: [Errno 2] No such file or directory: ", s->name);
    opdb_py_repr_str(con, path, strlen(path));
    opdb_sb_addc(con, '\n');
    return 1;
}

static void flush_console(opdb_strbuf *con, FILE *out) {
    if (out && con->n) fwrite(con->p, 1, con->n, out);
    if (out) fflush(out);
    opdb_sb_clear(con);
}

/* One scenario: 0 with sc filled, 1 when skipped, -1 on error. */
static int run_scenario(const scenario_spec *s, const opdb_cmp_mapping *map, const opdb_cmp_opts *o, FILE *out,
                        opdb_cmp_scenario *sc, opdb_err *err) {
    opdb_strbuf con;
    opdb_sb_init(&con);
    opdb_cmp_stats tc, prof;
    memset(&tc, 0, sizeof tc);
    memset(&prof, 0, sizeof prof);
    double n_fwd = 1.0;
    int rc = 0;
    /* the reference opens M6 JSON, then reads the whole TC trace, then the CSV */
    if (s->m6 && (rc = check_input(s->m6, s, o, &con, err)) == 0) rc = opdb_cmp_read_nfwd(s->m6, &n_fwd, err);
    if (rc == 0 && (rc = check_input(s->tc, s, o, &con, err)) == 0) rc = opdb_cmp_read_tc(s->tc, map, o, &tc, err);
    if (rc == 0 && (rc = check_input(s->prof, s, o, &con, err)) == 0) rc = opdb_cmp_read_prof(s->prof, o, &prof, err);
    if (rc == 0) {
        sc->name = opdb_xstrdup(s->name);
        opdb_cmp_build_rows(&tc, &prof, n_fwd, sc);
        size_t both = 0;
        for (size_t i = 0; i < sc->nrows; i++) both += sc->rows[i].tc_count > 0 && sc->rows[i].prof_count > 0;
        if (!o->quirks && !sc->nrows) opdb_warn_nothing("%s: no kernel type in either trace", s->name);
        else if (!o->quirks && !both)
            opdb_warn_nothing("%s: no kernel type is in both traces (%zu kernel type(s), none compared)", s->name, sc->nrows);
        if (o->quirks) opdb_cmp_console(&con, sc);
        else opdb_cmp_console_table(&con, sc, o->top);
    }
    flush_console(&con, out);
    opdb_sb_free(&con);
    opdb_cmp_stats_free(&tc);
    opdb_cmp_stats_free(&prof);
    return rc;
}

static int write_file(const char *path, FILE *dash, const opdb_strbuf *text, opdb_err *err) {
    if (strcmp(path, "-") == 0) { /* the caller's stream (opdb: stdout; the console report then goes aside) */
        bool eol = text->n && text->p[text->n - 1] == '\n'; /* the HTML page ends its line, the JSON does not */
        if (!dash) return opdb_fail(err, OPDB_ERR_USAGE, "'-' as an output needs opdb_compare_args.dash");
        if (fwrite(text->p, 1, text->n, dash) != text->n || (!eol && fputc('\n', dash) == EOF) || fflush(dash))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "<stdout>: write failed");
        return 0;
    }
    char *parent = opdb_path_parent(path);
    int rc = parent && parent[0] ? opdb_mkdirs(parent, err) : 0;
    free(parent);
    return rc ? rc : opdb_atomic_write(path, text->p, text->n, err);
}

static void scenarios_from_args(const opdb_compare_args *a, scenario_spec **out, size_t *n) {
    if (a->tc_trace) {
        scenario_spec *s = opdb_xcalloc(1, sizeof *s);
        s->name = opdb_xstrdup(a->name ? a->name : opdb_path_basename(opdb_path_shown(a->tc_trace)));
        s->m6 = a->m6 ? opdb_xstrdup(a->m6) : NULL;
        s->prof = opdb_xstrdup(a->prof_trace);
        s->tc = opdb_xstrdup(a->tc_trace);
        *out = s;
        *n = 1;
        return;
    }
    size_t k = sizeof k_scenarios / sizeof k_scenarios[0];
    scenario_spec *s = opdb_xcalloc(k, sizeof *s);
    const char *dir = a->trace_dir ? a->trace_dir : DEFAULT_TRACE_DIR;
    for (size_t i = 0; i < k; i++) {
        opdb_strbuf p; /* f"{trace_dir}/{name}": a plain join, as the reference writes it */
        opdb_sb_init(&p);
        opdb_sb_addf(&p, "%s/%s", dir, k_scenarios[i].csv);
        s[i].name = opdb_xstrdup(k_scenarios[i].name);
        s[i].m6 = opdb_xstrdup(k_scenarios[i].m6);
        s[i].prof = p.p;
        s[i].tc = opdb_xstrdup(k_scenarios[i].tc);
    }
    *out = s;
    *n = k;
}

static int compare_run(const opdb_compare_args *a, FILE *out, opdb_err *err) {
    /* the reference's default paths only with --reference-quirks; opdb's
     * default writes JSON only when asked and reads no mapping unless given */
    const char *output = a->output ? a->output : a->o.quirks ? DEFAULT_OUTPUT : NULL;
    const char *data_dir = a->data_dir ? a->data_dir : a->o.quirks ? DEFAULT_DATA_DIR : NULL;
    /* JSON or HTML on the "-" stream: the console report goes aside */
    if ((output && strcmp(output, "-") == 0) || (a->html && strcmp(a->html, "-") == 0)) out = a->aside;
    opdb_cmp_mapping *map = NULL;
    if (opdb_cmp_mapping_load(&map, data_dir, !a->o.quirks, err)) {
        opdb_cmp_mapping_free(map);
        return -1;
    }
    scenario_spec *specs;
    size_t nspecs;
    scenarios_from_args(a, &specs, &nspecs);
    opdb_cmp_scenario *done = opdb_xcalloc(nspecs, sizeof *done);
    size_t ndone = 0;
    int rc = 0;
    for (size_t i = 0; i < nspecs && rc >= 0; i++) {
        int r = run_scenario(&specs[i], map, &a->o, out, &done[ndone], err);
        if (r == 0) ndone++;
        else if (r < 0) rc = -1;
    }
    if (rc == 0 && a->totals) {
        opdb_compare_totals t = {ndone, 0, 0};
        for (size_t i = 0; i < ndone; i++)
            for (size_t r = 0; r < done[i].nrows; r++) {
                t.kernel_types++;
                t.compared += done[i].rows[r].tc_count > 0 && done[i].rows[r].prof_count > 0;
            }
        *a->totals = t;
    }
    opdb_cmp_shapes shapes = {0};
    if (rc == 0 && a->shapes) {
        if (opdb_cmp_read_shapes(a->shapes, &shapes, err)) rc = -1;
        else if (ndone == 1) done[0].shapes = &shapes; /* --shapes goes with the one --tc-trace scenario */
    }
    if (rc == 0) {
        opdb_strbuf text;
        opdb_sb_init(&text);
        opdb_cmp_json(&text, done, ndone, a->o.quirks);
        rc = output ? write_file(output, a->dash, &text, err) : 0;
        if (rc == 0 && a->html) {
            opdb_sb_clear(&text);
            opdb_cmp_html(&text, done, ndone);
            rc = write_file(a->html, a->dash, &text, err);
        }
        opdb_sb_free(&text);
        if (rc == 0) {
            if (out && output && strcmp(output, "-") != 0) fprintf(out, "\nSaved to %s\n", output);
            if (a->aside && a->html && strcmp(a->html, "-") != 0)
                fprintf(a->aside, "opdb compare: HTML report written to %s\n", a->html);
        }
    }
    for (size_t i = 0; i < ndone; i++) opdb_cmp_scenario_free(&done[i]);
    opdb_cmp_shapes_free(&shapes);
    free(done);
    for (size_t i = 0; i < nspecs; i++) {
        free(specs[i].name);
        free(specs[i].m6);
        free(specs[i].prof);
        free(specs[i].tc);
    }
    free(specs);
    opdb_cmp_mapping_free(map);
    return rc;
}

void opdb_compare_args_init(opdb_compare_args *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    opdb_cmp_opts_init(&o->o);
}

int opdb_compare_run(const opdb_compare_args *a, FILE *out, opdb_err *err) {
    if (opdb_opts_check(a, a ? a->size : 0, sizeof *a, "opdb_compare_args", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&a->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&a->modes);
    int rc = compare_run(a, out, err);
    opdb_call_leave(&saved);
    return rc;
}
