/* QuantBatchMatmulV3 (docs/REPLAY-OPS.md §2.3): int8 x (.., M, K) . int8 weight
 * (K, N) accumulated in int32, then dequantised with the per-channel scale
 * (times an optional per-token scale) plus an optional bias or offset. */
#include <math.h>
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"
#include "opdb/schema.h"

enum { EXTRA_NONE, EXTRA_BIAS, EXTRA_PERTOKEN, EXTRA_OFFSET };
enum { P_M, P_N, P_K, P_EXTRA };

static int plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    char sh[OPDB_MAX_TENSORS][128], fm[OPDB_MAX_TENSORS][128], dt[OPDB_MAX_TENSORS][128];
    size_t ns = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_SHAPES), false, sh, OPDB_MAX_TENSORS);
    size_t nf = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_FORMATS), false, fm, OPDB_MAX_TENSORS);
    size_t nd = opdb_replay_split(row->cell(row, OPDB_COL_INPUT_DTYPES), false, dt, OPDB_MAX_TENSORS);
    char osh[OPDB_MAX_TENSORS][128], odt[OPDB_MAX_TENSORS][128];
    size_t nos = opdb_replay_split(row->cell(row, OPDB_COL_OUTPUT_SHAPES), false, osh, OPDB_MAX_TENSORS);
    size_t nod = opdb_replay_split(row->cell(row, OPDB_COL_OUTPUT_DTYPES), false, odt, OPDB_MAX_TENSORS);
    if (nos != 1 || nod != 1)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "QuantBatchMatmulV3 expects exactly one output shape and dtype");
    if (ns != nf || ns != nd)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "QuantBatchMatmulV3 input shape/format/dtype lists differ in length (%zu/%zu/%zu)", ns, nf, nd);
    if (ns != 3 && ns != 4)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "QuantBatchMatmulV3 expects 3 or 4 inputs, got %zu", ns);
    memset(p, 0, sizeof *p);
    p->nin = (int)ns;
    for (size_t i = 0; i < ns; i++)
        if (opdb_replay_make(sh[i], fm[i], dt[i], false, &p->in[i], err)) return -1;
    const opdb_tensor *x = &p->in[0], *w = &p->in[1];
    if (x->dtype != OPDB_DT_I8 || w->dtype != OPDB_DT_I8)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "QuantBatchMatmulV3 expects DT_INT8 x and weight, got %s and %s",
                         opdb_dtype_name(x->dtype), opdb_dtype_name(w->dtype));
    opdb_dtype ot;
    if (opdb_dtype_parse(odt[0], strlen(odt[0]), &ot, err)) return -1;
    if (ot != OPDB_DT_F32 && ot != OPDB_DT_F16 && ot != OPDB_DT_BF16 && ot != OPDB_DT_I8 && ot != OPDB_DT_I32)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "QuantBatchMatmulV3: unsupported output dtype %s", opdb_dtype_name(ot));
    if (w->ndim != 2 || x->dims[x->ndim - 1] != w->dims[0])
        return opdb_fail(err, OPDB_ERR_RUNTIME, "QuantBatchMatmulV3: x %s and weight %s cannot be multiplied", sh[0], sh[1]);
    int64_t m = 1, k = w->dims[0], n = w->dims[1];
    for (int i = 0; i + 1 < x->ndim; i++) m *= x->dims[i];
    const int64_t m_tok = x->ndim >= 2 ? x->dims[x->ndim - 2] : x->dims[0];
    int64_t extra = EXTRA_NONE;
    if (ns == 4) {
        const opdb_tensor *e = &p->in[3];
        int64_t cnt = opdb_tensor_numel(e);
        if (e->dtype == OPDB_DT_I32)
            extra = EXTRA_BIAS;
        else if (e->dtype == OPDB_DT_F32 && cnt == m_tok)
            extra = EXTRA_PERTOKEN;
        else if (e->dtype == OPDB_DT_F32 && (cnt == 1 || cnt == n))
            extra = EXTRA_OFFSET;
        else
            return opdb_fail(err, OPDB_ERR_RUNTIME,
                             "QuantBatchMatmulV3: cannot use 4th input %s (%s): not an INT32 bias, per-token scale or offset",
                             sh[3], opdb_dtype_name(e->dtype));
        if ((extra == EXTRA_BIAS && cnt != 1 && cnt != n) || (extra == EXTRA_PERTOKEN && m_tok != m))
            return opdb_fail(err, OPDB_ERR_RUNTIME, "QuantBatchMatmulV3: 4th input %s does not fit M=%lld N=%lld", sh[3],
                             (long long)m, (long long)n);
    }
    int64_t sc = opdb_tensor_numel(&p->in[2]);
    if (sc != 1 && sc != n)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "QuantBatchMatmulV3: scale %s needs 1 or N=%lld values", sh[2], (long long)n);
    opdb_tensor *o = &p->out[0];
    *o = *x;
    o->nz = false;
    o->dtype = ot;
    o->dims[o->ndim - 1] = n;
    p->nout = 1;
    p->iparam[P_M] = m, p->iparam[P_N] = n, p->iparam[P_K] = k, p->iparam[P_EXTRA] = extra;
    p->flops = 2.0 * (double)m * (double)n * (double)k;
    for (int i = 0; i < p->nin; i++) p->bytes += (double)opdb_tensor_bytes(&p->in[i]);
    p->bytes += (double)opdb_tensor_bytes(o);
    /* int32 accumulators + fp32 copies of scale and the 4th input */
    p->workspace_bytes = (size_t)(m * n) * 4 + (size_t)(sc + (ns == 4 ? opdb_tensor_numel(&p->in[3]) : 0)) * 4 + 128;
    return 0;
}

