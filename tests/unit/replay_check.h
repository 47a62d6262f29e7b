/* Output checks shared by the replay kernel tests (test_replay_ops_*.c):
 * per-dtype relative error bounds and a max-error comparison against a
 * double-precision naive computation. Include after <cmocka.h>. */
#ifndef OPDB_TESTS_REPLAY_CHECK_H
#define OPDB_TESTS_REPLAY_CHECK_H

#include <math.h>
#include "opdb/replay.h"

/* Relative error bound of an output dtype: bf16 1e-2, f16 1e-3, f64 1e-12, else 1e-5. */
static inline double replay_tol(opdb_dtype dt) {
    return dt == OPDB_DT_BF16 ? 1e-2 : dt == OPDB_DT_F16 ? 1e-3 : dt == OPDB_DT_F64 ? 1e-12 : 1e-5;
}

static inline double replay_val(const opdb_tensor *t, int64_t i) { return opdb_elem_get(t->data, t->dtype, (size_t)i); }

/* max |got - want| / max |want| <= bound (NaN fails; an all-zero expectation fails). */
static inline void replay_near(const opdb_tensor *got, const double *want, int64_t n, double bound) {
    assert_int_equal(opdb_tensor_numel(got), n);
    double err = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(replay_val(got, i) - want[i]);
        if (!(e <= err)) err = e;
        scale = fabs(want[i]) > scale ? fabs(want[i]) : scale;
    }
    assert_true(scale > 0);
    if (!(err / scale <= bound)) fail_msg("relative error %g above %g", err / scale, bound);
}

#endif
