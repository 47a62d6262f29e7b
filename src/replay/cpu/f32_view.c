/* fp32 views of reduced-precision tensors: a CPU without native bf16/fp16
 * GEMMs converts them to fp32 inside the timed kernel (docs/REPLAY.md). */
#include <string.h>
#include "replay/cpu/kernels.h"
#include "replay/half.h"

/* Below this many elements a conversion stays on the calling thread. */
#define PAR_MIN 32768

size_t opdb_f32_scratch(const opdb_tensor *t) {
    if (!t || t->ndim <= 0 || t->dtype == OPDB_DT_F32 || t->dtype == OPDB_DT_F64) return 0;
    return ((size_t)opdb_tensor_numel(t) * 4 + 63) & ~(size_t)63;
}

/* The loops pin once per region, outside the element loop, so it vectorises. */
static void widen(const uint16_t *h, float *f, int64_t n, bool bf16) {
#pragma omp parallel num_threads(opdb_cpu_threads()) if (n >= PAR_MIN)
    {
        opdb_cpu_pin_worker();
        if (bf16) {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < n; i++) f[i] = opdb_h_bf16_to_f32(h[i]);
        } else {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < n; i++) f[i] = opdb_h_f16_to_f32(h[i]);
        }
    }
}

static void narrow(const float *f, uint16_t *h, int64_t n, bool bf16) {
#pragma omp parallel num_threads(opdb_cpu_threads()) if (n >= PAR_MIN)
    {
        opdb_cpu_pin_worker();
        if (bf16) {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < n; i++) h[i] = opdb_h_f32_to_bf16(f[i]);
        } else {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < n; i++) h[i] = opdb_h_f32_to_f16(f[i]);
        }
    }
}

const float *opdb_to_f32(const opdb_tensor *t, float *scratch) {
    const int64_t n = opdb_tensor_numel(t);
    if (t->dtype == OPDB_DT_F32) return t->data;
    if (t->dtype == OPDB_DT_BF16 || t->dtype == OPDB_DT_F16)
        widen(t->data, scratch, n, t->dtype == OPDB_DT_BF16);
    else
        for (int64_t i = 0; i < n; i++) scratch[i] = (float)opdb_elem_get(t->data, t->dtype, (size_t)i);
    return scratch;
}

void opdb_from_f32(const float *src, opdb_tensor *t, size_t n) {
    if (t->dtype == OPDB_DT_F32) {
        if (src != t->data) memcpy(t->data, src, n * sizeof *src);
    } else if (t->dtype == OPDB_DT_BF16 || t->dtype == OPDB_DT_F16) {
        narrow(src, t->data, (int64_t)n, t->dtype == OPDB_DT_BF16);
    } else {
        for (size_t i = 0; i < n; i++) opdb_elem_set(t->data, t->dtype, i, src[i]);
    }
}
