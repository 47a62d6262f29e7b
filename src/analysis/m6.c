/* See m6.h. */
#include "opdb/m6.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/m6_input.h"
#include "core/call.h"

#define TC_NAME(o) ((o)->tc_name ? (o)->tc_name : (o)->tc_trace)
#define PROF_NAME(o) ((o)->prof_name ? (o)->prof_name : (o)->prof_trace)
#include "opdb/fs.h"
#include "opdb/json_writer.h"
#include "opdb/pyliteral.h"
#include "opdb/pyround.h"
#include "opdb/pystr.h"
#include "opdb/trace_reader.h"

/* ---------------------------------------------------------------- filter */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The reference's set of stripped comma items (empty items kept), sorted. */
static void parse_filter(const char *arg, opdb_m6_result *r) {
    if (!arg || !*arg) arg = "MEASURED,INTERPOLATED";
    size_t cap = 1;
    for (const char *p = arg; *p; p++) cap += *p == ',';
    r->filter = opdb_xcalloc(cap, sizeof *r->filter);
    for (const char *p = arg;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        opdb_span s = opdb_py_strip(opdb_span_make(p, n));
        char *item = opdb_xmalloc(s.n + 1);
        memcpy(item, s.p, s.n);
        item[s.n] = '\0';
        r->filter[r->nfilter++] = item;
        if (!e) break;
        p = e + 1;
    }
    qsort(r->filter, r->nfilter, sizeof *r->filter, cmp_str);
    size_t k = 0;
    for (size_t i = 0; i < r->nfilter; i++) {
        if (k && strcmp(r->filter[k - 1], r->filter[i]) == 0) free(r->filter[i]);
        else r->filter[k++] = r->filter[i];
    }
    r->nfilter = k;
}

static bool in_filter(const opdb_m6_result *r, const char *s) {
    return bsearch(&s, r->filter, r->nfilter, sizeof *r->filter, cmp_str) != NULL;
}

/* ---------------------------------------------------------------- TC sum */
typedef struct tc_ctx {
    opdb_m6_result *r;
    const char *path;
    opdb_err *err;
} tc_ctx;

static int on_event(const opdb_trace_event *ev, void *vctx) {
    tc_ctx *c = vctx;
    if (!m6_is_complete(ev)) return 0;
    m6_num dur;
    if (m6_event_dur(ev, c->path, &dur, c->err)) return 1;
    const opdb_trace_field *src = opdb_trace_arg(ev, "source");
    if (!src || src->kind != OPDB_J_STRING || !in_filter(c->r, src->text)) return 0;
    if (!(dur.is_int ? dur.i > 0 : dur.f > 0)) return 0;
    if (!m6_truthy(opdb_trace_arg(ev, "kernel_type"))) return 0;
    c->r->tc_sum += dur.f; /* float + int: float(int) is correctly rounded */
    return 0;
}

/* ---------------------------------------------------------------- prof sum */
static int prof_sum(const opdb_m6_opts *o, opdb_m6_result *r, opdb_err *err) {
    m6_csv f;
    if (m6_csv_open(&f, o->prof_trace, o->quirks, M6_BAD_SKIP, err)) return -1;
    if (m6_csv_require(&f, false, err)) {
        m6_csv_close(&f);
        return -1;
    }
    m6_keys seen;
    m6_keys_init(&seen);
    double *seen_max = NULL;
    size_t cap = 0;
    opdb_strbuf key;
    opdb_sb_init(&key);
    m6_row row;
    int rc;
    while ((rc = m6_csv_next(&f, &row, err)) > 0) {
        double end = row.start + row.dur;
        double dur = end - row.start; /* quantised to the spacing of the timestamp, as the reference */
        if (!(row.type.n >= 5 && memcmp(row.type.p, "hcom_", 5) == 0)) {
            r->compute += dur;
            continue;
        }
        double start_key;
        if ((rc = m6_hcom_start(&f, &row, &start_key, err))) break;
        opdb_sb_clear(&key);
        opdb_sb_add(&key, (const char *)&start_key, sizeof start_key);
        opdb_sb_add(&key, row.type.p, row.type.n);
        bool created;
        size_t i = m6_keys_get(&seen, key.p, key.n, &created);
        if (created) {
            OPDB_ALLOC_GROW(seen_max, i + 1, cap);
            seen_max[i] = dur;
            r->hcom += dur;
        } else if (dur > seen_max[i]) {
            r->hcom += dur - seen_max[i];
            seen_max[i] = dur;
        }
    }
    opdb_sb_free(&key);
    free(seen_max);
    m6_keys_free(&seen);
    m6_csv_close(&f);
    return rc < 0 ? -1 : 0;
}

