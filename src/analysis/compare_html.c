/* `compare --html`: one self-contained page (inline CSS and SVG, a few
 * lines of inline script, nothing fetched). Every string that comes from
 * the inputs goes through opdb_sb_add_html(), which escapes for both element text
 * and quoted attribute values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/compare.h"
#include "opdb/pystr.h"

#define BAR_H 11
#define PAIR_H (2 * BAR_H + 10)
#define LABEL_W 300
#define PLOT_W 520
#define ERR_W 110

/* A chart label: at most LABEL_CP code points (the full name is in the
 * table and the bar's tooltip). */
#define LABEL_CP 44
static void label_text(opdb_strbuf *o, const char *s) {
    size_t cp = 0, cut = 0;
    for (const char *c = s; *c; c++)
        if (((unsigned char)*c & 0xC0) != 0x80 && ++cp == LABEL_CP) cut = (size_t)(c - s);
    if (cp <= LABEL_CP) {
        opdb_sb_add_html(o, s);
        return;
    }
    opdb_strbuf t;
    opdb_sb_init(&t);
    opdb_sb_add(&t, s, cut);
    opdb_sb_add_html(o, t.p);
    opdb_sb_adds(o, "\xe2\x80\xa6"); /* … */
    opdb_sb_free(&t);
}

static void fixed(opdb_strbuf *o, double v, int decimals) {
    char buf[512];
    opdb_py_fmt_fixed(buf, sizeof buf, v, decimals);
    opdb_sb_adds(o, buf);
}

/* ---- log scale ---------------------------------------------------------- */

/* Decades [lo, hi] covering every positive finite value of both columns,
 * so that a kernel 1000x smaller than the largest still gets a bar. */
typedef struct logax {
    double lo, hi; /* log10 of the axis ends (whole decades) */
} logax;

static logax log_axis(const opdb_cmp_scenario *sc) {
    double mn = INFINITY, mx = 0;
    for (size_t i = 0; i < sc->nrows; i++) {
        double v[2] = {sc->rows[i].tc_total.v, sc->rows[i].prof_per_fwd.v};
        for (int k = 0; k < 2; k++)
            if (isfinite(v[k]) && v[k] > 0) {
                if (v[k] < mn) mn = v[k];
                if (v[k] > mx) mx = v[k];
            }
    }
    logax a = {-1, 1};
    if (mx > 0) {
        a.lo = floor(log10(mn) - 0.3); /* the smallest value keeps a visible bar */
        a.hi = ceil(log10(mx));
        if (a.hi <= a.lo) a.hi = a.lo + 1;
    }
    return a;
}

/* position in [0, len] of v on the axis; values <= 0 sit at 0 */
static double log_pos(const logax *a, double v, double len) {
    if (!isfinite(v) || v <= 0) return 0.0;
    double t = (log10(v) - a->lo) / (a->hi - a->lo);
    return (t < 0 ? 0 : t > 1 ? 1 : t) * len;
}

static void decade_label(opdb_strbuf *o, double d) {
    double v = pow(10, d);
    if (d >= 0) opdb_sb_addf(o, "%.0f", v);
    else opdb_sb_addf(o, "%.*f", (int)-d, v);
}

/* ---- summary --------------------------------------------------------------- */

typedef struct summary {
    double tc, prof, abs_err, covered, hit_tc;
    size_t not_measured, not_modelled;
} summary;

static summary summarise(const opdb_cmp_scenario *sc) {
    summary m = {0};
    for (size_t i = 0; i < sc->nrows; i++) {
        const opdb_cmp_row *r = &sc->rows[i];
        m.tc += r->tc_total.v;
        m.prof += r->prof_per_fwd.v;
        m.abs_err += fabs(r->tc_total.v - r->prof_per_fwd.v);
        if (r->tc_count > 0) m.covered += r->prof_per_fwd.v;
        if (strcmp(r->status, "HIT") == 0) m.hit_tc += r->tc_total.v;
        if (r->error_pct.is_int) m.not_measured++;
        if (strcmp(opdb_cmp_status_en(r->status), "not modelled") == 0) m.not_modelled++;
    }
    return m;
}

