/* The generator functions (docs/GRID.md §6.2-§6.5): grouped_matmul,
 * dispatch_ffn_combine, split_qkv_rmsnorm_rope and fused_attention. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opdb/schema.h"
#include "grid/grid_internal.h"

const char *const grid_fia_columns[15] = {
    OPDB_COL_RT_SOURCE,       OPDB_COL_RT_ASL_SHAPE,     OPDB_COL_RT_ASL_VALUES, OPDB_COL_RT_ASLKV_SHAPE,
    OPDB_COL_RT_ASLKV_VALUES, OPDB_COL_RT_AVG_SEQ_LEN,   OPDB_COL_RT_BT_SHAPE,   OPDB_COL_RT_BT_VALID,
    OPDB_COL_RT_NUM_HEADS,    OPDB_COL_RT_NUM_KV_HEADS,  OPDB_COL_RT_SPARSE_MODE, OPDB_COL_RT_INPUT_LAYOUT,
    OPDB_COL_RT_BLOCK_SIZE,   OPDB_COL_RT_COMPLETENESS,  OPDB_COL_RT_RAW_SHAPES};

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }
static grid_shape S(int nd, int64_t a, int64_t b, int64_t c, int64_t d) {
    grid_shape s = {nd, {a, b, c, d}};
    return s;
}
#define S0 S(0, 0, 0, 0, 0)
#define S1(a) S(1, a, 0, 0, 0)
#define S2(a, b) S(2, a, b, 0, 0)
#define S3(a, b, c) S(3, a, b, c, 0)
#define S4(a, b, c, d) S(4, a, b, c, d)

static const int64_t *grid(const opdb_grid_config *cfg, const char *name, size_t *n) {
    static const int64_t none[1] = {1};
    const int64_t *g = grid_config_grid(cfg, name, n);
    if (!g) *n = 0;
    return g ? g : none;
}

static void grouped_matmul(const opdb_grid_config *cfg, const grid_model *const *ms, size_t nm, grid_cands *out) {
    size_t nt;
    const int64_t *tok = grid(cfg, "MOE_TOKENS_GRID", &nt);
    for (size_t i = 0; i < nm; i++) {
        const grid_model *m = ms[i];
        if (m->experts <= 0) continue;
        for (int e = 0; e < m->nep; e++)
            for (int t = 0; t < m->ntp; t++) {
                int64_t h = max1(m->hidden / m->tp[t]), ei = max1(m->expert_inter / m->tp[t]),
                        E = max1(m->per_card / m->ep[e]), rows = max1(ei / 16);
                for (size_t k = 0; k < nt; k++) {
                    grid_shape in[9] = {S2(tok[k], h), S4(E, h, rows, 16), S0, S2(E, ei), S0, S0, S0, S1(E), S1(tok[k])};
                    grid_shape o[1] = {S2(tok[k], ei)};
                    grid_cands_add(out, in, 9, o, 1, NULL, 0);
                }
            }
    }
}

static void dispatch_ffn_combine(const opdb_grid_config *cfg, const grid_model *const *ms, size_t nm, grid_cands *out) {
    size_t nt;
    const int64_t *tok = grid(cfg, "MOE_TOKENS_GRID", &nt);
    static const int64_t cards[4] = {8, 16, 32, 64};
    for (size_t i = 0; i < nm; i++) {
        const grid_model *m = ms[i];
        if (m->experts <= 0) continue;
        bool has[18] = {false};
        for (int c = 0; c < 4; c++) {
            if (cards[c] > m->experts) continue;
            for (int e = 0; e < m->nep; e++) {
                if (m->ep[e] > m->experts / cards[c]) continue;
                int64_t E = max1((m->experts / cards[c]) / m->ep[e]);
                if (E >= 1 && E <= 17) has[E] = true;
            }
        }
        int64_t h = m->hidden, k = m->topk;
        /* unique per model on (m, hidden, n, E, topk): hidden and topk are fixed, so (m, n, E) */
        int64_t *seen = opdb_xmalloc(18 * (size_t)m->ntp * nt * 3 * sizeof *seen + 1);
        size_t nseen = 0;
        for (int64_t E = 1; E <= 17; E++) {
            if (!has[E]) continue;
            for (int t = 0; t < m->ntp; t++) {
                int64_t n = max1(m->expert_inter / m->tp[t]) * 2;
                for (size_t j = 0; j < nt; j++) {
                    int64_t mm = tok[j];
                    if (mm * h * k > 58LL * 1024 * 1024) continue;
                    bool dup = false;
                    for (size_t s = 0; s < nseen && !dup; s++)
                        dup = seen[3 * s] == mm && seen[3 * s + 1] == n && seen[3 * s + 2] == E;
                    if (dup) continue;
                    seen[3 * nseen] = mm, seen[3 * nseen + 1] = n, seen[3 * nseen + 2] = E, nseen++;
                    grid_shape in[7] = {S2(mm, h), S3(E, h, n), S3(E, n / 2, h), S2(mm, k), S1(E * n), S1(E * h), S2(mm, k)};
                    grid_shape o[2] = {S2(mm, h), S1(E)};
                    char ep[32];
                    snprintf(ep, sizeof ep, "%lld", (long long)(m->experts / E));
                    grid_over ov = {OPDB_COL_EP_SIZE, ep};
                    grid_cands_add(out, in, 7, o, 2, &ov, 1);
                }
            }
        }
        free(seen);
    }
}

