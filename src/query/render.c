/* Result lines exactly as Python's json.dumps writes them (", " and ": "
 * separators, ensure_ascii escapes, floats in repr), and the explain object. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opdb/json_writer.h"
#include "opdb/pystr.h"
#include "opdb/pyround.h"
#include "query/query_internal.h"

/* x as json.dumps writes a float, at o (OPDB_PY_REPR_ROOM bytes of room); returns the end */
static char *fl_at(char *o, double x) {
    if (x == 1.0) { /* the usual confidence */
        memcpy(o, "1.0", 3);
        return o + 3;
    }
    if (isnan(x)) {
        memcpy(o, "NaN", 3);
        return o + 3;
    }
    if (isinf(x)) {
        memcpy(o, x > 0 ? "Infinity" : "-Infinity", x > 0 ? 8 : 9);
        return o + (x > 0 ? 8 : 9);
    }
    return o + opdb_py_fmt_repr(o, OPDB_PY_REPR_ROOM, x);
}

/* a literal's bytes at the cursor o (room known to be there) */
#define PUT(o, s) (memcpy((o), (s), sizeof(s) - 1), (o) += sizeof(s) - 1)

static void fl(opdb_strbuf *sb, double x) {
    if (isnan(x)) opdb_sb_adds(sb, "NaN");
    else if (isinf(x)) opdb_sb_adds(sb, x > 0 ? "Infinity" : "-Infinity");
    else {
        /* formatted in place (the room reserved, its NUL written) */
        opdb_sb_reserve(sb, OPDB_PY_REPR_ROOM);
        sb->n += opdb_py_fmt_repr(sb->p + sb->n, OPDB_PY_REPR_ROOM, x);
    }
}

/* a literal's bytes (its length known at compile time) */
#define LIT(sb, s) opdb_sb_add((sb), (s), sizeof(s) - 1)

/* an integer as Python writes it */
static void int_(opdb_strbuf *sb, long long v) {
    opdb_sb_reserve(sb, 24);
    sb->n += opdb_py_fmt_int(sb->p + sb->n, v);
    sb->p[sb->n] = 0;
}

static void str_or_null(opdb_strbuf *sb, const char *s) {
    if (s) opdb_json_quote(sb, s);
    else opdb_sb_adds(sb, "null");
}

static void key(opdb_strbuf *sb, const char *k, bool first) {
    if (!first) opdb_sb_adds(sb, ", ");
    opdb_json_quote(sb, k);
    opdb_sb_adds(sb, ": ");
}

void q_render_value(const qv *v, opdb_strbuf *sb) {
    if (!v) {
        opdb_sb_adds(sb, "null");
        return;
    }
    switch (v->kind) {
    case QV_NULL: opdb_sb_adds(sb, "null"); break;
    case QV_BOOL: opdb_sb_adds(sb, v->b ? "true" : "false"); break;
    case QV_INT: int_(sb, (long long)v->i); break;
    case QV_FLOAT:
        if (v->s) opdb_sb_add(sb, v->s, v->n); /* an integer beyond int64, as Python writes it back */
        else fl(sb, v->f);
        break;
    case QV_STR: opdb_json_quote(sb, v->s); break;
    case QV_LIST:
        opdb_sb_addc(sb, '[');
        for (size_t i = 0; i < v->n; i++) {
            if (i) opdb_sb_adds(sb, ", ");
            q_render_value(v->items[i], sb);
        }
        opdb_sb_addc(sb, ']');
        break;
    case QV_DICT:
        opdb_sb_addc(sb, '{');
        for (size_t i = 0; i < v->n; i++) {
            if (i) opdb_sb_adds(sb, ", ");
            q_render_value(v->keys[i], sb);
            opdb_sb_adds(sb, ": ");
            q_render_value(v->items[i], sb);
        }
        opdb_sb_addc(sb, '}');
        break;
    case QV_TENSOR:
        opdb_sb_adds(sb, "{\"shape\": [");
        for (uint32_t i = 0; i < v->shape.rank; i++) {
            if (i) LIT(sb, ", ");
            int_(sb, (long long)v->shape.d[i]);
        }
        opdb_sb_addf(sb, "], \"dtype\": \"%s\"}", q_dtype_name(v->dtype));
        break;
    case QV_DTYPE: opdb_sb_addf(sb, "{\"dtype_value\": \"%s\"}", q_dtype_name(v->dtype)); break;
    }
}


