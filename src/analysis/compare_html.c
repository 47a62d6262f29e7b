/* `compare --html`: one self-contained page (inline CSS and SVG, a few
 * lines of inline script, nothing fetched). Every string that comes from
 * the inputs goes through html_text(), which escapes for both element text
 * and quoted attribute values. */
#include <math.h>
#include <string.h>

#include "opdb/compare.h"
#include "opdb/pystr.h"

#define BAR_H 11
#define PAIR_H (2 * BAR_H + 10)
#define LABEL_W 300
#define PLOT_W 520
#define ERR_W 110

static void html_text(opdb_strbuf *o, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': opdb_sb_adds(o, "&amp;"); break;
        case '<': opdb_sb_adds(o, "&lt;"); break;
        case '>': opdb_sb_adds(o, "&gt;"); break;
        case '"': opdb_sb_adds(o, "&quot;"); break;
        case '\'': opdb_sb_adds(o, "&#39;"); break;
        default: opdb_sb_addc(o, *s);
        }
    }
}

/* A chart label: at most LABEL_CP code points (the full name is in the
 * table and the bar's tooltip). */
#define LABEL_CP 44
static void label_text(opdb_strbuf *o, const char *s) {
    size_t cp = 0, cut = 0;
    for (const char *c = s; *c; c++)
        if (((unsigned char)*c & 0xC0) != 0x80 && ++cp == LABEL_CP) cut = (size_t)(c - s);
    if (cp <= LABEL_CP) {
        html_text(o, s);
        return;
    }
    opdb_strbuf t;
    opdb_sb_init(&t);
    opdb_sb_add(&t, s, cut);
    html_text(o, t.p);
    opdb_sb_adds(o, "\xe2\x80\xa6"); /* … */
    opdb_sb_free(&t);
}

static void fixed(opdb_strbuf *o, double v, int decimals) {
    char buf[512];
    opdb_py_fmt_fixed(buf, sizeof buf, v, decimals);
    opdb_sb_adds(o, buf);
}

/* bar length in px; non-finite or negative values draw nothing */
static double bar_len(double v, double max) {
    if (!isfinite(v) || v <= 0 || !(max > 0)) return 0.0;
    return v / max * PLOT_W;
}

static void chart(opdb_strbuf *o, const opdb_cmp_scenario *sc) {
    double max = 0;
    for (size_t i = 0; i < sc->nrows; i++) {
        const opdb_cmp_row *r = &sc->rows[i];
        if (isfinite(r->tc_total.v) && r->tc_total.v > max) max = r->tc_total.v;
        if (isfinite(r->prof_per_fwd.v) && r->prof_per_fwd.v > max) max = r->prof_per_fwd.v;
    }
    int width = LABEL_W + PLOT_W + ERR_W + 20;
    int height = (int)sc->nrows * PAIR_H + 40;
    opdb_sb_addf(o,
                 "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\" role=\"img\">\n",
                 width, height, width, height);
    opdb_sb_addf(o,
                 "<rect class=\"legend tc\" x=\"%d\" y=\"4\" width=\"12\" height=\"12\"/>"
                 "<text x=\"%d\" y=\"15\">TC predicted (&#181;s)</text>"
                 "<rect class=\"legend prof\" x=\"%d\" y=\"4\" width=\"12\" height=\"12\"/>"
                 "<text x=\"%d\" y=\"15\">measured per forward (&#181;s)</text>"
                 "<text class=\"errhead\" x=\"%d\" y=\"15\">error</text>\n",
                 LABEL_W, LABEL_W + 16, LABEL_W + 190, LABEL_W + 206, LABEL_W + PLOT_W + 10);
    for (size_t i = 0; i < sc->nrows; i++) {
        const opdb_cmp_row *r = &sc->rows[i];
        int y = 30 + (int)i * PAIR_H;
        opdb_sb_adds(o, "<g class=\"pair\" data-kt=\"");
        html_text(o, r->kt);
        opdb_sb_adds(o, "\"><title>");
        html_text(o, r->kt);
        opdb_sb_adds(o, ": TC ");
        fixed(o, r->tc_total.v, 1);
        opdb_sb_adds(o, " \xc2\xb5s, measured ");
        fixed(o, r->prof_per_fwd.v, 1);
        opdb_sb_adds(o, " \xc2\xb5s</title>");
        opdb_sb_addf(o, "<text class=\"kt\" x=\"%d\" y=\"%d\">", LABEL_W - 6, y + BAR_H + 4);
        label_text(o, r->kt);
        opdb_sb_adds(o, "</text>");
        opdb_sb_addf(o, "<rect class=\"bar tc\" x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\"/>", LABEL_W, y,
                     bar_len(r->tc_total.v, max), BAR_H);
        opdb_sb_addf(o, "<rect class=\"bar prof\" x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\"/>", LABEL_W,
                     y + BAR_H, bar_len(r->prof_per_fwd.v, max), BAR_H);
        opdb_sb_addf(o, "<text class=\"err\" x=\"%d\" y=\"%d\">", LABEL_W + PLOT_W + 10, y + BAR_H + 4);
        if (r->prof_per_fwd.v > 0) {
            if (r->error_pct.v > 0) opdb_sb_addc(o, '+');
            fixed(o, r->error_pct.v, 1);
            opdb_sb_addc(o, '%');
        } else {
            opdb_sb_adds(o, "n/a");
        }
        opdb_sb_adds(o, "</text></g>\n");
    }
    opdb_sb_adds(o, "</svg>\n");
}

