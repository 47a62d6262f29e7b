/* The MatMulV2 rule (docs/REPLAY-OPS.md §2.3), shared by MatMulV2, MatMulV3,
 * MatMulCommon and the 2-D case of BatchMatMulV2.
 *
 * Reference rule (--reference-quirks): exactly two inputs (MatMulCommon: at
 * least two, extras unused), the weight always stored (N, K).
 * opdb's rule (default, docs/REPLAY.md "GEMM layouts"): the row's output shape
 * says which operand is stored transposed (A (M,K) or (K,M); B (K,N) or
 * (N,K)), and a third input is a bias added to C (numel N or M*N). */
#include <stdio.h>
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/ops/matmul_rule.h"
#include "opdb/schema.h"

static int plan_reference(const opdb_replay_row *row, opdb_op_problem *p, bool exact, opdb_err *err) {
    char sh[OPDB_MAX_TENSORS][128], fm[OPDB_MAX_TENSORS][128], dt[OPDB_MAX_TENSORS][128];
    size_t ns = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_SHAPES), false, sh, OPDB_MAX_TENSORS);
    size_t nf = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_FORMATS), false, fm, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_DTYPES), false, dt, OPDB_MAX_TENSORS);
    if (exact ? (ns != 2 || nf != 2 || nd != 2) : (ns < 2 || nf < 2 || nd < 2))
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects %s two inputs", row->kernel_type,
                         exact ? "exactly" : "at least");
    memset(p, 0, sizeof *p);
    p->nin = (int)ns;
    for (size_t i = 0; i < ns; i++) /* extras (MatMulCommon) are built like the reference, then unused */
        if (opdb_replay_make(sh[i], i < nf ? fm[i] : "ND", i < nd ? dt[i] : "DT_FLOAT", i == 1, &p->in[i], err))
            return -1;
    /* make(in1, transpose=true) validated the (N, K) weight; keep its storage
     * (N, K) and let the GEMM read it transposed, as the device does. */
    opdb_tensor *a = &p->in[0], *b = &p->in[1];
    int64_t kdim = b->dims[0];
    b->dims[0] = b->dims[1];
    b->dims[1] = kdim;
    if (opdb_gemm_check(row->kernel_type, a, b, err)) return -1;
    if (a->ndim < 1 || a->dims[a->ndim - 1] != kdim)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: mat1 and mat2 shapes cannot be multiplied (%s and %s, K=%lld)",
                         row->kernel_type, sh[0], sh[1], (long long)kdim);
    opdb_gemm g = {1, 1, b->dims[0], kdim, true, 0, 0};
    opdb_tensor *c = &p->out[0];
    c->dtype = a->dtype;
    c->ndim = a->ndim;
    for (int i = 0; i + 1 < a->ndim; i++) g.m *= (c->dims[i] = a->dims[i]);
    c->dims[c->ndim - 1] = g.n;
    p->nout = 1;
    opdb_gemm_account(p, &g);
    return 0;
}

/* One reading of the stored operands: A (M,K) or (K,M), B (K,N) or (N,K). */
typedef struct layout {
    bool ta, tb;
} layout;

/* The first reading (the reference's first) that chains A and B and, when
 * the row has an output shape, gives it. Without one, A is never transposed. */
static bool pick_layout(const opdb_tensor *a, const opdb_tensor *b, const opdb_tensor *out, layout *l, int64_t *m,
                        int64_t *n, int64_t *k) {
    static const layout order[4] = {{false, true}, {false, false}, {true, true}, {true, false}};
    for (int i = 0; i < 4; i++) {
        const layout c = order[i];
        if (c.ta && (a->ndim != 2 || out->ndim == 0)) continue;
        int64_t am = 1, ak;
        if (c.ta) {
            am = a->dims[1], ak = a->dims[0];
        } else {
            for (int d = 0; d + 1 < a->ndim; d++) am *= a->dims[d];
            ak = a->dims[a->ndim - 1];
        }
        const int64_t bk = c.tb ? b->dims[1] : b->dims[0], bn = c.tb ? b->dims[0] : b->dims[1];
        if (ak != bk) continue;
        if (out->ndim) {
            int64_t om = 1;
            for (int d = 0; d + 1 < out->ndim; d++) om *= out->dims[d];
            if (out->dims[out->ndim - 1] != bn || om != am) continue;
        }
        *l = c, *m = am, *n = bn, *k = ak;
        return true;
    }
    return false;
}

