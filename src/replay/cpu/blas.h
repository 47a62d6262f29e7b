/* OpenBLAS, loaded when the CPU backend is first created.  Linked in, its
 * library constructor would start a worker thread that busy-waits for
 * ~80 ms of CPU in every opdb process, whatever the command. */
#ifndef OPDB_REPLAY_CPU_BLAS_H
#define OPDB_REPLAY_CPU_BLAS_H

#include <cblas.h>
#include "opdb/core.h"

/* Loads OpenBLAS once (single-threaded: its own threads are never started)
 * and resolves what opdb calls.  0, or -1 with err set. */
int opdb_blas_load(opdb_err *err);

/* After opdb_blas_load succeeded. */
void opdb_blas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
                     float alpha, const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
void opdb_blas_dgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
                     double alpha, const double *a, int lda, const double *b, int ldb, double beta, double *c, int ldc);
/* "OpenBLAS 0.3.21 NO_AFFINITY ..." (NULL when not loaded). */
const char *opdb_blas_config(void);

#endif