static int m6_compute(const opdb_m6_opts *o, opdb_m6_result *r, opdb_err *err) {
    memset(r, 0, sizeof *r);
    parse_filter(o->source_filter, r);
    if (m6_check_inputs(o->tc_trace, o->prof_trace, err)) return -1;
    tc_ctx c = {r, o->tc_trace, err};
    static const char *const fields[] = {"ph", "dur", NULL}, *const args[] = {"source", "kernel_type", NULL};
    if (opdb_trace_read_some(o->tc_trace, fields, args, on_event, &c, err)) return -1;
    if (err->code) return -1; /* stopped by the callback */
    if (prof_sum(o, r, err)) return -1;
    r->real = r->compute + r->hcom;
    r->ratio = r->real > 0 ? r->tc_sum / r->real : 0.0;
    return 0;
}

void opdb_m6_result_free(opdb_m6_result *r) {
    for (size_t i = 0; i < r->nfilter; i++) free(r->filter[i]);
    free(r->filter);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- output */
/* Python format(v, ",.1f"): fixed with one decimal, integer digits grouped by 3. */
static void fmt_grouped(char *out, size_t cap, double v) {
    char fixed[400];
    size_t n = opdb_py_fmt_fixed(fixed, sizeof fixed, v, 1);
    const char *dot = memchr(fixed, '.', n);
    size_t sign = fixed[0] == '-', int_end = dot ? (size_t)(dot - fixed) : n, o = 0;
    if (!dot) { /* inf / nan */
        snprintf(out, cap, "%s", fixed);
        return;
    }
    for (size_t i = 0; i < n && o + 2 < cap; i++) {
        if (i > sign && i < int_end && (int_end - i) % 3 == 0) out[o++] = ',';
        out[o++] = fixed[i];
    }
    out[o] = '\0';
}

static void report_line(opdb_strbuf *out, const char *label, double v, bool ms) {
    char a[512], b[512];
    fmt_grouped(a, sizeof a, v);
    opdb_sb_addf(out, "%s%12s us", label, a);
    if (ms) {
        fmt_grouped(b, sizeof b, v / 1000);
        opdb_sb_addf(out, " (%s ms)", b);
    }
    opdb_sb_addc(out, '\n');
}

/* Python repr of the sorted filter list, e.g. ['INTERPOLATED', 'MEASURED']. */
static void filter_repr(opdb_strbuf *out, const opdb_m6_result *r) {
    opdb_pylit *items = opdb_xcalloc(r->nfilter + 1, sizeof *items);
    opdb_pylit **ptrs = opdb_xcalloc(r->nfilter + 1, sizeof *ptrs);
    for (size_t i = 0; i < r->nfilter; i++) {
        items[i].kind = OPDB_PYLIT_STR;
        items[i].s = r->filter[i];
        items[i].n = strlen(r->filter[i]);
        ptrs[i] = &items[i];
    }
    opdb_pylit list = {.kind = OPDB_PYLIT_LIST, .items = ptrs, .nitems = r->nfilter};
    opdb_pylit_str(out, &list);
    free(ptrs);
    free(items);
}

void opdb_m6_report(const opdb_m6_opts *o, const opdb_m6_result *r, opdb_strbuf *out) {
    static const char rule[] = "============================================================\n";
    opdb_sb_adds(out, rule);
    opdb_sb_adds(out, "M6: Empirical E2E Prediction Ratio\n");
    opdb_sb_adds(out, rule);
    opdb_sb_addf(out, "\nTC trace:        %s\nProf trace:      %s\nSource filter:   ", TC_NAME(o), PROF_NAME(o));
    filter_repr(out, r);
    opdb_sb_adds(out, "\n\n");
    report_line(out, "Empirical HIT total: ", opdb_py_roundn(r->tc_sum, 2), true);
    report_line(out, "Real per-fwd:        ", opdb_py_roundn(r->real, 2), true);
    report_line(out, "  Compute:           ", opdb_py_roundn(r->compute, 2), false);
    report_line(out, "  hcom:              ", opdb_py_roundn(r->hcom, 2), false);
    char ratio[400];
    opdb_py_fmt_fixed(ratio, sizeof ratio, r->ratio, 3);
    opdb_sb_addf(out, "\nM6 = %s  (Empirical / Real)\n", ratio);
}

void opdb_m6_json(const opdb_m6_opts *o, const opdb_m6_result *r, opdb_strbuf *out) {
    opdb_json j;
    opdb_json_init(&j, out);
    j.raw_utf8 = true;
    j.python_nan = o->quirks;
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "m6_ratio");
    opdb_json_float(&j, r->ratio);
    static const char *const keys[] = {"empirical_hit_us", "real_per_fwd_us", "selected_fwd_compute_us",
                                       "selected_fwd_hcom_us"};
    const double vals[] = {r->tc_sum, r->real, r->compute, r->hcom};
    for (size_t i = 0; i < 4; i++) {
        opdb_json_key(&j, keys[i]);
        opdb_json_float(&j, opdb_py_roundn(vals[i], 2));
    }
    opdb_json_key(&j, "tc_trace");
    opdb_json_string(&j, TC_NAME(o));
    opdb_json_key(&j, "prof_trace");
    opdb_json_string(&j, PROF_NAME(o));
    opdb_json_key(&j, "source_filter");
    opdb_json_begin_array(&j);
    for (size_t i = 0; i < r->nfilter; i++) opdb_json_string(&j, r->filter[i]);
    opdb_json_end_array(&j);
    opdb_json_end_object(&j);
}