static void split_qkv(const opdb_grid_config *cfg, const grid_model *const *ms, size_t nm, grid_cands *out) {
    size_t nt;
    const int64_t *tok = grid(cfg, "ELEM_TOKENS_GRID", &nt);
    int64_t seen[256][3];
    size_t nseen = 0;
    grid_over ov[4] = {{OPDB_COL_INPUT_DTYPES, "DT_BF16;DT_BF16"},
                       {OPDB_COL_INPUT_FORMATS, "ND;ND"},
                       {OPDB_COL_OUTPUT_DTYPES, "DT_BF16;DT_BF16;DT_BF16"},
                       {OPDB_COL_OUTPUT_FORMATS, "ND;ND;ND"}};
    for (size_t i = 0; i < nm; i++) {
        const grid_model *m = ms[i];
        if (grid_model_is_mla(m)) continue;
        for (int t = 0; t < m->ntp; t++) {
            int64_t tp = m->tp[t], kv = m->kv_heads, d = m->head_dim, lkv;
            if (m->heads % tp) continue;
            if (kv >= tp) lkv = kv / tp;
            else if (tp % kv == 0) lkv = 1;
            else continue;
            int64_t qh = (m->heads / tp) * d, kvh = lkv * d;
            /* unique across models on (tokens, qh, kvh, head_dim): per (qh, kvh, d) all tokens at once */
            bool dup = false;
            for (size_t s = 0; s < nseen && !dup; s++) dup = seen[s][0] == qh && seen[s][1] == kvh && seen[s][2] == d;
            if (dup) continue;
            if (nseen < 256) seen[nseen][0] = qh, seen[nseen][1] = kvh, seen[nseen][2] = d, nseen++;
            for (size_t j = 0; j < nt; j++) {
                grid_shape in[2] = {S2(tok[j], qh + 2 * kvh), S1(d)};
                grid_shape o[3] = {S2(tok[j], qh), S2(tok[j], kvh), S2(tok[j], kvh)};
                grid_cands_add(out, in, 2, o, 3, ov, 4);
            }
        }
    }
}

/* ---- fused attention */
typedef struct scene {
    const char *key;
    int64_t pb[8], ps[12], db[8], ds[12];
    int npb, nps, ndb, nds;
} scene;
static const scene k_scenes[] = {
    {"qwen332b", {1, 2, 4, 8}, {512, 1024, 2048, 3072, 3592, 4096, 4112, 4608, 5120, 6144},
     {1, 2, 4, 8, 12, 16, 24, 32}, {1024, 2048, 3072, 3593, 4096, 4224, 4352, 4608, 4864, 5120, 5376, 5632}, 4, 10, 8, 12},
    {"deepseekv3", {1, 2, 4, 8}, {512, 1024, 2048, 3072, 4096, 4099, 4608, 5120, 6144}, {1, 2, 4, 8, 12, 16},
     {1024, 2048, 3072, 4096, 4100, 4224, 4352, 4608, 4864, 5120, 5376, 5632}, 4, 9, 6, 12},
    {NULL, {1, 2, 4, 8}, {256, 512, 1024, 2048, 4096, 8192}, {1, 2, 4, 8, 16, 32}, {512, 1024, 2048, 4096, 8192}, 4, 6, 6, 5},
};

typedef struct fia_seen {
    uint64_t *h;
    size_t n, cap;
} fia_seen;

/* "%lld" of v without printf (a fused-attention row takes dozens). */
static void add_int(opdb_strbuf *sb, int64_t v) {
    char buf[24];
    int k = (int)sizeof buf;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do buf[--k] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) buf[--k] = '-';
    opdb_sb_add(sb, buf + k, sizeof buf - (size_t)k);
}

