/* Wrapper path of compute_scale ops (quantization with scale outputs):
 * interpolation on the input's rows M and last dim K, within a regime of
 * dtypes, formats and the scale mode of each extra output (per tensor,
 * token, channel or block). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "query/interp_internal.h"

static bool axes_of(q_shape s, double *M, double *K) {
    if (!s.rank) return false;
    double m = 1;
    for (uint32_t i = 0; i < s.rank; i++)
        if (s.d[i] <= 0) return false;
    for (uint32_t i = 0; i + 1 < s.rank; i++) m *= (double)s.d[i];
    *M = m;
    *K = (double)s.d[s.rank - 1];
    return true;
}

/* the scale mode of output x for input s; false when none applies */
static bool mode_of(q_shape s, q_shape x, const char *kt, const char **name, int64_t *block) {
    double M, K;
    *block = -1;
    if (!axes_of(s, &M, &K) || q_numel(x) <= 0) return false;
    double nx = (double)q_numel(x);
    if (x.rank == 0) *name = "per_tensor";
    else if (strcmp(kt, "DynamicBlockQuant") == 0) {
        if (x.rank != 1 || nx > K) return false;
        *name = "per_block";
        *block = (int64_t)ceil(K / nx);
    } else if (nx == M) *name = "per_token";
    else if (nx == K) *name = "per_channel";
    else return false;
    return true;
}

static const char *sdt(int dt) { return dt == QDT_F16 ? "DT_FLOAT16" : q_dtype_prof(dt); }

static void kb_dkey(ip_kb *k, const char *kt, const char *s, size_t n) {
    if (q_relaxed_kernel(kt) && ((n == 7 && memcmp(s, "DT_BF16", 7) == 0) || (n == 5 && memcmp(s, "FLOAT", 5) == 0)))
        ip_kb_str(k, "FLOAT_GROUP", 11);
    else ip_kb_str(k, s, n);
}

/* the key tail from the modes of outputs 1.. */
static bool kb_modes(ip_kb *k, const char *kt, q_shape s, const q_shape *outs, size_t n) {
    const char *nm[16];
    int64_t bl[16];
    if (n < 2 || n > 17) return false;
    for (size_t i = 1; i < n; i++)
        if (!mode_of(s, outs[i], kt, &nm[i - 1], &bl[i - 1])) return false;
    ip_kb_field(k, "scale_mode");
    ip_kb_str(k, nm[0], strlen(nm[0]));
    ip_kb_field(k, "auxiliary_modes"); /* every mode, the first one included */
    ip_kb_open(k);
    for (size_t i = 0; i + 1 < n; i++) {
        ip_kb_open(k);
        ip_kb_str(k, nm[i], strlen(nm[i]));
        if (bl[i] >= 0) ip_kb_num(k, (double)bl[i]);
        else ip_kb_str(k, IP_KB_NONE, strlen(IP_KB_NONE));
        ip_kb_close(k);
    }
    ip_kb_close(k);
    if (bl[0] >= 0) {
        ip_kb_field(k, "block_size");
        ip_kb_num(k, (double)bl[0]);
    }
    return true;
}

static q_shape nz_by(opdb_arena *a, q_shape s, const char *f, size_t fn) {
    if (fn != 10 || memcmp(f, "FRACTAL_NZ", 10) != 0 || s.rank < 4) return s;
    int64_t *d = opdb_arena_alloc(a, s.rank * sizeof *d);
    uint32_t r = s.rank;
    for (uint32_t k = 0; k + 4 < r; k++) d[k] = s.d[k];
    d[r - 4] = s.d[r - 4] * s.d[r - 1];
    d[r - 3] = s.d[r - 3] * s.d[r - 2];
    return (q_shape){d, r - 2};
}

static void build_scale(ip_index *ix, const void *arg) {
    (void)arg;
    q_ktable *t = ix->tab;
    const char *kt = t->kernel;
    int c_ofmt = db_table_col(&t->t, "Output Formats");
    for (size_t r = ix->r0; r < ix->r1; r++) {
        const q_row *rw = &t->rows[r];
        const q_list *idt = q_row_in_dt(t, rw), *ifm = q_row_in_fmt(t, rw), *odt = q_row_out_dt(t, rw);
        const uint32_t nout = q_row_nout(t, rw), nin = q_row_nin(t, rw);
        if (!q_row_shapes_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "cannot parse the shapes");
            continue;
        }
        if (!q_row_out_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Output Shapes", "cannot parse the shapes");
            continue;
        }
        opdb_span *of;
        uint32_t nof;
        ip_list(&ix->arena, t, r, c_ofmt, &of, &nof);
        if (!nin || !idt->n || !ifm->n || nout < 2 || odt->n != nout || nof != nout) continue;
        q_shape s = nz_by(&ix->arena, q_row_in(t, rw, 0), ifm->s[0], ifm->len[0]);
        if (!q_shape_eq(nz_by(&ix->arena, q_row_out(t, rw, 0), of[0].p, of[0].n), s)) continue;
        double ax[IP_MAXAX] = {NAN, NAN, NAN, NAN, NAN};
        if (!axes_of(s, &ax[0], &ax[1])) continue;
        ip_kb k;
        ip_kb_init(&k);
        ip_kb_field(&k, "kernel_type");
        ip_kb_str(&k, kt, strlen(kt));
        ip_kb_field(&k, "input_dtype");
        kb_dkey(&k, kt, idt->s[0], idt->len[0]);
        ip_kb_field(&k, "input_format");
        ip_kb_str(&k, ifm->s[0], ifm->len[0]);
        ip_kb_field(&k, "output_count");
        ip_kb_num(&k, nout);
        ip_kb_field(&k, "output_dtypes");
        ip_kb_open(&k);
        for (uint32_t i = 0; i < nout; i++) ip_kb_str(&k, odt->s[i], odt->len[i]);
        ip_kb_close(&k);
        ip_kb_field(&k, "output_formats");
        ip_kb_open(&k);
        for (uint32_t i = 0; i < nof; i++) ip_kb_str(&k, of[i].p, of[i].n);
        ip_kb_close(&k);
        q_shape outs[17]; /* kb_modes takes at most 17 */
        for (uint32_t i = 0; i < nout && i < 17; i++) outs[i] = q_row_out(t, rw, i);
        if (!kb_modes(&k, kt, s, outs, nout)) continue;
        double lat;
        bool alt;
        if (!ip_row_latency_at(t, &ix->latcols, r, &lat, &alt)) continue;
        ip_add(ix, &k, ax, lat, alt, (uint32_t)r);
    }
}

