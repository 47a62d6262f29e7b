/* Elementwise lookups: matched on the output shape (batch strip, padding,
 * 3-D flattening) and output dtype, scaled by element size when the row's
 * dtype differs. */
#include <stdio.h>
#include <string.h>

#include "query/query_internal.h"

typedef struct ectx {
    q_shape y;
    const char *p;     /* profiler dtype of the output, NULL when unmapped */
} ectx;

static int chk_elem(q_ctx *c, void *arg, q_ktable *t, size_t kidx, size_t row, q_cand *out) {
    (void)kidx;
    ectx *e = arg;
    const q_row *rw = &t->rows[row];
    if (!q_row_out_ok(rw)) {
        char buf[48], what[160];
        opdb_span s = db_cell_text(db_table_cell(&t->t, row, t->c_out_shapes), buf, sizeof buf);
        snprintf(what, sizeof what, "cannot parse \"%.*s\"", (int)(s.n > 100 ? 100 : s.n), s.p);
        return q_cell_fault(c, t, row, "Output Shapes", what) < 0 ? -1 : 0;
    }
    if (q_row_nout(t, rw) == 0) return 0;
    q_shape cs = q_row_out(t, rw, 0), cp = q_strip(cs), y = e->y;
    bool pad;
    if (q_shape_eq(y, cs) || q_shape_eq(y, cp)) pad = false;
    else if (q_padmatch(y, cs) || q_padmatch(y, cp)) pad = true;
    else if (y.rank == 3 && cs.rank == 2) {
        int64_t fd[2] = {y.d[0] * y.d[1], y.d[2]};
        q_shape f = {fd, 2};
        if (q_shape_eq(f, cs) || q_shape_eq(f, cp)) pad = false;
        else if (q_padmatch(f, cs) || q_padmatch(f, cp)) pad = true;
        else return 0;
    } else {
        return 0;
    }
    const q_list *odt = q_row_out_dt(t, rw);
    const char *q = odt->n ? odt->s[0] : NULL;
    size_t qn = odt->n ? odt->len[0] : 0;
    if (e->p && q && strlen(e->p) == qn && memcmp(e->p, q, qn) == 0) {
        out->conf = 1.0;
    } else {
        size_t bp = e->p ? q_prof_bytes(e->p, strlen(e->p)) : 0, bq = q_prof_bytes(q, qn);
        if (!bp || !bq) return 0;
        out->lat = rw->lat * (double)bp / (double)bq;
        out->conf = 0.9;
    }
    out->rule = "elementwise";
    out->dist = !c->cfg->quirks && pad ? 1 : 0;
    return 1;
}

static const uint32_t *sel_elem(q_ctx *c, void *arg, q_ktable *t, size_t *n, bool *usable) {
    const ectx *e = arg;
    return q_index_out_rows(c, t, e->y, n, usable);
}
static size_t key_elem(void *arg, uint8_t *buf, size_t cap) {
    const ectx *e = arg;
    return q_key_out(e->y, e->p, buf, cap);
}
static bool exact_elem(q_ctx *c, void *arg, q_ktable *t, const uint32_t *sub, const uint32_t **fh,
                       const uint32_t **sh, uint32_t *qh, size_t *nq) {
    const ectx *e = arg;
    return q_index_out_exact_keys(c, t, e->y, sub, fh, sh, qh, nq);
}
static const q_rowsel k_sel_elem = {sel_elem, key_elem, 'E', exact_elem};

void q_elementwise_scan(q_ctx *c, const char *const *K, size_t nk, q_shape y, const char *p);
void q_elementwise_scan(q_ctx *c, const char *const *K, size_t nk, q_shape y, const char *p) {
    ectx e = {y, p};
    q_set_kernels(c, K, nk);
    q_scan s;
    q_scan_run_sel(c, K, nk, c->cfg->quirks ? QSCAN_FIRST : QSCAN_NEAREST, chk_elem, &e, &k_sel_elem, &s);
    if (s.failed) return;
    if (!s.found) {
        q_miss(c, strncmp(s.reason, "ambiguous", 9) == 0 ? s.reason : "elementwise_output_shape_mismatch");
        return;
    }
    q_explain_scan(c, &s);
    q_hit(c, QS_MEASURED, s.best.lat, s.best.conf, "elementwise", s.tab->kernel);
}

void q_path_elementwise(q_ctx *c, const q_entry *e) {
    /* the scan's map entry, fetched while its target is worked out */
    if (c->probe_hash) q_hitmap_prefetch_entry(c->db->hitmap, c->probe_hash);
    const qv *o = c->q->out;
    if (o && o->kind == QV_LIST) {
        if (o->n == 0) {
            if (c->cfg->quirks) {
                q_error(c, "bad_query", "elementwise op with an empty out list");
                return;
            }
            o = NULL;
        } else {
            o = o->items[0];
        }
    }
    if (!o || o->kind != QV_TENSOR || o->shape.rank == 0) {
        q_path_compute(c, e);
        return;
    }
    c->r->path = "elementwise";
    if (!qv_truthy(qv_get(e->v, "kernel_type"))) {
        q_miss(c, "unmapped");
        return;
    }
    const char **K;
    size_t nk;
    if (q_entry_kernels(c, e, !c->cfg->quirks, &K, &nk)) return;
    q_elementwise_scan(c, K, nk, q_strip(o->shape), q_dtype_prof(o->dtype));
}
