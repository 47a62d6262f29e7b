/* `check --html`: one self-contained page (inline CSS, nothing fetched), in
 * the style of compare --html and diff --html: the summary, per kernel type
 * its cells, the distribution of its held-out errors and a coverage map of
 * its measured shapes on each axis, then the worst answers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check_internal.h"
#include "opdb/fs.h"

static void pcell(opdb_strbuf *h, double x, bool sign) {
    if (isnan(x)) opdb_sb_adds(h, "<td class=\"n\">-</td>");
    else opdb_sb_addf(h, sign ? "<td class=\"n\">%+.2f%%</td>" : "<td class=\"n\">%.2f%%</td>", 100 * x);
}

static void bar(opdb_strbuf *h, size_t n, size_t max, const char *cls) {
    int w = max ? (int)(200.0 * (double)n / (double)max + 0.5) : 0;
    opdb_sb_addf(h, "<td><span class=\"bar %s\" style=\"width:%dpx\"></span></td>", cls, n ? (w < 1 ? 1 : w) : 0);
}

/* |error| bins of the distribution */
static const double k_edges[] = {0.01, 0.02, 0.05, 0.10, 0.20, 0.50};
#define NBINS 7
static const char *const k_bin_names[NBINS] = {"&lt; 1%", "1-2%", "2-5%", "5-10%", "10-20%", "20-50%", "&ge; 50%"};

static void distribution(opdb_strbuf *h, const ck_run *r, size_t t) {
    size_t bins[NBINS] = {0}, miss = 0, max = 0;
    for (size_t i = 0; i < r->nans; i++) {
        const ck_answer *a = &r->ans[i];
        if (a->table != t) continue;
        if (isnan(a->predicted)) {
            miss++;
            continue;
        }
        double e = fabs(a->predicted - a->actual) / a->actual;
        int b = 0;
        while (b < NBINS - 1 && e >= k_edges[b]) b++;
        bins[b]++;
    }
    for (int b = 0; b < NBINS; b++) max = bins[b] > max ? bins[b] : max;
    max = miss > max ? miss : max;
    opdb_sb_adds(h, "<table><tr><th>|error| (query order)</th><th>rows</th><th></th></tr>\n");
    for (int b = 0; b < NBINS; b++) {
        opdb_sb_addf(h, "<tr><td>%s</td><td class=\"n\">%zu</td>", k_bin_names[b], bins[b]);
        bar(h, bins[b], max, b < 4 ? "ok" : "off");
        opdb_sb_adds(h, "</tr>\n");
    }
    opdb_sb_addf(h, "<tr><td>no answer</td><td class=\"n\">%zu</td>", miss);
    bar(h, miss, max, "miss");
    opdb_sb_adds(h, "</tr></table>\n");
}

/* per axis: the held-out rows per power-of-two range of the axis value */
static void coverage_map(opdb_strbuf *h, const ck_run *r, size_t t) {
    const ck_table *T = &r->tabs[t];
    for (int ax = 0; ax < T->t.nax; ax++) {
        size_t cnt[66] = {0}, ans[66] = {0}, max = 0;
        int lo = 65, hi = 0;
        for (size_t i = 0; i < r->nans; i++) {
            const ck_answer *a = &r->ans[i];
            if (a->table != t || !(a->coords[ax] >= 1)) continue;
            int b = (int)floor(log2(a->coords[ax]));
            if (b > 64) b = 64;
            cnt[b]++;
            ans[b] += !isnan(a->predicted);
            lo = b < lo ? b : lo, hi = b > hi ? b : hi;
        }
        if (lo > hi) continue;
        for (int b = lo; b <= hi; b++) max = cnt[b] > max ? cnt[b] : max;
        opdb_sb_adds(h, "<table class=\"cov\"><tr><th>");
        opdb_sb_add_html(h, T->t.axis_names[ax]);
        opdb_sb_adds(h, " in</th><th>rows</th><th>answered</th><th></th></tr>\n");
        for (int b = lo; b <= hi; b++)
            if (cnt[b] || b == lo) {
                opdb_sb_addf(h, "<tr><td>[%.17g, %.17g)</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>", ldexp(1, b),
                             ldexp(1, b + 1), cnt[b], ans[b]);
                bar(h, cnt[b], max, "ok");
                opdb_sb_adds(h, "</tr>\n");
            } else {
                opdb_sb_addf(h, "<tr class=\"gap\"><td>[%.17g, %.17g)</td><td class=\"n\">0</td><td class=\"n\">0</td><td>no rows</td></tr>\n",
                             ldexp(1, b), ldexp(1, b + 1));
            }
        opdb_sb_adds(h, "</table>\n");
    }
}

