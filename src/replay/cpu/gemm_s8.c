/* int8 x int8 -> int32 GEMM in plain C (OpenBLAS has no integer GEMM):
 * blocks of 4 rows share each loaded row of B (4x less traffic than one row
 * at a time), rows in parallel, the inner loop over n vectorises. */
#include <string.h>
#include "replay/cpu/kernels.h"

#define ROWS 4

void opdb_gemm_s8(int64_t m, int64_t n, int64_t k, const int8_t *a, int64_t lda, const int8_t *b, int64_t ldb,
                  int32_t *c) {
    const int64_t blocks = (m + ROWS - 1) / ROWS;
#pragma omp parallel num_threads(opdb_cpu_threads()) if (m * n * k >= 65536)
    {
        opdb_cpu_pin_worker();
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < blocks; blk++) {
            const int64_t i0 = blk * ROWS, nr = m - i0 < ROWS ? m - i0 : ROWS;
            memset(c + i0 * n, 0, (size_t)(nr * n) * sizeof *c);
            for (int64_t kk = 0; kk < k; kk++) {
                const int8_t *bk = b + kk * ldb;
                for (int64_t r = 0; r < nr; r++) {
                    const int32_t av = a[(i0 + r) * lda + kk];
                    int32_t *ci = c + (i0 + r) * n;
                    for (int64_t j = 0; j < n; j++) ci[j] += av * bk[j];
                }
            }
        }
    }
}
