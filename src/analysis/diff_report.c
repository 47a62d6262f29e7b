/* opdb diff's Markdown and JSON reports (layout in docs/DIFF.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff_internal.h"
#include "opdb/json_writer.h"
#include "opdb/pyround.h"

static void md_cell(FILE *out, const char *s) {
    for (; *s; s++) {
        if (*s == '|') fputc('\\', out);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, out);
    }
}

static void changes_text(const dkt *k, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (int v = 0; v < OPDB_DIFF_NVERDICTS; v++) {
        if (v == OPDB_DIFF_SAME || !k->count[v]) continue;
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s %zu", n ? ", " : "",
                              opdb_diff_verdict_name((opdb_diff_verdict)v), k->count[v]);
        if (n >= cap) break;
    }
    if (!buf[0]) snprintf(buf, cap, "-");
}

void diff_write_markdown(const dreport *r, FILE *out) {
    const opdb_diff_options *o = r->o;
    bool w = r->res->weighted;
    fprintf(out, "# opdb diff: %s -> %s\n\n", r->old_dir, r->new_dir);
    fprintf(out, "threshold %g, alpha %g, systematic offset beyond %gx\n\n", o->threshold, o->alpha, o->offset_factor);
    fprintf(out, "| verdict | rows |\n| --- | ---: |\n");
    for (int v = 0; v < OPDB_DIFF_NVERDICTS; v++)
        fprintf(out, "| %s | %zu |\n", opdb_diff_verdict_name((opdb_diff_verdict)v), r->res->count[v]);
    fprintf(out, "\n## Kernel types\n\n| kernel type | rows | compared | median ratio | offset | changes |%s\n",
            w ? " weight | predicted |" : "");
    fprintf(out, "| --- | ---: | ---: | ---: | --- | --- |%s\n", w ? " ---: | ---: |" : "");
    char buf[512];
    for (size_t i = 0; i < r->nkts; i++) {
        const dkt *k = &r->kts[i];
        fputs("| ", out);
        md_cell(out, k->name);
        fprintf(out, " | %zu | %zu | ", k->rows, k->compared);
        if (isnan(k->median)) fputs("-", out);
        else fprintf(out, "%.4f", k->median);
        changes_text(k, buf, sizeof buf);
        fprintf(out, " | %s | %s |", k->offset ? "yes" : "", buf);
        if (w) fprintf(out, " %.2f%% | %+.3f%% |", 100 * k->weight, 100 * k->predicted);
        fputc('\n', out);
    }
    if (w)
        fprintf(out, "\nPredicted end-to-end change: %+.3f%% (%zu results, %.3f us)\n", 100 * r->res->predicted_change,
                r->weights_lines, r->weights_total);
    fprintf(out, "\n## Changes\n\n");
    size_t shown = 0;
    for (size_t i = 0; i < r->nch; i++) {
        const dchange *c = &r->ch[i];
        if (c->v == OPDB_DIFF_SAME) continue;
        if (!shown++)
            fprintf(out, "| kernel type | verdict | row | old us | new us | ratio | p | lines |\n"
                         "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n");
        const dgroup *g = c->new_ ? c->new_ : c->old;
        fputs("| ", out);
        md_cell(out, r->kts[c->kt].name);
        fprintf(out, " | %s | ", opdb_diff_verdict_name(c->v));
        md_cell(out, g->display);
        diff_fmt_side(c->old, buf, sizeof buf);
        fprintf(out, " | %s | ", buf);
        diff_fmt_side(c->new_, buf, sizeof buf);
        fprintf(out, "%s | ", buf);
        if (isnan(c->ratio)) fputs("-", out);
        else fprintf(out, "%.4f", c->ratio);
        fputs(" | ", out);
        if (isnan(c->p)) fputs("-", out);
        else fprintf(out, "%.3g", c->p);
        fputs(" | ", out);
        if (c->old) fprintf(out, "old:%llu", c->old->line);
        if (c->old && c->new_) fputc(' ', out);
        if (c->new_) fprintf(out, "new:%llu", c->new_->line);
        fputs(" |\n", out);
    }
    if (!shown) fprintf(out, "No changes.\n");
}

static void jfloat_or_null(opdb_json *j, double v) {
    if (isnan(v)) opdb_json_null(j);
    else opdb_json_float(j, v);
}

static void jcounts(opdb_json *j, const size_t *count) {
    opdb_json_begin_object(j);
    for (int v = 0; v < OPDB_DIFF_NVERDICTS; v++) {
        opdb_json_key(j, opdb_diff_verdict_name((opdb_diff_verdict)v));
        opdb_json_int(j, (long long)count[v]);
    }
    opdb_json_end_object(j);
}

static void jside(opdb_json *j, const char *line_key, const char *status_key, const char *us_key, const dgroup *g) {
    opdb_json_key(j, line_key);
    if (g) opdb_json_int(j, (long long)g->line);
    else opdb_json_null(j);
    opdb_json_key(j, status_key);
    if (g) opdb_json_string(j, diff_status_name(g->status));
    else opdb_json_null(j);
    opdb_json_key(j, us_key);
    jfloat_or_null(j, g && g->status == DS_VISIBLE ? g->lat : NAN);
}

void diff_write_json(const dreport *r, FILE *out) {
    const opdb_diff_options *o = r->o;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_json j;
    opdb_json_init(&j, &sb);
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "old");
    opdb_json_string(&j, r->old_dir);
    opdb_json_key(&j, "new");
    opdb_json_string(&j, r->new_dir);
    opdb_json_key(&j, "threshold");
    opdb_json_float(&j, o->threshold);
    opdb_json_key(&j, "alpha");
    opdb_json_float(&j, o->alpha);
    opdb_json_key(&j, "offset_factor");
    opdb_json_float(&j, o->offset_factor);
    opdb_json_key(&j, "counts");
    jcounts(&j, r->res->count);
    opdb_json_key(&j, "kernel_types");
    opdb_json_begin_array(&j);
    for (size_t i = 0; i < r->nkts; i++) {
        const dkt *k = &r->kts[i];
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "kernel_type");
        opdb_json_string(&j, k->name);
        opdb_json_key(&j, "rows");
        opdb_json_int(&j, (long long)k->rows);
        opdb_json_key(&j, "compared");
        opdb_json_int(&j, (long long)k->compared);
        opdb_json_key(&j, "median_ratio");
        jfloat_or_null(&j, k->median);
        opdb_json_key(&j, "systematic_offset");
        opdb_json_bool(&j, k->offset);
        opdb_json_key(&j, "counts");
        jcounts(&j, k->count);
        if (r->res->weighted) {
            opdb_json_key(&j, "weight");
            opdb_json_float(&j, k->weight);
            opdb_json_key(&j, "predicted_change");
            opdb_json_float(&j, k->predicted);
        }
        opdb_json_end_object(&j);
    }
    opdb_json_end_array(&j);
    if (r->res->weighted) {
        opdb_json_key(&j, "weights");
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "results");
        opdb_json_int(&j, (long long)r->weights_lines);
        opdb_json_key(&j, "total_us");
        opdb_json_float(&j, r->weights_total);
        opdb_json_key(&j, "predicted_change");
        opdb_json_float(&j, r->res->predicted_change);
        opdb_json_end_object(&j);
    }
    opdb_json_key(&j, "changes");
    opdb_json_begin_array(&j);
    for (size_t i = 0; i < r->nch; i++) {
        const dchange *c = &r->ch[i];
        if (c->v == OPDB_DIFF_SAME) continue;
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "kernel_type");
        opdb_json_string(&j, r->kts[c->kt].name);
        opdb_json_key(&j, "verdict");
        opdb_json_string(&j, opdb_diff_verdict_name(c->v));
        opdb_json_key(&j, "row");
        opdb_json_string(&j, (c->new_ ? c->new_ : c->old)->display);
        jside(&j, "old_line", "old_status", "old_us", c->old);
        jside(&j, "new_line", "new_status", "new_us", c->new_);
        opdb_json_key(&j, "ratio");
        jfloat_or_null(&j, c->ratio);
        opdb_json_key(&j, "p_value");
        jfloat_or_null(&j, isnan(c->p) ? NAN : opdb_py_roundn(c->p, 6));
        if (r->res->weighted) {
            opdb_json_key(&j, "weight");
            opdb_json_float(&j, c->old && r->weights_total > 0 ? c->old->explain_us / r->weights_total : 0.0);
        }
        opdb_json_end_object(&j);
    }
    opdb_json_end_array(&j);
    opdb_json_end_object(&j);
    fwrite(sb.p, 1, sb.n, out);
    fputc('\n', out);
    opdb_sb_free(&sb);
}