int ck_write_html(const ck_run *r, const char *path, opdb_err *err) {
    const opdb_check_result *s = r->res;
    opdb_strbuf h;
    opdb_sb_init(&h);
    opdb_sb_adds(&h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>opdb check</title>\n<style>\n"
                     "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}\n"
                     "table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\n"
                     "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
                     ".bar{display:inline-block;height:10px;vertical-align:middle}\n"
                     ".ok{background:#5cb85c}.off{background:#d9534f}.miss{background:#999}\n"
                     "tr.gap{background:#fff4d6}table.cov{display:inline-table;margin-right:16px;vertical-align:top}\n"
                     "</style></head><body>\n<h1>opdb check</h1>\n<p>database: <code>");
    opdb_sb_add_html(&h, r->dir);
    opdb_sb_addf(&h, "</code></p>\n<p>%zu kernel types checked, %zu rows held out, %zu answered", s->kernel_types, s->rows,
                 s->recovered);
    if (!isnan(s->median_error)) opdb_sb_addf(&h, ", median |error| %.2f%%", 100 * s->median_error);
    if (s->coverage_n)
        opdb_sb_addf(&h, "; calibrated intervals on split halves: 80%% covers %.2f%%, 90%% covers %.2f%% of %zu answers",
                     100 * s->coverage80, 100 * s->coverage90, s->coverage_n);
    opdb_sb_adds(&h, "</p>\n");
    for (size_t t = 0; t < r->ntabs; t++) {
        const ck_table *T = &r->tabs[t];
        opdb_sb_adds(&h, "<h2>");
        opdb_sb_add_html(&h, T->kernel);
        opdb_sb_adds(&h, "</h2>\n<p>");
        opdb_sb_add_html(&h, T->path);
        opdb_sb_adds(&h, " path, <code>");
        opdb_sb_add_html(&h, T->file);
        opdb_sb_addf(&h, "</code>: %zu rows, %zu with a latency, %zu held out", T->t.rows, T->t.with_latency,
                     T->t.indexed);
        if (!T->t.covered) {
            opdb_sb_adds(&h, " (not checked: ");
            opdb_sb_add_html(&h, T->t.why);
            opdb_sb_adds(&h, ")");
        }
        opdb_sb_adds(&h, "</p>\n");
        if (!T->t.covered || !T->t.indexed) continue;
        opdb_sb_adds(&h, "<table><tr><th>axes</th><th>class</th><th>rows</th><th>answered</th><th>median</th>"
                         "<th>p90</th><th>p99</th><th>bias</th><th>within 10%</th></tr>\n");
        for (int g = -1; g < (int)T->t.ngroups; g++)
            for (int in = 1; in >= 0; in--) {
                ck_cell *cl = ck_cell_at(r, t, g, in);
                if (!cl->rows) continue;
                ck_stats st = ck_cell_stats(cl);
                opdb_sb_adds(&h, "<tr><td>");
                opdb_sb_add_html(&h, g < 0 ? "query" : T->t.group_names[g]);
                opdb_sb_addf(&h, "</td><td>%s</td><td class=\"n\">%zu</td>", in ? "interior" : "frontier", st.rows);
                pcell(&h, (double)st.recovered / (double)st.rows, false);
                pcell(&h, st.median, false);
                pcell(&h, st.p90, false);
                pcell(&h, st.p99, false);
                pcell(&h, st.bias, true);
                pcell(&h, st.within10, false);
                opdb_sb_adds(&h, "</tr>\n");
            }
        opdb_sb_adds(&h, "</table>\n<h3>Error distribution</h3>\n");
        distribution(&h, r, t);
        opdb_sb_adds(&h, "<h3>Coverage of measured shapes</h3>\n");
        coverage_map(&h, r, t);
    }
    size_t max = r->o->worst;
    uint32_t *idx = malloc((max ? max : 1) * sizeof *idx);
    size_t n = ck_worst(r, idx, max);
    if (n) {
        opdb_sb_adds(&h, "<h2>Worst answers</h2>\n<table><tr><th>error</th><th>actual us</th><th>predicted us</th>"
                         "<th>file:line</th><th>coordinates</th></tr>\n");
        for (size_t i = 0; i < n; i++) {
            const ck_answer *w = &r->ans[idx[i]];
            const ck_table *T = &r->tabs[w->table];
            opdb_sb_addf(&h, "<tr><td class=\"n\">%+.2f%%</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td>",
                         100 * (w->predicted - w->actual) / w->actual, w->actual, w->predicted);
            opdb_sb_add_html(&h, T->file);
            opdb_sb_addf(&h, ":%u</td><td>", w->line);
            for (int a = 0; a < T->t.nax; a++) {
                char b[64];
                opdb_sb_add_html(&h, T->t.axis_names[a]);
                snprintf(b, sizeof b, "=%.17g ", w->coords[a]);
                opdb_sb_adds(&h, b);
            }
            opdb_sb_adds(&h, "</td></tr>\n");
        }
        opdb_sb_adds(&h, "</table>\n");
    }
    free(idx);
    opdb_sb_adds(&h, "</body></html>\n");
    int rc = opdb_atomic_write(path, h.p, h.n, err);
    opdb_sb_free(&h);
    return rc;
}
