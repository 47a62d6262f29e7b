/* Wrapper path of moe_fused ops: interpolation of the fused dispatch-FFN-
 * combine kernel on its token count, within a regime of dtypes, expert
 * weight shapes, hidden size, top-k and EP size. The target is always the
 * kernel's 7 physical inputs projected from the op's arguments. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opdb/pyround.h"
#include "query/comm.h"
#include "query/interp_internal.h"

/* top-k from the routing input: rank >= 2, INT32, leading dims = tokens */
static bool topk_of(q_shape s, const char *dt, size_t dn, double tokens, int64_t *k) {
    if (s.rank < 2 || dn != 5) return false;
    char up[6];
    for (size_t i = 0; i < 5; i++) up[i] = (char)(dt[i] >= 'a' && dt[i] <= 'z' ? dt[i] - 32 : dt[i]);
    if (memcmp(up, "INT32", 5) != 0) return false;
    double lead = 1;
    for (uint32_t i = 0; i + 1 < s.rank; i++) lead *= (double)s.d[i];
    if (lead != tokens || s.d[s.rank - 1] <= 0) return false;
    *k = s.d[s.rank - 1];
    return true;
}

static void kb_dkey(ip_kb *k, const char *kt, const char *s, size_t n) {
    if (q_relaxed_kernel(kt) && ((n == 7 && memcmp(s, "DT_BF16", 7) == 0) || (n == 5 && memcmp(s, "FLOAT", 5) == 0)))
        ip_kb_str(k, "FLOAT_GROUP", 11);
    else ip_kb_str(k, s, n);
}

static void build_moe(ip_index *ix, const void *arg) {
    (void)arg;
    q_ktable *t = ix->tab;
    const char *kt = t->kernel;
    int c_ep = db_table_col(&t->t, "EP Size");
    if (c_ep < 0) return;
    for (size_t r = ix->r0; r < ix->r1; r++) {
        const q_row *rw = &t->rows[r];
        const q_list *idt = q_row_in_dt(t, rw), *ifm = q_row_in_fmt(t, rw);
        const uint32_t nin = q_row_nin(t, rw);
        if (!q_row_shapes_ok(rw)) {
            ip_add_fault(ix, (uint32_t)r, "Input Shapes", "cannot parse the shapes");
            continue;
        }
        if (nin != 7 || idt->n != 7 || ifm->n != 7) continue;
        if (q_row_in(t, rw, 1).rank < 3 || q_row_in(t, rw, 2).rank < 3) continue;
        q_shape x = q_row_in(t, rw, 0);
        int64_t nzd[16];
        if (ifm->len[0] == 10 && memcmp(ifm->s[0], "FRACTAL_NZ", 10) == 0 && x.rank >= 4 && x.rank <= 16) {
            uint32_t k = x.rank;
            for (uint32_t i = 0; i + 4 < k; i++) nzd[i] = x.d[i];
            nzd[k - 4] = x.d[k - 4] * x.d[k - 1];
            nzd[k - 3] = x.d[k - 3] * x.d[k - 2];
            x = (q_shape){nzd, k - 2};
        }
        if (x.rank < 2) continue;
        double tokens = 1;
        for (uint32_t i = 0; i + 1 < x.rank; i++) tokens *= (double)x.d[i];
        int64_t H = x.d[x.rank - 1];
        double lat;
        bool alt;
        if (!ip_row_latency_at(t, &ix->latcols, r, &lat, &alt)) continue;
        int64_t ep, topk;
        if (!ip_intcell(db_table_cell(&t->t, r, c_ep), &ep) || ep <= 0) continue;
        if (!topk_of(q_row_in(t, rw, 3), idt->s[3], idt->len[3], tokens, &topk)) continue;
        ip_kb k;
        ip_kb_init(&k);
        ip_kb_field(&k, "kernel_type");
        ip_kb_str(&k, kt, strlen(kt));
        ip_kb_field(&k, "activation_dtype");
        kb_dkey(&k, kt, idt->s[0], idt->len[0]);
        ip_kb_field(&k, "activation_format");
        ip_kb_str(&k, ifm->s[0], ifm->len[0]);
        ip_kb_field(&k, "input_dtype_signature");
        ip_kb_open(&k);
        for (int i = 0; i < 7; i++) ip_kb_str(&k, idt->s[i], idt->len[i]);
        ip_kb_close(&k);
        ip_kb_field(&k, "gmm1_weight_shape");
        ip_kb_shape(&k, q_row_in(t, rw, 1));
        ip_kb_field(&k, "gmm2_weight_shape");
        ip_kb_shape(&k, q_row_in(t, rw, 2));
        ip_kb_field(&k, "hidden");
        ip_kb_num(&k, (double)H);
        ip_kb_field(&k, "topk");
        ip_kb_num(&k, (double)topk);
        ip_kb_field(&k, "ep_size");
        ip_kb_num(&k, (double)ep);
        double ax[IP_MAXAX] = {tokens, NAN, NAN, NAN, NAN};
        ip_add(ix, &k, ax, lat, alt, (uint32_t)r);
    }
}

