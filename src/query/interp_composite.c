/* Decomposed composites through the wrapper: the op is decomposed again,
 * each spec is looked up exactly first and interpolated when that misses;
 * the answer is the sum in spec order, or a MISS as soon as one spec has
 * neither. */
#include <string.h>

#include "query/decompose.h"
#include "query/interp_internal.h"

/* one spec interpolated: 1 hit (*lat, *kernel), 0 none, -1 error set */
static int spec_interp(q_ctx *c, const q_spec *s, double *lat, const char **kernel) {
    const char *K[3] = {s->kernel, NULL, NULL};
    size_t nk = 1;
    for (size_t i = 0; i < s->nalt; i++)
        if (strcmp(s->alt[i], s->kernel) != 0) K[nk++] = s->alt[i];
    int got = 0;
    if (s->mode == QSPEC_ATTENTION) {
        ip_attn_tg tg;
        memset(&tg, 0, sizeof tg);
        memcpy(tg.q3, s->att.q3, sizeof tg.q3);
        tg.avg = s->att.avg;
        tg.prof = s->dtype;
        tg.has_sparse = s->att.has_sparse, tg.sparse = s->att.sparse;
        tg.has_kv = s->att.has_kv, tg.kv = s->att.kv;
        tg.layout = s->att.layout;
        if (!tg.layout && s->att.has_sparse) tg.layout = s->att.sparse == 0 ? "BNSD_NBSD" : s->att.sparse == 3 ? "TND" : NULL;
        for (size_t i = 0; i < nk && !got; i++) {
            const char *reason = NULL;
            if (!strcmp(K[i], "SparseFlashAttention") || !strcmp(K[i], "LightningIndexer") ||
                !strcmp(K[i], "LightningIndexerVllm")) {
                /* runtime-vector attention: matched on the spec's runtime vectors */
                if (ip_runtime_attention(c, K[i], &s->att, s->dtype, lat, &reason)) {
                    *kernel = K[i];
                    return 1;
                }
                if (!reason) return -1;
                continue;
            }
            got = ip_attention_target(c, &K[i], 1, &tg, &reason);
        }
    } else if (s->mode == QSPEC_SCATTER_CACHE_WRITE) {
        const char *reason = NULL;
        if (ip_scatter_spec(c, K, nk, s, lat, kernel, &reason)) return 1;
        return reason ? 0 : -1;
    } else {
        if (!s->nshapes) return 0;
        q_tins X;
        X.n = s->nshapes;
        X.v = opdb_arena_alloc(c->a, X.n * sizeof *X.v);
        for (size_t i = 0; i < X.n; i++) X.v[i] = (q_tin){s->shapes[i], -1, s->dtype};
        got = ip_spec_compute(c, K, nk, &X, s->has_tc && s->tc ? s->tc : (int64_t)s->nshapes);
    }
    if (!got) return 0;
    if (c->r->src == QS_ERROR) return -1;
    if (c->r->src != QS_INTERPOLATED && c->r->src != QS_MEASURED) return 0;
    *lat = c->r->lat;
    *kernel = c->r->kernel;
    return 1;
}

void ip_composite(q_ctx *c, const q_entry *e) {
    q_specs sp;
    memset(&sp, 0, sizeof sp);
    if (q_decompose(c, e, &sp)) return;
    if (!sp.n) {
        q_miss(c, "wrapper_interpolation_failed");
        return;
    }
    double total = 0;
    bool exact = true;
    opdb_strbuf kern;
    opdb_sb_init(&kern);
    for (size_t i = 0; i < sp.n; i++) {
        const q_spec *s = &sp.v[i];
        q_spec_hit h;
        memset(&h, 0, sizeof h);
        q_spec_query(c, s, &h);
        if (h.failed) goto out;
        double lat = h.lat;
        const char *k = h.kernel;
        if (!h.hit) {
            exact = false;
            int rc = spec_interp(c, s, &lat, &k);
            if (rc < 0) goto out;
            if (rc == 0) {
                q_miss(c, "composite_sub_kernel_failed");
                goto out;
            }
        }
        total += lat;
        if (i) opdb_sb_addc(&kern, ',');
        opdb_sb_adds(&kern, k);
    }
    opdb_sb_addc(&kern, 0);
    q_hit(c, exact ? QS_MEASURED : QS_INTERPOLATED, total, 0.5, exact ? "composite_measured" : "interpolated_composite",
          q_strdup(c, kern.p));
    c->r->n_sub = 0;
    c->r->has_sub = false;
out:
    opdb_sb_free(&kern);
}