static const uint8_t k_sc_groups[3][4] = {{1, 0}, {1, 1}, {2, 0, 1}};
static const char *const k_sc_axes[] = {"M", "K"};

/* the target key; false when it cannot be built */
static bool scale_target(q_ctx *c, const char *kt, ip_kb *T, double *tax) {
    q_tins X = q_tensor_inputs(c, c->q->args);
    if (!X.n) return false;
    q_shape x0 = X.v[0].s;
    if (!axes_of(x0, &tax[0], &tax[1])) return false;
    const char *p = sdt(X.v[0].dtype);
    if (!p) return false;
    const qv *o = c->q->out;
    const qv *const *outs;
    size_t n;
    if (o && o->kind == QV_TENSOR) outs = &o, n = 1;
    else if (o && o->kind == QV_LIST && o->n > 0) {
        for (size_t i = 0; i < o->n; i++)
            if (o->items[i]->kind != QV_TENSOR) return false;
        outs = (const qv *const *)o->items, n = o->n;
    } else return false;
    if (n < 2 || n > 17 || !q_shape_eq(outs[0]->shape, x0)) return false;
    ip_kb_init(T);
    ip_kb_field(T, "kernel_type");
    ip_kb_str(T, kt, strlen(kt));
    ip_kb_field(T, "input_dtype");
    kb_dkey(T, kt, p, strlen(p));
    ip_kb_field(T, "input_format");
    ip_kb_str(T, "ND", 2);
    ip_kb_field(T, "output_count");
    ip_kb_num(T, (double)n);
    ip_kb_field(T, "output_dtypes");
    ip_kb_open(T);
    q_shape os[17];
    for (size_t i = 0; i < n; i++) {
        const char *d = sdt(outs[i]->dtype);
        if (!d) return false;
        ip_kb_str(T, d, strlen(d));
        os[i] = outs[i]->shape;
    }
    ip_kb_close(T);
    ip_kb_field(T, "output_formats");
    ip_kb_open(T);
    for (size_t i = 0; i < n; i++) ip_kb_str(T, "ND", 2);
    ip_kb_close(T);
    return kb_modes(T, kt, x0, os, n) && !T->over;
}

void ip_scale(q_ctx *c, const q_entry *e) {
    const char **K;
    size_t nk;
    if (q_entry_kernels(c, e, true, &K, &nk)) return;
    q_set_kernels(c, K, nk);
    const qv *ktv = qv_get(e->v, "kernel_type");
    const char *primary = ktv && ktv->kind == QV_STR ? ktv->s : NULL;
    ip_status last = {.n = 0};
    bool att = false;
    for (size_t i = 0; i < nk; i++) {
        const char *kt = K[i];
        ip_kb T;
        double tax[IP_MAXAX] = {NAN, NAN, NAN, NAN, NAN};
        if (!scale_target(c, kt, &T, tax)) continue;
        q_ktable *t = q_table(c->db, kt);
        int st = atomic_load(&t->state);
        if (st == QT_FAILED) {
            q_error(c, "bad_csv", "%s", t->error);
            return;
        }
        if (st != QT_OK) continue;
        ip_index *ix = ip_index_get(c->db, t, "scale", build_scale, NULL, 0);
        if (ip_faults(c, ix) < 0) return;
        uint32_t *gi;
        size_t ng = ip_groups_matching(c, ix, &T, &gi);
        ip_task tk;
        ip_task_init(&tk, ix, tax, 2, k_sc_groups, 3, ip_maxdim(c, kt, primary));
        ip_out o;
        if (ip_run_groups(c, &tk, gi, ng, false, &last, &att, &o)) {
            ip_success(c, &tk, &o, kt, k_sc_axes);
            return;
        }
    }
    q_miss(c, ip_reason(att ? &last : NULL, "compute_scale_interpolation_failed"));
}

ip_index *ip_scale_index(const opdb_qdb *db, q_ktable *t) { return ip_index_get(db, t, "scale", build_scale, NULL, 0); }
