/* Per-record decoding: strip cells, apply kernel-name aliases, skip N/A
 * shapes, parse the duration and the 25 metrics. Runs on worker threads. */
#include "ingest/kd_rows.h"

#include <math.h>
#include <string.h>
#include "opdb/pystr.h"
#include "opdb/schema.h"

static const struct {
    const char *from, *to;
} k_kernel_aliases[] = {
    {"split_qkv_rmsnorm_rope_kernel_0", "split_qkv_rmsnorm_rope_kernel"},
    {"muls_add_kernel_1", "muls_add_kernel"},
};

bool kd_is_na_shape(opdb_span s) { return opdb_shape_is_na(s.p, s.n); }

uint64_t kd_key_hash(opdb_span type, opdb_span in, opdb_span out) {
    uint64_t h = opdb_hash_bytes(type.p, type.n, 0x1234);
    h = opdb_hash_bytes(in.p, in.n, h);
    return opdb_hash_bytes(out.p, out.n, h);
}

static inline opdb_span cell(const kd_colmap *L, int role, const opdb_field *f, int nf) {
    int c = L->col[role];
    if (c < 0 || c >= nf) return opdb_span_make("", 0);
    return opdb_py_strip(opdb_span_make(f[c].p, f[c].n));
}

void kd_row_extract(kd_row *r, const kd_colmap *L, const opdb_field *f, int nf, bool quirks) {
    r->flags = 0;
    r->group = 0;
    r->type = cell(L, KD_TYPE, f, nf);
    if (r->type.n == sizeof KD_FIA_TYPE - 1 && memcmp(r->type.p, KD_FIA_TYPE, r->type.n) == 0)
        r->flags |= KD_ROW_FIA;
    for (size_t a = 0; a < sizeof k_kernel_aliases / sizeof k_kernel_aliases[0]; a++)
        if (opdb_span_eq_cstr(r->type, k_kernel_aliases[a].from)) r->type = opdb_span_cstr(k_kernel_aliases[a].to);
    r->in = cell(L, KD_IN_SHAPES, f, nf);
    r->out = cell(L, KD_OUT_SHAPES, f, nf);
    if (kd_is_na_shape(r->in) || kd_is_na_shape(r->out)) {
        r->flags |= KD_ROW_NA_SHAPES;
        return;
    }
    opdb_span d = cell(L, KD_DURATION, f, nf);
    r->dur_text = d;
    if (!opdb_py_float(d.p, d.n, &r->duration)) {
        r->duration = 0.0;
        if (!quirks) {
            r->flags |= KD_ROW_BAD_DURATION;
            return;
        }
    } else if (!quirks && !(isfinite(r->duration) && r->duration >= 0)) { /* never written to a table */
        r->flags |= KD_ROW_BAD_DURATION;
        return;
    }
    for (int i = 0; i < KD_NDESC; i++) r->desc[i] = cell(L, KD_OP_STATE + i, f, nf);
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        int c = L->col[KD_METRIC0 + m];
        r->metric[m] = (c >= 0 && c < nf) ? opdb_py_float_or_zero(f[c].p, f[c].n) : 0.0;
        if (!quirks && !(isfinite(r->metric[m]) && r->metric[m] >= 0)) {
            r->metric[m] = 0.0;
            r->flags |= KD_ROW_BAD_METRIC;
        }
    }
    r->hash = kd_key_hash(r->type, r->in, r->out);
}
