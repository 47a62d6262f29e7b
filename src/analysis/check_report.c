/* opdb check's console table and JSON report (layout in docs/CHECK.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check_internal.h"
#include "opdb/json_writer.h"
#include "opdb/pyround.h"

static void pct(char *buf, size_t cap, double x, bool sign) {
    if (isnan(x)) snprintf(buf, cap, "-");
    else snprintf(buf, cap, sign ? "%+.2f%%" : "%.2f%%", x * 100);
}

static const char *group_name(const ck_table *T, int g) { return g < 0 ? "query" : T->t.group_names[g]; }

static void coords_text(const ck_run *r, const ck_answer *a, char *buf, size_t cap) {
    const ck_table *T = &r->tabs[a->table];
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < T->t.nax && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%.17g", i ? " " : "", T->t.axis_names[i], a->coords[i]);
}

void ck_write_text(const ck_run *r, FILE *out) {
    const opdb_check_result *s = r->res;
    char a[32], b[32], c[32], d[32], e[32], f[32];
    fprintf(out, "opdb check: %s\n", r->dir);
    pct(a, sizeof a, s->rows ? (double)s->recovered / (double)s->rows : NAN, false);
    pct(b, sizeof b, s->median_error, false);
    fprintf(out, "%zu kernel types checked, %zu rows held out, %zu answered (%s), median |error| %s\n",
            s->kernel_types, s->rows, s->recovered, a, b);
    for (size_t t = 0; t < r->ntabs; t++) {
        const ck_table *T = &r->tabs[t];
        if (!T->t.covered) continue;
        fprintf(out, "\n%s (%s, %s): %zu rows, %zu with a latency, %zu held out\n", T->kernel, T->path, T->file,
                T->t.rows, T->t.with_latency, T->t.indexed);
        if (!T->t.indexed) continue;
        fprintf(out, "  %-12s %-8s %6s %7s %7s %7s %7s %7s %7s\n", "axes", "class", "rows", "answer", "median", "p90",
                "p99", "bias", "in10%");
        for (int g = -1; g < (int)T->t.ngroups; g++)
            for (int in = 1; in >= 0; in--) {
                ck_cell *cl = ck_cell_at(r, t, g, in);
                if (!cl->rows) continue;
                ck_stats st = ck_cell_stats(cl);
                pct(a, sizeof a, (double)st.recovered / (double)st.rows, false);
                pct(b, sizeof b, st.median, false);
                pct(c, sizeof c, st.p90, false);
                pct(d, sizeof d, st.p99, false);
                pct(e, sizeof e, st.bias, true);
                pct(f, sizeof f, st.within10, false);
                fprintf(out, "  %-12s %-8s %6zu %7s %7s %7s %7s %7s %7s\n", group_name(T, g), in ? "interior" : "frontier",
                        st.rows, a, b, c, d, e, f);
            }
    }
    bool any = false;
    for (size_t t = 0; t < r->ntabs; t++) {
        const ck_table *T = &r->tabs[t];
        if (T->t.covered) continue;
        if (!any) fprintf(out, "\nnot checked:\n");
        any = true;
        fprintf(out, "  %s (%s, %s): %zu rows: %s\n", T->kernel, T->path, T->file, T->t.rows, T->t.why);
    }
    size_t max = r->o->worst;
    uint32_t *idx = malloc((max ? max : 1) * sizeof *idx);
    size_t n = ck_worst(r, idx, max);
    if (n) {
        fprintf(out, "\nworst answers (query order):\n  %8s %12s %12s  %s\n", "error", "actual_us", "predicted_us",
                "file:line  coordinates");
        for (size_t i = 0; i < n; i++) {
            const ck_answer *w = &r->ans[idx[i]];
            char co[256];
            coords_text(r, w, co, sizeof co);
            pct(a, sizeof a, (w->predicted - w->actual) / w->actual, true);
            fprintf(out, "  %8s %12.3f %12.3f  %s:%u  %s\n", a, w->actual, w->predicted, r->tabs[w->table].file, w->line,
                    co);
        }
    }
    free(idx);
    if (s->coverage_n) {
        pct(a, sizeof a, s->coverage80, false);
        pct(b, sizeof b, s->coverage90, false);
        fprintf(out, "\ncalibrated intervals, split halves (odd lines / even lines): the 80%% interval covers %s, the 90%% %s of %zu answers\n",
                a, b, s->coverage_n);
    } else {
        fprintf(out, "\ncalibrated intervals: too few answers to form one\n");
    }
}

static void jf(opdb_json *j, const char *k, double x) {
    opdb_json_key(j, k);
    if (isnan(x) || isinf(x)) opdb_json_null(j);
    else opdb_json_float(j, opdb_py_roundn(x, 6));
}

static void ji(opdb_json *j, const char *k, long long x) {
    opdb_json_key(j, k);
    opdb_json_int(j, x);
}

static void js(opdb_json *j, const char *k, const char *s) {
    opdb_json_key(j, k);
    opdb_json_string(j, s);
}

void ck_write_json(const ck_run *r, FILE *out) {
    const opdb_check_result *s = r->res;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_json j;
    opdb_json_init(&j, &sb);
    opdb_json_begin_object(&j);
    js(&j, "database", r->dir);
    opdb_json_key(&j, "summary");
    opdb_json_begin_object(&j);
    ji(&j, "kernel_types", (long long)s->kernel_types);
    ji(&j, "unchecked_kernel_types", (long long)s->unchecked_types);
    ji(&j, "rows", (long long)s->rows);
    ji(&j, "recovered", (long long)s->recovered);
    jf(&j, "median_abs_error", s->median_error);
    opdb_json_end_object(&j);
    opdb_json_key(&j, "kernel_types");
    opdb_json_begin_array(&j);
    for (size_t t = 0; t < r->ntabs; t++) {
        const ck_table *T = &r->tabs[t];
        opdb_json_begin_object(&j);
        js(&j, "kernel_type", T->kernel);
        js(&j, "file", T->file);
        js(&j, "path", T->path);
        opdb_json_key(&j, "checked");
        opdb_json_bool(&j, T->t.covered);
        ji(&j, "rows", (long long)T->t.rows);
        ji(&j, "with_latency", (long long)T->t.with_latency);
        ji(&j, "held_out", (long long)T->t.indexed);
        if (!T->t.covered) js(&j, "not_checked_because", T->t.why);
        opdb_json_key(&j, "cells");
        opdb_json_begin_array(&j);
        for (int g = -1; T->t.covered && g < (int)T->t.ngroups; g++)
            for (int in = 1; in >= 0; in--) {
                ck_cell *cl = ck_cell_at(r, t, g, in);
                if (!cl->rows) continue;
                ck_stats st = ck_cell_stats(cl);
                opdb_json_begin_object(&j);
                js(&j, "axes", group_name(T, g));
                js(&j, "class", in ? "interior" : "frontier");
                ji(&j, "rows", (long long)st.rows);
                ji(&j, "recovered", (long long)st.recovered);
                jf(&j, "median_abs_error", st.median);
                jf(&j, "p90_abs_error", st.p90);
                jf(&j, "p99_abs_error", st.p99);
                jf(&j, "bias", st.bias);
                jf(&j, "within_10pct", st.within10);
                opdb_json_end_object(&j);
            }
        opdb_json_end_array(&j);
        opdb_json_end_object(&j);
    }
    opdb_json_end_array(&j);
    opdb_json_key(&j, "worst");
    opdb_json_begin_array(&j);
    size_t max = r->o->worst;
    uint32_t *idx = malloc((max ? max : 1) * sizeof *idx);
    size_t n = ck_worst(r, idx, max);
    for (size_t i = 0; i < n; i++) {
        const ck_answer *w = &r->ans[idx[i]];
        const ck_table *T = &r->tabs[w->table];
        opdb_json_begin_object(&j);
        js(&j, "kernel_type", T->kernel);
        js(&j, "file", T->file);
        ji(&j, "line", w->line);
        opdb_json_key(&j, "coordinates");
        opdb_json_begin_object(&j);
        for (int a = 0; a < T->t.nax; a++) jf(&j, T->t.axis_names[a], w->coords[a]);
        opdb_json_end_object(&j);
        jf(&j, "actual_us", w->actual);
        jf(&j, "predicted_us", w->predicted);
        jf(&j, "error", (w->predicted - w->actual) / w->actual);
        opdb_json_end_object(&j);
    }
    free(idx);
    opdb_json_end_array(&j);
    opdb_json_key(&j, "calibration");
    opdb_json_begin_object(&j);
    js(&j, "split", "odd_even_lines");
    ji(&j, "answers", (long long)s->coverage_n);
    jf(&j, "coverage80", s->coverage80);
    jf(&j, "coverage90", s->coverage90);
    opdb_json_end_object(&j);
    opdb_json_end_object(&j);
    fwrite(sb.p, 1, sb.n, out);
    fputc('\n', out);
    opdb_sb_free(&sb);
}
