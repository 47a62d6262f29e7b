/* Wrapper path of paged-cache scatter writes: interpolation on the number of
 * tokens written, within a regime of the three dtypes, the whole cache shape,
 * the width of one update row and the input formats. */
#include <math.h>
#include <string.h>

#include "query/interp_internal.h"

/* an update shape as (tokens, width): leading dims merged when rank > 2 */
static q_shape flat_update(opdb_arena *a, q_shape u) {
    if (u.rank <= 2) return u;
    int64_t *d = opdb_arena_alloc(a, 2 * sizeof *d);
    d[0] = 1;
    for (uint32_t i = 0; i + 1 < u.rank; i++) d[0] *= u.d[i];
    d[1] = u.d[u.rank - 1];
    q_shape s = {d, 2};
    return s;
}

static void scatter_key(ip_kb *k, const char *kt, const opdb_span *dt, q_shape cache, q_shape u, const opdb_span *fmt) {
    static const char *const names[3] = {"cache_dtype", "index_dtype", "update_dtype"};
    ip_kb_init(k);
    ip_kb_field(k, "kernel_type");
    ip_kb_str(k, kt, strlen(kt));
    for (int i = 0; i < 3; i++) {
        ip_kb_field(k, names[i]);
        ip_kb_str(k, dt[i].p, dt[i].n);
    }
    ip_kb_field(k, "full_cache_shape");
    ip_kb_shape(k, cache);
    ip_kb_field(k, "update_tail");
    q_shape tail = {u.d + (u.rank ? 1 : 0), u.rank ? u.rank - 1 : 0};
    ip_kb_shape(k, tail);
    ip_kb_field(k, "input_formats");
    ip_kb_open(k);
    for (int i = 0; i < 3; i++) ip_kb_str(k, fmt[i].p, fmt[i].n);
    ip_kb_close(k);
}

static void build_scatter(ip_index *ix, const void *arg) {
    (void)arg;
    q_ktable *t = ix->tab;
    for (size_t r = 0; r < t->t.nrows; r++) {
        const q_row *rw = &t->rows[r];
        if (!rw->shapes_ok) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "cannot parse the shapes");
            continue;
        }
        if (rw->n_in < 3 || rw->n_in_dt < 3 || rw->n_in_fmt < 3) continue;
        q_shape cache = rw->in[0], u = flat_update(&ix->arena, rw->in[2]);
        if (!cache.rank || !u.rank) continue;
        double lat;
        bool alt;
        if (!ip_row_latency(t, r, &lat, &alt)) continue;
        opdb_span dt[3], fmt[3];
        for (int i = 0; i < 3; i++) {
            dt[i] = opdb_span_make(rw->in_dt[i], rw->in_dt_n[i]);
            fmt[i] = opdb_span_make(rw->in_fmt[i], rw->in_fmt_n[i]);
        }
        ip_kb k;
        scatter_key(&k, t->kernel, dt, cache, u, fmt);
        double ax[IP_MAXAX] = {(double)u.d[0], NAN, NAN, NAN, NAN};
        ip_add(ix, &k, ax, lat, alt, (uint32_t)r);
    }
}

static const uint8_t k_sc_groups[1][4] = {{1, 0}};
static const char *const k_sc_axes[] = {"tokens"};

/* Interpolates over the kernels K for (cache, index, update) shapes with
 * profiler dtypes dts. true on success (result set); else *reason (or an
 * error result set: *reason NULL). *kernel: the kernel that answered. */
static bool scatter_core(q_ctx *c, const char *const *K, size_t nk, q_shape cache, q_shape upd, const char *const *dts,
                         const char *what, const char **reason) {
    q_shape u = flat_update(c->a, upd);
    opdb_span dt[3], fmt[3];
    for (int i = 0; i < 3; i++) {
        dt[i] = opdb_span_make(dts[i], strlen(dts[i]));
        fmt[i] = opdb_span_make("ND", 2);
    }
    ip_status last = {.n = 0};
    bool any = false;
    for (size_t i = 0; i < nk; i++) {
        const char *kt = K[i];
        q_ktable *t = q_table(c->db, kt);
        int st = atomic_load(&t->state);
        if (st == QT_FAILED) {
            q_error(c, "bad_csv", "%s", t->error);
            *reason = NULL;
            return false;
        }
        if (st != QT_OK) continue;
        ip_index *ix = ip_index_get(t, "scatter", build_scatter, NULL);
        if (ip_faults(c, ix) < 0) {
            *reason = NULL;
            return false;
        }
        ip_kb T;
        scatter_key(&T, kt, dt, cache, u, fmt);
        double tax[IP_MAXAX] = {u.rank ? (double)u.d[0] : NAN, NAN, NAN, NAN, NAN};
        uint32_t *gi = opdb_arena_alloc(c->a, (ix->ng ? ix->ng : 1) * sizeof *gi);
        size_t ng = 0;
        for (size_t g = 0; g < ix->ng; g++)
            if (ip_key_match(&T, ix->g[g].key, ix->g[g].keyn, NULL, NULL)) gi[ng++] = (uint32_t)g;
        ip_task tk;
        memset(&tk, 0, sizeof tk);
        tk.ix = ix;
        tk.t = tax;
        tk.nax = 1;
        tk.groups = k_sc_groups;
        tk.ngroups = 1;
        tk.maxdim = ip_maxdim(c, kt, NULL);
        tk.sqrt_axis = -1;
        ip_status st_k = {.n = 0};
        bool att = false;
        ip_out out;
        if (ip_run_groups(c, &tk, gi, ng, false, &st_k, &att, &out)) {
            ip_success(c, &tk, &out, kt, k_sc_axes);
            return true;
        }
        last = st_k;
        any = att;
    }
    *reason = q_sprintf(c, "%s_interpolation_failed", what);
    if (any) *reason = ip_reason(&last, *reason);
    return false;
}

void ip_scatter_op(q_ctx *c, const q_entry *e) {
    const qv *A = c->q->args;
    const char *dts[3];
    bool ok = A && A->n >= 3;
    for (size_t i = 0; ok && i < 3; i++) ok = A->items[i]->kind == QV_TENSOR && (dts[i] = q_dtype_prof(A->items[i]->dtype));
    if (!ok) {
        q_miss(c, "scatter_nd_update_interpolation_failed");
        return;
    }
    const char **K;
    size_t nk;
    if (q_entry_kernels(c, e, true, &K, &nk)) return;
    q_set_kernels(c, K, nk);
    /* arguments are (update, cache, index); the key reads cache, index, update */
    const char *order[3] = {dts[1], dts[2], dts[0]};
    const char *reason;
    if (scatter_core(c, K, nk, A->items[1]->shape, A->items[0]->shape, order, "scatter_nd_update", &reason)) return;
    if (reason) q_miss(c, reason);
}