static void join_ints(opdb_strbuf *sb, int64_t v, int64_t count, bool cumulative) {
    for (int64_t i = 0; i < count; i++) {
        if (i) opdb_sb_addc(sb, ',');
        add_int(sb, cumulative ? v * (i + 1) : v);
    }
}

typedef struct fia_args {
    const char *scene;
    grid_shape slot[31];
    grid_shape out;
    const char *layout;
    int sparse;
    int64_t b, qv, kvv;       /* values: b copies of qv / kvv */
    bool qcum, kvcum;
    int64_t avg, nb;          /* nb > 0: block table b,nb with nb valid per batch */
    int64_t nh, nkv;
} fia_args;

static void fia_emit(const fia_args *a, fia_seen *seen, grid_cands *out) {
    static const char *const dtype_of[31] = {[0] = "DT_BF16", [1] = "DT_BF16", [2] = "DT_BF16", [24] = "DT_BF16",
                                             [25] = "DT_BF16", [5] = "INT64", [6] = "INT64", [4] = "INT8", [14] = "INT32"};
    /* global uniqueness on (inputs, dtype, format, outputs): dtypes/formats follow from the slots */
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 32; i++) {
        const grid_shape *sh = i < 31 ? &a->slot[i] : &a->out;
        int64_t nd = sh->nd;
        h = opdb_hash_bytes(&nd, sizeof nd, h);
        h = opdb_hash_bytes(sh->d, (size_t)sh->nd * sizeof sh->d[0], h);
    }
    for (size_t i = 0; i < seen->n; i++)
        if (seen->h[i] == h) return;
    OPDB_ALLOC_GROW(seen->h, seen->n + 1, seen->cap);
    seen->h[seen->n++] = h;
    opdb_strbuf v[17];
    for (int i = 0; i < 17; i++) opdb_sb_init(&v[i]);
    for (int i = 0; i < 31; i++) {
        bool present = a->slot[i].nd > 0;
        opdb_sb_adds(&v[0], i ? ";" : "");
        opdb_sb_adds(&v[0], present ? (dtype_of[i] ? dtype_of[i] : "DT_BF16") : "DT_UNDEFINED");
        opdb_sb_adds(&v[1], i ? ";" : "");
        opdb_sb_adds(&v[1], present ? "ND" : "NULL");
        opdb_sb_adds(&v[16], i ? ";" : "");
        for (int d = 0; d < a->slot[i].nd; d++) {
            if (d) opdb_sb_addc(&v[16], ',');
            add_int(&v[16], a->slot[i].d[d]);
        }
    }
    opdb_sb_adds(&v[2], a->scene);
    add_int(&v[3], a->b);
    join_ints(&v[4], a->qv, a->b, a->qcum);
    add_int(&v[5], a->b);
    join_ints(&v[6], a->kvv, a->b, a->kvcum);
    add_int(&v[7], a->avg);
    opdb_sb_adds(&v[7], ".000000");
    if (a->nb > 0) {
        add_int(&v[8], a->b);
        opdb_sb_addc(&v[8], ',');
        add_int(&v[8], a->nb);
        join_ints(&v[9], a->nb, a->b, false);
    }
    add_int(&v[10], a->nh);
    add_int(&v[11], a->nkv);
    add_int(&v[12], a->sparse);
    opdb_sb_adds(&v[13], a->layout);
    opdb_sb_adds(&v[14], "128");
    opdb_sb_adds(&v[15], "shape_grid_scene_generated");
    grid_over ov[17] = {{OPDB_COL_INPUT_DTYPES, v[0].p}, {OPDB_COL_INPUT_FORMATS, v[1].p}};
    for (int i = 0; i < 15; i++) ov[2 + i].col = grid_fia_columns[i], ov[2 + i].val = v[2 + i].p ? v[2 + i].p : "";
    grid_cands_add(out, a->slot, 31, &a->out, 1, ov, 17);
    for (int i = 0; i < 17; i++) opdb_sb_free(&v[i]);
}

