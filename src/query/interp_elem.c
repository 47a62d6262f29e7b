/* Wrapper path of elementwise ops: interpolation on the total element count
 * of inputs and output, within a regime of output rank, input count, output
 * dtype (never rescaled by element size) and broadcast pattern. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "query/interp_internal.h"

/* the regime key of output y (stripped) and stripped inputs ins */
static void elem_key(ip_kb *k, const char *kt, q_shape y, const q_shape *ins, size_t n, const char *p, size_t pn) {
    ip_kb_init(k);
    ip_kb_field(k, "kernel_type");
    ip_kb_str(k, kt, strlen(kt));
    ip_kb_field(k, "query_mode");
    ip_kb_str(k, "elementwise", 11);
    ip_kb_field(k, "output_rank");
    ip_kb_num(k, y.rank);
    ip_kb_field(k, "input_count");
    ip_kb_num(k, (double)n);
    ip_kb_field(k, "output_dtype");
    ip_kb_str(k, p, pn);
    ip_kb_field(k, "broadcast_pattern");
    ip_kb_open(k);
    if (y.rank && n) {
        for (size_t i = 0; i < n; i++) {
            q_shape s = ins[i];
            ip_kb_open(k);
            ip_kb_num(k, s.rank);
            ip_kb_open(k);
            uint32_t take = s.rank < y.rank ? s.rank : y.rank, pad = y.rank - take;
            for (uint32_t j = 0; j < y.rank; j++) {
                if (j < pad) {
                    ip_kb_str(k, "missing", 7);
                    continue;
                }
                int64_t sj = s.d[s.rank - take + (j - pad)], yj = y.d[j];
                if (sj == yj) ip_kb_str(k, "same", 4);
                else if (sj == 1) ip_kb_str(k, "broadcast", 9);
                else ip_kb_str(k, "other", 5);
            }
            ip_kb_close(k);
            ip_kb_close(k);
        }
    }
    ip_kb_close(k);
}

static double io_numel(q_shape y, const q_shape *ins, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)q_numel(ins[i]);
    return s + (double)q_numel(y);
}

static void build_elem(ip_index *ix, const void *arg) {
    (void)arg;
    q_ktable *t = ix->tab;
    for (size_t r = ix->r0; r < ix->r1; r++) {
        const q_row *rw = &t->rows[r];
        const q_list *odt = q_row_out_dt(t, rw);
        const uint32_t nout = q_row_nout(t, rw), nin = q_row_nin(t, rw);
        if (!q_row_shapes_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "cannot parse the shapes");
            continue;
        }
        if (!q_row_out_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Output Shapes", "cannot parse the shapes");
            continue;
        }
        if (!nout) continue;
        q_shape y = q_strip(q_row_out(t, rw, 0));
        if (!y.rank) continue;
        double lat;
        bool alt;
        if (!ip_row_latency_at(t, &ix->latcols, r, &lat, &alt)) continue;
        if (!odt->n || !odt->len[0]) continue;
        q_shape *ins = opdb_arena_alloc(&ix->arena, (nin ? nin : 1) * sizeof *ins);
        for (uint32_t i = 0; i < nin; i++) ins[i] = q_strip(q_row_in(t, rw, i));
        ip_kb k;
        elem_key(&k, t->kernel, y, ins, nin, odt->s[0], odt->len[0]);
        double ax[IP_MAXAX] = {io_numel(y, ins, nin), NAN, NAN, NAN, NAN};
        ip_add(ix, &k, ax, lat, alt, (uint32_t)r);
    }
}

static const uint8_t k_el_groups[1][4] = {{1, 0}};
static const char *const k_el_axes[] = {"io_numel"};

/* the kernels of K for output shape os (NULL: none) with profiler dtype p and inputs X */
static void elem_core(q_ctx *c, const char *const *K, size_t nk, const q_shape *os, const char *p, q_tins X) {
    const char *reason = "elementwise_interpolation_failed";
    for (size_t i = 0; i < nk; i++) {
        const char *kt = K[i];
        if (!os || os->rank < 1) {
            reason = "elementwise_output_unavailable";
            continue;
        }
        q_shape y = q_strip(*os);
        if (!p) p = "";
        q_shape *ins = opdb_arena_alloc(c->a, (X.n ? X.n : 1) * sizeof *ins);
        for (size_t j = 0; j < X.n; j++) ins[j] = q_strip(X.v[j].s);
        ip_kb T;
        elem_key(&T, kt, y, ins, X.n, p, strlen(p));
        double tax[IP_MAXAX] = {io_numel(y, ins, X.n), NAN, NAN, NAN, NAN};
        q_ktable *t = q_table(c->db, kt);
        int st = atomic_load(&t->state);
        if (st == QT_FAILED) {
            q_error(c, "bad_csv", "%s", t->error);
            return;
        }
        if (st != QT_OK) {
            reason = "elementwise_csv_not_found";
            continue;
        }
        ip_index *ix = ip_index_get(c->db, t, "elem", build_elem, NULL, 0);
        if (ip_faults(c, ix) < 0) return;
        uint32_t *gi = NULL;
        size_t ng = 0;
        /* an output without a profiler dtype has no points */
        if (p[0]) ng = ip_groups_matching(c, ix, &T, &gi);
        if (!ng) {
            q_attempt(c, kt, "no_candidate_group");
            reason = "insufficient_filtered_candidates";
            continue;
        }
        ip_task tk;
        ip_task_init(&tk, ix, tax, 1, k_el_groups, 1, ip_maxdim(c, kt, NULL));
        ip_status last = {.n = 0};
        bool att = false;
        ip_out out;
        if (ip_run_groups(c, &tk, gi, ng, false, &last, &att, &out)) {
            ip_success(c, &tk, &out, kt, k_el_axes);
            return;
        }
        reason = ip_reason(att ? &last : NULL, "candidate_group_failed");
    }
    q_miss(c, nk > 1 ? "elementwise_interpolation_failed" : reason);
}

void ip_elementwise(q_ctx *c, const q_entry *e) {
    const char **K;
    size_t nk;
    if (q_entry_kernels(c, e, true, &K, &nk)) return;
    q_set_kernels(c, K, nk);
    const qv *o = c->q->out;
    if (o && o->kind == QV_LIST) o = o->n ? o->items[0] : NULL;
    bool ok = o && o->kind == QV_TENSOR;
    elem_core(c, K, nk, ok ? &o->shape : NULL, ok ? q_dtype_prof(o->dtype) : NULL, q_tensor_inputs(c, c->q->args));
}

void ip_kernel_elementwise(q_ctx *c, const char *const *K, size_t nk, const q_tins *in, const q_tins *out) {
    elem_core(c, K, nk, out->n ? &out->v[0].s : NULL, out->n ? out->v[0].prof : NULL, *in);
}

ip_index *ip_elem_index(const opdb_qdb *db, q_ktable *t) { return ip_index_get(db, t, "elem", build_elem, NULL, 0); }