static const char *latcol_name(int c) {
    return c == QLAT_ENVELOPE ? "core_envelope" : c < 3 ? q_lat_names[c] : "";
}

static void explain(const q_ctx *c, opdb_strbuf *sb) {
    const q_result *r = c->r;
    opdb_sb_adds(sb, "{");
    key(sb, "mode", true);
    opdb_json_quote(sb, c->cfg->quirks ? "reference-quirks" : "default");
    if (r->path) {
        key(sb, "path", false);
        opdb_json_quote(sb, r->path);
    }
    key(sb, "stage", false);
    opdb_json_quote(sb, r->stage ? r->stage : "exact");
    if (r->kernels) {
        key(sb, "kernels", false);
        opdb_sb_addc(sb, '[');
        for (size_t i = 0; i < r->n_kernels; i++) {
            if (i) opdb_sb_adds(sb, ", ");
            opdb_json_quote(sb, r->kernels[i]);
        }
        opdb_sb_addc(sb, ']');
    }
    if (r->n_rows) {
        key(sb, "rows", false);
        opdb_sb_addc(sb, '[');
        for (size_t i = 0; i < r->n_rows; i++) {
            const q_xrow *x = &r->rows[i];
            if (i) opdb_sb_adds(sb, ", ");
            opdb_sb_addc(sb, '{');
            key(sb, "file", true);
            opdb_json_quote(sb, x->tab->shown);
            key(sb, "line", false);
            int_(sb, (long long)x->tab->t.line[x->row]);
            key(sb, "kernel", false);
            opdb_json_quote(sb, x->tab->kernel);
            key(sb, "latency_us", false);
            fl(sb, x->lat);
            key(sb, "latency_column", false);
            opdb_json_quote(sb, latcol_name(x->tab->rows[x->row].latcol));
            key(sb, "rule", false);
            str_or_null(sb, x->rule);
            if (x->n_rules) {
                key(sb, "input_rules", false);
                opdb_sb_addc(sb, '[');
                for (size_t k = 0; k < x->n_rules; k++) {
                    if (k) opdb_sb_adds(sb, ", ");
                    opdb_json_quote(sb, x->input_rules[k]);
                }
                opdb_sb_addc(sb, ']');
            }
            key(sb, "distance", false);
            if (x->dist == (double)(long long)x->dist) int_(sb, (long long)x->dist);
            else fl(sb, x->dist);
            key(sb, "ties", false);
            opdb_sb_addf(sb, "%zu", x->ties);
            opdb_sb_addc(sb, '}');
        }
        opdb_sb_addc(sb, ']');
    }
    if (r->extra.n) opdb_sb_add(sb, r->extra.p, r->extra.n);
    if (r->src == QS_MISS) {
        key(sb, "miss", false);
        opdb_sb_adds(sb, "{\"reason\": ");
        opdb_json_quote(sb, r->miss ? r->miss : "");
        opdb_sb_adds(sb, ", \"attempts\": [");
        opdb_sb_add(sb, r->attempts.p, r->attempts.n);
        opdb_sb_adds(sb, "]}");
    }
    opdb_sb_adds(sb, "}");
}