static void fused_attention(const grid_model *const *ms, size_t nm, grid_cands *out) {
    fia_seen seen = {NULL, 0, 0};
    for (size_t i = 0; i < nm; i++) {
        const grid_model *m = ms[i];
        const scene *sc = &k_scenes[2];
        for (int s = 0; s < 2; s++)
            if (!strcmp(k_scenes[s].key, m->key)) sc = &k_scenes[s];
        int64_t N = m->heads, d = m->head_dim;
        char name[96];
        if (grid_model_is_mla(m)) {
            int64_t L = m->kv_lora, R = m->qk_rope;
            for (int decode = 0; decode < 2; decode++) {
                snprintf(name, sizeof name, "%s_mla_%s", m->key, decode ? "decode" : "prefill");
                const int64_t *bs = decode ? sc->db : sc->pb, *ss = decode ? sc->ds : sc->ps;
                for (int bi = 0; bi < (decode ? sc->ndb : sc->npb); bi++)
                    for (int si = 0; si < (decode ? sc->nds : sc->nps); si++) {
                        int64_t b = bs[bi], s = ss[si], q = decode ? 1 : s, nb = max1((s + 127) / 128),
                                tb = b * nb > 16 ? b * nb : 16;
                        fia_args a = {.scene = name, .layout = "BNSD_NBSD", .sparse = decode ? 0 : 3, .b = b, .qv = q,
                                      .kvv = s, .avg = s, .nb = nb, .nh = N, .nkv = 1};
                        a.slot[0] = S4(b, N, q, L);
                        a.slot[1] = a.slot[2] = S4(tb, 1, 128, L);
                        if (!decode) a.slot[4] = S2(2048, 2048);
                        a.slot[5] = a.slot[6] = S1(b);
                        a.slot[14] = S2(b, nb);
                        a.slot[24] = S4(b, N, q, R);
                        a.slot[25] = S4(tb, 1, 128, R);
                        a.out = S4(N, b, q, L);
                        fia_emit(&a, &seen, out);
                    }
            }
            continue;
        }
        int64_t kv = m->kv_heads, vq[6], vkv[6], vtp[6];
        int nv = 0;
        for (int t = 0; t < m->ntp; t++) {
            int64_t tp = m->tp[t], lkv;
            if (tp <= 0 || N % tp) continue;
            if (kv >= tp) {
                if (kv % tp) continue;
                lkv = kv / tp;
            } else if (tp % kv == 0) {
                lkv = 1;
            } else {
                continue;
            }
            bool dup = false;
            for (int k = 0; k < nv; k++) dup |= vq[k] == N / tp && vkv[k] == lkv;
            if (dup) continue;
            vq[nv] = N / tp, vkv[nv] = lkv, vtp[nv++] = tp;
        }
        for (int v = 0; v < nv; v++) {
            int64_t q = vq[v], k = vkv[v];
            snprintf(name, sizeof name, "%s_dense_prefill_tp%lld", m->key, (long long)vtp[v]);
            for (int bi = 0; bi < sc->npb; bi++)
                for (int si = 0; si < sc->nps; si++) {
                    int64_t b = sc->pb[bi], s = sc->ps[si], T = b * s;
                    fia_args a = {.scene = name, .layout = "TND", .sparse = 3, .b = b, .qv = s, .kvv = s, .qcum = true,
                                  .kvcum = true, .avg = s, .nb = 0, .nh = q, .nkv = k};
                    a.slot[0] = S3(T, q, d);
                    a.slot[1] = a.slot[2] = S3(T, k, d);
                    a.slot[4] = S2(2048, 2048);
                    a.slot[5] = a.slot[6] = S1(b);
                    a.out = S3(T, q, d);
                    fia_emit(&a, &seen, out);
                }
            snprintf(name, sizeof name, "%s_dense_decode_tp%lld", m->key, (long long)vtp[v]);
            for (int bi = 0; bi < sc->ndb; bi++)
                for (int si = 0; si < sc->nds; si++) {
                    int64_t b = sc->db[bi], s = sc->ds[si], nb = max1((s + 127) / 128), tb = b * nb > 16 ? b * nb : 16;
                    fia_args a = {.scene = name, .layout = "TND", .sparse = 3, .b = b, .qv = 1, .kvv = s, .qcum = true,
                                  .avg = s, .nb = nb, .nh = q, .nkv = k};
                    a.slot[0] = S3(b, q, d);
                    a.slot[1] = a.slot[2] = S4(tb, k, 128, d);
                    a.slot[4] = S2(2048, 2048);
                    a.slot[5] = a.slot[6] = S1(b);
                    a.slot[14] = S2(b, nb);
                    a.out = S3(b, q, d);
                    fia_emit(&a, &seen, out);
                }
        }
    }
    free(seen.h);
}

bool grid_generate(const char *g, const opdb_grid_config *cfg, const grid_model *const *ms, size_t nm, grid_cands *out) {
    if (!strcmp(g, "grouped_matmul")) grouped_matmul(cfg, ms, nm, out);
    else if (!strcmp(g, "dispatch_ffn_combine")) dispatch_ffn_combine(cfg, ms, nm, out);
    else if (!strcmp(g, "split_qkv_rmsnorm_rope")) split_qkv(cfg, ms, nm, out);
    else if (!strcmp(g, "fused_attention")) fused_attention(ms, nm, out);
    else return false;
    return true;
}