static void summary_item(opdb_strbuf *o, const char *name, const char *hint) {
    opdb_sb_addf(o, "<div class=\"stat\" title=\"%s\"><dt>%s</dt><dd>", hint, name);
}

static void summary_block(opdb_strbuf *o, const opdb_cmp_scenario *sc) {
    summary m = summarise(sc);
    opdb_sb_adds(o, "<dl class=\"summary\">");
    summary_item(o, "predicted total", "sum of the predicted time of every kernel type, per forward pass");
    fixed(o, m.tc, 1);
    opdb_sb_adds(o, " &#181;s</dd></div>");
    summary_item(o, "measured total", "sum of the measured time per forward pass");
    fixed(o, m.prof, 1);
    opdb_sb_adds(o, " &#181;s</dd></div>");
    summary_item(o, "M6", "predicted time of HIT kernel types (answered from measurements) / measured total; 1.0 is perfect");
    if (m.prof > 0) fixed(o, m.hit_tc / m.prof, 3);
    else opdb_sb_adds(o, "n/a");
    opdb_sb_adds(o, "</dd></div>");
    summary_item(o, "time-weighted error", "sum over kernel types of |predicted - measured| / measured total");
    if (m.prof > 0) {
        fixed(o, m.abs_err / m.prof * 100, 1);
        opdb_sb_addc(o, '%');
    } else {
        opdb_sb_adds(o, "n/a");
    }
    opdb_sb_adds(o, "</dd></div>");
    summary_item(o, "coverage", "share of the measured time in kernel types the model predicts at all");
    if (m.prof > 0) {
        fixed(o, m.covered / m.prof * 100, 1);
        opdb_sb_addc(o, '%');
    } else {
        opdb_sb_adds(o, "n/a");
    }
    opdb_sb_adds(o, "</dd></div>");
    summary_item(o, "kernel types", "rows of the comparison");
    opdb_sb_addf(o, "%zu (%zu not measured, %zu not modelled)</dd></div></dl>\n", sc->nrows, m.not_measured,
                 m.not_modelled);
}

/* ---- bar chart: kernel types by measured share, log axis --------------------- */

static int by_measured(const void *a, const void *b) {
    const opdb_cmp_row *x = *(const opdb_cmp_row *const *)a, *y = *(const opdb_cmp_row *const *)b;
    double kx = isfinite(x->prof_per_fwd.v) ? x->prof_per_fwd.v : -1, ky = isfinite(y->prof_per_fwd.v) ? y->prof_per_fwd.v : -1;
    if (kx != ky) return kx < ky ? 1 : -1;
    double tx = isfinite(x->tc_total.v) ? x->tc_total.v : -1, ty = isfinite(y->tc_total.v) ? y->tc_total.v : -1;
    if (tx != ty) return tx < ty ? 1 : -1;
    return x < y ? -1 : x > y;
}

static void title_values(opdb_strbuf *o, const opdb_cmp_row *r) {
    opdb_sb_add_html(o, r->kt);
    opdb_sb_adds(o, ": predicted ");
    fixed(o, r->tc_total.v, 1);
    opdb_sb_adds(o, " \xc2\xb5s, measured ");
    fixed(o, r->prof_per_fwd.v, 1);
    opdb_sb_adds(o, " \xc2\xb5s");
}

