/* Grouped GEMM of the GroupedMatmul family (see kernels.h): one GEMM per
 * group on its slice of rows; int8 groups accumulate in int32. */
#include <string.h>
#include "replay/cpu/kernels.h"

static bool int8_path(const opdb_tensor *x, const opdb_tensor *w) {
    return x->dtype == OPDB_DT_I8 && w->dtype == OPDB_DT_I8;
}

/* Layout: y (m*n fp32) | int32 accumulators + fp32 scales (int8) or fp32 x and weight. */
size_t opdb_grouped_workspace(const opdb_grouped *g, const opdb_tensor *x, const opdb_tensor *w,
                              const opdb_tensor *w_scale, const opdb_tensor *x_scale) {
    size_t y = (size_t)(g->m * g->n) * 4;
    if (int8_path(x, w)) return 2 * y + opdb_f32_scratch(w_scale) + opdb_f32_scratch(x_scale) + 64;
    return y + opdb_f32_scratch(x) + opdb_f32_scratch(w) + 64;
}

/* Group g's rows [*lo, *hi) from the cumulative group list, clamped to [0, m]. */
static void group_rows(const opdb_tensor *gl, int64_t g, int64_t m, int64_t *lo, int64_t *hi) {
    double a = g ? opdb_elem_get(gl->data, gl->dtype, (size_t)(g - 1)) : 0.0;
    double b = opdb_elem_get(gl->data, gl->dtype, (size_t)g);
    *lo = a < 0 ? 0 : a > (double)m ? m : (int64_t)a;
    *hi = b < (double)*lo ? *lo : b > (double)m ? m : (int64_t)b;
}

void opdb_grouped_run(const opdb_grouped *g, const opdb_tensor *x, const opdb_tensor *w, const opdb_tensor *group_list,
                      const opdb_tensor *w_scale, const opdb_tensor *x_scale, float *y, void *ws) {
    const int64_t m = g->m, n = g->n, k = g->k;
    const bool shared = w->ndim == 2;   /* one weight for every group */
    char *scratch = (char *)ws + (size_t)(m * n) * 4;
    int64_t end = 0;
    if (int8_path(x, w)) {
        int32_t *acc = (int32_t *)scratch;
        const int8_t *xa = x->data, *wa = w->data;
        for (int64_t gi = 0; gi < g->groups; gi++) {
            int64_t lo, hi;
            group_rows(group_list, gi, m, &lo, &hi);
            opdb_gemm_s8(hi - lo, n, k, xa + lo * k, k, wa + (shared ? 0 : gi * k * n), n, acc + lo * n);
            end = hi > end ? hi : end;
        }
        float *wsf = (float *)(acc + m * n), *xsf = (float *)((char *)wsf + opdb_f32_scratch(w_scale));
        const int64_t ws_n = opdb_tensor_numel(w_scale);
        const bool xs = opdb_tensor_numel(x_scale) >= m;
        const float *wsv = ws_n ? opdb_to_f32(w_scale, wsf) : NULL, *xsv_all = xs ? opdb_to_f32(x_scale, xsf) : NULL;
        for (int64_t gi = 0; gi < g->groups; gi++) {
            int64_t lo, hi;
            group_rows(group_list, gi, m, &lo, &hi);
            const int64_t srow = ws_n >= (gi + 1) * n ? gi * n : 0; /* (G, n) or one shared (n,) */
#pragma omp parallel for num_threads(opdb_cpu_threads()) schedule(static)
            for (int64_t i = lo; i < hi; i++) {
                opdb_cpu_pin_worker();
                const float xsv = xs ? xsv_all[i] : 1.0f;
                for (int64_t j = 0; j < n; j++)
                    y[i * n + j] = (float)acc[i * n + j] * (ws_n >= n ? wsv[srow + j] : 1.0f) * xsv;
            }
        }
    } else {
        float *xf = (float *)scratch, *wf = (float *)(scratch + opdb_f32_scratch(x));
        const float *A = opdb_to_f32(x, xf), *B = opdb_to_f32(w, wf);
        for (int64_t gi = 0; gi < g->groups; gi++) {
            int64_t lo, hi;
            group_rows(group_list, gi, m, &lo, &hi);
            opdb_sgemm(hi - lo, n, k, A + lo * k, k, B + (shared ? 0 : gi * k * n), n, false, y + lo * n, n);
            end = hi > end ? hi : end;
        }
    }
    if (end < m) memset(y + end * n, 0, (size_t)((m - end) * n) * sizeof *y);
}