void q_render(const q_ctx *c, const char *id_json, size_t id_n, opdb_strbuf *sb) {
    const q_result *r = c->r;
    bool hit = r->src == QS_MEASURED || r->src == QS_INTERPOLATED || r->src == QS_PARTIAL;
    /* the fixed members' keys and the source names are plain ASCII: written as they are quoted */
    /* each with the key that follows it */
#define SRC_Q(name) {"\"" name "\", \"confidence\": ", sizeof(name) + 17}
    static const struct {
        const char *s;
        size_t n;
    } src_q[] = {SRC_Q("MEASURED"), SRC_Q("INTERPOLATED"), SRC_Q("PARTIAL"), SRC_Q("MISS"), SRC_Q("ERROR")};
#undef SRC_Q
    /* up to the rule the line's length is bounded: written through a cursor
     * into room reserved once (a float takes at most OPDB_PY_REPR_ROOM) */
    opdb_sb_reserve(sb, 256 + id_n);
    char *o = sb->p + sb->n;
    PUT(o, "{\"id\": ");
    if (id_json) {
        memcpy(o, id_json, id_n);
        o += id_n;
    } else {
        PUT(o, "null");
    }
    if (hit) {
        PUT(o, ", \"hit\": true, \"latency_us\": ");
        o = fl_at(o, r->lat);
        PUT(o, ", \"source\": ");
    } else {
        PUT(o, ", \"hit\": false, \"latency_us\": null, \"source\": ");
    }
    memcpy(o, src_q[r->src].s, src_q[r->src].n);
    o += src_q[r->src].n;
    if (hit) o = fl_at(o, r->conf);
    else PUT(o, "null");
    PUT(o, ", \"shape_match_rule\": ");
    *o = 0;
    sb->n = (size_t)(o - sb->p);
    str_or_null(sb, hit ? r->rule : NULL);
    LIT(sb, ", \"kernel_type\": ");
    str_or_null(sb, hit ? r->kernel : NULL);
    if (hit && !r->has_sub) {
        /* the usual hit's last two members at once */
        LIT(sb, ", \"miss_reason\": null, \"sub_kernel_durations\": null");
        goto extras;
    }
    LIT(sb, ", \"miss_reason\": ");
    if (hit) LIT(sb, "null");
    else if (r->src == QS_ERROR) {
        opdb_strbuf t;
        opdb_sb_init(&t);
        opdb_sb_addf(&t, "error:%s", r->miss ? r->miss : "");
        opdb_sb_addc(&t, 0);
        opdb_json_quote(sb, t.p);
        opdb_sb_free(&t);
    } else opdb_json_quote(sb, r->miss ? r->miss : "");
    LIT(sb, ", \"sub_kernel_durations\": ");
    if (hit && r->has_sub) {
        opdb_sb_addc(sb, '[');
        for (size_t i = 0; i < r->n_sub; i++) {
            if (i) LIT(sb, ", ");
            opdb_sb_addc(sb, '[');
            opdb_json_quote(sb, r->sub[i].kernel);
            LIT(sb, ", ");
            fl(sb, r->sub[i].us);
            opdb_sb_addc(sb, ']');
        }
        opdb_sb_addc(sb, ']');
    } else LIT(sb, "null");
extras:
    /* opdb's own: the calibrated interval of an answer interpolated on its own */
    if (r->has_iv && r->src == QS_INTERPOLATED && r->lat == r->iv_at && !c->cfg->quirks) {
        static const char *const names[4] = {"interval_low_us", "interval_high_us", "interval80_low_us",
                                             "interval80_high_us"};
        const double v[4] = {r->iv90[0], r->iv90[1], r->iv80[0], r->iv80[1]};
        for (int i = 0; i < 4; i++) {
            key(sb, names[i], false);
            fl(sb, opdb_py_roundn(r->lat * (1 + v[i]), 2));
        }
        key(sb, "loo_median_error", false);
        fl(sb, opdb_py_roundn(r->iv_med, 4));
    }
    if (r->src == QS_MISS && r->request && !c->cfg->quirks) { /* what to measure so that it hits */
        key(sb, "request", false);
        opdb_sb_adds(sb, r->request);
    }
    if (r->src == QS_ERROR) {
        key(sb, "error", false);
        opdb_json_quote(sb, r->error_msg ? r->error_msg : "");
    }
    if (c->explain) {
        key(sb, "explain", false);
        explain(c, sb);
    }
    opdb_sb_addc(sb, '}');
}