static void chart(opdb_strbuf *o, const opdb_cmp_scenario *sc) {
    logax ax = log_axis(sc);
    double total_prof = 0;
    for (size_t i = 0; i < sc->nrows; i++) total_prof += sc->rows[i].prof_per_fwd.v;
    const opdb_cmp_row **ord = opdb_xmalloc((sc->nrows + 1) * sizeof *ord);
    for (size_t i = 0; i < sc->nrows; i++) ord[i] = &sc->rows[i];
    qsort(ord, sc->nrows, sizeof *ord, by_measured);
    int width = LABEL_W + PLOT_W + ERR_W + 70;
    int height = (int)sc->nrows * PAIR_H + 58;
    opdb_sb_addf(o,
                 "<h3>Kernel types by measured share (log time axis)</h3>\n"
                 "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\" role=\"img\">\n",
                 width, height, width, height);
    opdb_sb_addf(o,
                 "<rect class=\"legend tc\" x=\"%d\" y=\"4\" width=\"12\" height=\"12\"/>"
                 "<text x=\"%d\" y=\"15\">predicted (&#181;s)</text>"
                 "<rect class=\"legend prof\" x=\"%d\" y=\"4\" width=\"12\" height=\"12\"/>"
                 "<text x=\"%d\" y=\"15\">measured per forward (&#181;s)</text>"
                 "<text class=\"errhead\" x=\"%d\" y=\"15\">share</text>"
                 "<text class=\"errhead\" x=\"%d\" y=\"15\">error</text>\n",
                 LABEL_W, LABEL_W + 16, LABEL_W + 150, LABEL_W + 166, LABEL_W + PLOT_W + 10,
                 LABEL_W + PLOT_W + 70);
    int plot_h = (int)sc->nrows * PAIR_H;
    for (double d = ax.lo; d <= ax.hi; d++) {
        double x = LABEL_W + log_pos(&ax, pow(10, d), PLOT_W);
        opdb_sb_addf(o, "<line class=\"grid\" x1=\"%.2f\" y1=\"26\" x2=\"%.2f\" y2=\"%d\"/>", x, x, 28 + plot_h);
        opdb_sb_addf(o, "<text class=\"tick\" x=\"%.2f\" y=\"%d\">", x, 42 + plot_h);
        decade_label(o, d);
        opdb_sb_adds(o, "</text>");
    }
    opdb_sb_adds(o, "\n");
    for (size_t i = 0; i < sc->nrows; i++) {
        const opdb_cmp_row *r = ord[i];
        int y = 30 + (int)i * PAIR_H;
        opdb_sb_adds(o, "<g class=\"pair\" data-kt=\"");
        opdb_sb_add_html(o, r->kt);
        opdb_sb_adds(o, "\"><title>");
        title_values(o, r);
        opdb_sb_adds(o, "</title>");
        opdb_sb_addf(o, "<text class=\"kt\" x=\"%d\" y=\"%d\">", LABEL_W - 6, y + BAR_H + 4);
        label_text(o, r->kt);
        opdb_sb_adds(o, "</text>");
        opdb_sb_addf(o, "<rect class=\"bar tc\" data-v=\"%.17g\" x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\"/>",
                     r->tc_total.v, LABEL_W, y, log_pos(&ax, r->tc_total.v, PLOT_W), BAR_H);
        opdb_sb_addf(o, "<rect class=\"bar prof\" data-v=\"%.17g\" x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\"/>",
                     r->prof_per_fwd.v, LABEL_W, y + BAR_H, log_pos(&ax, r->prof_per_fwd.v, PLOT_W), BAR_H);
        opdb_sb_addf(o, "<text class=\"share\" x=\"%d\" y=\"%d\">", LABEL_W + PLOT_W + 10, y + BAR_H + 4);
        fixed(o, total_prof > 0 ? r->prof_per_fwd.v / total_prof * 100 : 0.0, 1);
        opdb_sb_addf(o, "%%</text><text class=\"err\" x=\"%d\" y=\"%d\">", LABEL_W + PLOT_W + 70, y + BAR_H + 4);
        if (!r->error_pct.is_int) {
            if (r->error_pct.v > 0) opdb_sb_addc(o, '+');
            fixed(o, r->error_pct.v, 1);
            opdb_sb_addc(o, '%');
        } else {
            opdb_sb_adds(o, "not measured");
        }
        opdb_sb_adds(o, "</text></g>\n");
    }
    opdb_sb_adds(o, "</svg>\n");
    free(ord);
}

/* ---- scatter: predicted vs measured, log-log, y = x --------------------------- */

#define SC_W 420
#define SC_M 56