static const uint8_t k_moe_groups[1][4] = {{1, 0}};
static const char *const k_moe_axes[] = {"tokens"};

void ip_moe(q_ctx *c, const q_entry *e) {
    const qv *ktv = qv_get(e->v, "kernel_type");
    if (!qv_truthy(ktv) || ktv->kind != QV_STR) {
        q_miss(c, "wrapper_interpolation_failed");
        return;
    }
    const char *kt = ktv->s;
    if (!c->cfg->ep) {
        q_miss(c, "ep_size_not_configured");
        return;
    }
    q_ktable *t = q_table(c->db, kt);
    int st = atomic_load(&t->state);
    if (st == QT_FAILED) {
        q_error(c, "bad_csv", "%s", t->error);
        return;
    }
    if (st != QT_OK) {
        q_miss(c, "csv_not_found");
        return;
    }
    q_set_kernels(c, &kt, 1);
    q_tins m;
    if (!q_moe_project(c, &m)) {
        q_miss(c, "moe_fused_target_unextractable");
        return;
    }
    int64_t r = m.v[0].s.d[0], H = m.v[0].s.d[1];
    ip_kb T;
    ip_kb_init(&T);
    ip_kb_field(&T, "kernel_type");
    ip_kb_str(&T, kt, strlen(kt));
    const char *sig[7];
    for (int i = 0; i < 7; i++) {
        sig[i] = q_dtype_prof(m.v[i].dtype);
        if (!sig[i]) sig[i] = q_sprintf(c, "torch.%s", q_dtype_name(m.v[i].dtype));
    }
    int64_t topk;
    if (!topk_of(m.v[3].s, sig[3], strlen(sig[3]), (double)r, &topk)) {
        q_miss(c, "moe_fused_target_unextractable");
        return;
    }
    ip_kb_field(&T, "activation_dtype");
    kb_dkey(&T, kt, sig[0], strlen(sig[0]));
    ip_kb_field(&T, "activation_format");
    ip_kb_str(&T, "ND", 2);
    ip_kb_field(&T, "input_dtype_signature");
    ip_kb_open(&T);
    for (int i = 0; i < 7; i++) ip_kb_str(&T, sig[i], strlen(sig[i]));
    ip_kb_close(&T);
    ip_kb_field(&T, "gmm1_weight_shape");
    ip_kb_shape(&T, m.v[1].s);
    ip_kb_field(&T, "gmm2_weight_shape");
    ip_kb_shape(&T, m.v[2].s);
    ip_kb_field(&T, "hidden");
    ip_kb_num(&T, (double)H);
    ip_kb_field(&T, "ep_size");
    ip_kb_num(&T, c->cfg->ep);
    ip_kb_field(&T, "topk");
    ip_kb_num(&T, (double)topk);
    ip_index *ix = ip_index_get(c->db, t, "moe", build_moe, NULL, 0);
    if (ip_faults(c, ix) < 0) return;
    uint32_t *gi;
    size_t ng = ip_groups_matching(c, ix, &T, &gi);
    double tax[IP_MAXAX] = {(double)r, NAN, NAN, NAN, NAN};
    ip_task tk;
    ip_task_init(&tk, ix, tax, 1, k_moe_groups, 1, ip_maxdim(c, kt, NULL));
    ip_status last = {.n = 0};
    bool att = false;
    ip_out o;
    if (!ip_run_groups(c, &tk, gi, ng, false, &last, &att, &o)) {
        q_miss(c, ip_reason(att ? &last : NULL, "moe_fused_interpolation_failed"));
        return;
    }
    ip_success(c, &tk, &o, kt, k_moe_axes);
    /* the default mode adds the embedded compute and communication on top of
     * the interpolated latency, as the exact path does; without them the
     * answer would undercount */
    if (!c->cfg->quirks && c->r->src == QS_INTERPOLATED)
        q_moe_embedded(c, e, kt, c->r->lat, c->r->rule, c->r->conf);
}

ip_index *ip_moe_index(const opdb_qdb *db, q_ktable *t) { return ip_index_get(db, t, "moe", build_moe, NULL, 0); }
