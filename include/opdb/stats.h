/* Statistics with the reference's exact arithmetic. */
#ifndef OPDB_STATS_H
#define OPDB_STATS_H

#include "opdb/api.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* statistics.median: middle element, or mean of the two middle ones.
 * Reorders v (selection, O(n)). n must be > 0. */
OPDB_API double opdb_median(double *v, size_t n);

/* Population std with the naive one-pass formula the reference uses:
 * sqrt(max(0, sumsq/n - (sum/n)^2)). */
OPDB_API double opdb_pstd_naive(double sum, double sumsq, double n);

#ifdef __cplusplus
}
#endif
#endif