static void scatter(opdb_strbuf *o, const opdb_cmp_scenario *sc) {
    logax ax = log_axis(sc);
    size_t skipped = 0;
    int side = SC_W + 2 * SC_M;
    opdb_sb_addf(o,
                 "<h3>Predicted vs measured (log-log; the line is predicted = measured)</h3>\n"
                 "<svg class=\"scatter\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\" role=\"img\">\n",
                 side, side, side, side);
    for (double d = ax.lo; d <= ax.hi; d++) {
        double p = log_pos(&ax, pow(10, d), SC_W);
        opdb_sb_addf(o, "<line class=\"grid\" x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\"/>", SC_M + p, SC_M, SC_M + p,
                     SC_M + SC_W);
        opdb_sb_addf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/>", SC_M, SC_M + SC_W - p,
                     SC_M + SC_W, SC_M + SC_W - p);
        opdb_sb_addf(o, "<text class=\"tick\" x=\"%.2f\" y=\"%d\">", SC_M + p, SC_M + SC_W + 16);
        decade_label(o, d);
        opdb_sb_addf(o, "</text><text class=\"tick ytick\" x=\"%d\" y=\"%.2f\">", SC_M - 6, SC_M + SC_W - p + 4);
        decade_label(o, d);
        opdb_sb_adds(o, "</text>");
    }
    opdb_sb_addf(o,
                 "<line class=\"diag\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
                 "<text class=\"axis\" x=\"%d\" y=\"%d\">measured per forward (&#181;s)</text>"
                 "<text class=\"axis\" transform=\"translate(14 %d) rotate(-90)\">predicted (&#181;s)</text>\n",
                 SC_M, SC_M + SC_W, SC_M + SC_W, SC_M, SC_M + SC_W / 2, SC_M + SC_W + 40, SC_M + SC_W / 2);
    for (size_t i = 0; i < sc->nrows; i++) {
        const opdb_cmp_row *r = &sc->rows[i];
        if (!(r->tc_total.v > 0 && r->prof_per_fwd.v > 0 && isfinite(r->tc_total.v) && isfinite(r->prof_per_fwd.v))) {
            skipped++;
            continue;
        }
        opdb_sb_addf(o, "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"5\"><title>",
                     SC_M + log_pos(&ax, r->prof_per_fwd.v, SC_W), SC_M + SC_W - log_pos(&ax, r->tc_total.v, SC_W));
        title_values(o, r);
        opdb_sb_adds(o, "</title></circle>\n");
    }
    opdb_sb_adds(o, "</svg>\n");
    opdb_sb_addf(o, "<p class=\"note\">%zu kernel type%s with a zero predicted or measured time %s not plotted.</p>\n",
                 skipped, skipped == 1 ? "" : "s", skipped == 1 ? "is" : "are");
}

/* ---- error histogram ---------------------------------------------------------- */

