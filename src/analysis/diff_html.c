/* `diff --html`: one self-contained page (inline CSS, nothing fetched), in
 * the style of compare --html: the verdict counts, the kernel types with
 * their median ratio as a bar around 1.0, and the changed rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff_internal.h"
#include "opdb/fs.h"

static const char *verdict_class(opdb_diff_verdict v) {
    switch (v) {
    case OPDB_DIFF_REGRESSION: return "bad";
    case OPDB_DIFF_GAIN: return "good";
    case OPDB_DIFF_DRIFT:
    case OPDB_DIFF_UNKNOWN:
    case OPDB_DIFF_STATUS_CHANGE: return "warn";
    default: return "plain";
    }
}

int diff_write_html(const dreport *r, const char *path, opdb_err *err) {
    opdb_strbuf h;
    opdb_sb_init(&h);
    opdb_sb_adds(&h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>opdb diff</title>\n<style>\n"
                     "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}\n"
                     "table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\n"
                     "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
                     ".bad{background:#fde2e2}.good{background:#e2f5e2}.warn{background:#fff4d6}\n"
                     ".bar{display:inline-block;height:10px;vertical-align:middle}\n"
                     ".up{background:#d9534f}.down{background:#5cb85c}\n"
                     "</style></head><body>\n<h1>opdb diff</h1>\n<p>old: <code>");
    opdb_sb_add_html(&h, r->old_dir);
    opdb_sb_adds(&h, "</code><br>new: <code>");
    opdb_sb_add_html(&h, r->new_dir);
    opdb_sb_addf(&h, "</code><br>threshold %g, alpha %g, systematic offset beyond %gx</p>\n", r->o->threshold,
                 r->o->alpha, r->o->offset_factor);
    if (r->res->weighted)
        opdb_sb_addf(&h, "<p>Predicted end-to-end change: <b>%+.3f%%</b> (%zu results, %.3f us)</p>\n",
                     100 * r->res->predicted_change, r->weights_lines, r->weights_total);
    opdb_sb_adds(&h, "<table><tr><th>verdict</th><th>rows</th></tr>\n");
    for (int v = 0; v < OPDB_DIFF_NVERDICTS; v++)
        opdb_sb_addf(&h, "<tr class=\"%s\"><td>%s</td><td class=\"n\">%zu</td></tr>\n",
                     verdict_class((opdb_diff_verdict)v), opdb_diff_verdict_name((opdb_diff_verdict)v), r->res->count[v]);
    opdb_sb_adds(&h, "</table>\n<h2>Kernel types</h2>\n<table><tr><th>kernel type</th><th>rows</th><th>compared</th>"
                     "<th>median ratio</th><th></th><th>offset</th></tr>\n");
    for (size_t i = 0; i < r->nkts; i++) {
        const dkt *k = &r->kts[i];
        opdb_sb_addf(&h, "<tr%s><td>", k->offset ? " class=\"warn\"" : "");
        opdb_sb_add_html(&h, k->name);
        opdb_sb_addf(&h, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>", k->rows, k->compared);
        if (isnan(k->median)) {
            opdb_sb_adds(&h, "<td class=\"n\">-</td><td></td>");
        } else {
            /* bar length: |log2(ratio)|, 100 px per doubling, capped */
            double l = fabs(log2(k->median)) * 100;
            opdb_sb_addf(&h, "<td class=\"n\">%.4f</td><td><span class=\"bar %s\" style=\"width:%dpx\"></span></td>",
                         k->median, k->median > 1 ? "up" : "down", (int)(l > 200 ? 200 : l + 1));
        }
        opdb_sb_addf(&h, "<td>%s</td></tr>\n", k->offset ? "yes" : "");
    }
    opdb_sb_adds(&h, "</table>\n<h2>Changes</h2>\n<table><tr><th>kernel type</th><th>verdict</th><th>row</th>"
                     "<th>old us</th><th>new us</th><th>ratio</th><th>p</th><th>lines</th></tr>\n");
    char buf[128];
    for (size_t i = 0; i < r->nch; i++) {
        const dchange *c = &r->ch[i];
        if (c->v == OPDB_DIFF_SAME) continue;
        opdb_sb_addf(&h, "<tr class=\"%s\"><td>", verdict_class(c->v));
        opdb_sb_add_html(&h, r->kts[c->kt].name);
        opdb_sb_addf(&h, "</td><td>%s</td><td><code>", opdb_diff_verdict_name(c->v));
        opdb_sb_add_html(&h, (c->new_ ? c->new_ : c->old)->display);
        diff_fmt_side(c->old, buf, sizeof buf);
        opdb_sb_addf(&h, "</code></td><td class=\"n\">%s</td>", buf);
        diff_fmt_side(c->new_, buf, sizeof buf);
        opdb_sb_addf(&h, "<td class=\"n\">%s</td>", buf);
        if (isnan(c->ratio)) opdb_sb_adds(&h, "<td class=\"n\">-</td>");
        else opdb_sb_addf(&h, "<td class=\"n\">%.4f</td>", c->ratio);
        if (isnan(c->p)) opdb_sb_adds(&h, "<td class=\"n\">-</td><td>");
        else opdb_sb_addf(&h, "<td class=\"n\">%.3g</td><td>", c->p);
        if (c->old) opdb_sb_addf(&h, "old:%llu ", c->old->line);
        if (c->new_) opdb_sb_addf(&h, "new:%llu", c->new_->line);
        opdb_sb_adds(&h, "</td></tr>\n");
    }
    opdb_sb_adds(&h, "</table>\n</body></html>\n");
    int rc = opdb_atomic_write(path, h.p, h.n, err);
    opdb_sb_free(&h);
    return rc;
}