static int plan_inferred(const opdb_replay_row *row, opdb_op_problem *p, bool exact, opdb_err *err) {
    char sh[OPDB_MAX_TENSORS][128], fm[OPDB_MAX_TENSORS][128], dt[OPDB_MAX_TENSORS][128], os[4][128];
    const char *op = row->kernel_type;
    size_t ns = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_SHAPES), false, sh, OPDB_MAX_TENSORS);
    size_t nf = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_FORMATS), false, fm, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_DTYPES), false, dt, OPDB_MAX_TENSORS);
    size_t no = opdb_replay_split(row->cell(row, OPDB_COL_OUTPUT_SHAPES), false, os, 4);
    if (ns < 2 || nf < 2 || nd < 2)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects two inputs (A, B) and an optional bias, got %zu shape(s), %zu dtype(s), %zu format(s)",
                         op, ns, nd, nf);
    if (exact && ns > 3)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s expects two inputs (A, B) and an optional bias, got %zu inputs", op, ns);
    memset(p, 0, sizeof *p);
    p->nin = (int)ns;
    for (size_t i = 0; i < ns; i++) /* MatMulCommon's extras past a bias are built, then unused */
        if (opdb_replay_make(sh[i], i < nf ? fm[i] : "ND", i < nd ? dt[i] : "DT_FLOAT", false, &p->in[i], err))
            return -1;
    opdb_tensor *a = &p->in[0], *b = &p->in[1];
    if (opdb_gemm_check(op, a, b, err)) return -1;
    if (a->ndim < 1 || b->ndim != 2)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: A must have a dimension and B must be 2-D (shapes %s and %s)", op,
                         sh[0], sh[1]);
    opdb_tensor out;
    memset(&out, 0, sizeof out);
    opdb_err ignore;
    if (no < 1 || opdb_replay_shape(os[0], &out, &ignore)) out.ndim = 0; /* no usable output shape: no evidence */
    layout l;
    int64_t m, n, k;
    if (!pick_layout(a, b, &out, &l, &m, &n, &k))
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s: no reading of A %s and B %s (either one stored transposed) gives the output %s", op,
                         sh[0], sh[1], no ? os[0] : "(none)");
    bool bias = false;
    if (ns >= 3) {
        const opdb_tensor *bt = &p->in[2];
        int64_t bn = opdb_tensor_numel(bt);
        bool fits = opdb_dtype_is_float(bt->dtype) && bt->ndim >= 1 && bt->dims[bt->ndim - 1] == n && (bn == n || bn == m * n);
        if (fits)
            bias = true;
        else if (exact)
            return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the third input %s (%s) is not a bias of the output (M=%lld, N=%lld)",
                             op, sh[2], opdb_dtype_name(bt->dtype), (long long)m, (long long)n);
    }
    opdb_gemm g = {1, m, n, k, l.tb, 0, 0};
    opdb_tensor *c = &p->out[0];
    c->dtype = a->dtype;
    if (l.ta) {
        c->ndim = 2, c->dims[0] = m;
    } else {
        c->ndim = a->ndim;
        for (int i = 0; i + 1 < a->ndim; i++) c->dims[i] = a->dims[i];
    }
    c->dims[c->ndim - 1] = n;
    p->nout = 1;
    opdb_gemm_account(p, &g);
    p->iparam[7] = l.ta;
    p->iparam[8] = bias;
    if (bias) {
        p->bytes += (double)opdb_tensor_bytes(&p->in[2]);
        p->workspace_bytes += opdb_f32_scratch(&p->in[2]);
        p->flops += (double)m * (double)n;
    }
    return 0;
}

int opdb_matmul_plan(const opdb_replay_row *row, opdb_op_problem *p, bool exact, opdb_err *err) {
    return row->quirks ? plan_reference(row, p, exact, err) : plan_inferred(row, p, exact, err);
}

int opdb_matmul_cpu(const opdb_op_problem *p, void *ws, opdb_err *err) {
    opdb_gemm g = opdb_gemm_load(p);
    return opdb_gemm_run_ex(&g, p->iparam[7] != 0, &p->in[0], &p->in[1], p->iparam[8] ? &p->in[2] : NULL,
                            (opdb_tensor *)&p->out[0], ws, err);
}
