/* `opdb aie`: AMD AIE hardware-trace post-processing (docs/AIE.md):
 * per-core kernel pairing, iterations split at long lock stalls, phases,
 * per-core and system GMAC/s. */
#ifndef OPDB_AIE_H
#define OPDB_AIE_H

#include <stdbool.h>
#include <stdio.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_aie_opts {
    size_t size; /* sizeof(opdb_aie_opts), set by opdb_aie_opts_init */
    opdb_log log;  /* where this call's warnings, notes and progress go (error.h) */
    opdb_modes modes;  /* this call's test and measurement modes (error.h) */
    long long M, K, N, m, k, n, rows, cols;
    const char *hwid;
    long long warmup, iterations;  /* clamped to >= 0 by the run */
    const char *trace;             /* NULL: outputs/<hwid>-gemm_<M>_<K>_<N>-<row>_row_<col>_col/traces/trace_mm_<M>_<K>_<N>.json */
    const char *out_dir;           /* NULL: the trace's folder */
    double clock_ghz;              /* 1.25 */
    double peak_macs_per_cycle;    /* 64 */
    double lock_stall_factor;      /* 20.0 */
    bool quirks;                   /* reproduce the reference exactly */
    FILE *out;                     /* "[write] <path>" lines */
    size_t *cores;                 /* non-NULL: set to the cores found on success */
    opdb_strbuf *summary;          /* non-NULL: the run's summary as one JSON object (keys in docs/GUIDE.md) */
} opdb_aie_opts;
/* Zeroes o, sets its size and the defaults; call it before setting fields. */
OPDB_API void opdb_aie_opts_init_sized(opdb_aie_opts *o, size_t size);
#define opdb_aie_opts_init(o) opdb_aie_opts_init_sized((o), sizeof *(o)) /* the caller's size (api.h) */

OPDB_API int opdb_aie_run(const opdb_aie_opts *o, opdb_err *err);

#ifdef __cplusplus
}
#endif
#endif