static int write_json(const char *path, const opdb_strbuf *doc, opdb_err *err) {
    char *parent = opdb_path_parent(path);
    int rc = opdb_mkdirs(parent, err);
    free(parent);
    return rc ? rc : opdb_atomic_write(path, doc->p, doc->n, err);
}

static int m6_run(const opdb_m6_opts *o, FILE *out, opdb_err *err) {
    opdb_m6_result r;
    int rc = m6_compute(o, &r, err);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    if (rc == 0 && o->json_output && *o->json_output) {
        opdb_m6_json(o, &r, &sb);
        rc = write_json(o->json_output, &sb, err);
        opdb_sb_clear(&sb);
    }
    if (rc == 0 && !o->quirks) {
        if (r.real <= 0) opdb_warn_nothing("%s: no forward-pass time (no usable rows): M6 is not meaningful", PROF_NAME(o));
        else if (r.tc_sum <= 0) opdb_warn_nothing("%s: no TC-trace op is counted (sources, kernel_type, dur > 0): M6 = 0", TC_NAME(o));
    }
    if (rc == 0 && o->ratio) *o->ratio = r.ratio;
    if (rc == 0) {
        opdb_m6_report(o, &r, &sb);
        if (o->json_output && *o->json_output) opdb_sb_addf(&sb, "\nJSON output written to: %s\n", o->json_output);
        fwrite(sb.p, 1, sb.n, out);
    }
    opdb_sb_free(&sb);
    opdb_m6_result_free(&r);
    return rc;
}

static void m6_defaults(opdb_m6_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_m6_opts, m6_defaults)

int opdb_m6_compute(const opdb_m6_opts *o, opdb_m6_result *r, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_m6_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = m6_compute(o, r, err);
    opdb_call_leave(&saved);
    return rc;
}

int opdb_m6_run(const opdb_m6_opts *o, FILE *out, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_m6_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = m6_run(o, out, err);
    opdb_call_leave(&saved);
    return rc;
}