static int cpu_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)err;
    const int64_t m = p->iparam[P_M], n = p->iparam[P_N], k = p->iparam[P_K], extra = p->iparam[P_EXTRA];
    int32_t *acc = ws;
    float *scale = (float *)(acc + m * n);
    const int64_t sc = opdb_tensor_numel(&p->in[2]);
    float *ex = scale + sc;
    const int64_t ec = extra ? opdb_tensor_numel(&p->in[3]) : 0;
    for (int64_t i = 0; i < sc; i++) scale[i] = (float)opdb_elem_get(p->in[2].data, p->in[2].dtype, (size_t)i);
    for (int64_t i = 0; i < ec; i++) ex[i] = (float)opdb_elem_get(p->in[3].data, p->in[3].dtype, (size_t)i);
    opdb_gemm_s8(m, n, k, p->in[0].data, k, p->in[1].data, n, acc);
    const opdb_tensor *o = &p->out[0];
#pragma omp parallel for num_threads(opdb_cpu_threads()) schedule(static)
    for (int64_t i = 0; i < m; i++) {
        opdb_cpu_pin_worker();
        for (int64_t j = 0; j < n; j++) {
            int64_t a = acc[i * n + j];
            if (extra == EXTRA_BIAS) a += (int64_t)ex[ec == 1 ? 0 : j];
            if (o->dtype == OPDB_DT_I32) { /* no dequantisation into int32 */
                ((int32_t *)o->data)[i * n + j] = (int32_t)a;
                continue;
            }
            float v = (float)a * scale[sc == 1 ? 0 : j];
            if (extra == EXTRA_PERTOKEN) v *= ex[i];
            if (extra == EXTRA_OFFSET) v += ex[ec == 1 ? 0 : j];
            if (o->dtype == OPDB_DT_I8) v = nearbyintf(v);
            opdb_elem_set(o->data, o->dtype, (size_t)(i * n + j), v);
        }
    }
    return 0;
}

const opdb_op_def opdb_op_QuantBatchMatmulV3 = {"QuantBatchMatmulV3", NULL, plan, NULL, cpu_run, NULL};