static void histogram(opdb_strbuf *o, const opdb_cmp_scenario *sc) {
    static const double edges[] = {-50, -20, -10, 0, 10, 20, 50, 100};
    static const char *const names[] = {"&lt; -50%", "-50..-20%", "-20..-10%", "-10..0%", "0..10%",
                                        "10..20%",   "20..50%",   "50..100%",  "&#8805; 100%"};
    enum { NB = 9 };
    size_t cnt[NB] = {0}, max = 1;
    for (size_t i = 0; i < sc->nrows; i++) {
        const opdb_cmp_row *r = &sc->rows[i];
        if (r->error_pct.is_int || !isfinite(r->error_pct.v)) continue;
        size_t b = 0;
        while (b < NB - 1 && r->error_pct.v >= edges[b]) b++;
        if (++cnt[b] > max) max = cnt[b];
    }
    int bw = 62, h = 160, w = NB * bw + 40;
    opdb_sb_addf(o,
                 "<h3>Time error of the measured kernel types ((predicted &#8722; measured) / measured)</h3>\n"
                 "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\" role=\"img\">\n",
                 w, h + 40, w, h + 40);
    for (int b = 0; b < NB; b++) {
        double bh = (double)cnt[b] / (double)max * (h - 20);
        opdb_sb_addf(o,
                     "<g class=\"bin\"><title>%s: %zu kernel type%s</title>"
                     "<rect class=\"hbar\" x=\"%d\" y=\"%.2f\" width=\"%d\" height=\"%.2f\"/>"
                     "<text class=\"tick\" x=\"%d\" y=\"%.2f\">%zu</text>"
                     "<text class=\"tick\" x=\"%d\" y=\"%d\">%s</text></g>\n",
                     names[b], cnt[b], cnt[b] == 1 ? "" : "s", 20 + b * bw, h - bh, bw - 6, bh,
                     20 + b * bw + (bw - 6) / 2, h - bh - 4, cnt[b], 20 + b * bw + (bw - 6) / 2, h + 16, names[b]);
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
    opdb_sb_adds(o, "<table>\n<thead><tr><th>kernel type</th><th>model ops</th><th>predicted (&#181;s)</th><th>predicted count</th>"
                    "<th>measured (&#181;s)</th><th>measured count</th><th>time error</th><th>count error</th>"
                    "<th>status</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < sc->nrows; i++) {
        const opdb_cmp_row *r = &sc->rows[i];
        opdb_sb_adds(o, "<tr><td>");
        opdb_sb_add_html(o, r->kt);
        opdb_sb_adds(o, "</td><td>");
        opdb_sb_add_html(o, r->funcs);
        opdb_sb_adds(o, "</td>");
        cell_num(o, r->tc_total.v, 1, "");
        opdb_sb_addf(o, "<td class=\"num\">%lld</td>", r->tc_count);
        cell_num(o, r->prof_per_fwd.v, 1, "");
        opdb_sb_addf(o, "<td class=\"num\">%lld</td>", r->prof_count);
        if (r->error_pct.is_int) opdb_sb_adds(o, "<td class=\"num\">not measured</td>");
        else cell_num(o, r->error_pct.v, 1, "%");
        if (r->count_error_pct.is_int) opdb_sb_adds(o, "<td class=\"num\">-</td>");
        else cell_num(o, r->count_error_pct.v, 1, "%");
        opdb_sb_adds(o, "<td>");
        opdb_sb_add_html(o, opdb_cmp_status_en(r->status));
        opdb_sb_adds(o, "</td></tr>\n");
    }
    opdb_sb_adds(o, "</tbody>\n</table>\n");
}

/* ---- per-shape drill-down (--shapes) ------------------------------------------- */

static void shape_row(opdb_strbuf *o, const opdb_cmp_shape_row *r) {
    const char *cells[] = {r->tc_dur, r->prof_dur};
    opdb_sb_adds(o, "<tr class=\"shape\"><td class=\"key\">");
    opdb_sb_add_html(o, *r->shape ? r->shape : "(no shape)");
    opdb_sb_adds(o, "</td>");
    for (int k = 0; k < 2; k++) {
        opdb_sb_adds(o, "<td class=\"num\">");
        opdb_sb_add_html(o, cells[k]);
        opdb_sb_adds(o, "</td>");
    }
    /* shape-compare writes inf (or, by default, nothing) where nothing was measured */
    opdb_sb_adds(o, "<td class=\"num\">");
    if (!(r->prof > 0) && (!*r->delta || strcmp(r->delta, "inf") == 0)) {
        opdb_sb_adds(o, "not measured");
    } else {
        opdb_sb_add_html(o, r->delta);
        if (*r->delta) opdb_sb_addc(o, '%');
    }
    opdb_sb_adds(o, "</td><td class=\"num\">");
    opdb_sb_add_html(o, r->tc_count);
    opdb_sb_adds(o, "</td><td class=\"num\">");
    opdb_sb_add_html(o, r->prof_count);
    opdb_sb_adds(o, "</td><td>");
    opdb_sb_add_html(o, r->source);
    opdb_sb_adds(o, "</td></tr>\n");
}

/* One <details> block: the shape rows of kernel type kt. */
static void drill_block(opdb_strbuf *o, const opdb_cmp_shapes *sh, const char *kt, bool compared) {
    size_t n = 0;
    double tc = 0, prof = 0;
    for (size_t i = 0; i < sh->n; i++)
        if (strcmp(sh->v[i].kt, kt) == 0) {
            n++;
            tc += sh->v[i].tc;
            prof += sh->v[i].prof;
        }
    if (!n) return;
    opdb_sb_adds(o, "<details class=\"kt-shapes\" data-kt=\"");
    opdb_sb_add_html(o, kt);
    opdb_sb_addf(o, "\" data-shapes=\"%zu\"><summary><span class=\"kt\">", n);
    opdb_sb_add_html(o, kt);
    opdb_sb_addf(o, "</span>: %zu shape%s, predicted ", n, n == 1 ? "" : "s");
    fixed(o, tc, 2);
    opdb_sb_adds(o, " &#181;s, measured ");
    fixed(o, prof, 2);
    opdb_sb_addf(o, " &#181;s%s</summary>\n", compared ? "" : " (not in the kernel-type comparison)");
    opdb_sb_adds(o, "<table class=\"shapes\"><thead><tr><th>shape</th><th>predicted (&#181;s)</th>"
                    "<th>measured (&#181;s)</th><th>time error</th><th>predicted count</th><th>measured count</th>"
                    "<th>source</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < sh->n; i++)
        if (strcmp(sh->v[i].kt, kt) == 0) shape_row(o, &sh->v[i]);
    opdb_sb_adds(o, "</tbody></table></details>\n");
}

static bool row_has_kt(const opdb_cmp_scenario *sc, const char *kt) {
    for (size_t i = 0; i < sc->nrows; i++)
        if (strcmp(sc->rows[i].kt, kt) == 0) return true;
    return false;
}

/* Kernel types in the bar chart's order (measured share), then those only
 * the per-shape CSV has, in its order; the shapes of each in the CSV's order
 * (largest time first). */
static void drilldown(opdb_strbuf *o, const opdb_cmp_scenario *sc) {
    const opdb_cmp_shapes *sh = sc->shapes;
    opdb_sb_adds(o, "<section class=\"shapes\">\n<h3>Per-shape drill-down</h3>\n<p class=\"note\">From the per-shape CSV of "
                    "<code>opdb shape-compare</code>, as that file holds it: times over the whole traces (not per "
                    "forward pass), in &#181;s. Open a kernel type to see its shapes.</p>\n<div class=\"drill\">\n");
    const opdb_cmp_row **ord = opdb_xmalloc((sc->nrows + 1) * sizeof *ord);
    for (size_t i = 0; i < sc->nrows; i++) ord[i] = &sc->rows[i];
    qsort(ord, sc->nrows, sizeof *ord, by_measured);
    for (size_t i = 0; i < sc->nrows; i++) drill_block(o, sh, ord[i]->kt, true);
    free(ord);
    for (size_t i = 0; i < sh->n; i++) {
        bool seen = row_has_kt(sc, sh->v[i].kt);
        for (size_t k = 0; !seen && k < i; k++) seen = strcmp(sh->v[k].kt, sh->v[i].kt) == 0;
        if (!seen) drill_block(o, sh, sh->v[i].kt, false);
    }
    opdb_sb_adds(o, "</div>\n</section>\n");
}

/* System font stacks only (nothing fetched); the CJK families are the ones
 * Debian ships (fonts-wqy-microhei, fonts-noto-cjk) and the usual desktop ones. */
static const char k_style[] =
    "body{font-family:system-ui,'DejaVu Sans','Noto Sans CJK SC','WenQuanYi Micro Hei','WenQuanYi Zen Hei',"
    "'Source Han Sans SC','PingFang SC','Microsoft YaHei',sans-serif;margin:24px;color:#222}"
    "h1{font-size:20px}h2{font-size:17px;margin-top:32px}h3{font-size:14px;margin:20px 0 4px}"
    ".summary{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}"
    ".stat{border:1px solid #ddd;border-radius:6px;padding:6px 12px;background:#fafafa}"
    ".stat dt{font-size:11px;color:#666}.stat dd{margin:0;font-size:16px;font-weight:600}"
    "svg text{font-size:11px;fill:#222}.chart .kt{text-anchor:end}.tick{text-anchor:middle;fill:#666}"
    ".ytick{text-anchor:end}.axis{text-anchor:middle}"
    ".grid{stroke:#e4e4e4;stroke-width:1}.diag{stroke:#888;stroke-dasharray:4 3}"
    ".tc{fill:#4e79a7}.prof{fill:#f28e2b}.pt{fill:#4e79a7;fill-opacity:.7;stroke:#234}.hbar{fill:#76b7b2}"
    ".note{font-size:12px;color:#666}"
    "table{border-collapse:collapse;font-size:12px;margin-top:8px}"
    "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}td.num{text-align:right}"
    "th{background:#f3f3f3}";
/* only on pages with a drill-down, so that other pages stay as they were */
static const char k_style_drill[] =
    "details.kt-shapes{margin:2px 0}details.kt-shapes summary{cursor:pointer;font-size:13px}"
    "details.kt-shapes table{margin:4px 0 8px 18px}";

/* Checks the drill-down: each block holds as many shape rows as it says,
 * and every row is laid out (has a height) once its block is opened. The
 * result is left on <body> as data-drill / data-drill-rows / data-drill-ok. */
static const char k_script_drill[] =
    "(function(){var n=0,rows=0,bad=0;"
    "document.querySelectorAll('details.kt-shapes').forEach(function(d){n++;"
    "var tr=d.querySelectorAll('tr.shape');rows+=tr.length;"
    "if(String(tr.length)!==d.dataset.shapes)bad++;d.open=true;"
    "tr.forEach(function(t){if(!(t.getBoundingClientRect().height>0))bad++;});d.open=false;});"
    "document.body.dataset.drill=String(n);document.body.dataset.drillRows=String(rows);"
    "document.body.dataset.drillOk=bad?'mismatch':'ok';})();";

/* Checks the page drew itself: one bar pair (exactly two bars) per table
 * row; the result is left on <body> for tests and people alike. */
static const char k_script[] =
    "(function(){var pairs=0,bad=0,rows=0;"
    "document.querySelectorAll('section.scenario').forEach(function(s){"
    "var p=s.querySelectorAll('svg.chart g.pair');pairs+=p.length;"
    "p.forEach(function(g){if(g.querySelectorAll('rect.bar').length!==2)bad++;});"
    "var r=s.querySelectorAll('table tbody tr').length;rows+=r;if(r!==p.length)bad++;"
    "if(s.querySelectorAll('svg.hist g.bin').length!==9||!s.querySelector('svg.scatter line.diag'))bad++;"
    /* every bar of a positive value is visible: at least one pixel wide */
    "s.querySelectorAll('svg.chart rect.bar').forEach(function(b){"
    "if(parseFloat(b.dataset.v)>0&&!(b.getBBox().width>=1))bad++;});});"
    "document.body.dataset.pairs=String(pairs);document.body.dataset.rows=String(rows);"
    "document.body.dataset.scripts=String(document.scripts.length);"
    "document.body.dataset.loaded=bad?'mismatch':'ok';})();";

void opdb_cmp_html(opdb_strbuf *o, const opdb_cmp_scenario *sc, size_t n) {
    opdb_sb_adds(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                    "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
                    "<title>opdb compare: predicted vs measured per forward pass</title>\n<style>");
    bool drill = false;
    for (size_t s = 0; s < n; s++) drill |= sc[s].shapes != NULL;
    opdb_sb_adds(o, k_style);
    if (drill) opdb_sb_adds(o, k_style_drill);
    opdb_sb_adds(o, "</style>\n</head>\n<body>\n<h1>Predicted vs measured time per forward pass</h1>\n");
    if (n == 0) opdb_sb_adds(o, "<p>No scenario had all of its input files.</p>\n");
    for (size_t s = 0; s < n; s++) {
        opdb_sb_adds(o, "<section class=\"scenario\">\n<h2>");
        opdb_sb_add_html(o, sc[s].name);
        opdb_sb_adds(o, "</h2>\n");
        summary_block(o, &sc[s]);
        chart(o, &sc[s]);
        scatter(o, &sc[s]);
        histogram(o, &sc[s]);
        opdb_sb_adds(o, "<h3>All kernel types</h3>\n");
        table(o, &sc[s]);
        opdb_sb_adds(o, "</section>\n");
        /* after its scenario's section, whose tables the page check counts */
        if (sc[s].shapes) drilldown(o, &sc[s]);
    }
    opdb_sb_adds(o, "<script>");
    if (drill) opdb_sb_adds(o, k_script_drill);
    opdb_sb_adds(o, k_script);
    opdb_sb_adds(o, "</script>\n</body>\n</html>\n");
}
