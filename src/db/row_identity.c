/* What the consuming performance model can tell apart (docs/ROW-IDENTITY.md,
 * §3.1 and §4): the row signature (with opdb's rules a MatMul-family row's
 * bias is part of it) and, for FusedInferAttentionScore rows, their runtime
 * columns. See docs/ROW-IDENTITY.md. */
#include "opdb/signature.h"

#include <string.h>

#include "opdb/schema.h"

#define SEP '\x1f'

int opdb_is_attention_kernel(const char *op) { return strcmp(op, "FusedInferAttentionScore") == 0; }

bool opdb_is_runtime_column(opdb_span name) {
    const size_t k = sizeof OPDB_COL_RT_PREFIX - 1;
    return (name.n > k && memcmp(name.p, OPDB_COL_RT_PREFIX, k) == 0) || opdb_span_eq_cstr(name, "avg_seq_len");
}

void opdb_row_identity(const opdb_sig_cells *c, const char *op, const opdb_span *runtime, size_t nruntime,
                       opdb_strbuf *out) {
    opdb_signature(c, op, out);
    if (opdb_is_attention_kernel(op))
        for (size_t i = 0; i < nruntime; i++) {
            opdb_sb_addc(out, SEP);
            opdb_sb_add(out, runtime[i].p, runtime[i].n);
        }
}