static void cell_num(opdb_strbuf *o, double v, int decimals, const char *suffix) {
    opdb_sb_adds(o, "<td class=\"num\">");
    fixed(o, v, decimals);
    opdb_sb_adds(o, suffix);
    opdb_sb_adds(o, "</td>");
}

static void table(opdb_strbuf *o, const opdb_cmp_scenario *sc) {
    opdb_sb_adds(o, "<table>\n<thead><tr><th>kernel type</th><th>TC funcs</th><th>TC (&#181;s)</th><th>TC count</th>"
                    "<th>measured (&#181;s)</th><th>measured count</th><th>time error</th><th>count error</th>"
                    "<th>status</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < sc->nrows; i++) {
        const opdb_cmp_row *r = &sc->rows[i];
        opdb_sb_adds(o, "<tr><td>");
        html_text(o, r->kt);
        opdb_sb_adds(o, "</td><td>");
        html_text(o, r->funcs);
        opdb_sb_adds(o, "</td>");
        cell_num(o, r->tc_total.v, 1, "");
        opdb_sb_addf(o, "<td class=\"num\">%lld</td>", r->tc_count);
        cell_num(o, r->prof_per_fwd.v, 1, "");
        opdb_sb_addf(o, "<td class=\"num\">%lld</td>", r->prof_count);
        cell_num(o, r->error_pct.v, 1, "%");
        cell_num(o, r->count_error_pct.v, 1, "%");
        opdb_sb_adds(o, "<td>");
        html_text(o, r->status);
        opdb_sb_adds(o, "</td></tr>\n");
    }
    opdb_sb_adds(o, "</tbody>\n</table>\n");
}

static const char k_style[] =
    "body{font-family:system-ui,sans-serif;margin:24px;color:#222}"
    "h1{font-size:20px}h2{font-size:17px;margin-top:32px}"
    ".chart text{font-size:11px;fill:#222}.chart .kt{text-anchor:end}"
    ".tc{fill:#4e79a7}.prof{fill:#f28e2b}"
    "table{border-collapse:collapse;font-size:12px;margin-top:8px}"
    "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}td.num{text-align:right}"
    "th{background:#f3f3f3}";

/* Checks the page drew itself: one bar pair (exactly two bars) per table
 * row; the result is left on <body> for tests and people alike. */
static const char k_script[] =
    "(function(){var pairs=0,bad=0,rows=0;"
    "document.querySelectorAll('section.scenario').forEach(function(s){"
    "var p=s.querySelectorAll('svg.chart g.pair');pairs+=p.length;"
    "p.forEach(function(g){if(g.querySelectorAll('rect.bar').length!==2)bad++;});"
    "var r=s.querySelectorAll('table tbody tr').length;rows+=r;if(r!==p.length)bad++;});"
    "document.body.dataset.pairs=String(pairs);document.body.dataset.rows=String(rows);"
    "document.body.dataset.scripts=String(document.scripts.length);"
    "document.body.dataset.loaded=bad?'mismatch':'ok';})();";

void opdb_cmp_html(opdb_strbuf *o, const opdb_cmp_scenario *sc, size_t n) {
    opdb_sb_adds(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                    "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
                    "<title>opdb compare: TC vs profiling per forward</title>\n<style>");
    opdb_sb_adds(o, k_style);
    opdb_sb_adds(o, "</style>\n</head>\n<body>\n<h1>TC vs profiling per forward</h1>\n");
    if (n == 0) opdb_sb_adds(o, "<p>No scenario had all of its input files.</p>\n");
    for (size_t s = 0; s < n; s++) {
        opdb_sb_adds(o, "<section class=\"scenario\">\n<h2>");
        html_text(o, sc[s].name);
        opdb_sb_addf(o, "</h2>\n<p>%zu kernel types; bars: predicted (blue) and measured (orange) time per forward, "
                        "error = (TC &#8722; measured) / measured.</p>\n",
                     sc[s].nrows);
        chart(o, &sc[s]);
        table(o, &sc[s]);
        opdb_sb_adds(o, "</section>\n");
    }
    opdb_sb_adds(o, "<script>");
    opdb_sb_adds(o, k_script);
    opdb_sb_adds(o, "</script>\n</body>\n</html>\n");
}
